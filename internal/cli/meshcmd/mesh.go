// Package meshcmd is `cnperf mesh`: a profile between every ordered pair of nodes (or a
// seeded sample of pairs) in rounds where no node measures twice at once, or every node
// against one (--all-to-one), with a node × node matrix, its outliers and each node's CPU.
package meshcmd

import (
	"context"
	"errors"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/cli/flags"
	"github.com/cnperf/cnperf/internal/config"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/driver/all"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/iostreams"
	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/measure"
	"github.com/cnperf/cnperf/internal/mesh"
	"github.com/cnperf/cnperf/internal/meshview"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/session"
)

// Options are the command's settings.
type Options struct {
	flags.KubeTarget
	Keep                      bool
	Tolerations               []string
	PodLabels, PodAnnotations []string
	NodeSelector              string
	Nodes                     []string
	Privileged                bool
	AgentBatch                int
	StartTimeout              time.Duration

	Profile, Driver string
	Duration        time.Duration
	Warmup          time.Duration
	// Samples is --samples N, or MIN,MAX with Confidence, as `cnperf run` takes them.
	Samples       string
	Confidence    string
	MessageSize   int
	Parallel      int
	Burst         int
	DriverOptions []string

	Networks []string
	// K8sNetperf are k8s-netperf's network flags (--bridge, --macvlan, ...), as `cnperf run`
	// takes them.
	K8sNetperf       flags.K8sNetperfNetworks
	Pairs            int
	Seed             uint64
	Self             bool
	Metric           string
	OutlierMADs      float64
	NodeResources    bool
	MaxParallelPairs int
	Port             int

	AllToOne   string
	Via        []string
	Concurrent bool

	CPUProfile string

	Output      string
	ResultsFile string
	UUID        string
	// DryRun lists the usable nodes (read-only) and prints the pair schedule; nothing is
	// created.
	DryRun bool

	fs *pflag.FlagSet // the command's flags: which were given
}

// NewCommand returns `cnperf mesh`.
func NewCommand(streams iostreams.Streams) *cobra.Command { return newCommand(streams, &Options{}) }

func newCommand(streams iostreams.Streams, o *Options) *cobra.Command {
	c := &cobra.Command{
		Use:   "mesh",
		Short: "Measure every pair of nodes (or all against one) and show the node × node matrix",
		Long: `mesh runs one profile between every ordered pair of the selected nodes, with one agent
per node (a DaemonSet on the pod network and/or one with hostNetwork). Pairs are scheduled
in rounds, a round-robin tournament (twice, roles swapped), so that the pairs of a round run
at the same time and no node takes part in two measurements at once: 2(N−1) rounds for N
nodes instead of N(N−1) one after the other. --pairs K measures a random sample of K pairs
(reproducible with --seed). --all-to-one NODE runs the client of every node against a server
on NODE instead, directly and/or through a ClusterIP Service, one client at a time or all at
once (--concurrent), as kubernetes-iperf3 does.

The output is a node × node matrix of the metric (rows = clients, columns = servers), the
CPU of the client and server nodes over each measured window (from the nodes' /proc, read by
the agents), and the outlier pairs: below median − k·MAD (above median + k·MAD for latency),
MAD scaled by 1.4826. -o csv prints the matrix as CSV, -o cells one CSV row per pair with
both nodes' CPU and memory, -o json the whole run; --results FILE keeps the run for
'cnperf report'.`,
		Example: `  cnperf mesh --duration 5s
  cnperf mesh --network pod,host --profile TCP_RR -o csv
  cnperf mesh --network pod,multus-e2e/e2e-bridge --profile TCP_RR
  cnperf mesh --pairs 2000 --seed 7 --node-selector node-role.kubernetes.io/worker
  cnperf mesh --all-to-one node1 --via direct,service --concurrent`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.Run(cmd.Context(), streams)
		},
	}
	o.bindFlags(c)
	return c
}

