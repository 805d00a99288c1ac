package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/report/trend"
	"github.com/cnperf/cnperf/internal/text"
)

// TestTrendFindsAThrottledLoopback makes a small real history: twelve short loopback runs of
// the built-in generator (TCP_STREAM and TCP_RR, 2 samples of 1 s) inside a network namespace
// of its own whose loopback has a token-bucket filter (tc qdisc tbf): 4 Gbit/s for the first
// six runs, 1 Gbit/s for the last six (a real bottleneck in the kernel's path, not a different
// case: the same flags every run). `cnperf trend --min-magnitude 1` over the results directory
// — files named in the reverse order of their runs — must find exactly one change point in the
// stream's throughput, at the first throttled run, worse by more than half, and its gate must
// fail. Both phases are limited so that both measure the filter, not the machine: with the
// first six runs unlimited (loopback's 15-25 Gbit/s), another test package streaming on
// loopback beside this one (go test runs two at once) made them vary by up to half (standard
// deviation 46 % of the mean, 2026-11-29), and the t-test's p of the 93 % drop rose to 9.9e-4,
// at Otava's 0.001 (six runs a side: the open side's spread is all the test has); limited to 4
// Gbit/s they held 3.6-4.0 Gbit/s under the same load. The floor (changes by a factor of two
// or more, Otava's magnitude) is the test's question, a drop to a quarter, not leniency: on a
// loaded machine one open run measured 21 % under the others (18.9 against 24.0 Gbit/s in CI,
// 2026-11-29, magnitude 0.27), which Otava's method rightly calls a change of its own (p
// 0.0003): noise of the machine, not of cnperf.
// TCP_RR's small messages pass the filter: its series are shown, not judged (the machine's
// load is what moves them).
func TestTrendFindsAThrottledLoopback(t *testing.T) {
	if testing.Short() {
		t.Skip("measures twelve loopback runs (about a minute)")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root for a network namespace and tc (CI runs as root)")
	}
	for _, tool := range []string{"ip", "tc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (apt-get install iproute2)", tool)
		}
	}
	bin := cliBinary(t)
	ns := fmt.Sprintf("cnperf-trend-%d", os.Getpid())
	sh := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	sh("ip", "netns", "add", ns)
	t.Cleanup(func() {
		if out, err := exec.Command("ip", "netns", "del", ns).CombinedOutput(); err != nil {
			t.Errorf("ip netns del %s: %v\n%s", ns, err, out)
		}
	})
	sh("ip", "-n", ns, "link", "set", "lo", "up")
	sh("ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", "lo", "root", "tbf", "rate", "4gbit", "burst", "4mb", "latency", "20ms")
	dir := t.TempDir()
	const runs, throttledFrom = 12, 6
	for i := 0; i < runs; i++ {
		phase := "open"
		if i >= throttledFrom {
			phase = "throttled"
		}
		if i == throttledFrom {
			sh("ip", "netns", "exec", ns, "tc", "qdisc", "replace", "dev", "lo", "root", "tbf", "rate", "1gbit", "burst", "256kb", "latency", "20ms")
		}
		res := runCLI(t, "ip", "", nil, "netns", "exec", ns, bin, "run", "--platform", "local", "--driver", "native",
			"--profile", "TCP_STREAM,TCP_RR", "--duration", "1s", "--samples", "2", "--warmup", "0s", "--no-progress",
			"--label", "phase="+phase, "--results", filepath.Join(dir, fmt.Sprintf("run-%02d.jsonl", runs-i)))
		if res.code != 0 {
			t.Fatalf("run %d exited %d:\n%s\n%s", i, res.code, res.stdout, res.stderr)
		}
	}
	magnitude := []string{"--min-magnitude", "1"}
	table := runCLI(t, bin, "", nil, append([]string{"trend", dir}, magnitude...)...)
	t.Logf("cnperf trend %s:\n%s", dir, table.stdout)
	if table.code != 0 {
		t.Fatalf("trend exited %d: %s", table.code, table.stderr)
	}
	js := runCLI(t, bin, "", nil, append([]string{"trend", dir, "-o", "json"}, magnitude...)...)
	var h trend.History
	if err := json.Unmarshal([]byte(js.stdout), &h); err != nil {
		t.Fatalf("trend -o json: %v\n%s", err, js.stdout)
	}
	if len(h.Runs) != runs {
		t.Fatalf("%d runs in the history, want %d", len(h.Runs), runs)
	}
	for i, r := range h.Runs {
		if want := filepath.Join(dir, fmt.Sprintf("run-%02d.jsonl", runs-i)); r.Source != want {
			t.Fatalf("run %d of the history is %s, want %s: not ordered by start time", i, r.Source, want)
		}
	}
	var found bool
	for _, s := range h.Series {
		if s.Figure != "throughputBitsPerSecond" || !strings.HasPrefix(s.Case, "TCP_STREAM") {
			continue
		}
		found = true
		if len(s.Points) != runs || len(s.Gaps) != 0 {
			t.Fatalf("throughput series: %d points, %d gaps; want %d and none", len(s.Points), len(s.Gaps), runs)
		}
		if len(s.Changes) != 1 {
			t.Fatalf("throughput change points %+v, want one at run %d", s.Changes, throttledFrom)
		}
		c := s.Changes[0]
		if c.Run != throttledFrom || c.Verdict != trend.Worse || !(c.ChangePercent < -50) || !(c.PValue <= 0.001) ||
			h.Runs[c.Run].Labels["phase"] != "throttled" || h.Runs[c.PreviousRun].Labels["phase"] != "open" {
			t.Fatalf("throughput change point %+v, want the first throttled run (%d), worse by more than 50%%", c, throttledFrom)
		}
	}
	if !found {
		t.Fatalf("no TCP_STREAM throughput series in %+v", h.Series)
	}
	gate := runCLI(t, bin, "", nil, append([]string{"trend", dir, "--fail-on-regression", "30"}, magnitude...)...)
	if gate.code != 1 || !text.ContainsFolded(gate.stderr, "TCP_STREAM native loopback 128KiB x1, throughput: -") {
		t.Fatalf("trend --fail-on-regression 30 exited %d, want 1 naming the stream's throughput:\n%s", gate.code, gate.stderr)
	}
}
