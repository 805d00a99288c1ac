package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
)

// measured is one run of one tool.
type measured struct {
	fig               figure
	cpuClient, cpuSrv float64 // percent of one CPU in the run's steady state (see steadyCPU)
	cpuWhole          bool    // no steady state sampled: CPU over the whole run / traffic time
	rep               int     // which repetition: runs of the same rep ran next to each other
}

// steadyWindow is how much of each run's end the CPU figures cover: half the measured time.
func steadyWindow(s settings) time.Duration {
	return time.Duration(s.dur) * time.Second / 2
}

type row struct {
	scenario, path, peer, unit string
	a, b                       []measured
	errA, errB                 error
}

func repoRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("run from inside the cnperf module")
	}
	return filepath.Dir(mod), nil
}

func build(ctx context.Context, dir string) (settings, []string, error) {
	var notes []string
	root, err := repoRoot()
	if err != nil {
		return settings{}, nil, err
	}
	s := settings{agent: filepath.Join(dir, "cnperf-agent")}
	cmd := exec.CommandContext(ctx, "go", "build", "-o", s.agent, "./bench/cmd/cnperf-agent")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return s, nil, fmt.Errorf("build cnperf-agent: %w: %s", err, out)
	}
	if _, err := exec.LookPath("gcc"); err == nil {
		s.crr = filepath.Join(dir, "crr")
		cmd := exec.CommandContext(ctx, "gcc", "-O2", "-Wall", "-pthread", "-o", s.crr, filepath.Join(root, "bench", "crr", "crr.c"))
		if out, err := cmd.CombinedOutput(); err != nil {
			return s, nil, fmt.Errorf("build bench/crr/crr.c: %w: %s", err, out)
		}
	} else {
		notes = append(notes, "gcc not found: the C TCP_CRR reference loop is skipped")
	}
	return s, notes, nil
}

func have(bin string) bool {
	if bin == "" {
		return false
	}
	if filepath.IsAbs(bin) {
		_, err := os.Stat(bin)
		return err == nil
	}
	_, err := exec.LookPath(bin)
	return err == nil
}

func run(ctx context.Context, o options) error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("needs root (it creates network namespaces)")
	}
	dir, err := os.MkdirTemp("", "cnperf-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	s, notes, err := build(ctx, dir)
	if err != nil {
		return err
	}
	s.dur = int(math.Ceil(o.duration.Seconds()))
	s.warm = int(math.Ceil(o.warmup.Seconds()))
	paths, cleanup, err := setupPaths(ctx, o.paths)
	defer cleanup()
	if err != nil {
		return err
	}
	started := time.Now()
	load0 := loadavg()
	var rows []row
	missing := map[string]bool{}
	for _, p := range paths {
		servers := map[string]*server{}
		stopAll := func() {
			keys := make([]string, 0, len(servers))
			for k := range servers {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				servers[k].stop()
			}
		}
		for _, sc := range scenarios(s) {
			if o.only != nil && !o.only.MatchString(sc.name) {
				continue
			}
			if ctx.Err() != nil {
				break
			}
			if !have(sc.b.binary) {
				missing[sc.b.binary] = true
				continue
			}
			r := row{scenario: sc.name, path: p.name, peer: sc.b.name, unit: sc.unit}
			for i := 0; i < o.reps && ctx.Err() == nil; i++ {
				order := []*tool{&sc.a, &sc.b}
				if i%2 == 1 {
					order = []*tool{&sc.b, &sc.a}
				}
				for _, t := range order {
					m, err := runOnce(ctx, p, t, servers, s, o)
					m.rep = i
					if t == &sc.a {
						if err != nil {
							r.errA = err
						} else {
							r.a = append(r.a, m)
						}
					} else {
						if err != nil {
							r.errB = err
						} else {
							r.b = append(r.b, m)
						}
					}
				}
			}
			rows = append(rows, r)
			fmt.Fprintf(os.Stderr, "%s\n", r.summaryLine())
		}
		stopAll()
	}
	var miss []string
	for k := range missing {
		miss = append(miss, k)
	}
	sort.Strings(miss)
	for _, m := range miss {
		notes = append(notes, m+" not found in PATH: its comparisons are skipped")
	}
	printReport(os.Stdout, o, s, rows, notes, started, load0, loadavg())
	return ctx.Err()
}

