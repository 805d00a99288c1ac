// Package programmingcmd is `cnperf programming`: how fast the network obeys a change —
// Service programming latency and NetworkPolicy enforcement latency, end to end, seen from a
// client pod on every node (internal/programming does the measuring).
package programmingcmd

import (
	"context"
	"errors"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/cli/flags"
	"github.com/cnperf/cnperf/internal/clusterinfo"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/interrupt"
	"github.com/cnperf/cnperf/internal/iostreams"
	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/measure"
	"github.com/cnperf/cnperf/internal/mesh"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/programming"
	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/session"
	"github.com/cnperf/cnperf/internal/ttfr"
)

// Options are the command's settings.
type Options struct {
	flags.KubeTarget
	NodeSelector string
	Nodes        []string
	ServerNode   string
	StartTimeout time.Duration

	Kinds            []string
	Count            int
	Interval         time.Duration
	AttemptTimeout   time.Duration
	Confirm          int
	Settle, Timeout  time.Duration
	StandingPolicies []int
	NodePort         bool
	KubeProxyMetrics bool
	FelixMetrics     bool
	CiliumMetrics    bool

	Output      string
	ResultsFile string
	UUID        string
	Labels      []string
}

// NewCommand returns `cnperf programming`.
func NewCommand(streams iostreams.Streams) *cobra.Command { return newCommand(streams, &Options{}) }

