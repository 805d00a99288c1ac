// Package runcmd is `cnperf run`: expand the plan, place endpoints, run every case, write
// results as each case ends, and print them.
package runcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/cli/flags"
	"github.com/cnperf/cnperf/internal/config"
	"github.com/cnperf/cnperf/internal/driver/all"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/figure"
	"github.com/cnperf/cnperf/internal/iostreams"
	"github.com/cnperf/cnperf/internal/limits"
	"github.com/cnperf/cnperf/internal/measure"
	"github.com/cnperf/cnperf/internal/pathmtu"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/platform"
	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/runner"
	"github.com/cnperf/cnperf/internal/session"
	"github.com/cnperf/cnperf/internal/sink"
	"github.com/cnperf/cnperf/internal/sink/opensearch"
	"github.com/cnperf/cnperf/internal/sink/prometheus"
	"github.com/cnperf/cnperf/internal/sink/pushgateway"
	"github.com/cnperf/cnperf/internal/text"
	"github.com/cnperf/cnperf/internal/tigerbench"
)

// Options are the flags of `cnperf run`.
type Options struct {
	ConfigFile  string
	Output      string
	ResultsFile string
	Platform    string
	UUID        string
	Labels      []string
	NoProgress  bool
	// CheckMTU checks the path MTU of every path before measuring (internal/pathmtu).
	CheckMTU bool
	// DryRun reads, validates and expands the plan and prints its cases without running
	// anything: no cluster is contacted, no server started, nothing created.
	DryRun bool
	// AllowShortSamples lets samples be shorter than limits.MinDuration (100 ms).
	AllowShortSamples bool
	Flags             config.FlagValues
	// Networks are k8s-netperf's network flags (--bridge, --macvlan, --udnl2, ...).
	Networks   k8sNetperfNetworks
	Platforms  platformOptions
	Sinks      sink.Options
	TigerBench tigerbench.Options

	// loaded is the plan file (-c), read before the platform is set up (its vm block is the
	// platform's); vm is what that block gave the kube platform.
	loaded *config.Loaded
	vm     planVM
	// platform, when set, is the platform instead of the one --platform chooses (tests).
	platform platform.Platform
	// stdin is where -c - reads the plan.
	stdin io.Reader
}

// DefaultSuiteProfiles are the five main profiles of the default local suite.
var DefaultSuiteProfiles = []api.Profile{api.TCPStream, api.TCPMaerts, api.UDPStream, api.TCPRR, api.TCPCRR}

// NewCommand returns the run command.
func NewCommand(streams iostreams.Streams) *cobra.Command {
	return newCommand(streams, &Options{})
}

