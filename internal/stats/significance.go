package stats

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// Names of the significance tests, as results and reports print them.
const (
	MethodWelch       = "welch-t"
	MethodMannWhitney = "mann-whitney-u"
)

// ErrTooFewSamples says a test needs more values than it was given.
var ErrTooFewSamples = errors.New("too few samples for a significance test")

// TestResult is the outcome of a two-sample, two-sided significance test.
type TestResult struct {
	// Test is MethodWelch or MethodMannWhitney.
	Test string `json:"test"`
	// Statistic is Welch's t (mean(a) − mean(b) over its standard error) or Mann–Whitney's U of a.
	// It is ±Inf when neither side varies and the means differ; JSON has no infinity, so
	// MarshalJSON writes it as null with StatisticInfinite set to "+" or "-".
	Statistic float64 `json:"statistic"`
	// DF is the Welch–Satterthwaite degrees of freedom (Welch only).
	DF float64 `json:"df,omitempty"`
	// PValue is the two-sided p-value.
	PValue float64 `json:"pValue"`
	// Exact says the p-value comes from the exact null distribution (Mann–Whitney without ties).
	Exact bool `json:"exact,omitempty"`
	// Reason says why this test was chosen (set by ChooseAndTest).
	Reason string `json:"reason,omitempty"`
}

// MarshalJSON writes the result with a non-finite statistic as null and its sign in
// "statisticInfinite" (JSON numbers cannot be infinite: encoding/json refuses them and a
// whole `cnperf compare -o json` failed on two constant sample sets).
func (r TestResult) MarshalJSON() ([]byte, error) {
	out := struct {
		Test              string   `json:"test"`
		Statistic         *float64 `json:"statistic"`
		StatisticInfinite string   `json:"statisticInfinite,omitempty"`
		DF                float64  `json:"df,omitempty"`
		PValue            float64  `json:"pValue"`
		Exact             bool     `json:"exact,omitempty"`
		Reason            string   `json:"reason,omitempty"`
	}{Test: r.Test, DF: r.DF, PValue: r.PValue, Exact: r.Exact, Reason: r.Reason}
	switch {
	case math.IsInf(r.Statistic, 1):
		out.StatisticInfinite = "+"
	case math.IsInf(r.Statistic, -1):
		out.StatisticInfinite = "-"
	case math.IsNaN(r.Statistic):
	default:
		out.Statistic = &r.Statistic
	}
	return json.Marshal(out)
}

// WelchTTest runs Welch's unequal-variance t-test of a against b. Both need at least two
// values. When neither sample varies, the p-value is 1 for equal means and 0 otherwise (the
// samples are then identical repeated values, and any difference is certain).
func WelchTTest(a, b []float64) (TestResult, error) {
	if len(a) < 2 || len(b) < 2 {
		return TestResult{}, fmt.Errorf("welch t-test needs ≥2 values per side, got %d and %d: %w", len(a), len(b), ErrTooFewSamples)
	}
	if s := scaleOf(append(append([]float64(nil), a...), b...)); s != 1 {
		a, b = scaled(a, s), scaled(b, s) // t and df do not depend on the scale
	}
	n1, n2 := float64(len(a)), float64(len(b))
	m1, m2 := Mean(a), Mean(b)
	q1, q2 := Variance(a)/n1, Variance(b)/n2
	r := TestResult{Test: MethodWelch}
	se2 := q1 + q2
	if se2 == 0 {
		r.DF = n1 + n2 - 2
		if m1 == m2 {
			r.PValue = 1
		} else {
			r.Statistic = math.Copysign(math.Inf(1), m1-m2)
		}
		return r, nil
	}
	r.Statistic = (m1 - m2) / math.Sqrt(se2)
	r.DF = se2 * se2 / (q1*q1/(n1-1) + q2*q2/(n2-1))
	// Two-sided p = P(|T| > |t|) = I_{df/(df+t²)}(df/2, 1/2), computed directly to keep
	// precision for tiny p-values.
	r.PValue = RegIncBeta(r.DF/2, 0.5, r.DF/(r.DF+r.Statistic*r.Statistic))
	return r, nil
}

// exactMWLimit bounds n1·n2 for the exact Mann–Whitney null distribution.
const exactMWLimit = 2500

