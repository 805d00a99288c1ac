// Package tigerbench runs tiger-bench's testconfig.yaml on a Kubernetes cluster the way
// tiger-bench does, and better: before each test it reconfigures Calico when asked (and only
// with --allow-cluster-changes, restoring the previous settings at the end, also on Ctrl-C)
// and brings the test namespace's standing config (pods, Services behind a 10-pod deployment,
// NetworkPolicies) to the test's counts with server-side apply; then it measures:
// thruput-latency and iperf tests through cnperf's runner on the Kubernetes platform (qperf,
// iperf3), ttfr tests with client pods created at a rate, dnsperf tests with pods that look a
// name up and connect to it. Standing config is removed after a test unless
// leaveStandingConfig. Everything lands in the run: cases in Results, the rest in TigerBench.
package tigerbench

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/clusterinfo"
	"github.com/cnperf/cnperf/internal/config"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/driver/all"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/figure"
	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/measure"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/platform"
	kubeplatform "github.com/cnperf/cnperf/internal/platform/kube"
	"github.com/cnperf/cnperf/internal/runner"
	"github.com/cnperf/cnperf/internal/version"
)

// Options are the tiger-bench flags (of `cnperf run`; `cnperf load` shares some).
type Options struct {
	// AllowClusterChanges permits encap, dataplane and calicoNodeCPULimit.
	AllowClusterChanges bool
	// TestNodeSelector chooses the test nodes (default tigera.io/test-nodepool=default-pool,
	// falling back to every schedulable node when none has it).
	TestNodeSelector string
	// Parallelism bounds standing config API writes in flight.
	Parallelism int
	// StandingTimeout bounds the wait for standing pods.
	StandingTimeout time.Duration
	// TTFRResponseTimeout is how long a TTFR client pod tries before it reports a failure.
	TTFRResponseTimeout time.Duration
	// CalicoSettleGrace is how long a change of Calico's settings is given before anything is
	// judged or measured (0: DefaultSettleGrace; no flag: tests, embedding).
	CalicoSettleGrace time.Duration
}

// Defaults of Options (the flags' defaults).
const (
	DefaultStandingTimeout     = 10 * time.Minute
	DefaultTTFRResponseTimeout = 60 * time.Second
)

// Deps is what Run needs from the run command.
type Deps struct {
	// Kube are the Kubernetes platform's flags (kubeconfig, context, image, tolerations...).
	// Namespace is ignored: each test runs in its testNamespace.
	Kube    kubeplatform.Options
	Options Options
	RunID   string
	// OnResult is called with each finished case after it is appended to run.Results (e.g. to
	// append it to the results file); an error stops the run.
	OnResult func(api.Result) error
	// OnUpdate is called when run metadata changed (a test ended, the cluster was described),
	// e.g. to write an update record to the results file.
	OnUpdate func() error
	Progress runner.Progress
	Log      io.Writer
	// Say prints a line a person must see even with -q (what a failed clean-up may have left;
	// session.Session.Say); nil: on Log.
	Say func(ctx context.Context, line string)

	// Client, Dynamic and Config replace the clients built from Kube (tests, embedding).
	Client  kubernetes.Interface
	Dynamic dynamic.Interface
	Config  *rest.Config
}

// DefaultTestPath is what a case without a path gets.
var DefaultTestPath = api.PathPodPodCrossNode

// Cases expands the cnperf cases of a testconfig.yaml and checks every case against its
// driver and its test's kube platform (its namespace, its external address), before anything
// runs and without a cluster: `cnperf run` and `cnperf run --dry-run` both read them here.
// Message sizes are the drivers' own defaults (qperf's 64 KiB for tcp_bw: tiger-bench runs
// qperf without -m). An invalid plan is an *exit.UsageError.
func Cases(loaded *config.Loaded, base kubeplatform.Options, runID string) ([]plan.Case, error) {
	tests := loaded.TigerBench
	groups := map[string]int{}
	for i, t := range tests {
		groups[config.TigerBenchGroup(i, t.TestKind)] = i
	}
	checkers := make([]*kubeplatform.Platform, len(tests))
	for i, t := range tests {
		p, err := kubeplatform.NewWithClient(testKubeOptions(base, t), runID, io.Discard, nil, nil)
		if err != nil {
			return nil, exit.Usage("%s:%d: test [%d] (testNamespace %q): %v", loaded.File, t.Line, i, t.TestNamespace, err)
		}
		checkers[i] = p
	}
	opts := plan.Options{DefaultPaths: []api.Path{DefaultTestPath}, DriverMessageSize: all.DefaultMessageSize}
	cases, err := loaded.Expand(opts, func(c plan.Case) error {
		if err := all.Check(c); err != nil {
			return err
		}
		if i, ok := groups[c.Group]; ok {
			return checkers[i].CheckPath(c)
		}
		return nil
	})
	if err != nil {
		return nil, &exit.UsageError{Err: fmt.Errorf("invalid plan:\n%w", err)}
	}
	return cases, nil
}

