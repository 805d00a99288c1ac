package compare

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/cnperf/cnperf/internal/figure"
	"github.com/cnperf/cnperf/internal/stats"
	"github.com/cnperf/cnperf/internal/text"

	"github.com/cnperf/cnperf/internal/safetext"
)

// Formats lists compare's output formats: table fits the output's width, wide has every
// detail in its cells whatever the width (as kubectl's -o wide).
var Formats = []string{"table", "wide", "markdown", "json"}

// Write renders the comparison in a format of Formats (the table for an output of unknown
// width: text.DefaultWidth).
func Write(w io.Writer, c *Comparison, format string) error { return WriteWidth(w, c, format, 0) }

// WriteWidth is Write for an output columns wide (iostreams.Columns; 0 when unknown): the
// table view fits text.FitWidth(columns).
func WriteWidth(w io.Writer, c *Comparison, format string, columns int) error {
	switch format {
	case "table":
		return writeFitted(safetext.NewWriter(w, false), c, text.FitWidth(columns))
	case "wide":
		return writeText(safetext.NewWriter(w, false), c, false, text.FitWidth(columns))
	case "markdown":
		return writeText(safetext.NewWriter(w, false), c, true, 0)
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(c)
	}
	return fmt.Errorf("unknown compare format %q (known: %s)", format, strings.Join(Formats, ", "))
}

// testLetter abbreviates a test in table cells.
func testLetter(t string) string {
	switch t {
	case stats.MethodWelch:
		return "W"
	case stats.MethodMannWhitney:
		return "U"
	}
	return t
}

func shortVerdict(v Verdict) string {
	if v == NoChange {
		return "n.s."
	}
	return string(v)
}

// How much a cell says: everything (-o wide, Markdown, HTML), without the test, or without
// the test and the confidence interval (the table view, when the width asks for it).
const (
	detailFull = iota
	detailNoTest
	detailNoCI
)

// CellText is a cell as the wide table prints it: the value (in the base's scale, so a row
// reads across), and against the base the change, verdict and test, e.g.
// "8.903 Gbit/s  −5.4% worse W p=0.003".
func CellText(m Metric, i int) string { return cellText(m, i, detailFull) }

func cellText(m Metric, i, detail int) string {
	c := m.Cells[i]
	scaleFrom := c.Value
	if m.Cells[0].Present {
		scaleFrom = m.Cells[0].Value
	}
	val := "-"
	if c.Present {
		half := c.HalfCI
		if detail >= detailNoCI {
			half = 0
		}
		val = figure.FormatIn(c.Value, half, m.Figure.Unit.Pick(scaleFrom))
	}
	if c.Verdict == Invalid {
		return "INVALID"
	}
	if i == 0 {
		return val
	}
	switch c.Verdict {
	case Missing:
		return "missing"
	case Failed:
		return "FAILED"
	}
	parts := []string{val}
	if c.ChangePercent != nil {
		parts = append(parts, figure.SignedPercent(*c.ChangePercent))
	}
	parts = append(parts, shortVerdict(c.Verdict))
	if c.Test != nil && detail == detailFull {
		parts = append(parts, testLetter(c.Test.Test)+" "+pValue(c.Test.PValue))
	}
	return strings.Join(parts, " ")
}

func pValue(p float64) string {
	switch {
	case p < 0.001:
		return "p<0.001"
	case p < 0.01:
		return "p=" + strconv.FormatFloat(p, 'f', 3, 64)
	}
	return "p=" + strconv.FormatFloat(p, 'f', 2, 64)
}