func runOnce(ctx context.Context, p path, t *tool, servers map[string]*server, s settings, o options) (measured, error) {
	var srv *server
	if t.server != nil {
		srv = servers[t.server.key]
		if srv == nil || srv.cmd.ProcessState != nil {
			argv := t.server.argv(p)
			ready := t.server.ready
			t0 := time.Now()
			var err error
			srv, err = startServer(ctx, t.server.key, argv, func(out string) bool {
				if ready != "" {
					return strings.Contains(out, ready)
				}
				return time.Since(t0) > 700*time.Millisecond
			})
			if err != nil {
				return measured{}, err
			}
			servers[t.server.key] = srv
		}
	}
	var srv0 float64
	srvPID := 0
	if srv != nil {
		srv0 = srv.cpuSeconds()
		srvPID = srv.cmd.Process.Pid
	}
	argv := t.client(p)
	r, err := runClient(ctx, argv, runTimeout(s), srvPID)
	if o.verbose {
		fmt.Fprintf(os.Stderr, "  $ %s\n%s", strings.Join(argv, " "), indent(r.stdout+r.stderr))
	}
	if err != nil {
		return measured{}, err
	}
	time.Sleep(150 * time.Millisecond) // let a forking server (qperf) reap its child
	f, err := t.parse(r.stdout + "\n" + r.stderr)
	if err != nil {
		return measured{}, err
	}
	m := measured{fig: f}
	var ok bool
	m.cpuClient, m.cpuSrv, ok = steadyCPU(r.samples, r.end, cpuTail, steadyWindow(s))
	if !ok {
		// the run was too short to sample a steady state: whole run over the traffic time
		busy := t.busy
		if busy <= 0 || busy > r.wall.Seconds() {
			busy = r.wall.Seconds()
		}
		m.cpuClient = r.cpuSec / busy * 100
		if srv != nil {
			m.cpuSrv = (srv.cpuSeconds() - srv0) / busy * 100
		}
		m.cpuWhole = true
	}
	return m, nil
}

func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return ""
	}
	if len(s) > 1500 {
		s = s[:1500] + "…"
	}
	return "    " + strings.ReplaceAll(s, "\n", "\n    ") + "\n"
}

