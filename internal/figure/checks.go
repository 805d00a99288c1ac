package figure

import (
	"fmt"
	"strconv"
	"strings"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

// Checks are the short remarks every encoder prints about how far a result can be trusted:
// the confidence target ("CI ±2.1% ≤ ±5% in 4 samples", or "CI ±9.8% > ±5% after 30: noisy
// path, trend"), outlier samples ("outliers #3 #7", "excluded"), a significant trend across
// samples ("trend ↑ ρ 0.93 p 0.002") and ramp-ups inside samples ("ramp-up in 2/5 samples").
// Samples are numbered from 1, as the table numbers cases. Empty when there is nothing to say.
func Checks(r *api.Result) []string {
	var out []string
	for _, c := range CheckList(r) {
		out = append(out, c.Text)
	}
	return out
}

// Check is one remark of Checks: Text as Checks prints it, Tag a short form for narrow
// tables ("CI met", "CI MISSED", "outliers", "trend ↑", "ramp-up").
type Check struct{ Tag, Text string }

// CheckList is Checks with each remark's short tag.
func CheckList(r *api.Result) []Check {
	var out []Check
	if c := r.Confidence; c != nil {
		width := "no CI"
		if c.FinalHalfWidthPercent != nil {
			width = "CI ±" + strconv.FormatFloat(*c.FinalHalfWidthPercent, 'f', 1, 64) + "%"
		}
		target := "±" + strconv.FormatFloat(c.HalfWidthPercent, 'g', -1, 64) + "%"
		if c.Level != 95 {
			target += " at " + strconv.FormatFloat(c.Level, 'g', -1, 64) + "%"
		}
		if c.Met {
			out = append(out, Check{"CI met", fmt.Sprintf("%s ≤ %s in %d", width, target, c.Samples)})
		} else {
			reasons := make([]string, len(c.Reasons))
			for i, why := range c.Reasons {
				reasons[i], _, _ = strings.Cut(why, " (")
			}
			after := strconv.Itoa(c.Samples)
			if c.GaveUp {
				after += " (gave up)"
			}
			out = append(out, Check{"CI MISSED", fmt.Sprintf("MISSED %s > %s after %s: %s", width, target, after, strings.Join(reasons, ", "))})
		}
	}
	st := r.Stability
	if st == nil {
		return out
	}
	if len(st.OutlierSamples) > 0 {
		s := "outliers " + sampleList(st.OutlierSamples)
		if len(st.ExcludedSamples) > 0 {
			s += " excluded"
		}
		out = append(out, Check{"outliers", s})
	}
	if t := st.Trend; t != nil && t.Significant {
		dir := "↑"
		if t.SpearmanRho < 0 {
			dir = "↓"
		}
		out = append(out, Check{"trend " + dir, fmt.Sprintf("trend %s ρ %.2f %s", dir, t.SpearmanRho, PValueText(t.PValue))})
	}
	if n := len(st.RampUpSamples); n > 0 {
		total := 0
		for i := range r.Samples {
			if !r.Samples[i].Warmup && r.Samples[i].SteadyState != nil {
				total++
			}
		}
		out = append(out, Check{"ramp-up", fmt.Sprintf("ramp-up in %d/%d samples", n, total)})
	}
	return out
}

// PValueText prints a p-value as "p 0.012", or "p < 0.001" below that.
func PValueText(p float64) string {
	if p < 0.001 {
		return "p < 0.001"
	}
	return "p " + strconv.FormatFloat(p, 'f', 3, 64)
}

// sampleList prints sample indexes from 1: "#3 #7".
func sampleList(idx []int) string {
	s := make([]string, len(idx))
	for i, k := range idx {
		s[i] = "#" + strconv.Itoa(k+1)
	}
	return strings.Join(s, " ")
}
