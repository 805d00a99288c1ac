// Package loadcmd is `cnperf load`: standing config (pods, Services behind a 10-pod
// deployment, NetworkPolicies) created, counted and removed on its own, to load a cluster
// before measuring it with `cnperf run` (as tiger-bench's numPods, numServices, numPolicies and
// numIdlePolicies do before each test).
package loadcmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/cli/flags"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/iostreams"
	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/tigerbench"
	"github.com/cnperf/cnperf/internal/version"
)

// DefaultNamespace is tiger-bench's test namespace.
const DefaultNamespace = "testns"

type common struct {
	kubeconfig, kubeContext, namespace, output string
	parallelism                                int
	// newClient is replaced by tests.
	newClient func() (kubernetes.Interface, error)
}

func (c *common) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.kubeconfig, "kubeconfig", "", "kubeconfig file (default $KUBECONFIG, ~/.kube/config, then in-cluster)")
	fs.StringVar(&c.kubeContext, "context", "", "kubeconfig context (default: the current context)")
	fs.StringVarP(&c.namespace, "namespace", "n", DefaultNamespace, "namespace of the standing config (created if absent)")
	fs.StringVarP(&c.output, "output", "o", "text", "output: text or json")
}

func (c *common) client() (kubernetes.Interface, error) {
	if c.newClient != nil {
		return c.newClient()
	}
	cfg, err := kube.RESTConfig(c.kubeconfig, c.kubeContext)
	if err != nil {
		return nil, exit.Usage("%v", err)
	}
	cs, err := tigerbench.StandingClient(cfg, c.parallelism)
	if err != nil {
		return nil, exit.Usage("%v", err)
	}
	return cs, nil
}

func (c *common) check() error {
	if err := flags.Output(c.output, []string{"text", "json"}); err != nil {
		return err
	}
	if c.namespace == "" {
		return exit.Usage("--namespace is required")
	}
	return nil
}

// start is what status and remove do first: a context, the flags checked, a client.
func (c *common) start(ctx context.Context) (context.Context, kubernetes.Interface, error) {
	if err := c.check(); err != nil {
		return nil, nil, err
	}
	cs, err := c.client()
	if err != nil {
		return nil, nil, err
	}
	return ctx, cs, nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}

// NewCommand returns `cnperf load`.
func NewCommand(streams iostreams.Streams) *cobra.Command {
	return newCommand(streams, nil)
}

func newCommand(streams iostreams.Streams, newClient func() (kubernetes.Interface, error)) *cobra.Command {
	c := &cobra.Command{
		Use:   "load",
		Short: "Create, count and remove standing config (pods, services, policies) to load a cluster",
		Long: `load manages standing config: objects that stand in a namespace while tests run, so a
cluster is measured the way it is really loaded (tiger-bench's numPods, numServices,
numPolicies and numIdlePolicies):

  - a deployment "standing-deployment" of --pods idle pods,
  - --services ClusterIP Services "standing-svc-NNNNN" in front of a 10-pod deployment,
  - --policies NetworkPolicies that select every pod of the namespace (work for the dataplane;
    a last "zzz-cnperf-allow-all" policy keeps them from blocking anything),
  - --idle-policies NetworkPolicies that select no pod (load for the policy store only).

Objects are written with server-side apply (field manager "cnperf"), --parallelism at a
time; create brings the namespace to the counts given (removing extra objects a previous
create left) and waits until every standing pod is ready, then reports the time taken and the
rate. Pods are spread over the test nodes (label tigera.io/test-nodepool=default-pool, else
every schedulable node).`,
		Example: `  cnperf load create -n testns --pods 100 --services 50 --policies 500
  cnperf load status -n testns
  cnperf run --platform kube -n testns ...   # measure against it
  cnperf load remove -n testns`,
		Args: cobra.NoArgs,
	}
	c.AddCommand(newCreate(streams, newClient), newStatus(streams, newClient), newRemove(streams, newClient))
	return c
}

