// Package noderes measures a node's CPU (total, user, system, irq, softirq, steal, iowait)
// and memory over exactly a window, from /proc/stat, /proc/meminfo and /proc/uptime read at
// the window's two edges, as knb does, without Prometheus. In a pod /proc/stat, /proc/meminfo
// and /proc/uptime are the node's (they are not namespaced), so an agent pod on a node can
// read them; a Reader abstracts where the files come from (a /proc root on this machine, a
// fixture directory in tests, a command run in a pod).
package noderes

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

// CPUTimes are the aggregate "cpu" line of /proc/stat, in clock ticks (USER_HZ) summed over
// every CPU. Guest and GuestNice are already included in User and Nice by the kernel.
type CPUTimes struct {
	User, Nice, System, Idle, IOWait, IRQ, SoftIRQ, Steal, Guest, GuestNice uint64
}

// Total is every tick spent, guest time not counted twice.
func (c CPUTimes) Total() uint64 {
	return c.User + c.Nice + c.System + c.Idle + c.IOWait + c.IRQ + c.SoftIRQ + c.Steal
}

// Snapshot is what the /proc files said at one moment.
type Snapshot struct {
	// UptimeSeconds is /proc/uptime's first field (the node's monotonic clock).
	UptimeSeconds float64
	// CPUs is the number of "cpuN" lines in /proc/stat (online CPUs).
	CPUs int
	CPU  CPUTimes
	// MemTotalBytes and MemAvailableBytes come from /proc/meminfo (MemAvailable, or
	// MemFree + Buffers + Cached on kernels older than 3.14 that lack it).
	MemTotalBytes     int64
	MemAvailableBytes int64
}

// Reader takes snapshots.
type Reader interface {
	Read(ctx context.Context) (Snapshot, error)
}

// ProcFS reads the files under a /proc root ("/proc" when Root is empty).
type ProcFS struct{ Root string }

// Read implements Reader.
func (p ProcFS) Read(ctx context.Context) (Snapshot, error) {
	if err := ctx.Err(); err != nil {
		return Snapshot{}, err
	}
	root := p.Root
	if root == "" {
		root = "/proc"
	}
	var files [3][]byte
	for i, name := range []string{"uptime", "stat", "meminfo"} {
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			return Snapshot{}, fmt.Errorf("node resources: %w", err)
		}
		files[i] = b
	}
	return Parse(files[1], files[2], files[0])
}

// BundleScript prints the three files in one go, each after a "@@NAME" line, for a Reader
// that runs it where the files are (e.g. exec in a pod: `sh -c BundleScript`). It needs
// only a POSIX shell and cat.
const BundleScript = `echo @@uptime; cat /proc/uptime; echo @@stat; cat /proc/stat; echo @@meminfo; cat /proc/meminfo`

// ParseBundle parses the output of BundleScript.
func ParseBundle(b []byte) (Snapshot, error) {
	sections := map[string][]byte{}
	var name string
	var cur bytes.Buffer
	flush := func() {
		if name != "" {
			sections[name] = append([]byte(nil), cur.Bytes()...)
		}
		cur.Reset()
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64*1024), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		if n, ok := strings.CutPrefix(line, "@@"); ok {
			flush()
			name = n
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
	}
	flush()
	if err := sc.Err(); err != nil {
		return Snapshot{}, fmt.Errorf("node resources: read bundle: %w", err)
	}
	for _, n := range []string{"uptime", "stat", "meminfo"} {
		if _, ok := sections[n]; !ok {
			return Snapshot{}, fmt.Errorf("node resources: no /proc/%s in the output %q", n, head(b))
		}
	}
	return Parse(sections["stat"], sections["meminfo"], sections["uptime"])
}

