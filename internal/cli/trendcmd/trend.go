// Package trendcmd is `cnperf trend`: change points across a history of saved runs, with an
// optional regression gate for CI.
package trendcmd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/changepoint"
	"github.com/cnperf/cnperf/internal/cli/flags"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/iostreams"
	"github.com/cnperf/cnperf/internal/report/trend"
	"github.com/cnperf/cnperf/internal/runfile"
	"github.com/cnperf/cnperf/internal/sink"
	"github.com/cnperf/cnperf/internal/sink/opensearch"
	"github.com/cnperf/cnperf/internal/text"
)

// formats are trend's output formats.
var formats = []string{"table", "json", "yaml", "html"}

// resultsExt are the file name endings a directory's results files have (cnperf run --results,
// -o json, -o csv).
var resultsExt = []string{".jsonl", ".ndjson", ".json", ".csv"}

type options struct {
	sinks        sink.Options
	output       string
	window       int
	maxPValue    float64
	minMagnitude float64
	minRuns      int
	gate         flags.Regression // --fail-on-regression
}

// NewCommand returns the `trend` command.
func NewCommand(streams iostreams.Streams) *cobra.Command {
	o := &options{}
	c := &cobra.Command{
		Use:   "trend (FILE | DIRECTORY | GLOB)... | --opensearch URL",
		Short: "Find change points across a history of runs: per case and figure, better or worse",
		Long: `trend reads a history of saved runs (results files; a directory stands for the results files
in it, a quoted glob for the files it matches), orders the runs by their start time (not by
file name), and follows every case across them: the cases are matched as compare matches
them (profile, path, driver and traffic parameters; not duration or sample count), and each
case gives one series per headline figure (throughput, packet, transaction and connection
rates, latency p50 and p99), one value per run (the run's summary). With --opensearch the
runs are read from an index that cnperf run --opensearch (or report --opensearch) filled,
besides any files given.

In each series it finds the change points, the runs from which the figure stays at another
level, with Apache Otava's method (formerly Hunter, what cloud-bulldozer/orion runs over
k8s-netperf's results): E-divisive means proposes the split that best separates the levels,
Student's t-test decides whether it is significant (--max-pvalue), in windows of --window
runs, and a merge step drops the points that are no longer significant (or smaller than
--min-magnitude) once their neighbours are known. Each change point shows the run where the
new level starts, the means before and after, the change in percent — better or worse in
the figure's direction (rates are better higher; latency lower) — and the p-value. Its
verdicts are Otava's on the same series (a test runs both).

A run in which a case failed is a gap in its series, listed with its cause, never a zero. A
series with fewer than --min-runs successful runs is too short to tell a change from noise
and is only listed.

--fail-on-regression PCT turns trend into a CI gate: it exits 1, saying why, when the last
change point of a series is worse by PCT percent or more (a regression that a later change
point has not undone), or when a case failed in its newest run.

-o html writes a self-contained page with a chart of every series: the runs in history order,
the level between change points, each change point with its step, failed runs as crosses.

Exit codes: 0 analysed (and the gate passed), 1 the gate failed or the index could not be
read, 2 bad usage or an unreadable file.`,
		Example: `  # every nightly results file in a directory, oldest first by start time
  cnperf trend results/

  # a glob (quoted: cnperf expands it) as a CI gate on the newest runs
  cnperf trend 'nightly/*.jsonl' --fail-on-regression 10

  # a looser level and a 5 % floor on the size of a change, the series as JSON
  cnperf trend results/ --max-pvalue 0.01 --min-magnitude 0.05 -o json

  # the runs indexed into OpenSearch by cnperf run --opensearch
  cnperf trend --opensearch https://search.example:9200 --index cnperf-results \
    --opensearch-username ci --opensearch-password-file /run/secrets/os-password

  # a page with a chart of every series and its change points
  cnperf trend results/ -o html > trend.html`,
		Args: func(cmd *cobra.Command, args []string) error {
			if o.sinks.OpenSearchURL != "" {
				return nil
			}
			return flags.Files(1, "give the runs of the history (results files, directories of them, or a quoted glob) or --opensearch")(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd.Context(), streams, args)
		},
	}
	f := c.Flags()
	f.StringVarP(&o.output, "output", "o", "table", "output format: "+strings.Join(formats, ", "))
	flags.CompleteValues(c, "output", false, func() []string { return formats })
	f.IntVar(&o.window, "window", changepoint.DefaultWindow, "runs analysed at once (windows overlap by half; Otava's --window)")
	f.Float64Var(&o.maxPValue, "max-pvalue", changepoint.DefaultMaxPValue, "largest p-value of a reported change point (Otava's --pvalue)")
	f.Float64Var(&o.minMagnitude, "min-magnitude", 0, "smallest relative change reported, as a fraction: 0.05 is 5% (Otava's --magnitude)")
	f.IntVar(&o.minRuns, "min-runs", trend.DefaultMinRuns, "fewest successful runs a series needs to be analysed")
	flags.OpenSearchSource(f, &o.sinks)
	o.gate.Bind(f, "exit 1 when the last change point of a series is worse by this many percent or more (see above)")
	return c
}

