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
// NaN or infinite inputs are skipped (they never come from a real measurement).
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
	s.CI95Low, s.CI95High = mean-half, mean+half
	return s
}

// CIHalfWidth is the half-width of the 95% confidence interval of a mean of n values with
// sample standard deviation sd: t(0.975, n−1)·sd/√n. It is 0 for n < 2.
func CIHalfWidth(sd float64, n int) float64 {
	if n < 2 {
		return 0
	}
	t := StudentTQuantile(1-(1-Confidence)/2, float64(n-1))
	return t * sd / math.Sqrt(float64(n))
}

// Mean is the arithmetic mean of xs (NaN for none), summed with Kahan compensation.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	var sum, comp float64
	for _, x := range xs {
		y := x - comp
		t := sum + y
		comp = (t - sum) - y
		sum = t
	}
	return sum / float64(len(xs))
}

// StdDev is the sample standard deviation of xs (n−1 denominator); 0 for fewer than two values.
// It uses two passes around the mean, which is exact enough for rates of 1e11 bit/s.
func StdDev(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	return math.Sqrt(Variance(xs))
}

// Variance is the sample variance of xs (n−1 denominator); 0 for fewer than two values.
func Variance(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	m := Mean(xs)
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