func median(ms []measured, f func(measured) float64) float64 {
	if len(ms) == 0 {
		return math.NaN()
	}
	v := make([]float64, len(ms))
	for i, m := range ms {
		v[i] = f(m)
	}
	sort.Float64s(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func medianDetail(ms []measured) string {
	if len(ms) == 0 {
		return ""
	}
	// the detail of the run whose value is the median (lower median for even counts)
	idx := make([]int, len(ms))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(i, j int) bool { return ms[idx[i]].fig.value < ms[idx[j]].fig.value })
	return ms[idx[(len(ms)-1)/2]].fig.detail
}

func (r row) summaryLine() string {
	a := median(r.a, func(m measured) float64 { return m.fig.value })
	b := median(r.b, func(m measured) float64 { return m.fig.value })
	s := fmt.Sprintf("%-26s %-8s cnperf %s %s | %s %s", r.scenario, r.path, fmtVal(a, r.unit), r.unit, r.peer, fmtVal(b, r.unit))
	if r.errA != nil {
		s += "\n    cnperf error: " + r.errA.Error()
	}
	if r.errB != nil {
		s += "\n    peer error: " + r.errB.Error()
	}
	return s
}

func fmtVal(v float64, unit string) string {
	if math.IsNaN(v) {
		return "failed"
	}
	switch unit {
	case unitGbps:
		return fmt.Sprintf("%.2f", v)
	case unitMpps:
		return fmt.Sprintf("%.3f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "?"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "model name") {
			if i := strings.IndexByte(l, ':'); i >= 0 {
				return strings.TrimSpace(l[i+1:])
			}
		}
	}
	return "?"
}

func version(argv ...string) string {
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil && len(out) == 0 {
		return "not found"
	}
	l := strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
	return l
}

func printReport(w *os.File, o options, s settings, rows []row, notes []string, start time.Time, load0, load1 string) {
	host, _ := os.Hostname()
	kernel := strings.TrimSpace(version("uname", "-r"))
	fmt.Fprintf(w, "cnperf load generator benchmark — %s\n\n", start.UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(w, "- machine: %s, %d CPUs (%s), kernel %s, %s\n", host, runtime.NumCPU(), cpuModel(), kernel, runtime.Version())
	fmt.Fprintf(w, "- load average at start %s, at end %s\n", load0, load1)
	fmt.Fprintf(w, "- each tool %d× per scenario, alternating (ABBA); %ds measured (+%ds warm-up where the tool has one); medians\n", o.reps, s.dur, s.warm)
	fmt.Fprintf(w, "- peers: %s; %s; %s; %s\n", version("iperf3", "--version"), version("sockperf", "--version"), version("qperf", "--version"), version("iperf", "-v"))
	fmt.Fprintf(w, "- CPU = user+system time of the client / server process trees (threads and live children), sampled every %s during each run, over the last %s of the measured time (ending %s before the client exits: no start-up, warm-up or result exchange), %% of one CPU; \"CPU per unit\" compares (client+server CPU)/figure; * = some runs too short to sample, whole run over the tool's traffic time\n",
		cpuSampleEvery, steadyWindow(s), cpuTail)
	for _, n := range notes {
		fmt.Fprintf(w, "- %s\n", n)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| profile | path | peer | unit | peer | cnperf | ratio | paired ratios min–max | CPU peer c/s % | CPU cnperf c/s % | CPU per unit cnperf/peer | detail peer / cnperf |")
	fmt.Fprintln(w, "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
	for _, r := range rows {
		val := func(m measured) float64 { return m.fig.value }
		a, b := median(r.a, val), median(r.b, val)
		ac := median(r.a, func(m measured) float64 { return m.cpuClient })
		as := median(r.a, func(m measured) float64 { return m.cpuSrv })
		bc := median(r.b, func(m measured) float64 { return m.cpuClient })
		bs := median(r.b, func(m measured) float64 { return m.cpuSrv })
		ratio := "—"
		cpuRatio := "—"
		if !math.IsNaN(a) && !math.IsNaN(b) && b > 0 {
			ratio = fmt.Sprintf("%.2f", a/b)
			if a > 0 && bc+bs > 0 {
				cpuRatio = fmt.Sprintf("%.2f", ((ac+as)/a)/((bc+bs)/b))
			}
		}
		detail := medianDetail(r.b) + " / " + medianDetail(r.a)
		if detail == " / " {
			detail = ""
		}
		if r.errA != nil && len(r.a) < o.reps {
			detail += " cnperf error: " + oneLine(r.errA.Error())
		}
		if r.errB != nil && len(r.b) < o.reps {
			detail += " peer error: " + oneLine(r.errB.Error())
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %.0f/%.0f%s | %.0f/%.0f%s | %s | %s |\n",
			r.scenario, r.path, r.peer, r.unit, fmtVal(b, r.unit), fmtVal(a, r.unit), ratio, pairedRange(r.a, r.b),
			bc, bs, wholeMark(r.b), ac, as, wholeMark(r.a), cpuRatio, strings.TrimSpace(detail))
	}
}

// wholeMark is "*" when any run's CPU is a whole-run figure rather than a steady-state one.
func wholeMark(ms []measured) string {
	for _, m := range ms {
		if m.cpuWhole {
			return "*"
		}
	}
	return ""
}

// pairedRange is the lowest and highest ratio cnperf/peer of runs made next to each other (the
// i-th run of each tool, ABBA order): how much of a ratio is the machine's drift. A repetition
// where either tool failed has no pair; "—" when fewer than two pairs are left.
func pairedRange(a, b []measured) string {
	peer := map[int]float64{}
	for _, m := range b {
		peer[m.rep] = m.fig.value
	}
	lo, hi, n := math.Inf(1), math.Inf(-1), 0
	for _, m := range a {
		if v, ok := peer[m.rep]; ok && v > 0 {
			q := m.fig.value / v
			lo, hi, n = math.Min(lo, q), math.Max(hi, q), n+1
		}
	}
	if n < 2 {
		return "—"
	}
	return fmt.Sprintf("%.2f–%.2f", lo, hi)
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	s = strings.ReplaceAll(s, "|", "/")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