// bindFlags binds the command's flags to o: the cluster and the agents, what each pair
// measures, the mesh's shape, all-to-one, and the output.
func (o *Options) bindFlags(c *cobra.Command) {
	f := c.Flags()
	o.fs = f
	flags.BindKubeTarget(f, &o.KubeTarget, "cnperf-mesh",
		"namespace for the agents; created if absent and then removed unless --keep (a namespace cnperf did not create is never deleted)",
		"agent image (cnperf with the tools); the default is the image of this cnperf version")
	f.BoolVar(&o.Keep, "keep", false, "leave the agents in place at the end")
	f.StringSliceVar(&o.Tolerations, "tolerations", nil, `tolerate taints, KEY[=VALUE][:EFFECT][,...] or "*" for every taint`)
	f.StringSliceVar(&o.PodLabels, "pod-labels", nil, "labels for every pod cnperf creates, KEY=VALUE[,KEY=VALUE...] (cnperf's own keys are refused)")
	f.StringSliceVar(&o.PodAnnotations, "pod-annotations", nil, "annotations for every pod cnperf creates, KEY=VALUE[,KEY=VALUE...], e.g. sidecar.istio.io/inject=false")
	f.StringVar(&o.NodeSelector, "node-selector", "", "only nodes matching this label selector, e.g. node-role.kubernetes.io/worker or zone=a")
	f.StringSliceVar(&o.Nodes, "nodes", nil, "only these nodes (comma-separated names)")
	f.BoolVar(&o.Privileged, "privileged", false, "run the agents privileged with the host PID namespace (lets --cpu-profile use perf on the nodes)")
	f.IntVar(&o.AgentBatch, "agent-batch", 50, "start the agents on this many nodes at a time")
	f.DurationVar(&o.StartTimeout, "pod-start-timeout", 3*time.Minute, "how long one batch of agents may take to start")

	f.StringVar(&o.Profile, "profile", string(api.TCPStream), "profile: "+plan.Join(api.Profiles))
	f.StringVar(&o.Driver, "driver", plan.DefaultDriver, "load generator whose tool is in the agent image: "+all.Joined())
	f.DurationVar(&o.Duration, "duration", 10*time.Second, "measured time of each sample")
	f.DurationVar(&o.Warmup, "warmup", 0, "warm-up before each pair's samples")
	f.StringVar(&o.Samples, config.FlagSamples, "", "samples per pair (default 1); with --confidence MIN,MAX (default 3,30)")
	f.StringVar(&o.Confidence, config.FlagConfidence, "", "LEVEL,HALFWIDTH: take samples of each pair until the LEVEL% confidence "+
		"interval of its figure is within ±HALFWIDTH% of the mean, e.g. 95,5 (default off)")
	f.IntVar(&o.MessageSize, "message-size", 0, "message size in bytes (0: the driver's default)")
	f.IntVar(&o.Parallel, "parallel", 1, "parallel flows per pair")
	f.IntVar(&o.Burst, "burst", 0, "extra RR transactions in flight")
	f.StringArrayVar(&o.DriverOptions, "option", nil, "driver option KEY=VALUE (repeatable)")

	f.StringSliceVar(&o.Networks, config.FlagNetwork, []string{"pod"}, "networks to measure: pod, host (hostNetwork), "+
		"a secondary network NAMESPACE/NAME (a Multus NetworkAttachmentDefinition; one per run), or several")
	o.K8sNetperf.AddFlags(f)
	f.IntVar(&o.Pairs, "pairs", 0, "measure a random sample of this many ordered pairs (0: all)")
	f.Uint64Var(&o.Seed, "seed", 1, "seed of the --pairs sample")
	f.BoolVar(&o.Self, "self", false, "also measure every node against itself (the diagonal)")
	f.StringVar(&o.Metric, "metric", "", "matrix figure: "+strings.Join(meshview.MetricNames(), ", ")+" (default: throughput for streams, latency-p50 for RR, cps for CRR)")
	f.Float64Var(&o.OutlierMADs, "outlier-mads", 3, "outliers lie more than this many MADs from the median, on the bad side")
	f.BoolVar(&o.NodeResources, "node-resources", true, "read both nodes' CPU and memory from /proc around every sample")
	f.IntVar(&o.MaxParallelPairs, "max-parallel-pairs", 0, "at most this many pairs of a round at once (0: the whole round)")
	f.IntVar(&o.Port, "port", 7300, "first server port of the mesh agents (the driver's control and data ports when it can move them)")

	f.StringVar(&o.AllToOne, "all-to-one", "", "run every node's client against a server on this node instead of the mesh")
	f.StringSliceVar(&o.Via, "via", []string{mesh.ViaDirect}, "all-to-one: reach the server directly, through a ClusterIP service, or both (direct,service)")
	f.BoolVar(&o.Concurrent, "concurrent", false, "all-to-one: run every client at once (one server per client) instead of one after the other")

	f.StringVar(&o.CPUProfile, "cpu-profile", "", "record CPU profiles of each pair into this directory and draw flame graphs (see docs/mesh.md)")

	f.StringVarP(&o.Output, "output", "o", "table", "output: table, csv (the matrix), cells (CSV, one row per pair), json or yaml (the run)")
	f.StringVar(&o.ResultsFile, "results", "", "write the run to this file (JSON Lines; read by cnperf report)")
	f.StringVar(&o.UUID, "uuid", "", "run id to use instead of a random UUID")
	flags.DryRun(f, &o.DryRun, "list the usable nodes (read-only) and print the pair schedule the run would follow (-o table, json or yaml); creates nothing")
	flags.CompleteValues(c, "profile", false, func() []string { return plan.Strings(api.Profiles) })
	flags.CompleteValues(c, "driver", false, all.Names)
	flags.CompleteValues(c, "network", true, func() []string { return []string{"pod", "host"} })
	flags.CompleteValues(c, "output", false, func() []string { return meshFormats })
}

