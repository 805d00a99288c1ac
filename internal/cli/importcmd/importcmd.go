// Package importcmd is `cnperf import`: turn a tool's saved raw output (iperf3 -J, netperf
// keyval/CSV, …: every driver that is a driver.Importer, all.Importers) into cnperf results,
// so existing logs can be reported and compared like any run.
package importcmd

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/cli/flags"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/driver/all"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/iostreams"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/runner"
	"github.com/cnperf/cnperf/internal/session"
	"github.com/cnperf/cnperf/internal/span"
	"github.com/cnperf/cnperf/internal/stats"
)

// Platform is the platform name of imported runs.
const Platform = "imported"

// profileImporter is implemented by importers that can be told the profile when the output
// does not say (netperf without its banner, uperf profiles not written by cnperf).
type profileImporter interface {
	ImportAs(name string, data []byte, p api.Profile) ([]driver.ImportedCase, error)
}

type options struct {
	driver  string
	profile string
	path    string
	output  string
	results string
	labels  []string
	files   []string
	now     func() time.Time
}

// NewCommand returns the `import` command.
func NewCommand(streams iostreams.Streams) *cobra.Command {
	o := &options{now: time.Now}
	c := &cobra.Command{
		Use:   "import --driver NAME [flags] FILE...",
		Short: "Turn saved tool output (" + strings.Join(all.Importers(), ", ") + ") into results",
		Long: `import reads outputs saved from a load generator and writes one cnperf run
(imported: true, platform "imported") with the same schema as 'cnperf run': results with
their samples and summaries, ready for 'cnperf report' and 'cnperf compare'. FILE "-" reads
standard input.

Accepted outputs:
` + acceptedOutputs() + `
Runs of the same test (same profile and parameters) become the samples of one result, in file
order, so their spread is summarised. The same content given twice (by two names, or twice by
one) is refused: it would count one measurement as two samples. A file in which the tool
reports its run failed (iperf3 -J with "error", e.g. unable to connect) is a failed sample
with that cause, of the import's only test (or of --profile); a file that is not a run of the
tool at all (an error message, truncated or garbage output) stops the import with the tool's
own words.

Formats:
` + report.FormatHelp() + `
Exit codes: 0 imported, 2 bad usage or a file that cannot be imported.`,
		Example: `  cnperf import --driver iperf3 run1.json run2.json run3.json > iperf3.json
  cnperf import --driver netperf --results mizar.jsonl netperf-tcp-rr.log
  cnperf import --driver netperf --profile TCP_RR --path pod-pod-cross-node keyval.txt -o table`,
		Args: flags.Files(1, "no tool output file given"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.files = args
			return o.run(streams)
		},
	}
	f := c.Flags()
	f.StringVar(&o.driver, "driver", "", "the tool that wrote the files: "+strings.Join(all.Importers(), ", ")+" (required)")
	f.StringVar(&o.profile, "profile", "", "the profile, when the output does not say (e.g. netperf run with -P 0, a sockperf --full-log file)")
	f.StringVar(&o.path, "path", "", "the path the tool measured, recorded in the results (e.g. pod-pod-cross-node)")
	f.StringVarP(&o.output, "output", "o", "json", "output format: "+strings.Join(report.Formats(), ", "))
	f.StringVar(&o.results, "results", "", "also write the run to this results file (JSON Lines; read by report/compare)")
	f.StringArrayVar(&o.labels, "label", nil, "label the run, KEY=VALUE (repeatable)")
	_ = c.MarkFlagRequired("driver")
	flags.CompleteValues(c, "driver", false, all.Importers)
	flags.CompleteValues(c, "output", false, report.Formats)
	return c
}

// acceptedOutputs lists, per driver that can import, the saved outputs it reads.
func acceptedOutputs() string {
	var b strings.Builder
	for _, name := range all.Importers() {
		d, _ := all.Get(name)
		for i, line := range strings.Split(d.(driver.Importer).ImportFormats(), "\n") {
			if i == 0 {
				fmt.Fprintf(&b, "  %-9s %s\n", name, line)
			} else {
				fmt.Fprintf(&b, "  %-9s %s\n", "", line)
			}
		}
	}
	return b.String()
}

