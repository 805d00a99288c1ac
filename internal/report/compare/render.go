package compare

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/cnperf/cnperf/internal/report/figure"
	"github.com/cnperf/cnperf/internal/report/text"
	"github.com/cnperf/cnperf/internal/stats"

	"github.com/cnperf/cnperf/internal/safetext"
)

// Formats lists compare's output formats.
var Formats = []string{"table", "markdown", "json"}

// Write renders the comparison in a format of Formats.
func Write(w io.Writer, c *Comparison, format string) error {
	switch format {
	case "table":
		return writeText(safetext.NewWriter(w, false), c, false)
	case "markdown":
		return writeText(safetext.NewWriter(w, false), c, true)
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

// CellText is a cell as the table prints it: the value (in the base's scale, so a row reads
// across), and against the base the change, verdict and test, e.g.
// "8.903 Gbit/s  −5.4% worse W p=0.003".
func CellText(m Metric, i int) string {
	c := m.Cells[i]
	scaleFrom := c.Value
	if m.Cells[0].Present {
		scaleFrom = m.Cells[0].Value
	}
	val := "-"
	if c.Present {
		val = figure.FormatIn(c.Value, c.HalfCI, m.Figure.Unit.Pick(scaleFrom))
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
	if c.Test != nil {
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
// comparison tables in seeds 003/004 — as aligned text or Markdown.
func writeText(w io.Writer, c *Comparison, markdown bool) error {
	header := []string{"CASE", "METRIC"}
	if markdown {
		header = []string{"Case", "Metric"}
	}
	right := map[int]bool{}
	for i, col := range c.Columns {
		l := col.Label
		if i == 0 {
			l += " (base)"
		}
		if col.Interrupted {
			l += " (interrupted)"
		}
		header = append(header, l)
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