// Run runs the tests of a tiger-bench testconfig.yaml. It appends finished cases to
// run.Results and the tests to run.TigerBench, and sets run.Cluster. Bad input (settings that
// need --allow-cluster-changes, plan errors) is an *exit.UsageError returned before anything
// is created; failed tests and cases give an *exit.FailureError at the end. When run has a
// Timing, it gets the set-up (checks, preflight, test nodes, Calico read), measure (the tests)
// and teardown (Calico restored) times; a run that stops before its tests has none.
func Run(ctx context.Context, loaded *config.Loaded, run *api.Run, deps Deps) error {
	started := time.Now()
	timing := run.Timing
	run.Timing = nil
	log := deps.Log
	if log == nil {
		log = io.Discard
	}
	if loaded.Schedule() != config.ScheduleTigerBench {
		return exit.Usage("tiger-bench: not a tiger-bench testconfig.yaml")
	}
	tests := loaded.TigerBench
	if err := checkClusterChanges(loaded, deps.Options.AllowClusterChanges); err != nil {
		return err
	}
	groups := map[string]int{}
	for i, t := range tests {
		groups[config.TigerBenchGroup(i, t.TestKind)] = i
	}
	kubeOpts := make([]kubeplatform.Options, len(tests))
	for i, t := range tests {
		kubeOpts[i] = testKubeOptions(deps.Kube, t)
	}
	cases, err := Cases(loaded, deps.Kube, deps.RunID)
	if err != nil {
		return err
	}
	byTest, drivers, err := casesByTest(cases, tests, groups)
	if err != nil {
		return err
	}
	cs, dyn, cfg, err := deps.clients()
	if err != nil {
		return err
	}
	if !deps.Kube.NoPreflight {
		// every permission the tests need, asked before anything is created
		if err := Preflight(ctx, cs, tests, byTest); err != nil {
			return fmt.Errorf("tiger-bench: %w", err)
		}
	}
	nodes, err := FindTestNodes(ctx, cs, deps.Options.TestNodeSelector)
	if err != nil {
		return exit.Failure("tiger-bench: %v", err)
	}
	if nodes.Note != "" {
		fmt.Fprintf(log, "note: %s\n", nodes.Note)
		run.Notes = append(run.Notes, nodes.Note)
	}
	fmt.Fprintf(log, "tiger-bench: %d tests on nodes %s\n", len(tests), strings.Join(nodes.Names, ", "))

	r := &tbRun{deps: deps, log: log, run: run, loaded: loaded, cs: cs, cfg: cfg, nodes: nodes, drivers: drivers, total: len(tests)}
	if dyn != nil {
		r.calico = &Calico{Dynamic: dyn, Client: cs, Log: log, SettleGrace: deps.Options.CalicoSettleGrace}
		// Calico as the run found it, before any test reconfigures it (each test's changes are
		// in its record).
		if d, err := r.calico.Describe(ctx); err != nil {
			fmt.Fprintf(log, "warning: could not read Calico's settings: %v\n", err)
		} else {
			r.calicoFound = d
		}
	}
	// The tests are one unit: whatever happens (failure, Ctrl-C), Calico is restored at the end.
	unit := measure.Unit{
		Measure: func(ctx context.Context) error { return r.runTests(ctx, byTest, kubeOpts) },
		Close: func(ctx context.Context) error {
			if r.calico == nil {
				return nil
			}
			if rerr := r.calico.Restore(ctx); rerr != nil {
				fmt.Fprintf(log, "error: %v\n", rerr)
				return rerr
			}
			return nil
		},
		CloseTimeout: 15 * time.Minute,
	}
	setup := time.Since(started)
	var measured api.Timing
	err = measure.Run(ctx, measure.Options{Say: r.say, Timing: &measured}, unit)
	if timing != nil {
		*timing = measured
		timing.SetupSeconds = setup.Seconds()
		run.Timing = timing
	}
	return err
}