func newCommand(streams iostreams.Streams, o *Options) *cobra.Command {
	c := &cobra.Command{
		Use:   "run",
		Short: "Run a measurement plan and print the results",
		Long: `Run a plan: from a file (-c: a cnperf Plan, a k8s-netperf netperf.yml v1/v2, or a
tiger-bench testconfig.yaml) and/or from flags. With no plan and no cluster configured, cnperf
runs a short default suite on the local platform (loopback, built-in generator) and says so.

Progress goes to stderr; results go to stdout in the -o format. --results FILE keeps the run
on disk, appended as each case ends, so an interrupted run loses no finished case.`,
		Example: `  cnperf run                                   # no cluster: a short suite on this host
  cnperf run --profile TCP_RR --duration 2s --samples 3 -o json
  cnperf run --driver native,iperf3 --profile TCP_STREAM --results run.jsonl
  cnperf run --confidence 95,5 --samples 3,30   # each case until its 95% CI is within ±5%
  cnperf run -c plan.yaml --dry-run            # what a plan would run; nothing is created
  cat plan.yaml | cnperf run -c -              # the plan from standard input
  sudo cnperf run --paths all                  # every local path, in network namespaces`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.Run(cmd.Context(), streams, cmd.Flags())
		},
	}
	fs := c.Flags()
	fs.StringVarP(&o.ConfigFile, "config", "c", "", `plan file: cnperf Plan YAML, k8s-netperf netperf.yml (v1/v2) or tiger-bench testconfig.yaml; "-" reads standard input`)
	fs.StringVarP(&o.Output, "output", "o", "table", "output format: "+strings.Join(report.Formats(), ", "))
	fs.StringVar(&o.ResultsFile, "results", "", "write the run to this file as each case ends (JSON Lines; read by report/compare)")
	fs.StringVar(&o.Platform, "platform", "auto", "where endpoints live: auto (kube with --kubeconfig/--context or a configured cluster, else local), local, kube")
	fs.StringVar(&o.UUID, "uuid", "", "run id to use instead of a random UUID")
	fs.StringArrayVar(&o.Labels, "label", nil, "label the run, KEY=VALUE (repeatable), e.g. --label cni=calico")
	fs.BoolVar(&o.NoProgress, "no-progress", false, "do not print progress on stderr")
	fs.BoolVar(&o.CheckMTU, "check-mtu", false, "before measuring, find each path's MTU both ways (ICMP echo with don't-fragment) and report a mismatch with the interface MTU: a black hole, or a path that needs path-MTU discovery")
	flags.DryRun(fs, &o.DryRun, "read, validate and expand the plan and print the cases it would run (-o table, json or yaml), the platform and the warnings; contacts no cluster, starts and creates nothing; exit 0 when valid, 2 when not")
	addPlanFlags(fs, &o.Flags)
	o.Networks.addFlags(fs)
	fs.BoolVar(&o.AllowShortSamples, "allow-short-samples", false,
		"allow --duration below "+limits.MinDuration.String()+" (set-up and timers then dominate a sample)")
	// Plural spellings are accepted: --paths all, --profiles, --drivers.
	fs.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		switch name {
		case "paths", "profiles", "drivers", "message-sizes":
			return pflag.NormalizedName(strings.TrimSuffix(name, "s"))
		}
		return pflag.NormalizedName(name)
	})
	o.Platforms.addFlags(fs)
	flags.Sinks(fs, &o.Sinks)
	flags.TigerBench(fs, &o.TigerBench)
	addCompletions(c)
	return c
}

// Run runs the command: the flags resolved (setup), the plan expanded into cases (expand),
// one library call that makes the run (session.RunCases), then its output, the OpenSearch
// index, the gates and the exit code.
func (o *Options) Run(ctx context.Context, streams iostreams.Streams, fs *pflag.FlagSet) error {
	o.stdin = streams.In
	lg := streams.Logger()
	// what the library packages print line by line (platform choice, servers started, sinks)
	log := streams.LogWriter()
	st, err := o.setup(streams, fs)
	if err != nil {
		return err
	}
	p, loaded, defaultSuite, err := o.buildPlan(fs)
	if err != nil {
		return err
	}
	if sch := loaded.Schedule(); sch == config.ScheduleTigerBench {
		if o.CheckMTU {
			return exit.Usage("--check-mtu: %s is a tiger-bench testconfig, whose tests the path-MTU check does not cover; check with cnperf run --check-mtu --path PATH", o.ConfigFile)
		}
		if o.DryRun {
			return o.dryRunTigerBench(streams, loaded)
		}
		if st.push != nil {
			return exit.Usage("--push-gateway: %s is a tiger-bench testconfig, whose results are not Prometheus metrics", o.ConfigFile)
		}
		if sch.NeedsCluster() && !platform.TraitsOf(st.plat).Cluster {
			return exit.Usage("%s is a tiger-bench testconfig: its tests need a Kubernetes cluster (--platform kube)", o.ConfigFile)
		}
		return o.runTigerBench(ctx, streams, loaded, st.runID, st.labels, st.enc)
	}
	cases, err := o.expand(st.plat, p, loaded, lg)
	if err != nil {
		return err
	}
	if o.DryRun {
		var meta string
		if platform.TraitsOf(st.plat).Cluster {
			if meta, err = o.Platforms.podMetadata(); err != nil {
				return err
			}
		}
		notes := dryRunNotes(st.plat, meta)
		if n := o.vm.note(); n != "" {
			notes = append(notes, n)
		}
		return printDryRun(streams.Out, o.Output, st.plat.Name(), notes, cases, nil, iostreams.Columns(streams.Out))
	}
	if defaultSuite {
		sayDefaultSuite(lg, cases)
	}
	// (after --dry-run, which asks no cluster)
	if cases, err = platform.DefaultFamily(ctx, st.plat, cases); err != nil {
		return fmt.Errorf("set up the %s platform: %w", st.plat.Name(), err)
	}
	run, runErr := session.RunCases(ctx, st.plat, cases, o.spec(ctx, streams, st, p, loaded != nil))
	if run == nil {
		return runErr
	}
	if len(run.Results) > 0 || runErr == nil {
		if err := st.enc.Encode(streams.Out, []*api.Run{run}); err != nil {
			return errors.Join(runErr, fmt.Errorf("write %s output: %w", o.Output, err))
		}
	}
	if st.os != nil && len(run.Results) > 0 {
		if err := o.index(ctx, *st.os, run, lg, log); err != nil {
			runErr = errors.Join(runErr, err)
		}
	}
	if st.push != nil {
		if err := push(ctx, *st.push, run, log); err != nil {
			runErr = errors.Join(runErr, err)
		}
	}
	if runErr != nil {
		return runErr
	}
	if err := o.Platforms.gate(run, log); err != nil {
		return err
	}
	return failedCases(run)
}