func (o *options) run(streams iostreams.Streams) error {
	enc, err := report.Lookup(o.output, report.Width(iostreams.Columns(streams.Out)))
	if err != nil {
		return &exit.UsageError{Err: err}
	}
	d, err := all.Get(o.driver)
	if err != nil {
		return exit.Usage("--driver: %v", err)
	}
	imp, ok := d.(driver.Importer)
	if !ok {
		return exit.Usage("--driver: %s cannot import saved outputs", o.driver)
	}
	var profile api.Profile
	if o.profile != "" {
		profile = api.Profile(strings.ToUpper(o.profile))
		if !profile.Valid() {
			return exit.Usage("--profile: %s", plan.Unknown("profile", o.profile, profile, api.Profiles))
		}
	}
	path := api.Path(o.path)
	if o.path != "" && !path.Valid() {
		return exit.Usage("--path: %s", plan.Unknown("path", o.path, path, api.Paths))
	}
	labels, err := session.ParseLabels(o.labels)
	if err != nil {
		return err
	}
	run, err := Import(imp, o.driver, profile, path, o.files, streams.In)
	if err != nil {
		return &exit.UsageError{Err: err}
	}
	run.UUID = uuid.NewString()
	run.Labels = labels
	if run.StartTime.IsZero() {
		run.StartTime = o.now().UTC()
		run.EndTime = run.StartTime
	}
	if o.results != "" {
		if err := session.WriteFile(o.results, run); err != nil {
			return fmt.Errorf("--results: %w", err)
		}
	}
	if err := enc.Encode(streams.Out, []*api.Run{run}); err != nil {
		return fmt.Errorf("write %s output: %w", o.output, err)
	}
	return nil
}

// Import reads every file ("-" is in) with the importer and builds one imported run: cases
// with the same profile and parameters become one result whose samples are in file order.
// The run has no UUID or labels yet.
func Import(imp driver.Importer, driverName string, profile api.Profile, path api.Path, files []string, in io.Reader) (*api.Run, error) {
	run := session.NewRun(session.Header{Platform: Platform, Imported: true})
	index := map[string]int{}              // case key → result index
	seen := map[[sha256.Size]byte]string{} // content → the first file with it
	var failed []failedFile                // files whose tool reported a failed run
	for _, f := range files {
		data, name, err := readFile(f, in)
		if err != nil {
			return nil, err
		}
		// The same output twice is one measurement counted twice: more samples, a CoV of 0
		// and a narrower interval than the data supports. Two real runs never print the
		// same bytes (times, figures), so a repeated file is a mistake, not a coincidence.
		sum := sha256.Sum256(data)
		if first, dup := seen[sum]; dup {
			return nil, fmt.Errorf("import: %s has the same content as %s (sha256 %x): one output given twice would count as two samples; give each file once",
				name, first, sum[:8])
		}
		seen[sum] = name
		cases, err := importOne(imp, name, data, profile)
		var fr *driver.FailedRun
		if errors.As(err, &fr) {
			// The tool's own report of a failed run: one failed sample with its cause, joined
			// to its case once every file is read (the output names no test).
			s := api.Sample{Error: fr.Msg, Raw: rawOutput(data), Notes: []string{"imported from " + name}}
			failed = append(failed, failedFile{name: name, sample: s})
			run.Notes = append(run.Notes, fmt.Sprintf("imported a failed %s run from %s: %s", driverName, name, fr.Msg))
			continue
		}
		if err != nil {
			if !strings.Contains(err.Error(), name) {
				err = fmt.Errorf("%s: %w", name, err)
			}
			return nil, fmt.Errorf("import: %w", err)
		}
		if len(cases) == 0 {
			return nil, fmt.Errorf("import %s: no %s result in it", name, driverName)
		}
		for _, ic := range cases {
			if profile != "" && ic.Profile != profile {
				return nil, fmt.Errorf("import %s: the output is a %s test, not %s", name, ic.Profile, profile)
			}
			if err := stats.CheckFigures(ic.Sample, "sample"); err != nil {
				return nil, fmt.Errorf("import %s: %w", name, err)
			}
			s := ic.Sample
			if len(cases) == 1 && s.Raw == "" {
				s.Raw = rawOutput(data)
			}
			s.Notes = append(s.Notes, "imported from "+name)
			key := caseKey(ic)
			i, ok := index[key]
			if !ok {
				p := ic.Params
				if p.Parallel < 1 {
					p.Parallel = 1
				}
				run.Results = append(run.Results, api.Result{
					Profile: ic.Profile, Driver: driverName, Path: path, Params: p, Samples: []api.Sample{},
				})
				i = len(run.Results) - 1
				index[key] = i
			}
			r := &run.Results[i]
			s.Index = len(r.Samples)
			r.Samples = append(r.Samples, s)
		}
		run.Notes = append(run.Notes, fmt.Sprintf("imported %d %s result(s) from %s", len(cases), driverName, name))
	}
	for _, ff := range failed {
		i, err := caseOfFailed(run, profile, driverName, path, ff)
		if err != nil {
			return nil, err
		}
		r := &run.Results[i]
		ff.sample.Index = len(r.Samples)
		r.Samples = append(r.Samples, ff.sample)
	}
	for i := range run.Results {
		r := &run.Results[i]
		r.Params.Samples = len(r.Samples)
		runner.Summarize(r)
		r.StartTime, r.EndTime = span.Of(r.Samples, func(s api.Sample) (time.Time, time.Time) { return s.StartTime, s.EndTime })
	}
	run.StartTime, run.EndTime = span.Of(run.Results, func(r api.Result) (time.Time, time.Time) { return r.StartTime, r.EndTime })
	return run, nil
}

