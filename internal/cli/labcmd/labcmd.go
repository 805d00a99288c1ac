// Package labcmd is `cnperf lab`: build, list and remove the network-namespace lab by hand
// (for debugging a path), and clean up what a killed run left behind.
package labcmd

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/cli/flags"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/figure"
	"github.com/cnperf/cnperf/internal/interrupt"
	"github.com/cnperf/cnperf/internal/iostreams"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/measure"
	"github.com/cnperf/cnperf/internal/plan"
)

// NewCommand returns the `lab` command.
func NewCommand(streams iostreams.Streams) *cobra.Command {
	c := &cobra.Command{
		Use:   "lab",
		Short: "Build, list and clean up the local network-namespace lab",
		Long: `The local platform reproduces a cluster's network paths in network namespaces named
cnp-<tag>-<cluster>-<role> (tag: six hex digits of the run id). A run removes its lab when it
ends, fails or is interrupted; "lab cleanup" removes what a killed run (kill -9) left.
"lab up" builds a lab and leaves it for inspection with ip netns exec; "lab down" removes it.`,
	}
	c.AddCommand(newUp(streams), newDown(streams), newList(streams), newCleanup(streams))
	return c
}

type upOptions struct {
	lab   lab.Options
	paths []string
	runID string
}

func newUp(streams iostreams.Streams) *cobra.Command {
	o := upOptions{lab: lab.DefaultOptions()}
	c := &cobra.Command{
		Use: "up",
		Example: `  sudo cnperf lab up                       # every lab path, left up for inspection
  sudo cnperf lab up --path pod-pod-cross-node --overlay vxlan`,
		Short: "Build the lab for some paths and leave it up",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runUp(cmd.Context(), streams, o)
		},
	}
	flags.Lab(c.Flags(), &o.lab)
	c.Flags().StringSliceVar(&o.paths, "path", []string{"all"}, "paths to build, comma-separated: all, or any of "+plan.Join(lab.Paths))
	c.Flags().StringVar(&o.runID, "run-id", "", "id whose first six hex digits tag the lab (default: a new uuid)")
	return c
}

func selectPaths(names []string) ([]api.Path, error) {
	var out []api.Path
	for _, n := range names {
		if n == "all" {
			return lab.Paths, nil
		}
		if !lab.Supports(api.Path(n)) {
			return nil, exit.Usage("--path %q: the lab builds %s", n, plan.Join(lab.Paths))
		}
		out = append(out, api.Path(n))
	}
	return out, nil
}

func runUp(ctx context.Context, streams iostreams.Streams, o upOptions) error {
	paths, err := selectPaths(o.paths)
	if err != nil {
		return err
	}
	if o.runID == "" {
		o.runID = uuid.NewString()
	}
	// From here on a signal removes what was built; before, it ends cnperf at once.
	interrupt.Arm(ctx)
	l, err := lab.New(o.runID, o.lab, true, streams.LogWriter())
	if err != nil {
		return err
	}
	type row struct {
		path api.Path
		topo api.Topology
		c    *lab.Cluster
		e    lab.Endpoints
	}
	var rows []row
	for _, p := range paths {
		for _, t := range o.lab.Topologies(p) {
			spec, err := o.lab.SpecFor(p, &t)
			if err != nil {
				return err
			}
			c, err := l.Cluster(ctx, spec)
			if err != nil {
				cctx, cancel := measure.Cleanup(ctx, 30*time.Second)
				defer cancel()
				if cerr := l.Close(cctx); cerr != nil {
					return fmt.Errorf("%w; removing the clusters already built also failed: %v", err, cerr)
				}
				return err
			}
			e, err := c.Endpoints(string(p))
			if err != nil {
				return err
			}
			rows = append(rows, row{p, t, c, e})
		}
	}
	tw := tabwriter.NewWriter(streams.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "lab %s is up (remove it with: cnperf lab down %s)\n", l.Tag(), l.Tag())
	fmt.Fprintln(tw, "PATH\tTOPOLOGY\tCLIENT NETNS\tSERVER NETNS\tTARGET")
	for _, r := range rows {
		var servers []string
		for _, s := range r.e.Servers {
			servers = append(servers, s.Name)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.path, figure.TopologyLabel(&r.topo), r.e.Client.Name, strings.Join(servers, ","), r.e.Target)
	}
	if len(rows) > 0 {
		r := rows[0]
		fmt.Fprintf(tw, "\ntry: ip netns exec %s iperf3 -s -D; ip netns exec %s iperf3 -c %s -t 2\n", r.e.Servers[0].Name, r.e.Client.Name, r.e.Target)
	}
	return tw.Flush()
}

