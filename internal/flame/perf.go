package flame

import (
	"bufio"
	"fmt"
	"io"
	"path"
	"regexp"
	"strconv"
	"strings"
)

// KernelSuffix marks kernel frames in stacks from perf (as flamegraph.pl's "_[k]").
const KernelSuffix = " [k]"

var (
	// An event header of `perf script`: "COMM PID[/TID] [CPU] TIME: PERIOD EVENT:"; the
	// command name may contain spaces.
	perfHeader = regexp.MustCompile(`^(\S.*?)\s+(\d+)(?:/(\d+))?\s+`)
	// A callchain line: "\tADDR SYMBOL+0xOFF (DSO)".
	perfFrame = regexp.MustCompile(`^\s+([0-9a-fA-F]+)\s+(.*?)\s+\((.*)\)\s*$`)
	offset    = regexp.MustCompile(`\+0x[0-9a-fA-F]+$`)
)

// ParsePerfScript folds the output of `perf script` (perf record -g) into root-first
// stacks, one per event, weighted 1: the command name, then the callchain from the outermost
// caller to the sampled function. Kernel frames get KernelSuffix; unknown symbols are named
// after their object ("[libc.so.6]") as stackcollapse-perf.pl does, and consecutive unknown
// frames of one object are merged into one.
func ParsePerfScript(r io.Reader) ([]Stack, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	var out []Stack
	var comm string
	var frames []string // innermost first
	inEvent := false
	flush := func() {
		if !inEvent {
			return
		}
		st := make([]string, 0, len(frames)+1)
		st = append(st, comm)
		for i := len(frames) - 1; i >= 0; i-- {
			st = append(st, frames[i])
		}
		out = append(out, Stack{Frames: st, Value: 1})
		inEvent, frames = false, nil
	}
	line := 0
	for sc.Scan() {
		line++
		t := sc.Text()
		if strings.TrimSpace(t) == "" {
			flush()
			continue
		}
		if strings.HasPrefix(t, "#") {
			continue
		}
		if t[0] == ' ' || t[0] == '\t' {
			if !inEvent {
				return nil, fmt.Errorf("perf script line %d: a callchain line outside an event: %q", line, t)
			}
			m := perfFrame.FindStringSubmatch(t)
			if m == nil {
				return nil, fmt.Errorf("perf script line %d: not ADDR SYMBOL (DSO): %q", line, t)
			}
			name := frameName(m[2], m[3])
			// A run of frames without symbols in one object (a stripped binary) says no more
			// than one such frame and would make the graph hundreds of frames tall.
			if n := len(frames); n > 0 && frames[n-1] == name && strings.HasPrefix(name, "[") {
				continue
			}
			frames = append(frames, name)
			continue
		}
		flush()
		m := perfHeader.FindStringSubmatch(t)
		if m == nil {
			return nil, fmt.Errorf("perf script line %d: not an event header (COMM PID ...): %q", line, t)
		}
		comm, inEvent = m[1], true
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("perf script: %w", err)
	}
	flush()
	if len(out) == 0 {
		return nil, fmt.Errorf("perf script: no samples")
	}
	return out, nil
}

func frameName(sym, dso string) string {
	sym = offset.ReplaceAllString(sym, "")
	kernel := strings.Contains(dso, "kernel.kallsyms") || strings.HasPrefix(dso, "[kernel")
	if sym == "" || sym == "[unknown]" {
		if dso == "" || dso == "[unknown]" {
			sym = "[unknown]"
		} else {
			sym = "[" + strings.Trim(path.Base(dso), "[]") + "]"
		}
	}
	if kernel {
		sym += KernelSuffix
	}
	return sym
}

// ParseFolded reads folded stacks ("root;caller;callee COUNT" per line), the format of
// stackcollapse-perf.pl and of Folded.
func ParseFolded(r io.Reader) ([]Stack, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	var out []Stack
	line := 0
	for sc.Scan() {
		line++
		t := strings.TrimSpace(sc.Text())
		if t == "" {
			continue
		}
		i := strings.LastIndexAny(t, " \t")
		if i < 0 {
			return nil, fmt.Errorf("folded stacks line %d: no count: %q", line, t)
		}
		n, err := strconv.ParseInt(t[i+1:], 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("folded stacks line %d: count %q is not a whole number", line, t[i+1:])
		}
		out = append(out, Stack{Frames: strings.Split(strings.TrimSpace(t[:i]), ";"), Value: n})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("folded stacks: %w", err)
	}
	return out, nil
}