// MannWhitneyU runs the two-sided Mann–Whitney U (Wilcoxon rank-sum) test of a against b.
// Without ties and for n1·n2 ≤ 2500 the p-value is exact (the null distribution of U is
// counted); otherwise it uses the normal approximation with tie correction and continuity
// correction. Each side needs at least one value.
//
// With very few values the exact test cannot reach small p-values: 3 against 3 can never go
// below p = 0.1. ChooseAndTest accounts for that.
func MannWhitneyU(a, b []float64) (TestResult, error) {
	n1, n2 := len(a), len(b)
	if n1 < 1 || n2 < 1 {
		return TestResult{}, fmt.Errorf("mann-whitney needs ≥1 value per side, got %d and %d: %w", n1, n2, ErrTooFewSamples)
	}
	all := append(append(make([]float64, 0, n1+n2), a...), b...)
	ranks, tieTerm := averageRanks(all)
	ties := tieTerm > 0
	var r1 float64
	for _, r := range ranks[:n1] {
		r1 += r
	}
	f1, f2 := float64(n1), float64(n2)
	u := r1 - f1*(f1+1)/2
	res := TestResult{Test: MethodMannWhitney, Statistic: u}
	if !ties && n1*n2 <= exactMWLimit {
		res.Exact = true
		res.PValue = mannWhitneyExactP(n1, n2, int(math.Round(u)))
		return res, nil
	}
	n := f1 + f2
	mu := f1 * f2 / 2
	sigma2 := f1 * f2 / 12 * ((n + 1) - tieTerm/(n*(n-1)))
	if sigma2 <= 0 {
		// Every value is the same: no evidence of any difference.
		res.PValue = 1
		return res, nil
	}
	z := math.Abs(u-mu) - 0.5
	if z < 0 {
		z = 0
	}
	res.PValue = math.Min(1, 2*(1-normalCDF(z/math.Sqrt(sigma2))))
	return res, nil
}

// mannWhitneyExactP is the exact two-sided p-value of U = u for sample sizes n1, n2 without
// ties: 2·min(P(U ≤ u), P(U ≥ u)), capped at 1. The null distribution is counted with the
// recurrence f(m, n, u) = f(m−1, n, u−n) + f(m, n−1, u).
func mannWhitneyExactP(n1, n2, u int) float64 {
	maxU := n1 * n2
	// counts[j][k]: number of arrangements of i values of a and j of b with U = k, for the
	// current i; built up over i.
	prev := make([][]float64, n2+1)
	for j := range prev {
		prev[j] = make([]float64, maxU+1)
		prev[j][0] = 1 // i = 0: U is always 0
	}
	for i := 1; i <= n1; i++ {
		cur := make([][]float64, n2+1)
		for j := range cur {
			cur[j] = make([]float64, maxU+1)
		}
		cur[0][0] = 1
		for j := 1; j <= n2; j++ {
			for k := 0; k <= i*j; k++ {
				// The largest value belongs to a (contributes j to U) or to b.
				var c float64
				if k >= j {
					c += prev[j][k-j]
				}
				c += cur[j-1][k]
				cur[j][k] = c
			}
		}
		prev = cur
	}
	dist := prev[n2]
	var total, le, ge float64
	for k, c := range dist {
		total += c
		if k <= u {
			le += c
		}
		if k >= u {
			ge += c
		}
	}
	p := 2 * math.Min(le, ge) / total
	return math.Min(1, p)
}

// skewLimit is the |G1| above which a sample is treated as skewed.
const skewLimit = 1.0

// mwMinN is the smallest per-side count at which the exact Mann–Whitney test can reach
// p < 0.05 (4 against 4: the smallest two-sided p is 2/70 ≈ 0.029).
const mwMinN = 4

// ChooseAndTest picks the test for a against b and runs it, saying why in Reason:
//   - Mann–Whitney U when both sides have at least 4 values and either is skewed
//     (|sample skewness| > 1): a rank test does not assume normal means;
//   - Welch's t-test otherwise. With 2–3 values per side a rank test cannot reach p < 0.05
//     at all (3 against 3 has a smallest p of 0.1), so Welch is the only test with any power
//     there, at the price of assuming roughly normal sample means — the Reason says so.
//
// Fewer than two values on a side returns ErrTooFewSamples.
func ChooseAndTest(a, b []float64) (TestResult, error) {
	if len(a) < 2 || len(b) < 2 {
		return TestResult{}, fmt.Errorf("need ≥2 samples per side, got %d and %d: %w", len(a), len(b), ErrTooFewSamples)
	}
	ga, gb := Skewness(a), Skewness(b)
	skewed := math.Abs(ga) > skewLimit || math.Abs(gb) > skewLimit
	if skewed && len(a) >= mwMinN && len(b) >= mwMinN {
		r, err := MannWhitneyU(a, b)
		if err != nil {
			return r, err
		}
		r.Reason = fmt.Sprintf("samples skewed (skewness %.2f, %.2f): rank test", ga, gb)
		return r, nil
	}
	r, err := WelchTTest(a, b)
	if err != nil {
		return r, err
	}
	switch {
	case skewed:
		r.Reason = fmt.Sprintf("samples skewed (skewness %.2f, %.2f) but too few for a rank test (n=%d, %d): Welch, assumes near-normal means", ga, gb, len(a), len(b))
	case len(a) < mwMinN || len(b) < mwMinN:
		r.Reason = fmt.Sprintf("few samples (n=%d, %d): Welch, assumes near-normal means", len(a), len(b))
	default:
		r.Reason = "samples not skewed: Welch"
	}
	return r, nil
}