func newDown(streams iostreams.Streams) *cobra.Command {
	return &cobra.Command{
		Use:     "down TAG",
		Example: `  sudo cnperf lab down 3fa2c1              # the tag lab up and lab list print`,
		Short:   "Remove the lab with the given tag (from lab up or lab list), even if its run is alive",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			tag := strings.ToLower(args[0])
			if lab.TagOf(lab.Prefix+tag+"-x") == "" {
				return exit.Usage("%q is not a lab tag (six hex digits, as `cnperf lab list` shows)", args[0])
			}
			rep, err := lab.Cleanup(cmd.Context(), lab.CleanupOptions{Tag: tag, Force: true})
			printReport(streams, rep)
			if err == nil && len(rep.Removed) == 0 {
				return exit.Usage("no lab with tag %s (`cnperf lab list` shows the labs on this host)", tag)
			}
			return err
		},
	}
}

func newList(streams iostreams.Streams) *cobra.Command {
	var output string
	c := &cobra.Command{
		Use: "list",
		Example: `  cnperf lab list
  cnperf lab list -o json
  cnperf lab list -o yaml`,
		Short: "List the lab namespaces on this host by run",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			runs, err := lab.List(cmd.Context())
			if err != nil {
				return err
			}
			switch output {
			case "json", "yaml":
				if runs == nil {
					runs = []lab.RunInfo{}
				}
				return flags.EncodeData(streams.Out, output, runs)
			case "table":
			default:
				return flags.Output(output, listFormats)
			}
			if len(runs) == 0 {
				streams.Logger().Info("no lab namespaces on this host")
				return nil
			}
			tw := tabwriter.NewWriter(streams.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "TAG\tSTATE\tOWNER\tNAMESPACES\tRUN ID")
			for _, r := range runs {
				state, owner := "left over", "-"
				switch {
				case r.Alive:
					state, owner = "in use", fmt.Sprint(r.OwnerPID)
				case r.OwnerPID == 0 && r.RunID != "":
					state = "detached (lab up)"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", r.Tag, state, owner, len(r.Namespaces), r.RunID)
			}
			return tw.Flush()
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "table", "output format: table, json or yaml")
	flags.CompleteValues(c, "output", false, func() []string { return listFormats })
	return c
}

// listFormats are the values of lab list's -o.
var listFormats = []string{"table", "json", "yaml"}

func newCleanup(streams iostreams.Streams) *cobra.Command {
	var o lab.CleanupOptions
	c := &cobra.Command{
		Use:     "cleanup",
		Example: `  sudo cnperf lab cleanup                  # labs whose run is gone`,
		Short:   "Remove lab namespaces left by runs that no longer run (and detached labs)",
		Long: `Removes every network namespace named cnp-<tag>-… whose run is no longer alive (killed,
crashed) or that "lab up" left, with the processes, interfaces, routes and rules inside it.
The labs of runs still in progress are left alone unless --force.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Tag = strings.ToLower(o.Tag)
			rep, err := lab.Cleanup(cmd.Context(), o)
			printReport(streams, rep)
			return err
		},
	}
	c.Flags().StringVar(&o.Tag, "tag", "", "only the lab with this tag")
	c.Flags().BoolVar(&o.Force, "force", false, "also remove the labs of runs still in progress")
	return c
}

func printReport(streams iostreams.Streams, rep lab.CleanupReport) {
	for _, n := range rep.Removed {
		fmt.Fprintf(streams.Out, "removed netns %s\n", n)
	}
	for _, r := range rep.Skipped {
		streams.Logger().Info(fmt.Sprintf("kept lab %s: its run (pid %d) is still in progress; --force removes it", r.Tag, r.OwnerPID))
	}
	for _, l := range rep.StrayLinks {
		streams.Logger().Warn(fmt.Sprintf("interface %s in the root namespace is named like the lab's; cnperf never creates one there and leaves it alone", l))
	}
	if len(rep.Removed) == 0 && len(rep.Skipped) == 0 {
		streams.Logger().Info("nothing to clean up")
	}
}