func (o *options) run(ctx context.Context, streams iostreams.Streams, args []string) error {
	if err := o.validate(); err != nil {
		return err
	}
	files, err := expand(args)
	if err != nil {
		return &exit.UsageError{Err: err}
	}
	inputs, err := o.readIndex(ctx, streams)
	if err != nil {
		return err
	}
	fromFiles, err := readFiles(streams, files)
	if err != nil {
		return err
	}
	h, err := trend.Analyze(append(inputs, fromFiles...), trend.Options{
		Detect:  changepoint.Options{Window: o.window, MaxPValue: o.maxPValue, MinMagnitude: o.minMagnitude},
		MinRuns: o.minRuns,
	})
	if err != nil {
		return &exit.UsageError{Err: err}
	}
	switch o.output {
	case "table":
		err = trend.WriteTable(streams.Out, h, iostreams.Columns(streams.Out))
	case "html":
		err = trend.WriteHTML(streams.Out, h)
	default:
		err = flags.EncodeData(streams.Out, o.output, h)
	}
	if err != nil {
		return fmt.Errorf("trend: %w", err)
	}
	if !o.gate.On {
		return nil
	}
	return o.checkGate(streams, h)
}

// validate refuses bad flag values with a usage error naming the flag.
func (o *options) validate() error {
	if err := flags.Output(o.output, formats); err != nil {
		return err
	}
	if err := o.gate.Check(); err != nil {
		return err
	}
	if o.window < 2 {
		return exit.Usage("--window %d: want at least 2 runs", o.window)
	}
	if !(o.maxPValue > 0 && o.maxPValue <= 1) {
		return exit.Usage("--max-pvalue %v: want a number in (0, 1]", o.maxPValue)
	}
	if !(o.minMagnitude >= 0) {
		return exit.Usage("--min-magnitude %v: want a fraction ≥ 0 (0.05 is 5%%)", o.minMagnitude)
	}
	if o.minRuns < 3 {
		return exit.Usage("--min-runs %d: want at least 3", o.minRuns)
	}
	return nil
}

// readIndex reads the runs of --opensearch's index (none without --opensearch).
func (o *options) readIndex(ctx context.Context, streams iostreams.Streams) ([]trend.Input, error) {
	cfg, err := o.sinks.OpenSearch(streams.LogWriter())
	if err != nil {
		return nil, &exit.UsageError{Err: err}
	}
	if cfg == nil {
		return nil, nil
	}
	c, err := opensearch.New(*cfg)
	if err != nil {
		return nil, &exit.UsageError{Err: err}
	}
	runs, err := c.ReadRuns(ctx)
	if err != nil {
		return nil, fmt.Errorf("trend: read the history: %w", err)
	}
	return []trend.Input{{Source: c.URL() + "/" + c.Index(), Runs: runs}}, nil
}

