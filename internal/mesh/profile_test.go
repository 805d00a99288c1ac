package mesh

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/platform"
)

// scriptedExec answers commands from a table (exec into an agent needs a kubelet; the e2e
// test TestMeshCPUProfile runs perf in real privileged agents) and records what ran.
type scriptedExec struct {
	mu    sync.Mutex
	ran   [][]string
	reply func(argv []string) driver.Output
}

func (s *scriptedExec) Exec(_ context.Context, cmd driver.Command) driver.Output {
	s.mu.Lock()
	s.ran = append(s.ran, cmd.Argv)
	s.mu.Unlock()
	return s.reply(cmd.Argv)
}

func TestFlameProfilerPerf(t *testing.T) {
	script, err := os.ReadFile("../flame/testdata/perf-script-dd.txt") // real perf script output
	if err != nil {
		t.Fatal(err)
	}
	ex := &scriptedExec{reply: func(argv []string) driver.Output {
		if len(argv) > 3 && argv[2] == "perf" && argv[3] == "script" {
			return driver.Output{Stdout: script}
		}
		return driver.Output{}
	}}
	dir := t.TempDir()
	p := &FlameProfiler{Dir: dir, Perf: true, Exec: func(Agent) platform.Executor { return ex }, Window: time.Second}
	wrap, stop := p.Start(context.Background(), CellInfo{Network: api.NetworkPod, Client: Agent{Node: "n1", Pod: "a1"}, Server: Agent{Node: "n2", Pod: "a2"}})
	if wrap != nil {
		t.Fatal("perf needs no client wrapper")
	}
	profs := stop(context.Background())
	if len(profs) != 2 || profs[0].Role != "client" || profs[1].Node != "n2" {
		t.Fatalf("profiles %+v", profs)
	}
	for _, cp := range profs {
		if cp.Kind != ProfilePerf || cp.Error != "" || cp.Samples != 22 {
			t.Fatalf("%+v", cp)
		}
		svg, err := os.ReadFile(cp.SVG)
		if err != nil || !bytes.Contains(svg, []byte("read_zero [k]")) || filepath.Dir(cp.SVG) != dir {
			t.Fatalf("%s: %v", cp.SVG, err)
		}
	}
	var records, removes int
	for _, argv := range ex.ran {
		line := strings.Join(argv, " ")
		switch {
		case strings.HasPrefix(line, "chroot /host perf record -a -g -F 99 -q -o /tmp/cnperf-perf-") && strings.HasSuffix(line, "-- sleep 1.5"):
			records++
		case strings.HasPrefix(line, "rm -f /host/tmp/cnperf-perf-") && strings.HasSuffix(line, ".data.old"):
			removes++
		}
	}
	if records != 2 || removes != 2 {
		t.Fatalf("perf records %d, removes %d:\n%v", records, removes, ex.ran)
	}
}

func TestFlameProfilerPprof(t *testing.T) {
	// A real Go CPU profile stands in for the one the agent client writes.
	var prof bytes.Buffer
	if err := pprof.StartCPUProfile(&prof); err != nil {
		t.Fatal(err)
	}
	spinCPU(200 * time.Millisecond)
	pprof.StopCPUProfile()

	var files []string
	ex := &scriptedExec{reply: func(argv []string) driver.Output {
		switch argv[0] {
		case "cnperf":
			if argv[len(argv)-2] != "--cpu-profile" {
				return driver.Output{ExitCode: 1, Stderr: []byte("no --cpu-profile")}
			}
			files = append(files, argv[len(argv)-1])
		case "cat":
			return driver.Output{Stdout: prof.Bytes()}
		}
		return driver.Output{}
	}}
	dir := t.TempDir()
	p := &FlameProfiler{Dir: dir, Exec: func(Agent) platform.Executor { return ex }}
	wrap, stop := p.Start(context.Background(), CellInfo{Network: api.NetworkHost, Client: Agent{Node: "n1"}, Server: Agent{Node: "n2"}})
	client := wrap(ex)
	for i := 0; i < 2; i++ {
		if out := client.Exec(context.Background(), driver.Command{Argv: []string{"cnperf", "agent", "client", "--json"}}); out.ExitCode != 0 {
			t.Fatal(string(out.Stderr))
		}
	}
	profs := stop(context.Background())
	if len(files) != 2 || files[0] == files[1] {
		t.Fatalf("profile files %v: want one per sample", files)
	}
	if len(profs) != 1 || profs[0].Kind != ProfilePprof || profs[0].Error != "" || profs[0].Role != "client" {
		t.Fatalf("%+v", profs)
	}
	if _, err := os.Stat(profs[0].SVG); err != nil {
		t.Fatal(err)
	}

	// An agent without --cpu-profile: the measurement is untouched, the profile says why.
	p.PprofUnsupported = "no flag"
	wrap, stop = p.Start(context.Background(), CellInfo{Client: Agent{Node: "n1"}})
	if wrap != nil {
		t.Fatal("an unsupported agent's client must not be changed")
	}
	if got := stop(context.Background()); len(got) != 1 || got[0].Error != "no flag" || got[0].SVG != "" {
		t.Fatalf("%+v", got)
	}
}

func TestAgentSupportsPprof(t *testing.T) {
	for _, tc := range []struct {
		help string
		ok   bool
	}{
		{"      --cpu-profile string   write a Go CPU profile", true},
		{"      --json   print one cnperf Sample", false},
	} {
		ex := &scriptedExec{reply: func([]string) driver.Output { return driver.Output{Stdout: []byte(tc.help)} }}
		if why := AgentSupportsPprof(context.Background(), ex); (why == "") != tc.ok {
			t.Errorf("help %q: %q", tc.help, why)
		}
	}
}

// spinCPU burns d of this process's CPU time (not wall time: on a busy machine the profile
// still gets its ~100 samples per CPU second).
func spinCPU(d time.Duration) {
	start := cpuTime()
	x := 0
	for cpuTime()-start < d {
		for i := 0; i < 10000; i++ {
			x += i
		}
	}
	_ = x
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