// meshFormats are the values of mesh's -o.
var meshFormats = []string{"table", "csv", "cells", "json", "yaml"}

// meshDryRunFormats are the -o values mesh --dry-run prints (the plan has no matrix yet).
var meshDryRunFormats = []string{"table", "json", "yaml"}

// settings is what Run derives from Options before touching the cluster.
type settings struct {
	profile  api.Profile
	drv      driver.Driver
	params   api.Params
	metric   meshview.Metric
	networks []api.Network
	// network is the secondary network of api.NetworkAttachment (--network NAMESPACE/NAME,
	// --bridge, --macvlan); nil without one.
	network *mesh.SecondaryNetwork
	vias    []string
	tols    []corev1.Toleration
	podMeta kube.PodMetadata
	pull    corev1.PullPolicy
}

func (o *Options) validate() (*settings, error) {
	s := &settings{}
	if err := flags.Output(o.Output, meshFormats); err != nil {
		return nil, err
	}
	s.profile = api.Profile(strings.ToUpper(o.Profile))
	if !s.profile.Valid() {
		return nil, exit.Usage("--profile %q: want one of %s", o.Profile, plan.Join(api.Profiles))
	}
	d, err := all.Get(o.Driver)
	if err != nil {
		return nil, exit.Usage("--driver: %v", err)
	}
	s.drv = d
	if o.Duration <= 0 || o.Parallel < 1 || o.Burst < 0 || o.MessageSize < 0 || o.Warmup < 0 {
		return nil, exit.Usage("--duration must be positive, --parallel at least 1, sizes and --burst not negative")
	}
	if o.Pairs < 0 {
		return nil, exit.Usage("--pairs must not be negative")
	}
	if !(o.OutlierMADs > 0) {
		return nil, exit.Usage("--outlier-mads must be positive")
	}
	if o.Port < 1 || o.Port > 65535-512 {
		return nil, exit.Usage("--port %d: want 1..%d", o.Port, 65535-512)
	}
	sampling, err := config.ParseSampling(o.Samples, o.Confidence, 1)
	if err != nil {
		return nil, exit.Usage("%v", err)
	}
	s.params = api.Params{
		DurationSeconds: o.Duration.Seconds(), WarmupSeconds: o.Warmup.Seconds(), Samples: sampling.Samples,
		MaxSamples: sampling.MaxSamples, Confidence: sampling.Confidence,
		MessageSizeBytes: o.MessageSize, Parallel: o.Parallel, Burst: o.Burst,
	}
	if s.params.Options, err = driverOptions(o.DriverOptions); err != nil {
		return nil, err
	}
	if o.DryRun {
		if err := flags.DryRunOutput(o.Output, meshDryRunFormats); err != nil {
			return nil, err
		}
	}
	c := plan.Case{Profile: s.profile, Path: api.PathPodPodCrossNode, Driver: d.Name(), Params: s.params}
	if err := plan.CaseLimits(c, plan.LimitFields{Parallel: "--parallel", Burst: "--burst", MessageSize: "--message-size",
		Duration: "--duration", Warmup: "--warmup", Samples: "--samples"}); err != nil {
		return nil, exit.Usage("%v", err)
	}
	if err := all.Check(c); err != nil {
		return nil, exit.Usage("%v", err)
	}
	if s.metric, err = meshview.LookupMetric(o.Metric, s.profile); err != nil {
		return nil, exit.Usage("--metric: %v", err)
	}
	if s.networks, s.network, s.vias, err = o.shape(); err != nil {
		return nil, err
	}
	if s.pull, err = o.Pull(); err != nil {
		return nil, err
	}
	if s.tols, err = kube.ParseTolerations(o.Tolerations); err != nil {
		return nil, exit.Usage("%v", err)
	}
	if s.podMeta, err = kube.ParsePodMetadata(o.PodLabels, o.PodAnnotations); err != nil {
		return nil, exit.Usage("%v", err)
	}
	if s.network != nil {
		// the networks --pod-annotations asks for, and the mesh's after them
		if _, err := kube.MergeNetworks(s.podMeta.Annotations[kube.AnnotationNetworks], s.network.Name); err != nil {
			return nil, exit.Usage("%v", err)
		}
	}
	return s, nil
}

