// Package stats turns raw samples into summaries: descriptive statistics with Student-t
// confidence intervals, merged latency distributions, and the significance tests that
// `cnperf compare` uses (Welch's t-test, Mann–Whitney U).
package stats

import (
	"math"
	"sort"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

// Confidence is the two-sided confidence level of the intervals Describe computes.
const Confidence = 0.95

// Describe summarises xs: n, mean, median, sample standard deviation (n−1 denominator),
// coefficient of variation (stddev / |mean|, 0 when the mean is 0), min, max and the 95%
// confidence interval of the mean, mean ± t(0.975, n−1)·s/√n with Student's t.
//
// n = 0 gives nil: there is nothing to describe, and a zero Stat would read as a measurement.
// n = 1 gives stddev 0, CoV 0 and ci95Low = ci95High = mean: one sample carries no
// information about its own spread, so the interval is degenerate rather than infinite;
// readers must look at n before trusting the interval.
// NaN or infinite inputs are skipped (they never come from a real measurement). Huge finite
// inputs give finite figures (see Mean); the interval is clamped to the float64 range.
func Describe(xs []float64) *api.Stat {
	vals := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			vals = append(vals, x)
		}
	}
	n := len(vals)
	if n == 0 {
		return nil
	}
	sort.Float64s(vals)
	mean := Mean(vals)
	s := &api.Stat{
		N:      n,
		Mean:   mean,
		Median: medianSorted(vals),
		Min:    vals[0],
		Max:    vals[n-1],
	}
	if n == 1 {
		s.CI95Low, s.CI95High = mean, mean
		return s
	}
	s.Stddev = StdDev(vals)
	if mean != 0 {
		s.CoV = s.Stddev / math.Abs(mean)
	}
	half := CIHalfWidth(s.Stddev, n)
	// Clamped to the float64 range: only values near 1.8e308 reach it, and JSON has no infinity.
	s.CI95Low, s.CI95High = math.Max(mean-half, -math.MaxFloat64), math.Min(mean+half, math.MaxFloat64)
	return s
}

// CIHalfWidth is the half-width of the 95% confidence interval of a mean of n values with
// sample standard deviation sd: t(0.975, n−1)·sd/√n. It is 0 for n < 2.
func CIHalfWidth(sd float64, n int) float64 {
	if n < 2 {
		return 0
	}
	t := StudentTQuantile(1-(1-Confidence)/2, float64(n-1))
	if h := t * sd / math.Sqrt(float64(n)); !math.IsInf(h, 0) {
		return h
	}
	return t * (sd / math.Sqrt(float64(n))) // t·sd overflowed: a huge sd

}

// Mean is the arithmetic mean of xs (NaN for none), summed with Kahan compensation. Values so
// large that their sum would overflow (|x| ≥ 2^500, about 3e150) are scaled by a power of two
// first, which is exact: the mean of finite values is finite.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	if s := scaleOf(xs); s != 1 {
		return mean(scaled(xs, s)) * s
	}
	return mean(xs)
}

func mean(xs []float64) float64 {
	var sum, comp float64
	for _, x := range xs {
		y := x - comp
		t := sum + y
		comp = (t - sum) - y
		sum = t
	}
	return sum / float64(len(xs))
}

// bigValue is where scaling starts: the square of 2^500 still fits a float64 (max ~1.8e308)
// with room for sums of many such squares.
const bigValue = 0x1p500

// scaleOf is 1 when every |x| is below bigValue, else the power of two at or above the largest
// |x| halved: dividing by it is exact and brings every value into (-2, 2), where sums and
// squares cannot overflow (2^1024 itself is not a float64). NaN and infinities are ignored
// (callers skip or refuse them).
func scaleOf(xs []float64) float64 {
	var m float64
	for _, x := range xs {
		if a := math.Abs(x); a > m && !math.IsInf(a, 0) {
			m = a
		}
	}
	if m < bigValue {
		return 1
	}
	_, exp := math.Frexp(m) // m = frac · 2^exp with frac in [0.5, 1)
	return math.Ldexp(1, exp-1)
}

func scaled(xs []float64, s float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x / s
	}
	return out
}

// StdDev is the sample standard deviation of xs (n−1 denominator); 0 for fewer than two values.
// It uses two passes around the mean, which is exact enough for rates of 1e11 bit/s; huge
// values are scaled as in Mean, so the result is finite for finite values.
func StdDev(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	if s := scaleOf(xs); s != 1 {
		return math.Sqrt(variance(scaled(xs, s))) * s
	}
	return math.Sqrt(variance(xs))
}

// Variance is the sample variance of xs (n−1 denominator); 0 for fewer than two values. Huge
// values are scaled as in Mean; the variance is +Inf only when it truly exceeds the float64
// range (a spread beyond about 1e154).
func Variance(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	if s := scaleOf(xs); s != 1 {
		return variance(scaled(xs, s)) * s * s
	}
	return variance(xs)
}

func variance(xs []float64) float64 {
	m := mean(xs)
	var ss, comp float64
	for _, x := range xs {
		d := x - m
		ss += d * d
		comp += d
	}
	n := float64(len(xs))
	// Corrected two-pass algorithm (Chan, Golub & LeVeque): subtract the rounding error of the mean.
	return (ss - comp*comp/n) / (n - 1)
}

// Median is the median of xs (the mean of the two middle values for an even count; NaN for none).
// xs is not modified.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	c := append([]float64(nil), xs...)
	sort.Float64s(c)
	return medianSorted(c)
}

func medianSorted(s []float64) float64 {
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Skewness is the adjusted Fisher–Pearson sample skewness G1 of xs; 0 for fewer than three
// values or no spread.
func Skewness(xs []float64) float64 {
	n := float64(len(xs))
	if len(xs) < 3 {
		return 0
	}
	if s := scaleOf(xs); s != 1 {
		xs = scaled(xs, s) // G1 does not depend on the scale; cubes of huge values overflow
	}
	m := Mean(xs)
	var m2, m3 float64
	for _, x := range xs {
		d := x - m
		m2 += d * d
		m3 += d * d * d
	}
	m2 /= n
	m3 /= n
	if m2 == 0 {
		return 0
	}
	g1 := m3 / math.Pow(m2, 1.5)
	return g1 * math.Sqrt(n*(n-1)) / (n - 2)
}