func newCommand(streams iostreams.Streams, o *Options) *cobra.Command {
	c := &cobra.Command{
		Use:   "programming",
		Short: "How fast the network obeys: Service programming, NetworkPolicy enforcement latency",
		Long: `programming measures how long the cluster's network takes to obey a change, end to end.
A server pod runs on one node and a client pod on every node; each client probes the target
with a TCP connect every --interval (attempts overlap, each timed on the node's own clock).
Once every client has seen the old state hold, cnperf makes the change; the figure is the time
from the moment the change's API call returned to the start of the first connect in the new
state that the next --confirm connects confirm. Each node's clock offset from cnperf's is
measured (NTP-style, through exec) and applied; its bound and the probe interval bound each
figure's error, and both are in the results.

Kinds (--kind), each measured --count times:
  service       create a Service (SERVICE_CREATE: until it answers) and delete it
                (SERVICE_DELETE: until it stops answering), through its ClusterIP and (with
                --nodeport, the default) each client's own node's NodePort
  endpoint      a ready pod joins a Service that had no endpoint (ENDPOINT_ADD) and leaves it
                (ENDPOINT_REMOVE)
  policy-deny   a NetworkPolicy isolating the server (POLICY_DENY: until connects to its pod
                IP fail)
  policy-allow  under a default deny, a NetworkPolicy allowing the clients (POLICY_ALLOW:
                until connects complete)
  pod           a pod created on the server node, probed from the moment its IP is known
                (POD_CREATE: from the create call until it answers; POD_READY: from
                cnperf seeing it Ready until it answers, 0 if it answered before)
The policy kinds run under each number of --standing-policies (policies selecting the clients,
allowing nothing they use). A kind whose first change no client sees stops there and says
why: on a CNI that does not enforce NetworkPolicy the policy kinds fail with that cause, never
a figure.

Every object is created in --namespace, labelled with the run, and removed at the end, on
error and on Ctrl-C. The results are a run (one result per change and client node, one sample
per change) that -o json, --results, 'cnperf report' and 'cnperf compare' take.`,
		Example: `  cnperf programming
  cnperf programming --kind service,endpoint --count 50 --results prog.jsonl
  cnperf programming --kind policy-deny,policy-allow --standing-policies 0,100,1000`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.Run(cmd.Context(), streams)
		},
	}
	f := c.Flags()
	flags.BindKubeTarget(f, &o.KubeTarget, "cnperf-programming",
		"namespace of the pods, Services and policies; created if absent and then removed (a namespace cnperf did not create is never deleted)",
		"agent image (cnperf); the default is the image of this cnperf version")
	f.StringVar(&o.NodeSelector, "node-selector", "", "clients only on nodes matching this label selector")
	f.StringSliceVar(&o.Nodes, "nodes", nil, "clients only on these nodes (comma-separated names)")
	f.StringVar(&o.ServerNode, "server-node", "", "node of the server pod (default: the first client node)")
	f.DurationVar(&o.StartTimeout, "pod-start-timeout", 3*time.Minute, "how long the pods may take to start")
	f.StringSliceVar(&o.Kinds, "kind", []string{string(programming.KindService), string(programming.KindEndpoint)},
		"changes to measure: "+plan.Join(programming.Kinds))
	f.IntVar(&o.Count, "count", 20, "changes of each kind (each is one sample per client node)")
	f.DurationVar(&o.Interval, "interval", ttfr.DefaultWatchInterval, "time between two connect attempts' starts (a figure's resolution)")
	f.DurationVar(&o.AttemptTimeout, "attempt-timeout", ttfr.DefaultWatchAttemptTimeout, "a connect still pending this long counts as blocked")
	f.IntVar(&o.Confirm, "confirm", ttfr.DefaultWatchConfirm, "connects after the first one in the new state that must show it too")
	f.DurationVar(&o.Settle, "settle", 30*time.Second, "how long the old state may take to hold before a change")
	f.DurationVar(&o.Timeout, "timeout", 30*time.Second, "how long a change may take to show before it counts as failed")
	f.BoolVar(&o.NodePort, "nodeport", true, "service and endpoint kinds: make the Services NodePort Services and probe each client's own node's port too (--nodeport=false: the ClusterIP only)")
	f.BoolVar(&o.KubeProxyMetrics, "kube-proxy-metrics", true, "service and endpoint kinds: read kube-proxy's own "+programming.KubeProxyMetric+
		" on every client node (127.0.0.1:10249, through a hostNetwork pod) around each change and show it beside cnperf's figure")
	f.BoolVar(&o.FelixMetrics, "felix-metrics", true, "policy kinds: read Calico Felix's own "+programming.FelixMetric+
		" on the server's node (127.0.0.1:9091, through a hostNetwork pod) around each change and show it beside cnperf's figure")
	f.BoolVar(&o.CiliumMetrics, "cilium-metrics", true, "policy kinds: read cilium-agent's own "+programming.CiliumMetric+
		" on the server's node (127.0.0.1:9962, through a hostNetwork pod) around each change and show it beside cnperf's figure"+
		" (with --felix-metrics, the one the cluster serves)")
	f.IntSliceVar(&o.StandingPolicies, "standing-policies", []int{0}, "policy kinds: measure under each of these numbers of standing NetworkPolicies, e.g. 0,100,1000")
	f.StringVarP(&o.Output, "output", "o", "table", "output: table, json or yaml")
	f.StringVar(&o.ResultsFile, "results", "", "write the run to this file (JSON Lines; read by cnperf report and compare)")
	f.StringVar(&o.UUID, "uuid", "", "run id to use instead of a random UUID")
	f.StringArrayVar(&o.Labels, "label", nil, "label the run, KEY=VALUE (repeatable)")
	flags.CompleteValues(c, "kind", true, func() []string { return plan.Strings(programming.Kinds) })
	flags.CompleteValues(c, "output", false, func() []string { return outputs })
	return c
}

var outputs = []string{"table", "json", "yaml"}

// settings is what Run derives from Options before touching the cluster.
type settings struct {
	kinds  []programming.Kind
	pull   corev1.PullPolicy
	labels map[string]string
}