// driverOptions reads --option KEY=VALUE... (nil when there are none).
func driverOptions(kvs []string) (map[string]string, error) {
	var opts map[string]string
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, exit.Usage("--option %q: want KEY=VALUE", kv)
		}
		if opts == nil {
			opts = map[string]string{}
		}
		opts[k] = v
	}
	return opts, nil
}

// shape reads what the mesh measures over: --network (pod, host, a secondary network
// NAMESPACE/NAME or several, each once; k8s-netperf's --bridge and --macvlan add a secondary
// network) and --via, and refuses the flags of the mesh with --all-to-one and the other way round.
func (o *Options) shape() (networks []api.Network, secondary *mesh.SecondaryNetwork, vias []string, err error) {
	seen := map[string]bool{}
	given := o.fs != nil && o.fs.Changed(config.FlagNetwork)
	for _, n := range o.Networks {
		n = strings.TrimSpace(n)
		switch {
		case strings.Contains(n, "/"):
			if err := plan.CheckNetwork(n); err != nil {
				return nil, nil, nil, exit.Usage("--network: %v", err)
			}
			if secondary != nil && secondary.Name != n {
				return nil, nil, nil, exit.Usage("--network: %s and %s: a mesh measures on one secondary network; run one mesh per network", secondary.Name, n)
			}
			secondary = &mesh.SecondaryNetwork{Name: n}
			n = string(api.NetworkAttachment)
		case strings.ToLower(n) == "pod", strings.ToLower(n) == "host":
			n = strings.ToLower(n)
		default:
			return nil, nil, nil, exit.Usage("--network %q: want pod, host or NAMESPACE/NAME of a NetworkAttachmentDefinition", n)
		}
		if !seen[n] {
			seen[n] = true
			networks = append(networks, api.Network(n))
		}
	}
	if o.fs != nil {
		bridge, create, mode, err := o.K8sNetperf.Resolve(o.fs, secondary != nil)
		if err != nil {
			return nil, nil, nil, err
		}
		if mode != nil {
			return nil, nil, nil, exit.Usage("%s: a network OVN-Kubernetes or the SR-IOV Network Operator must provide, which cnperf does not "+
				"create;\n  cnperf run %s checks the cluster for it and says what it lacks", mode.Flag, mode.Flag)
		}
		if create != nil {
			bridge = o.Namespace + "/" + create.Name
		}
		if bridge != "" {
			secondary = &mesh.SecondaryNetwork{Name: bridge, Create: create}
			if !given { // --bridge alone measures there; with --network pod, beside the pod network
				networks = nil
			}
			networks = append(networks, api.NetworkAttachment)
		}
	}
	if len(networks) == 0 {
		return nil, nil, nil, exit.Usage("--network: name pod, host, NAMESPACE/NAME or several")
	}
	for _, v := range o.Via {
		v = strings.TrimSpace(strings.ToLower(v))
		if v != mesh.ViaDirect && v != mesh.ViaService {
			return nil, nil, nil, exit.Usage("--via %q: want direct or service", v)
		}
		if v == mesh.ViaService && secondary != nil {
			return nil, nil, nil, exit.Usage("--via service and secondary network %s: a Service's address is on the cluster's own network; "+
				"reach the server directly (--via direct) on a secondary network", secondary.Name)
		}
		vias = append(vias, v)
	}
	if o.AllToOne == "" && (o.Concurrent || len(o.Via) != 1 || o.Via[0] != mesh.ViaDirect) {
		return nil, nil, nil, exit.Usage("--via and --concurrent apply to --all-to-one")
	}
	if o.AllToOne != "" && (o.Pairs > 0 || o.Self) {
		return nil, nil, nil, exit.Usage("--pairs and --self apply to the mesh, not --all-to-one")
	}
	return networks, secondary, vias, nil
}