type createOptions struct {
	common
	spec         tigerbench.StandingSpec
	selector     string
	pullPolicy   string
	readyTimeout time.Duration
}

func newCreate(streams iostreams.Streams, newClient func() (kubernetes.Interface, error)) *cobra.Command {
	o := &createOptions{common: common{newClient: newClient}}
	c := &cobra.Command{
		Use:     "create [--pods N] [--services N] [--policies N] [--idle-policies N]",
		Example: `  cnperf load create --pods 100 --services 50 --policies 20 -n load`,
		Short:   "Bring a namespace's standing config to the counts given and wait until it is ready",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd.Context(), streams)
		},
	}
	fs := c.Flags()
	o.addFlags(fs)
	fs.IntVar(&o.spec.Pods, "pods", 0, "standing pods (one deployment)")
	fs.IntVar(&o.spec.Services, "services", 0, "ClusterIP services, backed by a 10-pod deployment")
	fs.IntVar(&o.spec.Policies, "policies", 0, "NetworkPolicies selecting every pod of the namespace")
	fs.IntVar(&o.spec.IdlePolicies, "idle-policies", 0, "NetworkPolicies selecting no pod")
	fs.IntVar(&o.parallelism, "parallelism", tigerbench.DefaultParallelism, "API writes in flight")
	fs.StringVar(&o.selector, "test-node-selector", "", "label selector of the nodes for the standing pods (default "+tigerbench.DefaultTestNodeSelector+", else every schedulable node)")
	fs.StringVar(&o.spec.Image, "image", version.DefaultImage(), "image of the standing pods (they run an idle shell loop); the default is the image of this cnperf version")
	fs.StringVar(&o.pullPolicy, "image-pull-policy", string(corev1.PullIfNotPresent), "image pull policy: IfNotPresent, Always or Never")
	fs.DurationVar(&o.readyTimeout, "timeout", 10*time.Minute, "how long the standing pods may take to be ready")
	return c
}

func (o *createOptions) run(ctx context.Context, streams iostreams.Streams) error {
	if err := o.check(); err != nil {
		return err
	}
	pull, err := kube.ParsePullPolicy(o.pullPolicy)
	if err != nil {
		return exit.Usage("%v", err)
	}
	o.spec.Namespace, o.spec.PullPolicy, o.spec.ReadyTimeout = o.namespace, pull, o.readyTimeout
	o.spec.Parallelism = o.parallelism
	if err := o.spec.Validate(); err != nil {
		return exit.Usage("%v", err)
	}
	cs, err := o.client()
	if err != nil {
		return err
	}
	// every permission it needs, asked before anything is created
	if err := tigerbench.ApplyPreflight(ctx, cs, o.namespace); err != nil {
		return fmt.Errorf("load create: %w", err)
	}
	nodes, err := tigerbench.FindTestNodes(ctx, cs, o.selector)
	if err != nil {
		return exit.Failure("%v", err)
	}
	if nodes.Note != "" {
		streams.Logger().Info(fmt.Sprintf("note: %s", nodes.Note))
	}
	o.spec.Nodes = nodes.Names
	st := &tigerbench.Standing{Client: cs, Log: streams.LogWriter()}
	rep, err := st.Apply(ctx, o.spec)
	if rep != nil {
		if werr := o.print(streams.Out, rep); werr != nil {
			return werr
		}
	}
	if err != nil {
		return exit.Failure("load create: %v (what was created stays; remove it with: cnperf load remove -n %s)", err, o.namespace)
	}
	return nil
}

