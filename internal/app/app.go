// Package app is cnperf's command tree. The CLI is a thin shell over library packages:
// every command lives in its own package under internal/cli with a local options struct.
package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/cli/runcmd"
	"github.com/cnperf/cnperf/internal/driver/all"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/iostreams"
	"github.com/cnperf/cnperf/internal/logging"
	"github.com/cnperf/cnperf/internal/version"
)

// Run executes cnperf with args (without the program name). It never exits the process;
// the error's exit code comes from exit.Code.
func Run(ctx context.Context, streams iostreams.Streams, args []string) error {
	root := NewRootCommand(streams)
	root.SetArgs(args)
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	cmd, err := root.ExecuteContextC(ctx)
	if err != nil && isFlagError(cmd, err) {
		return &exit.UsageError{Err: err}
	}
	return err
}

// isFlagError tells cobra's own usage errors (unknown flag, bad flag value, wrong argument
// count) from errors returned by a command's RunE.
func isFlagError(cmd *cobra.Command, err error) bool {
	if cmd == nil {
		return true
	}
	if _, ok := err.(*exit.UsageError); ok {
		return false
	}
	ran, _ := cmd.Annotations["cnperf.ran"]
	return ran != "true"
}

// NewRootCommand builds the command tree.
func NewRootCommand(streams iostreams.Streams) *cobra.Command {
	// One logger for every command, at the level -v/-q set once the flags are parsed.
	level := new(slog.LevelVar)
	if streams.Log == nil {
		streams.Log = logging.New(streams.ErrOut, level)
	}
	var verbose, quiet bool
	root := &cobra.Command{
		Use:   "cnperf",
		Short: "Measure the network performance of Kubernetes clusters",
		Long: `cnperf measures throughput, packet rate, request/response latency and connection rate
between pods, hosts and services, with its built-in load generator or with the tools people
already trust (drivers: ` + all.Joined() + `),
and reports every result with honest statistics.

Exit codes: 0 all good; 1 something failed while running (a case, a sample, a gate, an
interruption, indexing, the cluster); 2 bad usage or input, found before anything ran.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(*cobra.Command, []string) error {
			switch {
			case verbose && quiet:
				return &exit.UsageError{Err: errors.New("-v and -q exclude each other")}
			case verbose:
				level.Set(logging.Verbose)
			case quiet:
				level.Set(logging.Quiet)
			default:
				level.Set(logging.Default)
			}
			return nil
		},
	}
	root.PersistentFlags().BoolVarP(&verbose, "verbose", "v", false, "also print debug lines on stderr")
	root.PersistentFlags().BoolVarP(&quiet, "quiet", "q", false, "print only errors on stderr (no progress, notes or warnings)")
	add := func(c *cobra.Command) {
		markRan(c)
		root.AddCommand(c)
	}
	add(runcmd.NewCommand(streams))
	add(newVersionCommand(streams))
	for _, c := range extraCommands(streams) {
		add(c)
	}
	return root
}

// markRan records, for every command in the tree, that its RunE started, so Run can tell
// flag-parsing errors (exit 2) from command errors.
func markRan(c *cobra.Command) {
	if c.RunE != nil {
		inner := c.RunE
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if cmd.Annotations == nil {
				cmd.Annotations = map[string]string{}
			}
			cmd.Annotations["cnperf.ran"] = "true"
			return inner(cmd, args)
		}
	}
	for _, sub := range c.Commands() {
		markRan(sub)
	}
}

func newVersionCommand(streams iostreams.Streams) *cobra.Command {
	var asJSON, image bool
	c := &cobra.Command{
		Use:   "version",
		Short: "Print cnperf's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if image {
				fmt.Fprintln(streams.Out, version.DefaultImage())
				return nil
			}
			if asJSON {
				enc := json.NewEncoder(streams.Out)
				enc.SetIndent("", "  ")
				return enc.Encode(map[string]any{
					"version": version.Version, "commit": version.Commit, "go": runtime.Version(),
					"platform": runtime.GOOS + "/" + runtime.GOARCH, "defaultImage": version.DefaultImage(),
					"dev": version.IsDev(version.Version),
				})
			}
			fmt.Fprintf(streams.Out, "cnperf %s (commit %s, %s, %s/%s)\n", version.Version, version.Commit,
				runtime.Version(), runtime.GOOS, runtime.GOARCH)
			fmt.Fprintf(streams.Out, "agent image: %s (%s)\n", version.DefaultImage(), version.ImageNote())
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the version as JSON")
	c.Flags().BoolVar(&image, "image", false, "print the default agent image and exit")
	return c
}
