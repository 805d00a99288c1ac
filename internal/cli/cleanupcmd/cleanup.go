// Package cleanupcmd is `cnperf cleanup`: remove what abandoned runs left in a cluster, found
// by cnperf's labels and judged by each run's Lease.
package cleanupcmd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"

	"github.com/cnperf/cnperf/internal/cli/flags"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/iostreams"
	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/tigerbench"
)

// Options are the flags of `cnperf cleanup`.
type Options struct {
	Kubeconfig string
	Context    string
	RunID      string
	Standing   []string
	Namespace  string
	DryRun     bool
	NoWait     bool
	Timeout    time.Duration

	nads    kube.NADStore    // NetworkAttachmentDefinitions (nil: the API's; a test's in memory)
	objects kube.ObjectStore // the network modes' objects (nil: the API's; a test's in memory)
}

// NewCommand returns the cleanup command.
func NewCommand(streams iostreams.Streams) *cobra.Command {
	o := &Options{}
	c := &cobra.Command{
		Use:   "cleanup",
		Short: "Remove what abandoned runs left in the cluster (and only that)",
		Long: `Remove the namespaces, DaemonSets, pods, Services, ServiceAccounts,
NetworkAttachmentDefinitions (--macvlan's) and Leases that cnperf runs left behind (for
example after kill -9), found by their labels
(` + kube.LabelManagedBy + `=` + kube.ManagedByValue + `, ` + kube.LabelRun + `=<run id>) — but only what is
provably abandoned. Every run holds a Lease
(coordination.k8s.io) in its namespace and renews it every ` + kube.LeaseRenew.String() + ` while it runs; without
--run, a run's objects are removed only once its Lease has expired (` + kube.LeaseDuration.String() + ` after the
last renewal). A run that is alive (someone else's, on another machine), a run kept with
--keep, a run without a Lease and standing config (cnperf load, tiger-bench's
leaveStandingConfig) are kept and listed with the reason. Name them to remove them: --run ID,
--standing NAMESPACE. A namespace cnperf did not create is never deleted, only cnperf's own
objects in it.`,
		Example: `  cnperf cleanup --dry-run          # what would be removed and why, and what is kept and why
  cnperf cleanup                    # every abandoned run
  cnperf cleanup --run 0b5c...      # one run, alive or not
  cnperf cleanup --standing perf    # the standing config of namespace perf`,
		Args:         cobra.NoArgs,
		SilenceUsage: true, // a failed cleanup is not a usage mistake
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.Run(cmd.Context(), streams)
		},
	}
	fs := c.Flags()
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "kubeconfig file (default $KUBECONFIG, ~/.kube/config, then in-cluster)")
	fs.StringVar(&o.Context, "context", "", "kubeconfig context (default: the current context)")
	fs.StringVar(&o.RunID, "run", "", "remove the objects of this run id, alive or not (default: every run whose Lease has expired)")
	fs.StringSliceVar(&o.Standing, "standing", nil, "also remove the standing config of this namespace (cnperf load, tiger-bench leaveStandingConfig); repeatable")
	fs.StringVarP(&o.Namespace, "namespace", "n", "", "look only in this namespace (default: all namespaces)")
	flags.DryRun(fs, &o.DryRun, "list what would be removed and what is kept, and why; remove nothing")
	fs.BoolVar(&o.NoWait, "no-wait", false, "do not wait until everything is gone")
	fs.DurationVar(&o.Timeout, "timeout", 2*time.Minute, "give up after this long")
	return c
}

// Run runs the command.
func (o *Options) Run(ctx context.Context, streams iostreams.Streams) error {
	cs, _, err := kube.NewClientset(o.Kubeconfig, o.Context)
	if err != nil {
		return &exit.UsageError{Err: err}
	}
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	return o.run(ctx, cs, streams)
}

func (o *Options) run(ctx context.Context, cs kubernetes.Interface, streams iostreams.Streams) error {
	found, err := kube.Cleanup(ctx, cs, kube.CleanupOptions{RunID: o.RunID, Namespace: o.Namespace, DryRun: o.DryRun, Wait: !o.NoWait,
		NADs: o.nads, Objects: o.objects}, streams.LogWriter())
	removed := 0
	named := map[string]bool{}
	for _, ns := range o.Standing {
		named[ns] = true
	}
	for _, l := range found {
		if l.Kind == "Namespace" && named[l.Name] && !l.Remove {
			continue // its standing config is removed below, as named
		}
		where := l.Name
		if l.Namespace != "" {
			where = l.Namespace + "/" + l.Name
		}
		run := ""
		if l.RunID != "" {
			run = " (run " + l.RunID + ")"
		}
		verb := "kept"
		if l.Remove {
			removed++
			verb = "removed"
			if o.DryRun {
				verb = "would remove"
			}
		}
		fmt.Fprintf(streams.Out, "%s %s %s%s: %s\n", verb, l.Kind, where, run, l.Why)
	}
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	for _, ns := range o.Standing {
		st := &tigerbench.Standing{Client: cs, Log: streams.LogWriter()}
		if o.DryRun {
			c, err := st.Count(ctx, ns)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			what := "its objects"
			if c.OwnedNamespace {
				what = "the namespace, which cnperf created for it"
			}
			fmt.Fprintf(streams.Out, "would remove the standing config of namespace %s (named with --standing): %d pods, %d service backends, %d services, %d policies, %d idle policies; %s\n",
				ns, c.Pods, c.Backends, c.Services, c.Policies, c.IdlePolicies, what)
			removed++
			continue
		}
		took, err := st.Remove(ctx, ns, true, 0)
		if err != nil {
			errs = append(errs, fmt.Errorf("standing config of %s: %w", ns, err))
			continue
		}
		removed++
		fmt.Fprintf(streams.Out, "removed the standing config of namespace %s (named with --standing) in %.1fs\n", ns, took.Seconds())
	}
	if removed == 0 && len(errs) == 0 {
		streams.Logger().Info("nothing to clean up")
	}
	if len(errs) > 0 {
		return exit.Failure("cleanup: %v", errors.Join(errs...))
	}
	return nil
}