// readFiles reads the runs of each results file ("-": standard input, once), each within its
// own read budget, keeping only the failed samples.
func readFiles(streams iostreams.Streams, files []string) ([]trend.Input, error) {
	var inputs []trend.Input
	stdin := false
	for _, f := range files {
		if f == "-" {
			if stdin {
				return nil, exit.Usage("standard input (-) can be given only once")
			}
			stdin = true
		}
		// One budget per file: a history is many files, each bounded as report bounds one.
		runs, warnings, err := runfile.ReadPathWithin(f, streams.In, runfile.NewBudget(runfile.MaxReadBytes))
		for _, w := range warnings {
			streams.Logger().Warn(w)
		}
		if err != nil {
			return nil, &exit.UsageError{Err: fmt.Errorf("read results: %w", err)}
		}
		for _, r := range runs {
			if r.StartTime.IsZero() {
				streams.Logger().Warn(fmt.Sprintf("%s: run %s has no start time: it is placed first in the history", f, r.UUID))
			}
			// The series are read from the summaries: the raw samples need not stay in memory.
			for i := range r.Results {
				r.Results[i].Samples = dropSamples(r.Results[i].Samples)
			}
		}
		inputs = append(inputs, trend.Input{Source: f, Runs: runs})
	}
	return inputs, nil
}

// checkGate is --fail-on-regression: exit 1 naming every series whose last change point is
// worse by the limit or more (or whose newest run failed).
func (o *options) checkGate(streams iostreams.Streams, h *trend.History) error {
	regs := h.Regressions(o.gate.Percent)
	if len(regs) == 0 {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "regression gate of %g%% failed on %d series", o.gate.Percent, len(regs))
	for _, r := range regs { // each fits the output's width (it goes to stderr after "cnperf: ")
		for _, l := range text.Wrap(r.String(), iostreams.MessageWidth(streams.ErrOut), "  ", "      ") {
			b.WriteString("\n" + l)
		}
	}
	return exit.Failure("%s", b.String())
}

// dropSamples keeps the failed samples (their errors are a failed case's cause) and drops
// the rest.
func dropSamples(ss []api.Sample) []api.Sample {
	var out []api.Sample
	for _, s := range ss {
		if s.Error != "" && !s.Warmup {
			out = append(out, s)
			break
		}
	}
	return out
}

// expand turns the arguments into files: a directory into the results files directly in it
// (by name; the history is ordered by start time later), a pattern that names no file into
// the files it matches; "-" is standard input.
func expand(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		if a == "-" {
			out = append(out, a)
			continue
		}
		st, err := os.Stat(a)
		switch {
		case err == nil && st.IsDir():
			entries, err := os.ReadDir(a)
			if err != nil {
				return nil, fmt.Errorf("read directory: %w", err)
			}
			n := 0
			for _, e := range entries {
				if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") && resultsFile(e.Name()) {
					out = append(out, filepath.Join(a, e.Name()))
					n++
				}
			}
			if n == 0 {
				return nil, fmt.Errorf("%s: no results files in the directory (want names ending in %s)", a, strings.Join(resultsExt, ", "))
			}
		case err == nil:
			out = append(out, a)
		case strings.ContainsAny(a, "*?["):
			matches, gerr := filepath.Glob(a)
			if gerr != nil {
				return nil, fmt.Errorf("%s: %w", a, gerr)
			}
			if len(matches) == 0 {
				return nil, fmt.Errorf("%s: the pattern matches no file", a)
			}
			sort.Strings(matches)
			out = append(out, matches...)
		default:
			return nil, fmt.Errorf("read results: %w", err)
		}
	}
	return out, nil
}

func resultsFile(name string) bool {
	for _, e := range resultsExt {
		if strings.HasSuffix(name, e) {
			return true
		}
	}
	return false
}