func (o *Options) validate() (*settings, error) {
	s := &settings{}
	if err := flags.Output(o.Output, outputs); err != nil {
		return nil, err
	}
	for _, k := range o.Kinds {
		k := programming.Kind(strings.TrimSpace(strings.ToLower(k)))
		if !slices.Contains(programming.Kinds, k) {
			return nil, exit.Usage("--kind %q: want %s", k, plan.Join(programming.Kinds))
		}
		if !slices.Contains(s.kinds, k) {
			s.kinds = append(s.kinds, k)
		}
	}
	if len(s.kinds) == 0 {
		return nil, exit.Usage("--kind: name at least one of %s", plan.Join(programming.Kinds))
	}
	// The kinds run in their own order (services before policies), whatever the flag's.
	slices.SortFunc(s.kinds, func(a, b programming.Kind) int {
		return slices.Index(programming.Kinds, a) - slices.Index(programming.Kinds, b)
	})
	switch {
	case o.Count < 1 || o.Count > 10000:
		return nil, exit.Usage("--count %d: want 1 to 10000", o.Count)
	case o.Interval < time.Millisecond:
		return nil, exit.Usage("--interval %s: want at least 1ms", o.Interval)
	case o.AttemptTimeout < o.Interval:
		return nil, exit.Usage("--attempt-timeout %s: want at least --interval (%s)", o.AttemptTimeout, o.Interval)
	case o.Confirm < 1 || o.Confirm > 1000:
		return nil, exit.Usage("--confirm %d: want 1 to 1000", o.Confirm)
	case o.Settle <= 0 || o.Timeout <= 0:
		return nil, exit.Usage("--settle and --timeout must be positive")
	}
	for _, n := range o.StandingPolicies {
		if n < 0 || n > 99999 {
			return nil, exit.Usage("--standing-policies %d: want 0 to 99999", n)
		}
	}
	var err error
	if s.pull, err = o.Pull(); err != nil {
		return nil, err
	}
	if s.labels, err = session.ParseLabels(o.Labels); err != nil {
		return nil, exit.Usage("%v", err)
	}
	return s, nil
}

// Run runs the command: the client nodes, the RBAC preflight, then one run (session.Do) whose
// one unit is internal/programming's Runner, and the run written whatever happened to it.
func (o *Options) Run(ctx context.Context, streams iostreams.Streams) error {
	log := streams.LogWriter()
	k, err := flags.StartKube(ctx, o.KubeTarget, o.UUID, o.validate)
	if err != nil {
		return err
	}
	ctx, cs := k.Ctx, k.Client
	nodes, err := o.clientNodes(ctx, cs, log)
	if err != nil {
		return err
	}
	_, nsErr := cs.CoreV1().Namespaces().Get(ctx, o.Namespace, metav1.GetOptions{})
	if err := kube.Preflight(ctx, cs, kube.ProgrammingManifest, kube.ProgrammingAccess(o.Namespace, !apierrors.IsNotFound(nsErr))); err != nil {
		return err
	}
	r, err := o.newRunner(k, nodes, log)
	if err != nil {
		return exit.Usage("%v", err)
	}
	run := session.NewRun(session.Header{UUID: k.RunID, Platform: "kube", Labels: k.Settings.labels})
	// The results file is created before anything runs: one that cannot be is bad input (exit
	// code 2), as for cnperf run.
	err = session.Do(ctx, run, o.ResultsFile, func(sess *session.Session) error {
		sess.Log = streams.Logger()
		return measureRun(ctx, sess, r, cs, mesh.Names(nodes), log)
	})
	return o.conclude(streams, run, err)
}

// clientNodes are the usable nodes of --node-selector and --nodes, with --server-node among
// them; the skipped ones are said on log.
func (o *Options) clientNodes(ctx context.Context, cs kubernetes.Interface, log io.Writer) ([]mesh.Node, error) {
	nodes, skipped, err := mesh.ListNodes(ctx, cs, mesh.NodeFilter{LabelSelector: o.NodeSelector, Names: o.Nodes})
	if err != nil {
		return nil, err
	}
	for _, sk := range skipped {
		programming.Logf(log, "skipping node %s: %s", sk.Node, sk.Reason)
	}
	if len(nodes) == 0 {
		return nil, exit.Usage("no usable node for the clients")
	}
	if names := mesh.Names(nodes); o.ServerNode != "" && !slices.Contains(names, o.ServerNode) {
		return nil, exit.Usage("--server-node %s: not a usable client node (usable: %s)", o.ServerNode, strings.Join(names, ", "))
	}
	return nodes, nil
}

