// Package report is the encoders: it renders runs for people and machines (table, k8s-netperf
// CSV, perfdash JSON, Prometheus metrics, a self-contained HTML report, mesh CSVs) and holds
// the one table of output formats, which also names the forms internal/runfile writes and reads
// back (JSON, CSV) and the formats of its sub-packages (JUnit, tiger-bench). Encoders only
// format: they never measure, compute statistics beyond what the summary holds, or touch the
// network.
package report

import (
	"fmt"
	"io"
	"strings"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/report/junit"
	"github.com/cnperf/cnperf/internal/report/tigerbench"
	"github.com/cnperf/cnperf/internal/runfile"
	"github.com/cnperf/cnperf/internal/text"
)

// Encoder writes runs in one output format.
type Encoder interface {
	Encode(w io.Writer, runs []*api.Run) error
}

// EncoderFunc adapts a function to Encoder.
type EncoderFunc func(w io.Writer, runs []*api.Run) error

// Encode calls f.
func (f EncoderFunc) Encode(w io.Writer, runs []*api.Run) error { return f(w, runs) }

type entry struct {
	name, help string
	enc        Encoder
}

// Option tunes an encoder for where it prints.
type Option func(*options)

type options struct{ width int }

// Width is the width of the output in columns (iostreams.Columns: COLUMNS, or the
// terminal's); 0 means unknown (text.DefaultWidth). Only the table views use it: they fit
// text.FitWidth(columns).
func Width(columns int) Option { return func(o *options) { o.width = columns } }

// sized is an encoder whose layout depends on the output's width.
type sized interface {
	withWidth(columns int) Encoder
}

func build(e entry, opts []Option) Encoder {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if s, ok := e.enc.(sized); ok {
		return s.withWidth(o.width)
	}
	return e.enc
}

// registry is the table of output formats, in the order help texts show them: the one place
// a format is added (no package registers itself).
var registry = []entry{
	{"table", "text table for people, one row per case, fitting the terminal (COLUMNS, at most 120 columns); a mesh run's node × node matrices (default)", tableEncoder{}},
	{"wide", "the text table with every column, each case's failure cause and checks in its row (any width)", tableEncoder{wide: true}},
	{"json", "the run as JSON (an array when several runs are given)", EncoderFunc(runfile.WriteJSON)},
	{"yaml", "the run as YAML, the same fields as json", EncoderFunc(encodeYAML)},
	{"csv", "one row per case with every summary field in base units", EncoderFunc(runfile.WriteCSV)},
	{"k8s-netperf-csv", "k8s-netperf's CSV columns (Mb/s, OP/s, usec)", EncoderFunc(encodeK8sNetperfCSV)},
	{"k8s-netperf-loss-csv", "k8s-netperf's loss and retransmit CSV (UDP Percent Loss, TCP Retransmissions)", EncoderFunc(encodeK8sNetperfLossCSV)},
	{"prometheus", "Prometheus text format: cnperf_* metrics in base units, failures as cnperf_case_failed", EncoderFunc(encodePrometheus)},
	{"perfdash", "perfdash JSON (Kubernetes perf dashboards, cilium)", EncoderFunc(encodePerfdash)},
	{"html", "one self-contained HTML report with charts", EncoderFunc(encodeHTML)},
	{junit.Format, "JUnit XML for CI systems: one testcase per case, failures with their cause", EncoderFunc(junit.Encode)},
	{tigerbench.Format, "tiger-bench's results.json (config, ClusterDetails, thruput-latency/iperf/ttfr/dnsperf summaries)", EncoderFunc(tigerbench.Encode)},
}

// meshFormats render a saved mesh run (run.Mesh) the way cnperf mesh -o csv / -o cells
// printed it. Only cnperf report offers them: cnperf run and import never produce a mesh, so
// there they would only fail after the run.
var meshFormats = []entry{
	{"mesh-csv", "a mesh run's matrices as CSV, one row per client node (as cnperf mesh -o csv)", EncoderFunc(encodeMeshCSV)},
	{"mesh-cells-csv", "a mesh run's cells as CSV with both nodes' CPU (as cnperf mesh -o cells)", EncoderFunc(encodeMeshCellsCSV)},
}

// Lookup returns the encoder for a format name.
func Lookup(format string, opts ...Option) (Encoder, error) {
	for _, e := range registry {
		if e.name == format {
			return build(e, opts), nil
		}
	}
	return nil, unknownFormat(format, Formats())
}

// LookupReport is Lookup plus the formats of saved mesh runs, for cnperf report.
func LookupReport(format string, opts ...Option) (Encoder, error) {
	for _, e := range append(append([]entry(nil), registry...), meshFormats...) {
		if e.name == format {
			return build(e, opts), nil
		}
	}
	return nil, unknownFormat(format, AllFormats())
}

// AllFormats is Formats plus the formats of saved mesh runs: what cnperf report accepts.
func AllFormats() []string {
	names := Formats()
	for _, e := range meshFormats {
		names = append(names, e.name)
	}
	return names
}

func unknownFormat(format string, names []string) error { return UnknownFormat(format, names, "") }

// UnknownFormat is the one error for an output format not among allowed, in kubectl's words,
// with the nearest allowed one: every command's -o says it through here (Lookup, and
// internal/cli/flags.Output for the commands whose formats are not this registry's). when,
// if not empty, says what narrows the formats ("with --dry-run").
func UnknownFormat(format string, allowed []string, when string) error {
	if when != "" {
		when = " " + when
	}
	near := ""
	if c := plan.Closest(format, allowed); c != "" && !strings.EqualFold(c, format) {
		near = fmt.Sprintf(" (did you mean %q?)", c)
	}
	return fmt.Errorf("unable to match a printer suitable for the output format %q, allowed formats%s are: %s%s",
		format, when, strings.Join(allowed, ","), near)
}

// Formats lists the format names in a stable order.
func Formats() []string {
	out := make([]string, len(registry))
	for i, e := range registry {
		out[i] = e.name
	}
	return out
}

// FormatHelp is a one-line-per-format description for command help.
func FormatHelp() string {
	var b strings.Builder
	for _, e := range registry {
		writeFormatHelp(&b, e)
	}
	return b.String()
}

// helpWidth is the width of the format lines in command help (cnperf's help fits 100 columns).
const helpWidth = 100

func writeFormatHelp(b *strings.Builder, e entry) {
	for _, l := range text.Wrap(e.help, helpWidth, fmt.Sprintf("  %-16s ", e.name), strings.Repeat(" ", 19)) {
		b.WriteString(l + "\n")
	}
}

// FormatHelpWithMesh is FormatHelp plus the formats of saved mesh runs, for cnperf report.
func FormatHelpWithMesh() string {
	var b strings.Builder
	b.WriteString(FormatHelp())
	for _, e := range meshFormats {
		writeFormatHelp(&b, e)
	}
	return b.String()
}

// Encode writes runs in the named format.
func Encode(w io.Writer, format string, runs []*api.Run, opts ...Option) error {
	e, err := Lookup(format, opts...)
	if err != nil {
		return err
	}
	return e.Encode(w, runs)
}

// Get is Lookup (the name the runner uses).
func Get(format string, opts ...Option) (Encoder, error) { return Lookup(format, opts...) }
