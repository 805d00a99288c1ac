package gate

import (
	"fmt"
	"strings"

	"github.com/cnperf/cnperf/internal/report/compare"
)

// RegressionError is returned when a regression gate (`cnperf compare --fail-on-regression PCT`)
// is exceeded. It is a normal failure, not bad input: main maps it to exit code 1
// (exit.Code returns 1 for every error that is not an exit.UsageError).
type RegressionError struct {
	// ThresholdPercent is the gate: the largest tolerated worsening, in percent.
	ThresholdPercent float64
	// Regressions are the figures and cases that exceeded it, and what else failed the gate
	// (a run without results, interrupted, a missing case, a figure that is not a number):
	// see compare.Comparison.Gate.
	Regressions []compare.Regression
}

func (e *RegressionError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "regression gate of %g%% failed on %d figure(s) or case(s)", e.ThresholdPercent, len(e.Regressions))
	for _, r := range e.Regressions {
		b.WriteString("\n  ")
		b.WriteString(r.String())
	}
	return b.String()
}

// Regression returns a *RegressionError when the comparison fails the gate opt (regressions
// beyond opt.ThresholdPercent, a later run without results, interrupted or missing cases of
// the base, a figure that is not a number: see compare.Comparison.Gate), nil otherwise.
func Regression(c *compare.Comparison, opt compare.GateOptions) error {
	regs := c.Gate(opt)
	if len(regs) == 0 {
		return nil
	}
	return &RegressionError{ThresholdPercent: opt.ThresholdPercent, Regressions: regs}
}