// spec is what session.RunCases needs of the flags and the plan besides the cases.
func (o *Options) spec(ctx context.Context, streams iostreams.Streams, st setup, p *api.Plan, planFile bool) session.Spec {
	lg := streams.Logger()
	spec := session.Spec{
		Header:      session.Header{UUID: st.runID, Platform: st.plat.Name(), Labels: st.labels, Host: true, Timing: true},
		PlanLabels:  p.Metadata.Labels,
		ResultsFile: o.ResultsFile,
		Log:         lg,
	}
	if planFile { // a plan file's metadata.name names the run (docs/plan.md)
		spec.PlanName = p.Metadata.Name
	}
	if st.prom != nil {
		spec.Annotator = st.prom
	}
	if o.CheckMTU {
		mo := pathmtu.DefaultOptions()
		spec.CheckPathMTU = &mo
	}
	if !o.NoProgress && lg.Enabled(ctx, slog.LevelInfo) { // -q: no progress either
		spec.Progress = &runner.TextProgress{W: streams.ErrOut, Terminal: iostreams.IsTerminal(streams.ErrOut), Width: iostreams.MessageWidth(streams.ErrOut)}
	}
	return spec
}

// setup is what the flags say besides the plan: the output encoder, the run's labels and id,
// the platform (and --path all resolved on it) and the sinks.
type setup struct {
	enc    report.Encoder
	labels map[string]string
	runID  string
	plat   platform.Platform
	os     *opensearch.Config
	prom   *prometheus.Collector
	push   *pushgateway.Config
}

