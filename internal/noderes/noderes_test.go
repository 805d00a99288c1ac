package noderes

import (
	"context"
	"math"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

// seq returns the snapshots of several /proc roots in turn, like one node read twice.
type seq struct {
	roots []string
	i     int
}

func (s *seq) Read(ctx context.Context) (Snapshot, error) {
	r := ProcFS{Root: s.roots[s.i%len(s.roots)]}
	s.i++
	return r.Read(ctx)
}

func TestSamplerOverFixtures(t *testing.T) {
	// testdata/a → testdata/b: 10 s on 2 CPUs at 100 Hz = 2000 ticks: user 300 (15 %, the 30
	// guest ticks are inside it), system 200 (10 %), softirq 200 (10 %), steal 50 (2.5 %),
	// idle 1250; busy 750 = 37.5 %. MemAvailable drops by 1 GB.
	s := NewSampler(&seq{roots: []string{"testdata/a", "testdata/b"}}, "node1")
	ctx := context.Background()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := s.Stop(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := api.NodeResources{
		Node: "node1", WindowSeconds: 10, CPUs: 2,
		CPUTotalPercent: 37.5, CPUUserPercent: 15, CPUSystemPercent: 10, CPUSoftIRQPercent: 10, CPUStealPercent: 2.5,
		MemoryTotalBytes: 16000000 * 1024, MemoryUsedStartBytes: 4000000 * 1024, MemoryUsedEndBytes: 5000000 * 1024,
	}
	if got != want {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
	if _, err := s.Stop(ctx); err == nil {
		t.Fatal("a second Stop without Start worked")
	}
}

func TestDeltaErrors(t *testing.T) {
	a, err := ProcFS{Root: "testdata/a"}.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := ProcFS{Root: "testdata/b"}.Read(context.Background())
	for _, tc := range []struct {
		name string
		a, b Snapshot
		want string
	}{
		{"reversed", b, a, "uptime went back"},
		{"same snapshot", a, a, "no CPU tick passed"},
		{"counter back", a, func() Snapshot { x := b; x.CPU.System = 1; return x }(), "cpu system ticks went back"},
	} {
		_, err := Delta(tc.a, tc.b)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	// iowait going backwards is tolerated (proc(5) calls it unreliable).
	x := b
	x.CPU.IOWait = 0
	if _, err := Delta(a, x); err != nil {
		t.Fatalf("iowait back: %v", err)
	}
}

func TestParseOldKernel(t *testing.T) {
	s, err := ProcFS{Root: "testdata/old"}.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s.CPUs != 1 || s.CPU.SoftIRQ != 100 || s.CPU.Steal != 0 || s.UptimeSeconds != 5.5 {
		t.Fatalf("%+v", s)
	}
	// No MemAvailable: MemFree + Buffers + Cached.
	if s.MemAvailableBytes != 1000000*1024 || s.MemTotalBytes != 2000000*1024 {
		t.Fatalf("memory %+v", s)
	}
}

func TestParseErrors(t *testing.T) {
	stat, _ := os.ReadFile("testdata/a/stat")
	mem, _ := os.ReadFile("testdata/a/meminfo")
	up := []byte("1.0 2.0\n")
	for _, tc := range []struct {
		name          string
		stat, mem, up string
		want          string
	}{
		{"empty uptime", string(stat), string(mem), "", "uptime is empty"},
		{"bad uptime", string(stat), string(mem), "x 1", "/proc/uptime"},
		{"no cpu line", "intr 1\n", string(mem), string(up), "no aggregate cpu line"},
		{"bad counter", "cpu 1 2 x 4 5\ncpu0 1 2 3 4 5\n", string(mem), string(up), "field 4"},
		{"short cpu line", "cpu 1 2\ncpu0 1 2 3 4\n", string(mem), string(up), "at least 4 counters"},
		{"no per-cpu lines", "cpu 1 2 3 4 5\n", string(mem), string(up), "no cpuN line"},
		{"no MemTotal", string(stat), "MemFree: 1 kB\n", string(up), "no MemTotal"},
		{"bad meminfo", string(stat), "MemTotal: lots kB\n", string(up), "/proc/meminfo line 1"},
	} {
		_, err := Parse([]byte(tc.stat), []byte(tc.mem), []byte(tc.up))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestParseBundle(t *testing.T) {
	// The real script through a real shell, on this machine's /proc.
	out, err := exec.Command("sh", "-c", BundleScript).Output()
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParseBundle(out)
	if err != nil {
		t.Fatal(err)
	}
	direct, err := ProcFS{}.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s.CPUs != direct.CPUs || s.MemTotalBytes != direct.MemTotalBytes || s.CPU.Total() == 0 {
		t.Fatalf("bundle %+v, direct %+v", s, direct)
	}
	if _, err := ParseBundle([]byte("@@uptime\n1 2\n@@stat\ncpu 1 2 3 4\ncpu0 1 2 3 4\n")); err == nil || !strings.Contains(err.Error(), "no /proc/meminfo") {
		t.Fatalf("missing section: %v", err)
	}
}

func TestSamplerOnThisMachine(t *testing.T) {
	// Keep one CPU busy for 300 ms between Start and Stop: the node's busy share must be at
	// least about one CPU's worth, and the parts must add up.
	s := NewSampler(ProcFS{}, "")
	ctx := context.Background()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	x := 0
	for end := time.Now().Add(300 * time.Millisecond); time.Now().Before(end); {
		x++
	}
	r, err := s.Stop(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r.CPUs < 1 || r.WindowSeconds <= 0 || r.MemoryTotalBytes <= 0 {
		t.Fatalf("%+v", r)
	}
	parts := r.CPUUserPercent + r.CPUSystemPercent + r.CPUIRQPercent + r.CPUSoftIRQPercent + r.CPUStealPercent
	if math.Abs(parts-r.CPUTotalPercent) > 1e-6 || r.CPUTotalPercent > 100 {
		t.Fatalf("parts %.3f != total %.3f: %+v", parts, r.CPUTotalPercent, r)
	}
	if min := 50.0 / float64(r.CPUs); r.CPUTotalPercent < min {
		t.Fatalf("busy %.1f%% with one of %d CPUs spinning (want ≥ %.0f%%)", r.CPUTotalPercent, r.CPUs, min)
	}
	if r.CPUs != runtime.NumCPU() {
		t.Logf("note: /proc/stat lists %d CPUs, Go sees %d (affinity or cgroup)", r.CPUs, runtime.NumCPU())
	}
	t.Logf("%d CPUs over %.2fs: total %.1f%% user %.1f%% system %.1f%% softirq %.1f%% (spun %d times)",
		r.CPUs, r.WindowSeconds, r.CPUTotalPercent, r.CPUUserPercent, r.CPUSystemPercent, r.CPUSoftIRQPercent, x)
}

func TestMean(t *testing.T) {
	rs := []api.NodeResources{
		{Node: "n", WindowSeconds: 1, CPUs: 4, CPUTotalPercent: 10, CPUUserPercent: 4, MemoryTotalBytes: 100, MemoryUsedStartBytes: 10, MemoryUsedEndBytes: 20},
		{Node: "n", WindowSeconds: 3, CPUs: 4, CPUTotalPercent: 30, CPUUserPercent: 8, MemoryTotalBytes: 100, MemoryUsedStartBytes: 20, MemoryUsedEndBytes: 30},
	}
	m := Mean(rs)
	if m.CPUTotalPercent != 25 || m.CPUUserPercent != 7 || m.WindowSeconds != 4 || m.MemoryUsedStartBytes != 10 || m.MemoryUsedEndBytes != 30 {
		t.Fatalf("%+v", m)
	}
	if Mean(nil) != nil {
		t.Fatal("mean of nothing")
	}
}