// casesByTest sorts the cases by their test (groups: a test's index by its group), with the
// test's ports, and looks each case's driver up.
func casesByTest(cases []plan.Case, tests []config.TigerBenchTestConfig, groups map[string]int) ([][]plan.Case, map[string]driver.Driver, error) {
	byTest := make([][]plan.Case, len(tests))
	drivers := map[string]driver.Driver{}
	for _, c := range cases {
		i, ok := groups[c.Group]
		if !ok {
			return nil, nil, fmt.Errorf("case %s belongs to no test (group %q)", c, c.Group)
		}
		byTest[i] = append(byTest[i], withTestPorts(c, tests[i]))
		if _, ok := drivers[c.Driver]; !ok {
			d, err := all.Get(c.Driver)
			if err != nil {
				return nil, nil, &exit.UsageError{Err: err}
			}
			drivers[c.Driver] = d
		}
	}
	return byTest, drivers, nil
}

// clients are the given clients, or those built from the Kube flags (a bad kubeconfig is a
// usage error); the dynamic client is nil when there is no REST config.
func (deps Deps) clients() (kubernetes.Interface, dynamic.Interface, *rest.Config, error) {
	cs, dyn, cfg := deps.Client, deps.Dynamic, deps.Config
	var err error
	if cs == nil {
		if cs, cfg, err = kube.NewClientset(deps.Kube.Kubeconfig, deps.Kube.Context); err != nil {
			return nil, nil, nil, exit.Usage("%v", err)
		}
	}
	if dyn == nil && cfg != nil {
		if dyn, err = dynamic.NewForConfig(cfg); err != nil {
			return nil, nil, nil, fmt.Errorf("create dynamic client: %w", err)
		}
	}
	return cs, dyn, cfg, nil
}

// runTests runs the tests one after the other and records them in the run.
func (r *tbRun) runTests(ctx context.Context, byTest [][]plan.Case, kubeOpts []kubeplatform.Options) error {
	run, tests := r.run, r.loaded.TigerBench
	for i, t := range tests {
		if ctx.Err() != nil {
			break
		}
		rec := r.runTest(ctx, i, t, byTest[i], kubeOpts[i])
		run.TigerBench = append(run.TigerBench, rec)
		if err := r.update(); err != nil {
			return err
		}
		if r.fatal != nil {
			return r.fatal
		}
	}
	if run.Cluster == nil {
		r.describe(ctx, nil)
	}
	if ctx.Err() != nil {
		run.Interrupted = true
		return exit.Failure("interrupted: %d of %d tests finished and were kept", countFinished(run.TigerBench), len(tests))
	}
	return failures(run)
}

// checkClusterChanges refuses settings that reconfigure the cluster unless allowed.
func checkClusterChanges(loaded *config.Loaded, allow bool) error {
	var asked []string
	var errs []error
	for i, t := range loaded.TigerBench {
		s := CalicoSettings{Encap: t.Encap, Dataplane: t.Dataplane, CPULimit: t.CalicoNodeCPULimit}
		if err := s.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: test [%d]: %w", loaded.File, t.Line, i, err))
		}
		if !s.IsZero() {
			asked = append(asked, fmt.Sprintf("%s:%d: test [%d] (%s): %s", loaded.File, t.Line, i, t.TestKind, s))
		}
	}
	if len(errs) > 0 {
		return &exit.UsageError{Err: errors.Join(errs...)}
	}
	if len(asked) > 0 && !allow {
		return exit.Usage("these tests reconfigure the cluster's Calico, which could disrupt what else runs on it; pass --allow-cluster-changes to let them (the previous settings are restored at the end):\n  %s",
			strings.Join(asked, "\n  "))
	}
	return nil
}

