package trend

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/text"
)

// WriteTable prints h for people: one row per series and change point under its case, then
// the runs where changes start, the failed measurements and the warnings; columns is the
// output's width (0: unknown). JSON and YAML are History's fields (cnperf trend -o json).
func WriteTable(w io.Writer, h *History, columns int) error {
	return writeTable(w, h, text.FitWidth(columns))
}

func stamp(t time.Time) string { return t.UTC().Format(time.DateTime) }

// PValue prints a change point's p-value: every reported one is at most the level (0.001 by
// default), so it is shown in scientific notation.
func PValue(p float64) string { return strconv.FormatFloat(p, 'e', 1, 64) }

func writeTable(w io.Writer, h *History, width int) error {
	var lines []string
	if len(h.Runs) == 0 {
		lines = append(lines, "no runs")
	} else {
		sources := map[string]bool{}
		for _, r := range h.Runs {
			sources[r.Source] = true
		}
		lines = append(lines, fmt.Sprintf("%d run(s) from %s to %s UTC, %d source(s)",
			len(h.Runs), stamp(h.Runs[0].StartTime), stamp(h.Runs[len(h.Runs)-1].StartTime), len(sources)),
			fmt.Sprintf("change points: E-divisive means and t-test p ≤ %g in windows of %d runs; a series needs %d successful runs",
				h.MaxPValue, h.Window, h.MinRuns))
		if h.MinMagnitude > 0 {
			lines[1] += fmt.Sprintf(", changes above %g%%", h.MinMagnitude*100)
		}
	}
	t := &text.Table{
		Header: []string{"  FIGURE", "RUNS", "FAILED", "CHANGE AT (UTC)", "RUN", "BEFORE → AFTER", "CHANGE", "P"},
		Right:  map[int]bool{1: true, 2: true, 7: true},
		Titles: map[int]string{},
	}
	lastCase := ""
	for _, s := range h.Series {
		if s.Key != lastCase {
			t.Titles[len(t.Rows)] = s.Case
			lastCase = s.Key
		}
		failed := ""
		if len(s.Gaps) > 0 {
			failed = strconv.Itoa(len(s.Gaps))
		}
		head := []string{"  " + s.Label, strconv.Itoa(len(s.Points)), failed}
		switch {
		case s.TooShort != "":
			t.Rows = append(t.Rows, append(head, shortReason(s, h.MinRuns)))
		case len(s.Changes) == 0:
			t.Rows = append(t.Rows, append(head, "no change"))
		}
		for i, c := range s.Changes {
			if i > 0 {
				head = []string{"", "", ""}
			}
			r := h.Runs[c.Run]
			t.Rows = append(t.Rows, append(head, stamp(r.StartTime), short(r.UUID),
				s.fig.Unit.Format(c.MeanBefore)+" → "+s.fig.Unit.Format(c.MeanAfter),
				fmt.Sprintf("%+.1f%% %s", c.ChangePercent, c.Verdict), PValue(c.PValue)))
		}
	}
	for _, l := range lines {
		if _, err := fmt.Fprintln(w, l); err != nil {
			return err
		}
	}
	if len(h.Series) > 0 {
		if _, err := fmt.Fprintln(w); err != nil {
			return err
		}
		if err := t.Write(w, ""); err != nil {
			return err
		}
	}
	var notes []string
	if starts := changeRuns(h); len(starts) > 0 {
		notes = append(notes, "", "Runs where a change starts:")
		for _, i := range starts {
			r := h.Runs[i]
			l := "  " + short(r.UUID) + "  " + stamp(r.StartTime) + "  " + r.Source
			if lb := labels(r.Labels); lb != "" {
				l += "  " + lb
			}
			notes = append(notes, l)
		}
	}
	if gaps := gapLines(h); len(gaps) > 0 {
		notes = append(notes, "", "Failed measurements (gaps in their series, not values):")
		for _, g := range gaps {
			notes = append(notes, text.Wrap(g, width, "  ", "      ")...)
		}
	}
	if len(h.Warnings) > 0 {
		notes = append(notes, "")
		for _, wn := range h.Warnings {
			notes = append(notes, text.Wrap("warning: "+wn, width, "", "  ")...)
		}
	}
	for _, l := range notes {
		if _, err := fmt.Fprintln(w, l); err != nil {
			return err
		}
	}
	return nil
}

// shortReason is a too-short series' CHANGE AT cell: short, so that the column stays narrow
// (the header line says how many runs a series needs).
func shortReason(s Series, minRuns int) string {
	if len(s.Points) == 0 {
		return "no successful run"
	}
	return fmt.Sprintf("too short (< %d runs)", minRuns)
}

// changeRuns are the runs at which some change point starts, in history order.
func changeRuns(h *History) []int {
	set := map[int]bool{}
	for _, s := range h.Series {
		for _, c := range s.Changes {
			set[c.Run] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// gapLines says once per case and run why it has no value (its figures share the cause).
func gapLines(h *History) []string {
	type key struct {
		key   string
		run   int
		cause string
	}
	seen := map[key]bool{}
	var out []string
	for _, s := range h.Series {
		for _, g := range s.Gaps {
			k := key{s.Key, g.Run, g.Cause}
			if seen[k] {
				continue
			}
			seen[k] = true
			r := h.Runs[g.Run]
			out = append(out, fmt.Sprintf("%s: run %s at %s: %s", s.Case, short(r.UUID), stamp(r.StartTime), g.Cause))
		}
	}
	return out
}

func labels(m map[string]string) string {
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ",")
}
