// Package cleanupcmd is `cnperf cleanup`: remove what killed runs left in a cluster, found
// by cnperf's labels.
package cleanupcmd

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/iostreams"
	"github.com/cnperf/cnperf/internal/platform/kube"
)

// Options are the flags of `cnperf cleanup`.
type Options struct {
	Kubeconfig string
	Context    string
	RunID      string
	Namespace  string
	DryRun     bool
	NoWait     bool
	Timeout    time.Duration
}

// NewCommand returns the cleanup command.
func NewCommand(streams iostreams.Streams) *cobra.Command {
	o := &Options{}
	c := &cobra.Command{
		Use:   "cleanup",
		Short: "Remove what interrupted runs left in the cluster",
		Long: `Remove the namespaces, pods, Services and ServiceAccounts cnperf runs left behind (for
example after kill -9), found by their labels (` + kube.LabelManagedBy + `=` + kube.ManagedByValue + `,
` + kube.LabelRun + `=<run id>). Namespaces cnperf created are deleted with everything in them;
in a namespace cnperf did not create, only its own labelled objects are deleted, never the
namespace.`,
		Example: `  cnperf cleanup                 # every cnperf leftover in every namespace
  cnperf cleanup --run 0b5c...   # only one run's objects
  cnperf cleanup --dry-run       # list, delete nothing`,
		Args:         cobra.NoArgs,
		SilenceUsage: true, // a failed cleanup is not a usage mistake
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.Run(cmd.Context(), streams)
		},
	}
	fs := c.Flags()
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "kubeconfig file (default $KUBECONFIG, ~/.kube/config, then in-cluster)")
	fs.StringVar(&o.Context, "context", "", "kubeconfig context (default: the current context)")
	fs.StringVar(&o.RunID, "run", "", "remove only the objects of this run id (default: every run)")
	fs.StringVarP(&o.Namespace, "namespace", "n", "", "look only in this namespace (default: all namespaces)")
	fs.BoolVar(&o.DryRun, "dry-run", false, "list what would be removed, remove nothing")
	fs.BoolVar(&o.NoWait, "no-wait", false, "do not wait until everything is gone")
	fs.DurationVar(&o.Timeout, "timeout", 2*time.Minute, "give up after this long")
	return c
}

// Run runs the command.
func (o *Options) Run(ctx context.Context, streams iostreams.Streams) error {
	if ctx == nil {
		ctx = context.Background()
	}
	cs, _, err := kube.NewClientset(o.Kubeconfig, o.Context)
	if err != nil {
		return &exit.UsageError{Err: err}
	}
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	found, err := kube.Cleanup(ctx, cs, kube.CleanupOptions{RunID: o.RunID, Namespace: o.Namespace, DryRun: o.DryRun, Wait: !o.NoWait}, streams.ErrOut)
	for _, l := range found {
		where := l.Name
		if l.Namespace != "" {
			where = l.Namespace + "/" + l.Name
		}
		verb := "removed"
		if o.DryRun {
			verb = "would remove"
		}
		fmt.Fprintf(streams.Out, "%s %s %s (run %s)\n", verb, l.Kind, where, l.RunID)
	}
	if len(found) == 0 && err == nil {
		fmt.Fprintln(streams.ErrOut, "nothing to clean up")
	}
	if err != nil {
		return exit.Failure("cleanup: %v", err)
	}
	return nil
}