// testKubeOptions are the platform options for one test: its namespace, and the external
// address of its external scenario.
func testKubeOptions(base kubeplatform.Options, t config.TigerBenchTestConfig) kubeplatform.Options {
	o := base
	o.Namespace = t.TestNamespace
	o.Keep = false
	if t.Perf != nil && t.Perf.External {
		o.External = t.Perf.ExternalIPOrFQDN
	}
	return o
}

// withTestPorts makes the servers of an external test listen on its TestPort and ControlPort
// (config.TigerBenchTestConfig.PortOptions).
func withTestPorts(c plan.Case, t config.TigerBenchTestConfig) plan.Case {
	if opts := t.PortOptions(); opts != nil {
		c.Params.Options = plan.MergeOptions(c.Params.Options, opts)
	}
	return c
}

type tbRun struct {
	deps    Deps
	loaded  *config.Loaded
	log     io.Writer
	run     *api.Run
	cs      kubernetes.Interface
	cfg     *rest.Config
	nodes   *TestNodes
	drivers map[string]driver.Driver
	calico  *Calico
	// calicoFound are Calico's details before the run changed anything (nil: no Calico).
	calicoFound *api.CalicoDetails
	total       int
	// fatal stops the run (the results file could not be written).
	fatal error
}

func (r *tbRun) update() error {
	if r.deps.OnUpdate != nil {
		if err := r.deps.OnUpdate(); err != nil {
			return fmt.Errorf("record run: %w", err)
		}
	}
	return nil
}

// standingClient is the clientset for standing config: without the client-side rate limit
// when a REST config is at hand (see StandingClient).
func (r *tbRun) standingClient() kubernetes.Interface {
	if r.cfg == nil {
		return r.cs
	}
	cs, err := StandingClient(r.cfg, r.deps.Options.Parallelism)
	if err != nil {
		return r.cs
	}
	return cs
}

func (r *tbRun) image() (string, corev1.PullPolicy) {
	o := r.deps.Kube
	img := o.Image
	if img == "" {
		img = version.DefaultImage()
	}
	pp := corev1.PullPolicy(o.ImagePullPolicy)
	if pp == "" {
		pp = corev1.PullIfNotPresent
	}
	return img, pp
}

// reconfigureCalico gives Calico this test's settings, or the run's back for a test that asks
// none; false (the failure recorded) when that failed.
func (r *tbRun) reconfigureCalico(ctx context.Context, t config.TigerBenchTestConfig, rec *api.TigerBenchTest,
	fail func(format string, a ...any)) bool {
	settings := CalicoSettings{Encap: t.Encap, Dataplane: t.Dataplane, CPULimit: t.CalicoNodeCPULimit}
	if r.calico != nil && (!settings.IsZero() || r.calico.orig != nil) {
		ch, err := r.calico.Apply(ctx, settings)
		if !settings.IsZero() {
			rec.Calico = ch
		}
		if err != nil {
			fail("Calico reconfiguration (%s): %v", settings, err)
			return false
		}
	} else if !settings.IsZero() {
		fail("Calico reconfiguration (%s): no dynamic client", settings)
		return false
	}
	return true
}