func (o *Options) setup(streams iostreams.Streams, fs *pflag.FlagSet) (st setup, err error) {
	log := streams.LogWriter()
	if o.DryRun {
		if err := flags.DryRunOutput(o.Output, dryRunFormats); err != nil {
			return st, err
		}
	}
	if st.enc, err = report.Lookup(o.Output, report.Width(iostreams.Columns(streams.Out))); err != nil {
		return st, &exit.UsageError{Err: err}
	}
	if st.labels, err = session.ParseLabels(o.Labels); err != nil {
		return st, err
	}
	if st.runID, err = session.RunID(o.UUID); err != nil {
		return st, err
	}
	secondary := secondaryNetworkGiven(fs)
	if err := o.Networks.apply(fs, &o.Flags, &o.Platforms.kube); err != nil {
		return st, err
	}
	if err := o.loadPlanFile(); err != nil {
		return st, err
	}
	if o.vm, err = applyPlanVM(fs, o.loaded, &o.Platforms.kube); err != nil {
		return st, err
	}
	if err := o.Networks.vmNetworks(fs, &o.Flags, &o.Platforms.kube, secondary); err != nil {
		return st, err
	}
	set := func(name string) bool { f := fs.Lookup(name); return f != nil && f.Changed }
	if st.os, err = o.Sinks.OpenSearch(log); err != nil {
		return st, exit.Usage("%v", err)
	}
	if st.prom, err = o.Sinks.Prometheus(log); err != nil {
		return st, exit.Usage("%v", err)
	}
	if st.prom != nil {
		o.Platforms.kube.Hardware = st.prom // the nodes' hardware from their node-exporters
	}
	st.plat = o.platform
	if st.plat == nil {
		if st.plat, err = o.Platforms.choose(o.Platform, st.runID, log, o.ConfigFile == "" && !anyPlanFlagSet(set), o.DryRun); err != nil {
			return st, o.vm.fileError(err, fs)
		}
	}
	if m := o.Platforms.kube.NetworkMode; m != nil && st.plat.Name() != "kube" {
		return st, exit.Usage("%s: only on the kube platform (it is k8s-netperf's, for a Kubernetes cluster), not on %s", m.Flag, st.plat.Name())
	}
	if vm := o.Platforms.kube.VM; vm != "" && st.plat.Name() != "kube" && o.vm.endpointsFromPlan() {
		return st, o.vm.fieldError("vm.endpoints", fmt.Sprintf("only on the kube platform (its endpoints are KubeVirt VMs), not on %s", st.plat.Name()))
	} else if vm != "" && st.plat.Name() != "kube" {
		return st, exit.Usage("--vm=%s: only on the kube platform (its endpoints are KubeVirt VMs), not on %s", vm, st.plat.Name())
	}
	if strings.EqualFold(strings.TrimSpace(o.Flags.Path), "all") {
		paths := allPaths(st.plat, log)
		if paths == nil {
			return st, exit.Usage("--path all: the %s platform cannot list its paths; name them", st.plat.Name())
		}
		o.Flags.Path = strings.Join(paths, ",")
	}
	if st.push, err = o.Sinks.PushGateway(log); err != nil {
		return st, exit.Usage("%v", err)
	}
	return st, nil
}

// noArgs is cobra.NoArgs with a hint for "--vm server": --vm takes its value only after "="
// (--vm alone is both, as k8s-netperf's), so "server" was read as an argument.
func noArgs(cmd *cobra.Command, args []string) error {
	if f := cmd.Flags().Lookup("vm"); f != nil && f.Changed && f.Value.String() == f.NoOptDefVal && len(args) > 0 &&
		slices.Contains([]string{"server", "client", "both", vmNone}, args[0]) {
		return exit.Usage("--vm %s: write --vm=%s (--vm alone means both, as k8s-netperf's --vm)", args[0], args[0])
	}
	return cobra.NoArgs(cmd, args)
}

