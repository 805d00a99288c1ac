package flags

import (
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/cnperf/cnperf/internal/exit"
)

// Output checks a command's -o value against its formats: nil when known, else a usage error
// naming the flag, the formats and, for a mistyped one, the closest (compare and trend).
func Output(value string, formats []string) error {
	for _, f := range formats {
		if f == value {
			return nil
		}
	}
	return exit.Usage("--output %q: want %s%s", value, orList(formats), Suggest(value, formats))
}

// orList joins values as "a, b or c".
func orList(values []string) string {
	if len(values) < 2 {
		return strings.Join(values, "")
	}
	return strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
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