// Run runs the command.
func (o *Options) Run(ctx context.Context, streams iostreams.Streams) error {
	k, err := flags.StartKube(ctx, o.KubeTarget, o.UUID, o.validate)
	if err != nil {
		return err
	}
	return o.run(k.Ctx, streams, streams.LogWriter(), k.Settings, k.RunID, k.Client, k.Config)
}

// run chooses the nodes and the pairs, prints them for --dry-run, or else is one run
// (session.Do) whose one unit is the agents: deployed, measured, always removed.
func (o *Options) run(ctx context.Context, streams iostreams.Streams, log io.Writer, s *settings, runID string, cs kubernetes.Interface, cfg *rest.Config) error {
	m := &meshRun{o: o, s: s, log: log, runID: runID, cs: cs, cfg: cfg, started: time.Now()}
	if err := m.choose(ctx); err != nil {
		return err
	}
	if o.DryRun {
		return printDryRun(streams.Out, o.Output, m.nodes, m.sched, m.server, s, o.Concurrent)
	}
	// The results file is created before anything runs: one that cannot be is bad input (exit
	// code 2), as for cnperf run, not an error after the whole mesh was measured.
	run := session.NewRun(session.Header{UUID: runID, Platform: "kube", Start: m.started})
	return session.Do(ctx, run, o.ResultsFile, func(sess *session.Session) error {
		sess.Log = streams.Logger()
		m.sess, m.run = sess, run
		m.describe()
		// The agents (and the all-to-one server) live only as long as the run: one unit, always
		// removed (unless --keep).
		return o.measureAndWrite(ctx, sess, streams.Out, measure.Unit{Prepare: m.prepare, Close: m.close,
			Leftovers: m.leftovers, Measure: m.measure})
	})
}

// measureAndWrite runs u as the run's one unit and writes the run once u is closed, as cnperf run
// does: its timing (internal/measure's, as run's) has the set-up, the measurement and the
// teardown. Nothing is written when u measured nothing (no mesh).
func (o *Options) measureAndWrite(ctx context.Context, sess *session.Session, out io.Writer, u measure.Unit) error {
	sess.Run.Timing = &api.Timing{}
	err := sess.Units(ctx, u)
	if sess.Run.Mesh == nil {
		return err
	}
	if werr := o.write(out, sess.Run); werr != nil {
		return errors.Join(err, werr)
	}
	return err
}

func (o *Options) write(w io.Writer, run *api.Run) error {
	switch o.Output {
	case "csv":
		return meshview.WriteMatrixCSV(w, run)
	case "cells":
		return meshview.WriteCellsCSV(w, run)
	case "json", "yaml":
		return flags.EncodeData(w, o.Output, run)
	}
	return meshview.WriteTable(w, run)
}

func (s *settings) networkNames() []string {
	out := make([]string, len(s.networks))
	for i, n := range s.networks {
		out[i] = s.networkName(n)
	}
	return out
}

// networkName names a network as the matrices do: pod, host, or the secondary network's
// NAMESPACE/NAME.
func (s *settings) networkName(n api.Network) string {
	if n == api.NetworkAttachment && s.network != nil {
		return s.network.Name
	}
	return string(n)
}

func contains(ns []api.Network, n api.Network) bool {
	for _, x := range ns {
		if x == n {
			return true
		}
	}
	return false
}