// expand turns the plan (a loaded file, or the flags' plan p) into the cases plat runs: each
// checked by its driver and the platform, then widened by the platform, with the plan's
// warnings and the notes on fields the platform ignores.
func (o *Options) expand(plat platform.Platform, p *api.Plan, loaded *config.Loaded, lg *slog.Logger) ([]plan.Case, error) {
	check := func(c plan.Case) error {
		if err := all.Check(c); err != nil {
			return err
		}
		if pc, ok := plat.(platform.PathChecker); ok {
			return pc.CheckPath(c)
		}
		return nil
	}
	opts := plan.Options{DefaultPaths: platform.TraitsOf(plat).DefaultPaths, DriverMessageSize: all.DefaultMessageSize,
		DriverWarmup: all.DefaultWarmup, AllowShortSamples: o.AllowShortSamples}
	var cases []plan.Case
	var err error
	if loaded != nil {
		cases, err = loaded.Expand(opts, check)
		for _, w := range loaded.Warnings {
			lg.Warn(w)
		}
	} else {
		cases, err = plan.ExpandWith(p, opts, check)
		if err != nil {
			err = config.AnnotateFlagErrors(err)
		}
	}
	if err != nil {
		return nil, &exit.UsageError{Err: fmt.Errorf("invalid plan:\n%w", err)}
	}
	if ce, ok := plat.(platform.CaseExpander); ok {
		cases = ce.ExpandCases(cases)
	}
	if len(cases) == 0 {
		return nil, exit.Usage("the plan has no cases")
	}
	if err := o.Platforms.checkPlan(cases); err != nil {
		return nil, err
	}
	warnNotApplicable(lg, plat, cases)
	for _, c := range cases {
		lg.Debug("case", "name", c.Name, "profile", c.Profile, "driver", c.Driver, "path", c.Path,
			"duration", c.Duration(), "samples", c.Params.Samples)
	}
	return cases, nil
}

// sayDefaultSuite says what the default suite runs, in two lines so that stderr fits 120
// columns as the table does.
func sayDefaultSuite(lg *slog.Logger, cases []plan.Case) {
	c := cases[0]
	lg.Info(fmt.Sprintf("running the default suite: %d cases (%s), driver %s, path %s",
		len(cases), plan.Join(DefaultSuiteProfiles), c.Driver, c.Path))
	lg.Info(fmt.Sprintf("each: %s samples until the %g%% CI is within ±%g%% (%d to %d samples)",
		c.Duration(), c.Params.Confidence.Level, c.Params.Confidence.HalfWidthPercent,
		c.Params.Samples, c.Params.MaxSamples))
}

// index ships the run into OpenSearch, even an interrupted run's finished cases; a failure is
// reported (the results file and stdout already hold everything), with the command that
// indexes the results file later.
func (o *Options) index(ctx context.Context, cfg opensearch.Config, run *api.Run, lg *slog.Logger, log io.Writer) error {
	sctx, cancel := measure.Cleanup(ctx, 2*time.Minute)
	defer cancel()
	err := opensearch.Ship(sctx, cfg, []*api.Run{run}, log)
	if err == nil {
		return nil
	}
	if o.ResultsFile != "" {
		shown := "URL"
		if u, perr := url.Parse(cfg.URL); perr == nil {
			u.User = nil // credentials are never printed
			shown = u.String()
		}
		lg.Info(fmt.Sprintf("cnperf: the run may not be fully indexed; index it later (same credentials) with: cnperf report --opensearch %s --index %s %s", shown, cfg.Index, o.ResultsFile))
	}
	return exit.Failure("index into OpenSearch: %w", err)
}

// push pushes the run's metrics to the Pushgateway, even without results: the group then says
// the run happened, and whether it was interrupted, instead of keeping the last run's figures
// as if they were new.
func push(ctx context.Context, cfg pushgateway.Config, run *api.Run, log io.Writer) error {
	sctx, cancel := measure.Cleanup(ctx, time.Minute)
	defer cancel()
	if err := pushgateway.Push(sctx, cfg, []*api.Run{run}, log); err != nil {
		return exit.Failure("push to the Pushgateway: %w", err)
	}
	return nil
}

// failedCases turns failed cases into exit code 1 with a summary.
func failedCases(run *api.Run) error {
	var failed []string
	for i, r := range run.Results {
		if r.Failed() {
			// one case, at most 160 columns of its cause, wrapped to the width a person reads
			// (a refused server's whole usage text made one line of ~810 columns); the whole
			// cause is in the results file
			line := fmt.Sprintf("case %d (%s %s %s): %s", i+1, r.Profile, r.Driver, r.Path, text.OneLine(figure.FailureSummary(&r), 160))
			failed = append(failed, strings.Join(text.Wrap(line, text.DefaultWidth, "  ", "    "), "\n"))
		}
	}
	if len(failed) == 0 {
		return nil
	}
	return exit.Failure("%d of %d cases failed:\n%s", len(failed), len(run.Results), strings.Join(failed, "\n"))
}

