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
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"

	"github.com/cnperf/cnperf/internal/cli/flags"
	"github.com/cnperf/cnperf/internal/cli/runcmd"
	"github.com/cnperf/cnperf/internal/driver/all"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/iostreams"
	"github.com/cnperf/cnperf/internal/logging"
	"github.com/cnperf/cnperf/internal/plan"
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
		return &exit.UsageError{Err: suggestFlag(cmd, err)}
	}
	return err
}

// suggestFlag adds "did you mean --X?" to pflag's "unknown flag: --Y" (cobra suggests
// subcommands only).
func suggestFlag(cmd *cobra.Command, err error) error {
	const prefix = "unknown flag: --"
	msg := err.Error()
	if cmd == nil || !strings.HasPrefix(msg, prefix) {
		return err
	}
	var names []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	cmd.InheritedFlags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	if c := plan.Closest(strings.TrimPrefix(msg, prefix), names); c != "" {
		return fmt.Errorf("%w (did you mean --%s?)", err, c)
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
	// One logger for every command, at the level -v/-q set once the flags are parsed, its
	// lines wrapped to the width a person reads (iostreams.MessageWidth) except an agent's.
	level := new(slog.LevelVar)
	width := logging.NewWidth(iostreams.MessageWidth(streams.ErrOut))
	if streams.Log == nil {
		streams.Log = logging.New(streams.ErrOut, level, width)
	}
	var verbosity int
	var quiet bool
	root := &cobra.Command{
		Use:   "cnperf",
		Short: "Measure the network performance of Kubernetes clusters",
		Long: `cnperf measures throughput, packet rate, request/response latency and connection rate
between pods, hosts and services, with its built-in load generator or with the tools people
already trust (drivers: ` + all.Joined() + `),
and reports every result with honest statistics.

Exit codes: 0 all good; 1 something failed while running (a case, a sample, a gate, an
interruption, indexing, the cluster); 2 bad usage or input, found before anything ran;
130, 143 ended by SIGINT, SIGTERM with nothing to clean up, or by a third signal; 141 output
closed early (SIGPIPE).`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if isAgent(strings.Fields(cmd.CommandPath())[1:]) {
				width.Set(0) // cnperf reads an agent's stderr back (see WriteError)
			}
			switch {
			case verbosity < 0:
				return exit.Usage("-v=%d: the verbosity is 0 or more (as kubectl's -v)", verbosity)
			case verbosity > 0 && quiet:
				return &exit.UsageError{Err: errors.New("-v and -q exclude each other")}
			case verbosity > 0:
				level.Set(logging.Verbose)
			case quiet:
				level.Set(logging.Quiet)
			default:
				level.Set(logging.Default)
			}
			return nil
		},
	}
	root.PersistentFlags().IntVarP(&verbosity, "verbose", "v", 0, "verbosity: -v (= -v=1) also prints debug lines on stderr; kubectl's higher -v=N print the same (one debug level)")
	root.PersistentFlags().Lookup("verbose").NoOptDefVal = "1"
	root.SetUsageTemplate(usageTemplate)
	root.SuggestionsMinimumDistance = 2
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
	var output string
	c := &cobra.Command{
		Use:   "version",
		Short: "Print cnperf's version",
		Example: `  cnperf version
  cnperf version -o json
  cnperf version --image        # the agent image this cnperf deploys`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if asJSON {
				streams.Logger().Warn("flag --json has been deprecated, use -o json")
				if output != "" && output != "json" {
					return exit.Usage("--json and -o %s exclude each other (--json is -o json)", output)
				}
				output = "json"
			}
			if image {
				if output != "" {
					return exit.Usage("--image prints the image's name alone: it takes no -o")
				}
				fmt.Fprintln(streams.Out, version.DefaultImage())
				return nil
			}
			v := map[string]any{
				"version": version.Version, "commit": version.Commit, "go": runtime.Version(),
				"platform": runtime.GOOS + "/" + runtime.GOARCH, "defaultImage": version.DefaultImage(),
				"dev": version.IsDev(version.Version),
			}
			switch output {
			case "json":
				enc := json.NewEncoder(streams.Out)
				enc.SetIndent("", "  ")
				return enc.Encode(v)
			case "yaml":
				b, err := yaml.Marshal(v)
				if err != nil {
					return err
				}
				_, err = streams.Out.Write(b)
				return err
			case "", "table":
			default:
				return flags.Output(output, []string{"json", "yaml"})
			}
			fmt.Fprintf(streams.Out, "cnperf %s (commit %s, %s, %s/%s)\n", version.Version, version.Commit,
				runtime.Version(), runtime.GOOS, runtime.GOARCH)
			fmt.Fprintf(streams.Out, "agent image: %s (%s)\n", version.DefaultImage(), version.ImageNote())
			return nil
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "", "output format: json or yaml (default: text)")
	c.Flags().BoolVar(&asJSON, "json", false, "print the version as JSON")
	// deprecated: said on stderr by RunE (cobra's MarkDeprecated prints it on stdout, in the JSON)
	_ = c.Flags().MarkHidden("json")
	c.Flags().BoolVar(&image, "image", false, "print the default agent image and exit")
	return c
}