func head(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// Parse reads the contents of /proc/stat, /proc/meminfo and /proc/uptime.
func Parse(stat, meminfo, uptime []byte) (Snapshot, error) {
	var s Snapshot
	f := strings.Fields(string(uptime))
	if len(f) < 1 {
		return s, errors.New("node resources: /proc/uptime is empty")
	}
	up, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return s, fmt.Errorf("node resources: /proc/uptime %q: %w", head(uptime), err)
	}
	s.UptimeSeconds = up

	foundCPU := false
	for i, line := range strings.Split(string(stat), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || !strings.HasPrefix(fields[0], "cpu") {
			continue
		}
		if fields[0] != "cpu" {
			if _, err := strconv.Atoi(fields[0][3:]); err == nil {
				s.CPUs++
			}
			continue
		}
		// cpu user nice system idle iowait irq softirq steal guest guest_nice (proc(5));
		// kernels before 2.6.11 had only the first 7 columns, before 2.6.24 no guest.
		if len(fields) < 5 {
			return s, fmt.Errorf("node resources: /proc/stat line %d %q: want at least 4 counters", i+1, line)
		}
		var v [10]uint64
		for j := 1; j < len(fields) && j <= 10; j++ {
			n, err := strconv.ParseUint(fields[j], 10, 64)
			if err != nil {
				return s, fmt.Errorf("node resources: /proc/stat line %d field %d %q: %w", i+1, j+1, fields[j], err)
			}
			v[j-1] = n
		}
		s.CPU = CPUTimes{User: v[0], Nice: v[1], System: v[2], Idle: v[3], IOWait: v[4], IRQ: v[5], SoftIRQ: v[6], Steal: v[7], Guest: v[8], GuestNice: v[9]}
		foundCPU = true
	}
	if !foundCPU {
		return s, fmt.Errorf("node resources: /proc/stat has no aggregate cpu line: %q", head(stat))
	}
	if s.CPUs == 0 {
		return s, fmt.Errorf("node resources: /proc/stat lists no cpuN line")
	}

	mem := map[string]int64{}
	for i, line := range strings.Split(string(meminfo), "\n") {
		k, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			continue
		}
		n, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return s, fmt.Errorf("node resources: /proc/meminfo line %d %q: %w", i+1, line, err)
		}
		if len(fields) > 1 && fields[1] == "kB" {
			n *= 1024
		}
		mem[strings.TrimSpace(k)] = n
	}
	total, ok := mem["MemTotal"]
	if !ok || total <= 0 {
		return s, fmt.Errorf("node resources: /proc/meminfo has no MemTotal: %q", head(meminfo))
	}
	s.MemTotalBytes = total
	if avail, ok := mem["MemAvailable"]; ok {
		s.MemAvailableBytes = avail
	} else {
		s.MemAvailableBytes = mem["MemFree"] + mem["Buffers"] + mem["Cached"]
	}
	return s, nil
}