func (o *createOptions) print(w io.Writer, rep *api.StandingConfig) error {
	if o.output == "json" {
		return writeJSON(w, rep)
	}
	fmt.Fprintf(w, "namespace:        %s\n", rep.Namespace)
	fmt.Fprintf(w, "standing config:  %d pods, %d services (%d backend pods), %d policies, %d idle policies\n",
		rep.Pods, rep.Services, rep.ServiceBackends, rep.Policies, rep.IdlePolicies)
	if len(rep.Nodes) > 0 {
		fmt.Fprintf(w, "nodes:            %s\n", strings.Join(rep.Nodes, ", "))
	}
	fmt.Fprintf(w, "objects applied:  %d in %.2fs (%.1f objects/s, %d in flight), %d deleted\n",
		rep.ObjectsApplied, rep.ApplySeconds, rep.ObjectsPerSecond, rep.Parallelism, rep.ObjectsDeleted)
	if rep.Error == "" {
		msg := fmt.Sprintf("all pods ready:   after %.2fs", rep.ReadySeconds)
		if rep.PodsPerSecond > 0 {
			msg += fmt.Sprintf(" (%.1f pods/s)", rep.PodsPerSecond)
		}
		fmt.Fprintln(w, msg)
	} else {
		fmt.Fprintf(w, "error:            %s\n", rep.Error)
	}
	return nil
}

func newStatus(streams iostreams.Streams, newClient func() (kubernetes.Interface, error)) *cobra.Command {
	o := &common{newClient: newClient}
	c := &cobra.Command{
		Use:     "status",
		Example: `  cnperf load status -n load`,
		Short:   "Count the standing config of a namespace",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cs, err := o.start(cmd.Context())
			if err != nil {
				return err
			}
			counts, err := (&tigerbench.Standing{Client: cs}).Count(ctx, o.namespace)
			if err != nil {
				return exit.Failure("load status: %v", err)
			}
			if o.output == "json" {
				return writeJSON(streams.Out, counts)
			}
			w := streams.Out
			fmt.Fprintf(w, "namespace:      %s", counts.Namespace)
			if counts.OwnedNamespace {
				fmt.Fprint(w, " (created by cnperf load)")
			}
			fmt.Fprintln(w)
			fmt.Fprintf(w, "pods:           %d (%d ready)\n", counts.Pods, counts.PodsReady)
			fmt.Fprintf(w, "services:       %d (%d backend pods, %d ready)\n", counts.Services, counts.Backends, counts.BackendsReady)
			fmt.Fprintf(w, "policies:       %d (+ allow-all policy: %v)\n", counts.Policies, counts.AllowPolicy)
			fmt.Fprintf(w, "idle policies:  %d\n", counts.IdlePolicies)
			return nil
		},
	}
	o.addFlags(c.Flags())
	return c
}

func newRemove(streams iostreams.Streams, newClient func() (kubernetes.Interface, error)) *cobra.Command {
	o := &common{newClient: newClient}
	var keepNS bool
	c := &cobra.Command{
		Use:     "remove",
		Example: `  cnperf load remove -n load`,
		Short:   "Remove a namespace's standing config and wait until its pods are gone",
		Long: `remove deletes the standing config of a namespace. A namespace that cnperf created for it
is deleted as a whole (unless --keep-namespace); in any other namespace only the standing
objects are deleted.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cs, err := o.start(cmd.Context())
			if err != nil {
				return err
			}
			if err := tigerbench.RemovePreflight(ctx, cs, o.namespace, !keepNS); err != nil {
				return fmt.Errorf("load remove: %w", err)
			}
			took, err := (&tigerbench.Standing{Client: cs, Log: streams.LogWriter()}).Remove(ctx, o.namespace, !keepNS, o.parallelism)
			if err != nil {
				return exit.Failure("load remove: %v", err)
			}
			if o.output == "json" {
				return writeJSON(streams.Out, map[string]any{"namespace": o.namespace, "removeSeconds": took.Seconds()})
			}
			fmt.Fprintf(streams.Out, "standing config of %s removed in %.2fs\n", o.namespace, took.Seconds())
			return nil
		},
	}
	o.addFlags(c.Flags())
	c.Flags().BoolVar(&keepNS, "keep-namespace", false, "delete only the standing objects, even in a namespace cnperf created")
	c.Flags().IntVar(&o.parallelism, "parallelism", tigerbench.DefaultParallelism, "API deletes in flight")
	return c
}