// runTest runs one test and returns its record; failures are recorded, not returned.
func (r *tbRun) runTest(ctx context.Context, i int, t config.TigerBenchTestConfig, cases []plan.Case, ko kubeplatform.Options) (rec api.TigerBenchTest) {
	rec = api.TigerBenchTest{Index: i, Kind: t.TestKind, Group: config.TigerBenchGroup(i, t.TestKind), StartTime: time.Now().UTC()}
	defer func() { rec.EndTime = time.Now().UTC() }()
	rec.Config = testConfigJSON(t, cases)
	fmt.Fprintf(r.log, "tiger-bench: test %d of %d: %s in namespace %s\n", i+1, r.total, t.TestKind, t.TestNamespace)
	fail := func(format string, a ...any) {
		msg := fmt.Sprintf(format, a...)
		if rec.Error == "" {
			rec.Error = msg
		} else {
			rec.Error += "; " + msg
		}
		fmt.Fprintf(r.log, "tiger-bench: test %d: %s\n", i+1, msg)
	}

	if !r.reconfigureCalico(ctx, t, &rec, fail) {
		return rec
	}

	// Standing config: a unit of the test, removed at its end (also on error and Ctrl-C)
	// unless leaveStandingConfig.
	img, pp := r.image()
	st := &Standing{Client: r.standingClient(), Log: r.log, RunID: r.deps.RunID}
	spec := StandingSpec{Namespace: t.TestNamespace, Pods: t.NumPods, Services: t.NumServices, Policies: t.NumPolicies,
		IdlePolicies: t.NumIdlePolicies, Nodes: r.nodes.Names, Image: img, PullPolicy: pp,
		Parallelism: r.deps.Options.Parallelism, ReadyTimeout: r.deps.Options.StandingTimeout}
	standing := measure.Unit{
		Prepare: func(ctx context.Context) error {
			sc, err := st.Apply(ctx, spec)
			rec.Standing = sc
			if err != nil {
				return fmt.Errorf("standing config: %w", err)
			}
			return nil
		},
		Measure: func(ctx context.Context) error {
			r.measureTest(ctx, &rec, i, t, cases, ko, fail)
			return nil
		},
		Close: func(ctx context.Context) error {
			if t.LeaveStandingConfig {
				if rec.Standing != nil {
					rec.Standing.Kept = true
					fmt.Fprintf(r.log, "tiger-bench: standing config left in namespace %s (leaveStandingConfig; remove it with: cnperf load remove -n %s, or cnperf cleanup --standing %s)\n", t.TestNamespace, t.TestNamespace, t.TestNamespace)
				}
				return nil
			}
			took, err := st.Remove(ctx, t.TestNamespace, true, r.deps.Options.Parallelism)
			if rec.Standing != nil {
				rec.Standing.RemoveSeconds = took.Seconds()
			}
			if err != nil {
				return fmt.Errorf("remove standing config: %w", err)
			}
			return nil
		},
		CloseTimeout: 5 * time.Minute,
	}
	if !t.LeaveStandingConfig {
		standing.Leftovers = func() string {
			return fmt.Sprintf("may be left in the cluster: standing config in namespace %s; remove it with: cnperf load remove -n %s",
				t.TestNamespace, t.TestNamespace)
		}
	}
	for _, err := range measure.Errors(measure.Run(ctx, measure.Options{Say: r.say}, standing)) {
		fail("%v", err)
	}
	return rec
}

// measureTest measures a test whose standing config is in place, by its kind; failures are
// recorded in rec.
func (r *tbRun) measureTest(ctx context.Context, rec *api.TigerBenchTest, i int, t config.TigerBenchTestConfig, cases []plan.Case,
	ko kubeplatform.Options, fail func(string, ...any)) {
	img, pp := r.image()
	// the pods of a TTFR or DNS test
	pods := PodTestSpec{Namespace: t.TestNamespace, ID: kube.ShortID(r.deps.RunID) + fmt.Sprintf("-%d", i), RunID: r.deps.RunID,
		Nodes: r.nodes.Names, HostNetwork: t.HostNetwork, Image: img, PullPolicy: pp, StartTimeout: ko.PodStartTimeout}
	switch t.TestKind {
	case config.TigerBenchThruputLatency, config.TigerBenchIperf:
		if len(cases) == 0 {
			return // iterations 0 or no scenario: standing config only
		}
		r.measureCases(ctx, rec, cases, ko, fail)
	case config.TigerBenchTTFR:
		tc := t.TTFRConfig
		if tc == nil {
			tc = &config.TigerBenchTTFRConfig{}
		}
		d := t.Duration
		if tc.TestDuration > 0 {
			d = tc.TestDuration
		}
		runner := &TTFRRunner{Client: r.cs, Log: r.log}
		res, err := runner.Run(ctx, TTFRSpec{PodTestSpec: pods, Rate: tc.Rate, PodsPerNode: tc.TestPodsPerNode,
			Duration: time.Duration(d) * time.Second, ResponseTimeout: r.deps.Options.TTFRResponseTimeout})
		rec.TTFR = res
		if err != nil {
			fail("%v", err)
		}
		r.describe(ctx, nil)
	case config.TigerBenchDNSPerf:
		dc := t.DNSPerf
		if dc == nil {
			dc = &config.TigerBenchDNSConfig{}
		}
		name, port, err := DNSTarget(dc.TargetURL, dc.TargetDomain)
		if err != nil {
			fail("%v", err)
			return
		}
		if dc.Mode != "" || dc.TestDNSPolicy || dc.RunStress || dc.NumDomains > 0 {
			rec.Warnings = append(rec.Warnings, "DNSPerf Mode, TestDNSPolicy, RunStress and NumDomains configure Calico Enterprise's DNS policy, which cnperf does not set up; lookups and connects are measured without it")
		}
		runner := &DNSRunner{Client: r.cs, Log: r.log}
		res, err := runner.Run(ctx, DNSSpec{PodTestSpec: pods, Target: name, Port: port,
			TargetPods: dc.NumTargetPods, Duration: time.Duration(t.Duration) * time.Second})
		rec.DNS = res
		if err != nil {
			fail("%v", err)
		}
		r.describe(ctx, nil)
	}
}

