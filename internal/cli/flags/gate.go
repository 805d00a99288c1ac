package flags

import (
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/report"
)

// Output checks a command's -o value against its formats: nil when known, else a usage error
// in the one wording of internal/report.UnknownFormat (kubectl's), with the closest format.
func Output(value string, formats []string) error { return output(value, formats, "") }

// DryRunOutput is Output for --dry-run, which prints fewer formats than the command: the error
// says the formats are those of --dry-run.
func DryRunOutput(value string, formats []string) error {
	return output(value, formats, "with --dry-run")
}

func output(value string, formats []string, when string) error {
	if slices.Contains(formats, value) {
		return nil
	}
	return &exit.UsageError{Err: report.UnknownFormat(value, formats, when)}
}

// Regression is --fail-on-regression PCT, the regression gate of compare and trend: On when the
// flag was given (0 is a gate too: any worsening fails), Percent its value.
type Regression struct {
	Percent float64
	On      bool
}

// Bind binds --fail-on-regression to r with the command's usage text.
func (r *Regression) Bind(fs *pflag.FlagSet, usage string) {
	fs.Var((*regressionValue)(r), "fail-on-regression", usage)
}

// Check refuses a gate that is not a percentage ≥ 0 (a negative one, or NaN, which no
// change reaches) with a usage error naming the flag.
func (r Regression) Check() error {
	if r.On && !(r.Percent >= 0) {
		return exit.Usage("--fail-on-regression %v: want a percentage ≥ 0", r.Percent)
	}
	return nil
}

// regressionValue is the pflag.Value of a Regression: setting it turns the gate on.
type regressionValue Regression

func (v *regressionValue) Set(s string) error {
	p, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return err
	}
	v.Percent, v.On = p, true
	return nil
}

func (v *regressionValue) String() string { return strconv.FormatFloat(v.Percent, 'g', -1, 64) }

// Type is pflag's float64, so the help shows "--fail-on-regression float" as before.
func (v *regressionValue) Type() string { return "float64" }
