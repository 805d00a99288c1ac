package lab

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// Prefix starts the name of every network namespace cnperf creates: "cnp-<tag>-<cluster>-<role>".
const Prefix = "cnp-"

// LinkPrefix starts the name of every interface cnperf creates (all inside its namespaces).
const LinkPrefix = "cnp"

// nsRE matches a lab namespace name and captures its tag.
var nsRE = regexp.MustCompile(`^cnp-([0-9a-f]{6})-[a-z0-9-]+$`)

// RunTag returns the six hex digits of a run id that prefix the run's objects.
func RunTag(runID string) (string, error) {
	var b strings.Builder
	for _, r := range strings.ToLower(runID) {
		if (r >= '0' && r <= '9') || (r >= 'a' && r <= 'f') {
			b.WriteRune(r)
			if b.Len() == 6 {
				return b.String(), nil
			}
		}
	}
	return "", fmt.Errorf("run id %q has fewer than six hex digits to name the lab's objects by", runID)
}

// TagOf returns the run tag of a lab namespace name, or "" when the name is not cnperf's.
func TagOf(nsName string) string {
	m := nsRE.FindStringSubmatch(nsName)
	if m == nil {
		return ""
	}
	return m[1]
}

// nsName names a namespace of a cluster.
func nsName(tag, cluster, role string) string { return Prefix + tag + "-" + cluster + "-" + role }

// linkName names an interface: "cnp" + tag + suffix, at most 15 bytes (IFNAMSIZ-1).
func linkName(tag, suffix string) string {
	n := LinkPrefix + tag + suffix
	if len(n) > 15 {
		// Suffixes are chosen by this package; a long one is a bug, not an input error.
		panic("lab: interface name too long: " + n)
	}
	return n
}

// ownerMarker is written as the ifalias of every lab namespace's loopback so that
// `cnperf lab cleanup` can tell a live run's namespaces from a killed run's: it records the
// run id, the owner's pid and the owner's start time (to survive pid reuse).
type ownerMarker struct {
	RunID     string
	PID       int
	StartTick uint64 // /proc/<pid>/stat field 22; 0 = detached (lab up): no live owner
}

const markerPrefix = "cnperf-lab"

func (m ownerMarker) String() string {
	return fmt.Sprintf("%s run=%s pid=%d start=%d", markerPrefix, m.RunID, m.PID, m.StartTick)
}

func parseMarker(s string) (ownerMarker, bool) {
	f := strings.Fields(strings.TrimSpace(s))
	if len(f) != 4 || f[0] != markerPrefix {
		return ownerMarker{}, false
	}
	var m ownerMarker
	for _, kv := range f[1:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return ownerMarker{}, false
		}
		switch k {
		case "run":
			m.RunID = v
		case "pid":
			p, err := strconv.Atoi(v)
			if err != nil {
				return ownerMarker{}, false
			}
			m.PID = p
		case "start":
			t, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return ownerMarker{}, false
			}
			m.StartTick = t
		default:
			return ownerMarker{}, false
		}
	}
	return m, true
}

// selfMarker is the marker of this process.
func selfMarker(runID string, detached bool) ownerMarker {
	if detached {
		return ownerMarker{RunID: runID}
	}
	pid := os.Getpid()
	st, _ := startTick(pid)
	return ownerMarker{RunID: runID, PID: pid, StartTick: st}
}

// startTick reads a process's start time in clock ticks since boot (/proc/<pid>/stat field 22).
func startTick(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	// The command name (field 2) is in parentheses and may hold spaces: split after the last ')'.
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command field", pid)
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); field 22 is f[19].
	if len(f) < 20 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	return strconv.ParseUint(f[19], 10, 64)
}

// alive reports whether the marker's owner still runs.
func (m ownerMarker) alive() bool {
	if m.PID <= 0 || m.StartTick == 0 {
		return false
	}
	st, err := startTick(m.PID)
	return err == nil && st == m.StartTick
}
