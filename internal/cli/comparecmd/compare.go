// Package comparecmd is `cnperf compare`: compare saved runs case by case, with significance
// tests and an optional regression gate for CI.
package comparecmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/cli/flags"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/gate"
	"github.com/cnperf/cnperf/internal/iostreams"
	"github.com/cnperf/cnperf/internal/report/compare"
	"github.com/cnperf/cnperf/internal/runfile"
)

type options struct {
	output     string
	labels     []string
	alpha      float64
	gate       flags.Regression // --fail-on-regression
	allowMiss  bool
	allowIntr  bool
	files      []string
	stdinTaken bool
}

// NewCommand returns the `compare` command.
func NewCommand(streams iostreams.Streams) *cobra.Command {
	o := &options{}
	c := &cobra.Command{
		Use:   "compare BASE NEW [NEW...]",
		Short: "Compare runs case by case: change, significance and verdict per figure",
		Long: `compare matches the cases of saved runs (two CNIs, two versions, before and after a change)
by profile, path, driver and traffic parameters (message size, parallel flows, burst, rate,
host network, service, IP family, driver options; not duration or sample count), and prints
one row per case and figure with one column per file, the first file being the base.

For every figure of every later column it shows the change against the base in percent, a
two-sided significance test on the raw samples, and a verdict: better, worse, n.s. (no
significant change at --alpha) or untested (under 2 samples on a side). The test is Welch's
t-test, or the Mann–Whitney U rank test when the samples are skewed and there are at least 4
per side (with 2–3 samples a rank test can never reach p < 0.05). Throughput, packet,
transaction and connection rates are better when higher; latency, loss, retransmits, jitter
and CPU when lower. Latency percentiles are compared on the merged distributions and tested
on each sample's own percentiles.

Columns are labelled by --label, else by the run label (cnperf run --label KEY=VALUE) whose
value differs between the files, as KEY=VALUE (e.g. cni=routed and cni=vxlan), else by the CNI
in the runs' cluster details, else by the local topology flavour, else by the file name: the
first that tells every column apart. A file holding several runs is one column.

--fail-on-regression PCT turns compare into a CI gate: it exits 1, saying why, when a rate or
latency p50/p99 is significantly worse by PCT percent or more, is worse by PCT or more with too
few samples to test, or when a case that succeeded in the base failed; and when a later run
cannot vouch for itself: it has no results, it was interrupted (--allow-interrupted compares
what it has), it lacks a case the base has (--allow-missing passes that), or a figure is not a
finite number. A run that stopped early never passes by accident.

Exit codes: 0 compared (and the gate passed), 1 the gate failed, 2 bad usage or an
unreadable file.`,
		Example: `  cnperf compare calico.jsonl cilium.jsonl flannel.jsonl
  cnperf compare --label before --label after main.jsonl pr.jsonl --fail-on-regression 5
  cnperf compare -o markdown routed.jsonl vxlan.jsonl`,
		Args: flags.Files(2, "give a base run and at least one run to compare with it (results files, \"-\" for standard input)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.files = args
			return o.run(streams)
		},
	}
	f := c.Flags()
	f.StringVarP(&o.output, "output", "o", "table", "output format: "+strings.Join(compare.Formats, ", "))
	flags.CompleteValues(c, "output", false, func() []string { return compare.Formats })
	f.StringArrayVar(&o.labels, "label", nil, "column label, once per file in order (default: a differing run label KEY=VALUE, CNI, topology or file name)")
	f.Float64Var(&o.alpha, "alpha", 0.05, "significance level of the tests")
	o.gate.Bind(f, "exit 1 when a rate or latency p50/p99 is worse by this many percent or more (see above)")
	f.BoolVar(&o.allowMiss, "allow-missing", false, "with --fail-on-regression: pass cases of the base that a later run lacks")
	f.BoolVar(&o.allowIntr, "allow-interrupted", false, "with --fail-on-regression: pass a later run that was interrupted (compare its finished cases)")
	return c
}

func (o *options) run(streams iostreams.Streams) error {
	if o.labels != nil && len(o.labels) != len(o.files) {
		return exit.Usage("--label given %d times for %d files; give one label per file or none", len(o.labels), len(o.files))
	}
	if !(o.alpha > 0 && o.alpha < 1) {
		return exit.Usage("--alpha %v must be between 0 and 1", o.alpha)
	}
	if err := o.gate.Check(); err != nil {
		return err
	}
	if !o.gate.On && (o.allowMiss || o.allowIntr) {
		return exit.Usage("--allow-missing and --allow-interrupted relax the gate: they need --fail-on-regression")
	}
	if err := flags.Output(o.output, compare.Formats); err != nil {
		return err
	}
	var inputs []compare.Input
	budget := runfile.NewBudget(runfile.MaxReadBytes) // one for all the files
	for i, f := range o.files {
		if f == "-" {
			if o.stdinTaken {
				return exit.Usage("standard input (-) can be given only once")
			}
			o.stdinTaken = true
		}
		runs, warnings, err := runfile.ReadPathWithin(f, streams.In, budget)
		for _, w := range warnings {
			streams.Logger().Warn(w)
		}
		if err != nil {
			return &exit.UsageError{Err: fmt.Errorf("read results: %w", err)}
		}
		in := compare.Input{Source: f, Runs: runs}
		if o.labels != nil {
			in.Label = o.labels[i]
		}
		inputs = append(inputs, in)
	}
	cmp, err := compare.Compare(inputs, compare.Options{Alpha: o.alpha})
	if err != nil {
		return &exit.UsageError{Err: err}
	}
	if err := compare.WriteWidth(streams.Out, cmp, o.output, iostreams.Columns(streams.Out)); err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	if o.gate.On {
		return gate.Regression(cmp, compare.GateOptions{ThresholdPercent: o.gate.Percent, AllowMissing: o.allowMiss, AllowInterrupted: o.allowIntr})
	}
	return nil
}