// writeText prints one row per case and figure, one column per run — the layout of the CNI
// comparison tables in seeds 003/004 — as aligned text (-o wide: its legend wrapped to
// width) or Markdown.
func writeText(w io.Writer, c *Comparison, markdown bool, width int) error {
	header := []string{"CASE", "METRIC"}
	if markdown {
		header = []string{"Case", "Metric"}
	}
	right := map[int]bool{}
	for i := range c.Columns {
		header = append(header, columnLabel(c, i))
		right[2+i] = true
	}
	t := &text.Table{Header: header, Right: right}
	for ci, cs := range c.Cases {
		if ci > 0 && !markdown {
			t.Rows = append(t.Rows, nil)
		}
		if len(cs.Metrics) == 0 {
			row := []string{cs.Label, "-"}
			for _, st := range cs.Status {
				row = append(row, strings.ToUpper(st))
			}
			t.Rows = append(t.Rows, row)
			continue
		}
		for mi, m := range cs.Metrics {
			label := ""
			if mi == 0 || markdown {
				label = cs.Label
			}
			row := []string{label, metricLabel(m)}
			for i := range c.Columns {
				row = append(row, CellText(m, i))
			}
			t.Rows = append(t.Rows, row)
		}
		if cs.Checks != nil {
			label := ""
			if markdown {
				label = cs.Label
			}
			row := []string{label, "checks"}
			for _, ch := range cs.Checks {
				if ch == "" {
					ch = "-"
				}
				row = append(row, ch)
			}
			t.Rows = append(t.Rows, row)
		}
	}
	var err error
	if markdown {
		err = t.WriteMarkdown(w)
	} else {
		err = t.Write(w, "")
	}
	if err != nil {
		return err
	}
	prefix := ""
	if markdown {
		prefix = "\n"
	}
	legend := fmt.Sprintf("%sValues are means ± 95%% CI half-width (latency: all transactions merged). Against %s: change, verdict at α=%g "+
		"(n.s. = no significant change; untested = under 2 samples on a side), test: W = Welch's t-test, "+
		"U = Mann–Whitney U (used when samples are skewed and n ≥ 4 per side).", prefix, c.Columns[0].Label, c.Alpha)
	if hasChecks(c) {
		legend += " checks: the --confidence target (CI half-width after N samples, MISSED: why), outliers (outside median ± 3·MAD), " +
			"trend (Spearman vs sample order, p < 0.05), ramp-up inside samples."
	}
	if markdown {
		if _, err := fmt.Fprintln(w, legend); err != nil {
			return err
		}
		for _, warn := range c.Warnings {
			if _, err := fmt.Fprintln(w, "warning: "+warn); err != nil {
				return err
			}
		}
		return nil
	}
	return writeNotes(w, width, append([]string{legend}, warningLines(c)...))
}

func warningLines(c *Comparison) []string {
	out := make([]string, len(c.Warnings))
	for i, warn := range c.Warnings {
		out[i] = "warning: " + warn
	}
	return out
}

// writeNotes prints paragraphs wrapped to width, continuation lines indented by two.
func writeNotes(w io.Writer, width int, notes []string) error {
	for _, n := range notes {
		for _, l := range text.Wrap(n, width, "", "  ") {
			if _, err := fmt.Fprintln(w, l); err != nil {
				return err
			}
		}
	}
	return nil
}

// columnLabel is a column's header: its label, "(base)" on the first, "(interrupted)".
func columnLabel(c *Comparison, i int) string {
	l := c.Columns[i].Label
	if i == 0 {
		l += " (base)"
	}
	if c.Columns[i].Interrupted {
		l += " (interrupted)"
	}
	return l
}