// warnNotApplicable says on stderr which plan fields mean nothing on this platform.
func warnNotApplicable(log *slog.Logger, plat platform.Platform, cases []plan.Case) {
	if !platform.TraitsOf(plat).HostOnly {
		return
	}
	seen := map[string]bool{}
	for _, c := range cases {
		fields := []struct {
			name string
			set  bool
		}{{"service", c.Params.Service}, {"hostNetwork", c.Params.HostNetwork}}
		for _, f := range fields {
			field, set := f.name, f.set
			key := field + "/" + c.Name
			if set && !seen[key] {
				seen[key] = true
				log.Info(fmt.Sprintf("note: %q of test %q is not applicable on the %s platform; ignored", field, c.Name, plat.Name()))
			}
		}
	}
}

// dryRunTigerBench prints what a tiger-bench testconfig.yaml would run: its cnperf cases (on
// the kube platform, which its tests need) and its tests without cases.
func (o *Options) dryRunTigerBench(streams iostreams.Streams, loaded *config.Loaded) error {
	for _, w := range loaded.Warnings {
		streams.Logger().Warn(w)
	}
	cases, err := tigerbench.Cases(loaded, o.Platforms.kube, "dry-run")
	if err != nil {
		return err
	}
	meta, err := o.Platforms.podMetadata()
	if err != nil {
		return err
	}
	return printDryRun(streams.Out, o.Output, "kube", dryRunNotes(nil, meta), cases, tigerBenchTestsWithoutCases(loaded, cases), iostreams.Columns(streams.Out))
}

// runTigerBench runs a tiger-bench testconfig.yaml: standing config, TTFR, DNS and Calico
// reconfiguration around cnperf's own measurements (internal/tigerbench).
func (o *Options) runTigerBench(ctx context.Context, streams iostreams.Streams, loaded *config.Loaded, runID string,
	labels map[string]string, enc report.Encoder) error {
	lg := streams.Logger()
	log := streams.LogWriter()
	for _, w := range loaded.Warnings {
		lg.Warn(w)
	}
	if k := o.Platforms.kube; len(k.PodLabels) > 0 || len(k.PodAnnotations) > 0 {
		lg.Warn("--pod-labels and --pod-annotations reach the pods of tiger-bench's thruput-latency and iperf tests, " +
			"not its TTFR, DNS and standing pods")
	}
	run := session.NewRun(session.Header{UUID: runID, Platform: "kube", Labels: labels, Host: true, Timing: true})
	started := false
	runErr := session.Do(ctx, run, o.ResultsFile, func(sess *session.Session) error {
		started = true
		sess.Log = lg
		deps := tigerbench.Deps{
			Kube: o.Platforms.kube, Options: o.TigerBench, RunID: runID, Log: log, Say: sess.Say,
			OnResult: sess.Save,
			OnUpdate: sess.Update,
		}
		if !o.NoProgress && lg.Enabled(ctx, slog.LevelInfo) {
			deps.Progress = &runner.TextProgress{W: streams.ErrOut, Terminal: iostreams.IsTerminal(streams.ErrOut), Width: iostreams.MessageWidth(streams.ErrOut)}
		}
		return tigerbench.Run(ctx, loaded, run, deps)
	})
	if !started {
		return runErr
	}
	var usage *exit.UsageError
	if errors.As(runErr, &usage) {
		return runErr
	}
	if err := enc.Encode(streams.Out, []*api.Run{run}); err != nil {
		return errors.Join(runErr, fmt.Errorf("write %s output: %w", o.Output, err))
	}
	return runErr
}
