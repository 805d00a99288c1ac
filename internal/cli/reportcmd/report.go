// Package reportcmd is `cnperf report`: re-render saved runs in any output format.
package reportcmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/cli/flags"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/iostreams"
	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/runfile"
	"github.com/cnperf/cnperf/internal/sink"
	"github.com/cnperf/cnperf/internal/sink/opensearch"
	"github.com/cnperf/cnperf/internal/sink/pushgateway"
)

type options struct {
	output string
	files  []string
	sinks  sink.Options
}

// NewCommand returns the `report` command.
func NewCommand(streams iostreams.Streams) *cobra.Command {
	o := &options{}
	c := &cobra.Command{
		Use:   "report [-o FORMAT] FILE...",
		Short: "Render saved runs (results files or run JSON) as a table, JSON, CSV, HTML or perfdash",
		Long: `report reads runs saved by 'cnperf run --results FILE' (JSON Lines, also while a run is
still going or after it was interrupted), printed by 'cnperf run -o json', or written by
'-o csv', and prints them in the chosen format. FILE "-" reads standard input. Several files,
or a file holding several runs, give one report over all the runs, in order.

A run saved by 'cnperf mesh' (-o json or --results) prints as its node × node matrices, as
cnperf mesh printed them, instead of one row per pair; -o mesh-csv and -o mesh-cells-csv
give the matrices and the cells as cnperf mesh -o csv / -o cells did.

Formats:
` + report.FormatHelpWithMesh() + `
With --prometheus URL every result without metrics gets the node CPU, agent pod CPU and
memory and interface drops of its time window from Prometheus (while Prometheus still holds
them). With --opensearch URL the runs are also indexed into OpenSearch/Elasticsearch
(--index), one document per result with its raw samples, run metadata and cluster details.
With --push-gateway URL each run's -o prometheus metrics are pushed to a Prometheus
Pushgateway, each run replacing its group (--push-job, the plan's name, the run's labels).

Warnings (a truncated last line, a run without an end record) go to standard error.
Exit codes: 0 rendered (and indexed, pushed), 1 indexing or pushing failed, 2 an unreadable
or invalid file, an unknown format, or runs the format cannot render (a mesh format and a run
that is not a mesh).`,
		Example: `  cnperf report results.jsonl
  cnperf report -o html calico.jsonl cilium.jsonl > report.html
  cnperf run -o json | cnperf report -o k8s-netperf-csv -`,
		Args: flags.Files(1, `no results file given (a file from --results, a run's JSON or CSV, or "-" for standard input)`),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.files = args
			return o.run(cmd.Context(), streams)
		},
	}
	c.Flags().StringVarP(&o.output, "output", "o", "table", "output format: one of the formats listed above")
	flags.CompleteValues(c, "output", false, report.AllFormats)
	flags.Sinks(c.Flags(), &o.sinks)
	return c
}

func (o *options) run(ctx context.Context, streams iostreams.Streams) error {
	enc, err := report.LookupReport(o.output, report.Width(iostreams.Columns(streams.Out)))
	if err != nil {
		return &exit.UsageError{Err: err}
	}
	osCfg, err := o.sinks.OpenSearch(streams.LogWriter())
	if err != nil {
		return &exit.UsageError{Err: err}
	}
	prom, err := o.sinks.Prometheus(streams.LogWriter())
	if err != nil {
		return &exit.UsageError{Err: err}
	}
	push, err := o.sinks.PushGateway(streams.LogWriter())
	if err != nil {
		return &exit.UsageError{Err: err}
	}
	runs, err := ReadAll(streams, o.files)
	if err != nil {
		return err
	}
	if prom != nil {
		for _, run := range runs {
			for i := range run.Results {
				r := &run.Results[i]
				if r.Metrics != nil {
					continue
				}
				if err := prom.Annotate(ctx, r); err != nil {
					return exit.Failure("%w", err)
				}
				if r.Metrics != nil {
					for _, w := range r.Metrics.Warnings {
						streams.Logger().Warn(fmt.Sprintf("prometheus: case %d of run %s: %s", i+1, run.UUID, w))
					}
				}
			}
		}
	}
	if err := enc.Encode(streams.Out, runs); err != nil {
		var unsuitable *report.UnsuitableRunsError
		if errors.As(err, &unsuitable) {
			return &exit.UsageError{Err: err}
		}
		return fmt.Errorf("report: %w", err)
	}
	if osCfg != nil {
		if err := opensearch.Ship(ctx, *osCfg, runs, streams.LogWriter()); err != nil {
			return exit.Failure("%w", err)
		}
	}
	if push != nil {
		if err := pushgateway.Push(ctx, *push, runs, streams.LogWriter()); err != nil {
			return exit.Failure("%w", err)
		}
	}
	return nil
}

// ReadAll reads the runs of every file in order ("-" is standard input), printing warnings on
// stderr. A file that cannot be read or parsed is a usage error (exit 2).
func ReadAll(streams iostreams.Streams, files []string) ([]*api.Run, error) {
	var all []*api.Run
	budget := runfile.NewBudget(runfile.MaxReadBytes) // one for all the files
	for _, f := range files {
		runs, warnings, err := runfile.ReadPathWithin(f, streams.In, budget)
		for _, w := range warnings {
			streams.Logger().Warn(w)
		}
		if err != nil {
			return nil, &exit.UsageError{Err: fmt.Errorf("read results: %w", err)}
		}
		all = append(all, runs...)
	}
	return all, nil
}