// Delta is the node's use between two snapshots. It fails when the counters went backwards
// (a reboot, or snapshots of two different nodes) or no tick passed.
func Delta(a, b Snapshot) (api.NodeResources, error) {
	if b.UptimeSeconds < a.UptimeSeconds {
		return api.NodeResources{}, fmt.Errorf("node resources: uptime went back from %.2fs to %.2fs (rebooted, or another node)", a.UptimeSeconds, b.UptimeSeconds)
	}
	d := []struct {
		name string
		a, b uint64
	}{
		{"user", a.CPU.User, b.CPU.User}, {"nice", a.CPU.Nice, b.CPU.Nice}, {"system", a.CPU.System, b.CPU.System},
		{"idle", a.CPU.Idle, b.CPU.Idle}, {"iowait", a.CPU.IOWait, b.CPU.IOWait}, {"irq", a.CPU.IRQ, b.CPU.IRQ},
		{"softirq", a.CPU.SoftIRQ, b.CPU.SoftIRQ}, {"steal", a.CPU.Steal, b.CPU.Steal},
	}
	var ticks [8]float64
	for i, x := range d {
		if x.b < x.a {
			// iowait may go backwards on some kernels (proc(5): "not reliable"); clamp it.
			if x.name == "iowait" {
				continue
			}
			return api.NodeResources{}, fmt.Errorf("node resources: cpu %s ticks went back from %d to %d", x.name, x.a, x.b)
		}
		ticks[i] = float64(x.b - x.a)
	}
	var total float64
	for _, t := range ticks {
		total += t
	}
	if total == 0 {
		return api.NodeResources{}, fmt.Errorf("node resources: no CPU tick passed in the %.2fs window (too short to measure)", b.UptimeSeconds-a.UptimeSeconds)
	}
	pct := func(t float64) float64 { return 100 * t / total }
	r := api.NodeResources{
		WindowSeconds:        b.UptimeSeconds - a.UptimeSeconds,
		CPUs:                 b.CPUs,
		CPUUserPercent:       pct(ticks[0] + ticks[1]),
		CPUSystemPercent:     pct(ticks[2]),
		CPUIOWaitPercent:     pct(ticks[4]),
		CPUIRQPercent:        pct(ticks[5]),
		CPUSoftIRQPercent:    pct(ticks[6]),
		CPUStealPercent:      pct(ticks[7]),
		CPUTotalPercent:      pct(total - ticks[3] - ticks[4]),
		MemoryTotalBytes:     b.MemTotalBytes,
		MemoryUsedStartBytes: a.MemTotalBytes - a.MemAvailableBytes,
		MemoryUsedEndBytes:   b.MemTotalBytes - b.MemAvailableBytes,
	}
	return r, nil
}

// Sampler measures one window: Start takes the first snapshot, Stop the second and returns
// the use in between. A Sampler is used once.
type Sampler struct {
	r       Reader
	node    string
	start   Snapshot
	started bool
}

// NewSampler returns a sampler reading with r; node names the node in the result.
func NewSampler(r Reader, node string) *Sampler { return &Sampler{r: r, node: node} }

// Start opens the window.
func (s *Sampler) Start(ctx context.Context) error {
	snap, err := s.r.Read(ctx)
	if err != nil {
		return err
	}
	s.start, s.started = snap, true
	return nil
}

// Stop closes the window and returns the node's use over it.
func (s *Sampler) Stop(ctx context.Context) (api.NodeResources, error) {
	if !s.started {
		return api.NodeResources{}, errors.New("node resources: Stop without a successful Start")
	}
	snap, err := s.r.Read(ctx)
	if err != nil {
		return api.NodeResources{}, err
	}
	s.started = false
	r, err := Delta(s.start, snap)
	if err != nil {
		return r, err
	}
	r.Node = s.node
	return r, nil
}

// Mean averages windows of one node, weighting each by its length: percentages are means
// over the total time, memory the last window's end, the first window's start.
func Mean(rs []api.NodeResources) *api.NodeResources {
	if len(rs) == 0 {
		return nil
	}
	var out api.NodeResources
	var w float64
	for _, r := range rs {
		w += r.WindowSeconds
	}
	for _, r := range rs {
		k := 1 / float64(len(rs))
		if w > 0 {
			k = r.WindowSeconds / w
		}
		out.CPUTotalPercent += k * r.CPUTotalPercent
		out.CPUUserPercent += k * r.CPUUserPercent
		out.CPUSystemPercent += k * r.CPUSystemPercent
		out.CPUIRQPercent += k * r.CPUIRQPercent
		out.CPUSoftIRQPercent += k * r.CPUSoftIRQPercent
		out.CPUStealPercent += k * r.CPUStealPercent
		out.CPUIOWaitPercent += k * r.CPUIOWaitPercent
	}
	first, last := rs[0], rs[len(rs)-1]
	out.Node, out.CPUs, out.WindowSeconds = last.Node, last.CPUs, w
	out.MemoryTotalBytes, out.MemoryUsedStartBytes, out.MemoryUsedEndBytes = last.MemoryTotalBytes, first.MemoryUsedStartBytes, last.MemoryUsedEndBytes
	return &out
}