// measureCases runs a thruput-latency or iperf test's cases through cnperf's runner on the
// Kubernetes platform, in the test's namespace.
func (r *tbRun) measureCases(ctx context.Context, rec *api.TigerBenchTest, cases []plan.Case, ko kubeplatform.Options, fail func(string, ...any)) {
	if r.nodes.Selector != "" && len(ko.NodeSelector) == 0 {
		ko.NodeSelector = equalitySelector(r.nodes.Selector)
	}
	plat, err := kubeplatform.NewWithClient(ko, r.deps.RunID, r.log, r.cs, r.cfg)
	if err != nil {
		fail("kube platform: %v", err)
		return
	}
	if cases, err = casesOn(ctx, plat, cases, r.drivers); err != nil {
		fail("kube platform: %v", err)
		return
	}
	u := platform.Unit(plat, cases, r.drivers)
	prepare := u.Prepare
	u.Prepare = func(ctx context.Context) error {
		if err := prepare(ctx); err != nil {
			return fmt.Errorf("set up the kube platform: %w", err)
		}
		r.describe(ctx, plat)
		return nil
	}
	u.Measure = func(ctx context.Context) error {
		run := &runner.Runner{Platform: plat, Drivers: r.drivers, Progress: r.deps.Progress,
			OnResult: func(res api.Result) error {
				r.run.Results = append(r.run.Results, res)
				if r.deps.OnResult != nil {
					if err := r.deps.OnResult(res); err != nil {
						r.fatal = err
						return err
					}
				}
				return nil
			}}
		if _, err := run.Run(ctx, cases); err != nil && !errors.Is(err, runner.ErrInterrupted) {
			return err
		}
		return nil
	}
	for _, err := range measure.Errors(measure.Run(ctx, measure.Options{Say: r.say}, u)) {
		fail("%v", err)
	}
}

// casesOn are a test's cases as plat measures them: those that name no IP family on the
// platform's default one (platform.DefaultFamily, as cnperf run does: IPv6 on a cluster whose
// nodes put IPv6 first), then their server ports (driver.AllocatePorts, which gives an IPv6
// server of iperf 2 and sockperf its own port).
func casesOn(ctx context.Context, plat platform.Platform, cases []plan.Case, drivers map[string]driver.Driver) ([]plan.Case, error) {
	cases, err := platform.DefaultFamily(ctx, plat, cases)
	if err != nil {
		return nil, err
	}
	return driver.AllocatePorts(cases, drivers), nil
}

// say prints a line a person must see (what a failed clean-up may have left).
func (r *tbRun) say(ctx context.Context, line string) {
	if r.deps.Say != nil {
		r.deps.Say(ctx, line)
		return
	}
	fmt.Fprintln(r.log, line)
}

var _ platform.ClusterDescriber = (*kubeplatform.Platform)(nil)

