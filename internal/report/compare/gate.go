package compare

import (
	"fmt"
	"math"
)

// Regression is one figure of one case that got worse than a gate allows.
type Regression struct {
	Case   string `json:"case"`
	Column string `json:"column"`
	Figure string `json:"figure"`
	// ChangePercent is the change against the base (NaN when the case failed).
	ChangePercent float64 `json:"changePercent"`
	// PValue and Test of the significance test; Test is empty when none was possible.
	PValue float64 `json:"pValue,omitempty"`
	Test   string  `json:"test,omitempty"`
	// Reason says why this counts: "significantly worse", "worse, untested (n<2)", "case failed",
	// "missing", "not a finite number"; for a whole column (Case empty) "no results", "interrupted".
	Reason string `json:"reason"`
}

func (r Regression) String() string {
	switch {
	case r.Case == "":
		return fmt.Sprintf("[%s]: %s", r.Column, r.Reason)
	case math.IsNaN(r.ChangePercent):
		return fmt.Sprintf("%s [%s]: %s", r.Case, r.Column, r.Reason)
	case r.Test != "":
		return fmt.Sprintf("%s [%s]: %s %+.1f%% (%s, %s p=%.3g)", r.Case, r.Column, r.Figure, r.ChangePercent, r.Reason, r.Test, r.PValue)
	}
	return fmt.Sprintf("%s [%s]: %s %+.1f%% (%s)", r.Case, r.Column, r.Figure, r.ChangePercent, r.Reason)
}

// Regressions lists what a gate of thresholdPercent fails on, over the primary figures (rates
// and latency p50/p99; not CPU, retransmits, loss or jitter):
//   - a figure significantly worse (by the test at the comparison's alpha) by at least
//     thresholdPercent;
//   - a figure worse by at least thresholdPercent where no test was possible because a side
//     has fewer than two samples: without samples the change cannot be told from noise, and
//     a CI gate must not pass a regression for lack of repetitions;
//   - a case that has figures in the base but failed in a later column.
//
// A case missing from a later column is not a regression (Compare warns about it); Gate
// also fails on it.
func (c *Comparison) Regressions(thresholdPercent float64) []Regression {
	var out []Regression
	for _, cs := range c.Cases {
		for col := 1; col < len(c.Columns); col++ {
			if cs.Status[0] == "ok" && cs.Status[col] == "failed" {
				out = append(out, Regression{Case: cs.Label, Column: c.Columns[col].Label, ChangePercent: math.NaN(),
					Reason: "case failed: " + firstNote(cs, col)})
				continue
			}
			for _, m := range cs.Metrics {
				if !m.Figure.Primary {
					continue
				}
				cell := m.Cells[col]
				if cell.ChangePercent == nil {
					continue
				}
				ch := *cell.ChangePercent
				worseBy := -ch
				if !m.HigherIsBetter {
					worseBy = ch
				}
				if worseBy < thresholdPercent {
					continue
				}
				r := Regression{Case: cs.Label, Column: c.Columns[col].Label, Figure: m.Label, ChangePercent: ch}
				switch cell.Verdict {
				case Worse:
					r.Reason, r.Test, r.PValue = "significantly worse", cell.Test.Test, cell.Test.PValue
				case Untested:
					r.Reason = "worse, untested: " + cell.Note
				default:
					continue
				}
				out = append(out, r)
			}
		}
	}
	return out
}

func firstNote(cs Case, col int) string {
	for _, m := range cs.Metrics {
		if n := m.Cells[col].Note; n != "" {
			return n
		}
	}
	return "no successful sample"
}

// GateOptions are the settings of a CI gate (cnperf compare --fail-on-regression).
type GateOptions struct {
	// ThresholdPercent is the largest tolerated worsening of a primary figure.
	ThresholdPercent float64
	// AllowMissing passes cases of the base that a later column does not have.
	AllowMissing bool
	// AllowInterrupted passes later columns whose run was interrupted (their cases are still
	// compared; the cases they lack are missing, see AllowMissing).
	AllowInterrupted bool
}

// Gate lists everything a CI gate fails on: the Regressions beyond opt.ThresholdPercent and,
// because a gate must not pass a run that did not measure what the base measured,
//   - a later column without any result (always: there is nothing to compare);
//   - a later column whose run was interrupted, unless opt.AllowInterrupted;
//   - a case of the base missing from a later column, unless opt.AllowMissing;
//   - a primary figure that is not a finite number (NaN, ±Inf) in any column (always).
//
// Column-wide problems come first, with an empty Case.
func (c *Comparison) Gate(opt GateOptions) []Regression {
	var out []Regression
	for col := 1; col < len(c.Columns); col++ {
		cl := c.Columns[col]
		switch {
		case cl.Results == 0:
			out = append(out, Regression{Column: cl.Label, ChangePercent: math.NaN(),
				Reason: "no results: the run measured nothing (it failed or was stopped before its first case ended)"})
		case cl.Interrupted && !opt.AllowInterrupted:
			out = append(out, Regression{Column: cl.Label, ChangePercent: math.NaN(),
				Reason: fmt.Sprintf("the run was interrupted after %d case(s) (--allow-interrupted compares what it has)", cl.Results)})
		}
	}
	for _, cs := range c.Cases {
		for col := 1; col < len(c.Columns); col++ {
			if c.Columns[col].Results > 0 && !opt.AllowMissing && cs.Status[0] != "missing" && cs.Status[col] == "missing" {
				out = append(out, Regression{Case: cs.Label, Column: c.Columns[col].Label, ChangePercent: math.NaN(),
					Reason: "missing: the base has this case, this run does not (--allow-missing passes it)"})
			}
		}
		for _, m := range cs.Metrics {
			if !m.Figure.Primary {
				continue
			}
			for col := range c.Columns {
				if cell := m.Cells[col]; cell.Verdict == Invalid && (col == 0 || m.Cells[0].Verdict != Invalid) {
					out = append(out, Regression{Case: cs.Label, Column: c.Columns[col].Label, Figure: m.Label, ChangePercent: math.NaN(),
						Reason: "not a finite number: " + cell.Note})
				}
			}
		}
	}
	return append(out, c.Regressions(opt.ThresholdPercent)...)
}