// newRunner is internal/programming's Runner for the flags, on k's cluster, with a client on
// every node; nothing is created yet.
func (o *Options) newRunner(k *flags.KubeStart[*settings], nodes []mesh.Node, log io.Writer) (*programming.Runner, error) {
	s := k.Settings
	nodeIPs := nodeAddrs(nodes)
	stream := kube.RemoteStreamer(k.Client, k.Config)
	return programming.New(programming.Options{
		Namespace: o.Namespace, RunID: k.RunID, Image: o.Image, PullPolicy: s.pull, Nodes: mesh.Names(nodes), ServerNode: o.ServerNode,
		Kinds: s.kinds, Count: o.Count, NodePort: o.NodePort, NodeIPs: nodeIPs, KubeProxyMetrics: o.KubeProxyMetrics, FelixMetrics: o.FelixMetrics,
		CiliumMetrics:    o.CiliumMetrics,
		StandingPolicies: o.StandingPolicies, StartTimeout: o.StartTimeout,
		Params: programming.Params{Interval: o.Interval, AttemptTimeout: o.AttemptTimeout, Confirm: o.Confirm, Settle: o.Settle, Timeout: o.Timeout},
	}, programming.Env{
		Client: k.Client, Log: log, LocalBootID: ttfr.BootID(),
		Exec: func(pod string) programming.Executor {
			return &kube.PodExecutor{Stream: stream, Namespace: o.Namespace, Pod: pod, Container: programming.Container,
				DefaultTimeout: 2 * time.Minute, MaxOutput: kube.DefaultMaxOutputBytes}
		},
	})
}

// measureRun is the run's work: the cluster's details, then r as the run's one unit (its
// objects always removed); every result r has, also after an error or a signal, is recorded.
func measureRun(ctx context.Context, sess *session.Session, r *programming.Runner, cs kubernetes.Interface, nodes []string,
	log io.Writer) error {
	run := sess.Run
	if cd, err := clusterinfo.Collect(ctx, clusterinfo.Input{Client: cs, Nodes: nodes, Log: log}); err == nil {
		run.Cluster = cd
	} else {
		programming.Logf(log, "cluster details: %v", err)
	}
	run.Timing = &api.Timing{} // set-up, measure and tear-down times, filled by Units
	merr := sess.Units(ctx, measure.Unit{Prepare: r.Prepare, Measure: r.Measure, Close: r.Close, Leftovers: r.Leftovers})
	run.Results = r.Results()
	if run.Interrupted = ctx.Err() != nil; run.Interrupted {
		merr = interrupted(merr)
	}
	for _, res := range run.Results {
		if err := sess.Save(res); err != nil {
			return errors.Join(merr, err)
		}
	}
	return merr
}

// interrupted is an interrupted run's error: "interrupted", instead of the cancellation that
// the step a signal stopped returned, and whatever else went wrong (a clean-up cut short by a
// second signal).
func interrupted(err error) error {
	out := []error{exit.Failure("interrupted")}
	for _, e := range measure.Errors(err) {
		if errors.Is(e, context.Canceled) && !errors.Is(e, interrupt.ErrCutShort) {
			continue
		}
		out = append(out, e)
	}
	return errors.Join(out...)
}

// conclude writes the run (unless it has no result and an error says why) and turns what
// happened into the exit: the run's error, an interruption, or the failed results.
func (o *Options) conclude(streams iostreams.Streams, run *api.Run, err error) error {
	if len(run.Results) == 0 && err != nil {
		return err
	}
	if werr := o.write(streams, run); werr != nil {
		return errors.Join(err, werr)
	}
	if err != nil {
		return err
	}
	if run.Interrupted {
		return exit.Failure("interrupted")
	}
	failed := 0
	for _, res := range run.Results {
		if res.Error != "" {
			failed++
		}
	}
	if failed > 0 {
		return exit.Failure("%d of %d results failed", failed, len(run.Results))
	}
	return nil
}

func (o *Options) write(streams iostreams.Streams, run *api.Run) error {
	if o.Output != "table" {
		return flags.EncodeData(streams.Out, o.Output, run)
	}
	enc, err := report.Lookup("table", report.Width(iostreams.Columns(streams.Out)))
	if err != nil {
		return err
	}
	return enc.Encode(streams.Out, []*api.Run{run})
}

// nodeAddrs are the nodes' addresses where the probes dial their NodePorts, by IP family
// (mesh.Node.IPs: an InternalIP, else an ExternalIP, of each family the node has): the runner
// dials a Service's node port at the node's address of the Service's family, which is the
// cluster's first Service family, not necessarily the nodes' (mesh.DefaultFamily) nor that of
// a node's first InternalIP.
func nodeAddrs(nodes []mesh.Node) map[string]map[string]string {
	out := make(map[string]map[string]string, len(nodes))
	for _, n := range nodes {
		out[n.Name] = maps.Clone(n.IPs)
	}
	return out
}