// describe sets run.Cluster once: from the platform when one ran (nodes, CNI, MTU), else from
// the API; Calico's details are added from its resources when Calico is present.
func (r *tbRun) describe(ctx context.Context, plat platform.ClusterDescriber) {
	if r.run.Cluster != nil {
		return
	}
	// Cluster details are worth having even from an interrupted run.
	ctx, cancel := measure.Cleanup(ctx, time.Minute)
	defer cancel()
	if r.run.Cluster == nil {
		var cd *api.ClusterDetails
		var err error
		if plat != nil {
			cd, err = plat.Describe(ctx)
		} else {
			cd, err = clusterinfo.Collect(ctx, clusterinfo.Input{Client: r.cs, Nodes: r.nodes.Names, Log: r.log})
		}
		if err != nil {
			fmt.Fprintf(r.log, "warning: could not describe the cluster: %v\n", err)
			return
		}
		r.run.Cluster = cd
	}
	if d := r.calicoFound; d != nil {
		r.run.Cluster.Calico = mergeCalico(r.run.Cluster.Calico, d)
		if r.run.Cluster.IPFamily == "" {
			r.run.Cluster.IPFamily = clusterinfo.ClusterFamily(d.IPFamily) // the pools' "dual" is the cluster's "dual-stack"
		}
	}
	if err := r.update(); err != nil && r.fatal == nil {
		r.fatal = err
	}
}

// mergeCalico prefers what Calico's own resources say, keeping what clusterinfo found.
func mergeCalico(have, d *api.CalicoDetails) *api.CalicoDetails {
	if have == nil {
		return d
	}
	out := *have
	out.Product = cmp.Or(d.Product, out.Product)
	out.Version = cmp.Or(d.Version, out.Version)
	out.Encapsulation = cmp.Or(d.Encapsulation, out.Encapsulation)
	out.Dataplane = cmp.Or(d.Dataplane, out.Dataplane)
	out.IPFamily = cmp.Or(d.IPFamily, out.IPFamily)
	out.ClusterType = cmp.Or(d.ClusterType, out.ClusterType)
	out.CNIType = cmp.Or(d.CNIType, out.CNIType)
	out.WireguardEnabled = out.WireguardEnabled || d.WireguardEnabled
	return &out
}

// testConfigJSON is the test as tiger-bench writes it in results.json (a file without
// iterations reads as 0, and then nothing is measured, as in tiger-bench).
func testConfigJSON(t config.TigerBenchTestConfig, _ []plan.Case) json.RawMessage {
	b, err := json.Marshal(t)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}

func countFinished(tests []api.TigerBenchTest) int {
	n := 0
	for _, t := range tests {
		if t.Error == "" {
			n++
		}
	}
	return n
}

// failures turns failed tests and cases into exit code 1 with a summary.
func failures(run *api.Run) error {
	var failed []string
	for i := range run.TigerBench {
		t := &run.TigerBench[i]
		if !t.Failed() {
			continue
		}
		why := t.Error
		switch {
		case why != "":
		case t.Standing != nil && t.Standing.Error != "":
			why = "standing config: " + t.Standing.Error
		case t.TTFR != nil:
			why = fmt.Sprintf("ttfr: %d of %d pods got no response", t.TTFR.Failures, t.TTFR.Failures+t.TTFR.Datapoints)
		case t.DNS != nil:
			why = fmt.Sprintf("dns: %d of %d lookups and %d of %d connects failed", t.DNS.LookupFailures, t.DNS.Lookups, t.DNS.ConnectFailures, t.DNS.Connects)
		}
		failed = append(failed, fmt.Sprintf("test %d (%s): %s", t.Index+1, t.Kind, why))
	}
	for i, r := range run.Results {
		if r.Failed() {
			failed = append(failed, fmt.Sprintf("case %d (%s %s %s, %s): %s", i+1, r.Profile, r.Driver, r.Path, r.Group, figure.FailureSummary(&r)))
		}
	}
	if len(failed) == 0 {
		return nil
	}
	return exit.Failure("%d failures:\n  %s", len(failed), strings.Join(failed, "\n  "))
}

// equalitySelector splits "k=v,k2=v2" into the kube platform's --node-selector items; nil
// when the selector uses other operators (the platform then chooses among all nodes).
func equalitySelector(sel string) []string {
	var out []string
	for _, part := range strings.Split(sel, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || k == "" || strings.ContainsAny(k+v, "!=() ") {
			return nil
		}
		out = append(out, k+"="+v)
	}
	return out
}