// fittedTable is the table view of the columns cols (indexes of c.Columns, the base first):
// each case's label on a line of its own above its metrics, cells at a detail level, checks
// as short tags.
func fittedTable(c *Comparison, cols []int, detail int) *text.Table {
	t := &text.Table{Header: []string{"METRIC"}, Right: map[int]bool{}, Titles: map[int]string{}}
	for k, i := range cols {
		t.Header = append(t.Header, columnLabel(c, i))
		t.Right[1+k] = true
	}
	for ci, cs := range c.Cases {
		if ci > 0 {
			t.Rows = append(t.Rows, nil)
		}
		t.Titles[len(t.Rows)] = cs.Label
		if len(cs.Metrics) == 0 {
			row := []string{"  status"}
			for _, i := range cols {
				row = append(row, strings.ToUpper(cs.Status[i]))
			}
			t.Rows = append(t.Rows, row)
			continue
		}
		for _, m := range cs.Metrics {
			row := []string{"  " + metricLabel(m)}
			for _, i := range cols {
				row = append(row, cellText(m, i, detail))
			}
			t.Rows = append(t.Rows, row)
		}
		if cs.Checks != nil {
			row := []string{"  checks"}
			for _, i := range cols {
				tags := "-"
				if r := cs.Results[i]; r != nil {
					var ts []string
					for _, ch := range figure.CheckList(r) {
						ts = append(ts, ch.Tag)
					}
					if len(ts) > 0 {
						tags = strings.Join(ts, ", ")
					}
				}
				row = append(row, tags)
			}
			t.Rows = append(t.Rows, row)
		}
	}
	return t
}

// writeFitted prints the table view in width columns: the cells lose the test, then the
// confidence interval, as the width asks; when the columns still do not fit, the later ones
// are split into blocks, each printed with the base (a block has at least one later column,
// so the base and one column wider than width are printed as they are). Checks in full, the
// legend and warnings follow, wrapped.
func writeFitted(w io.Writer, c *Comparison, width int) error {
	all := make([]int, len(c.Columns))
	for i := range all {
		all[i] = i
	}
	detail := detailNoTest
	for detail < detailNoCI && fittedTable(c, all, detail).LineWidth("") > width {
		detail++
	}
	blocks := [][]int{all}
	if fittedTable(c, all, detail).LineWidth("") > width {
		blocks = nil
		for rest := all[1:]; len(rest) > 0; {
			k := 1
			for k < len(rest) && fittedTable(c, append([]int{0}, rest[:k+1]...), detail).LineWidth("") <= width {
				k++
			}
			blocks = append(blocks, append([]int{0}, rest[:k]...))
			rest = rest[k:]
		}
	}
	for bi, cols := range blocks {
		if bi > 0 {
			if _, err := fmt.Fprintln(w); err != nil {
				return err
			}
		}
		if err := fittedTable(c, cols, detail).Write(w, ""); err != nil {
			return err
		}
	}
	var notes []string
	for _, cs := range c.Cases {
		for i, ch := range cs.Checks {
			if ch != "" {
				notes = append(notes, fmt.Sprintf("checks of %s in %s: %s", cs.Label, c.Columns[i].Label, ch))
			}
		}
	}
	ci := " ± 95% CI half-width"
	wide := "each test (W = Welch's t, U = Mann–Whitney U) and its p-value"
	if detail >= detailNoCI {
		ci = ""
		wide = "the 95% CI half-widths, " + wide
	}
	legend := fmt.Sprintf("Values are means%s (latency: all transactions merged). Against %s: change and verdict at α=%g "+
		"(n.s. = no significant change; untested = under 2 samples on a side); -o wide adds %s.", ci, c.Columns[0].Label, c.Alpha, wide)
	if hasChecks(c) {
		legend += " checks: CI met/MISSED = the --confidence target (CI half-width after N samples), outliers (outside median ± 3·MAD), " +
			"trend (Spearman vs sample order, p < 0.05), ramp-up inside samples."
	}
	if len(blocks) > 1 {
		legend += fmt.Sprintf(" The columns are split into %d tables to fit %d columns, each with the base.", len(blocks), width)
	}
	notes = append(notes, legend)
	return writeNotes(w, width, append(notes, warningLines(c)...))
}

func hasChecks(c *Comparison) bool {
	for _, cs := range c.Cases {
		if cs.Checks != nil {
			return true
		}
	}
	return false
}

func metricLabel(m Metric) string {
	dir := "↑"
	if !m.HigherIsBetter {
		dir = "↓"
	}
	return m.Label + " " + dir
}