// rawOutput is a file's content as a sample keeps it for audits (valid UTF-8), or "" when it
// is larger than a sample keeps (runner.MaxRawBytes).
func rawOutput(data []byte) string {
	if len(data) > runner.MaxRawBytes {
		return ""
	}
	return strings.ToValidUTF8(string(data), "\uFFFD")
}

// failedFile is a file whose tool reported a failed run (driver.FailedRun).
type failedFile struct {
	name   string
	sample api.Sample
}

// caseOfFailed is the result a failed run joins: a failed output names no test, so it joins
// the import's only case (of the --profile when given), or a case of its own for --profile
// when the import has none; with several candidates it cannot be placed and is an error.
func caseOfFailed(run *api.Run, profile api.Profile, driverName string, path api.Path, ff failedFile) (int, error) {
	var match []int
	for i, r := range run.Results {
		if profile == "" || r.Profile == profile {
			match = append(match, i)
		}
	}
	switch {
	case len(match) == 1:
		return match[0], nil
	case len(match) == 0 && profile != "":
		run.Results = append(run.Results, api.Result{Profile: profile, Driver: driverName, Path: path,
			Params: api.Params{Parallel: 1}, Samples: []api.Sample{}})
		return len(run.Results) - 1, nil
	case len(match) == 0:
		return 0, fmt.Errorf("import %s: %s (a failed run; its output names no test): give --profile to record it as a failed sample of that test",
			ff.name, ff.sample.Error)
	}
	return 0, fmt.Errorf("import %s: %s (a failed run; its output names no test): the import has %d tests it could belong to; import it with the files of its test only, or give --profile",
		ff.name, ff.sample.Error, len(match))
}

func importOne(imp driver.Importer, name string, data []byte, profile api.Profile) ([]driver.ImportedCase, error) {
	if pi, ok := imp.(profileImporter); ok && profile != "" {
		return pi.ImportAs(name, data, profile)
	}
	return imp.Import(name, data)
}

// MaxImportBytes bounds one imported file: a tool's saved output is at most a few megabytes
// (a netperf run with interim results, an iperf3 JSON with thousands of intervals).
const MaxImportBytes = 64 << 20

func readFile(f string, in io.Reader) ([]byte, string, error) {
	name := f
	if f == "-" {
		if in == nil {
			return nil, "", errors.New("no standard input")
		}
		name = "(stdin)"
	} else {
		fh, err := os.Open(f)
		if err != nil {
			return nil, "", fmt.Errorf("read %s: %w", f, err)
		}
		defer fh.Close()
		in = fh
	}
	b, err := io.ReadAll(io.LimitReader(in, MaxImportBytes+1))
	if err != nil {
		return nil, "", fmt.Errorf("read %s: %w", name, err)
	}
	if len(b) > MaxImportBytes {
		return nil, "", fmt.Errorf("%s: larger than %d MiB: not a tool's saved output", name, MaxImportBytes>>20)
	}
	return b, name, nil
}

// caseKey identifies a case by profile and parameters (samples not counted).
func caseKey(ic driver.ImportedCase) string {
	p := ic.Params
	p.Samples = 0
	if p.Parallel < 1 {
		p.Parallel = 1
	}
	var b bytes.Buffer
	b.WriteString(string(ic.Profile))
	b.WriteByte('|')
	_ = json.NewEncoder(&b).Encode(p) // map keys are sorted by encoding/json
	return b.String()
}
