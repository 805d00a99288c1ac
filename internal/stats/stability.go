package stats

import (
	"math"
	"sort"
)

// madScale turns the median absolute deviation into a consistent estimator of the standard
// deviation of normally distributed values (1/Φ⁻¹(3/4)).
const madScale = 1.4826

// OutlierMADs is how many scaled MADs from the median a sample must be to be flagged.
const OutlierMADs = 3

// MAD is the median absolute deviation of xs from their median, scaled by 1.4826 so that it
// estimates the standard deviation of normal values. NaN for no values.
func MAD(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	m := Median(xs)
	dev := make([]float64, len(xs))
	for i, x := range xs {
		dev[i] = math.Abs(x - m)
	}
	return madScale * Median(dev)
}

// OutliersMinN is the fewest values Outliers judges. With 3 or 4 the MAD is one or two
// distances from the median, and a value a hair further than the others gets flagged on a path
// whose interval is ±0.5 %.
const OutliersMinN = 5

// Outliers returns the indexes (in xs's order) of the values outside median ± 3·MAD (MAD
// scaled to a standard deviation, see MAD). It needs OutliersMinN values; with fewer, or when
// more than half the values are equal (MAD 0: no spread to judge by), it flags nothing.
func Outliers(xs []float64) []int {
	if len(xs) < OutliersMinN {
		return nil
	}
	m, mad := Median(xs), MAD(xs)
	if !(mad > 0) {
		return nil
	}
	var out []int
	for i, x := range xs {
		if math.Abs(x-m) > OutlierMADs*mad {
			out = append(out, i)
		}
	}
	return out
}

// Trend is the outcome of a Spearman rank-correlation test of values against their order.
type Trend struct {
	// Rho is Spearman's ρ between the values and their order (1: every value larger than the
	// one before; −1: every value smaller).
	Rho float64
	// PValue is the two-sided p-value of ρ = 0: exact (every ordering counted) for n ≤ 8,
	// Student's t with n−2 degrees of freedom above.
	PValue float64
	Exact  bool
}

// TrendAlpha is the significance level at which a trend is reported.
const TrendAlpha = 0.05

// TrendMinN is the smallest number of values for which a trend can be significant at
// TrendAlpha: with 4 values the exact test's smallest two-sided p is 2/24 ≈ 0.083.
const TrendMinN = 5

// exactSpearmanMax bounds n for the exact permutation p-value (8! = 40320 orderings).
const exactSpearmanMax = 8

// SpearmanTrend tests xs, taken in order, for a monotonic trend. Ties get average ranks.
// ok is false with fewer than 3 values or when every value is the same.
func SpearmanTrend(xs []float64) (Trend, bool) {
	n := len(xs)
	if n < 3 {
		return Trend{}, false
	}
	ry, _ := averageRanks(xs)
	rx := make([]float64, n)
	for i := range rx {
		rx[i] = float64(i + 1)
	}
	rho, ok := pearson(rx, ry)
	if !ok {
		return Trend{}, false
	}
	t := Trend{Rho: rho}
	if n <= exactSpearmanMax {
		t.PValue, t.Exact = spearmanExactP(ry, rho), true
		return t, true
	}
	if math.Abs(rho) >= 1 {
		t.PValue = 0
		return t, true
	}
	df := float64(n - 2)
	stat := rho * math.Sqrt(df/(1-rho*rho))
	// Two-sided P(|T| > |t|) = I_{df/(df+t²)}(df/2, 1/2).
	t.PValue = RegIncBeta(df/2, 0.5, df/(df+stat*stat))
	return t, true
}

// Significant reports whether the trend's p-value is below TrendAlpha.
func (t Trend) Significant() bool { return t.PValue < TrendAlpha }

// spearmanExactP counts, over every ordering of the ranks ry, how many give |ρ| ≥ |rho|.
func spearmanExactP(ry []float64, rho float64) float64 {
	n := len(ry)
	rx := make([]float64, n)
	for i := range rx {
		rx[i] = float64(i + 1)
	}
	perm := append([]float64(nil), ry...)
	sort.Float64s(perm)
	target := math.Abs(rho) - 1e-12
	var total, extreme float64
	for {
		if r, ok := pearson(rx, perm); ok && math.Abs(r) >= target {
			extreme++
		}
		total++
		if !nextPermutation(perm) {
			break
		}
	}
	return extreme / total
}

// nextPermutation rearranges s into the next lexicographic permutation (distinct orderings
// only, so tied ranks are not counted twice) and reports false after the last one.
func nextPermutation(s []float64) bool {
	i := len(s) - 2
	for i >= 0 && s[i] >= s[i+1] {
		i--
	}
	if i < 0 {
		return false
	}
	j := len(s) - 1
	for s[j] <= s[i] {
		j--
	}
	s[i], s[j] = s[j], s[i]
	for l, r := i+1, len(s)-1; l < r; l, r = l+1, r-1 {
		s[l], s[r] = s[r], s[l]
	}
	return true
}

// pearson is the correlation coefficient of x and y; ok is false when either does not vary.
func pearson(x, y []float64) (float64, bool) {
	mx, my := Mean(x), Mean(y)
	var sxy, sxx, syy float64
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return 0, false
	}
	return sxy / math.Sqrt(sxx*syy), true
}

// averageRanks ranks xs from 1 (ties get the mean of their ranks) and returns the ranks in
// xs's order and Σ(t³ − t) over the groups of t tied values.
func averageRanks(xs []float64) (ranks []float64, tieTerm float64) {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return xs[idx[a]] < xs[idx[b]] })
	ranks = make([]float64, len(xs))
	for i := 0; i < len(idx); {
		j := i + 1
		for j < len(idx) && xs[idx[j]] == xs[idx[i]] {
			j++
		}
		mid := float64(i+j+1) / 2 // ranks i+1 .. j, averaged
		for k := i; k < j; k++ {
			ranks[idx[k]] = mid
		}
		if t := float64(j - i); t > 1 {
			tieTerm += t*t*t - t
		}
		i = j
	}
	return ranks, tieTerm
}

// CIHalfWidthAt is the half-width of the two-sided confidence interval at level (0 < level < 1)
// of the mean of n values with sample standard deviation sd: t(1−(1−level)/2, n−1)·sd/√n.
// It is +Inf for n < 2: one value says nothing about its own spread.
func CIHalfWidthAt(level, sd float64, n int) float64 {
	if n < 2 {
		return math.Inf(1)
	}
	t := StudentTQuantile(1-(1-level)/2, float64(n-1))
	if h := t * sd / math.Sqrt(float64(n)); !math.IsInf(h, 0) {
		return h
	}
	return t * (sd / math.Sqrt(float64(n))) // t·sd overflowed: a huge sd
}

// RelativeHalfWidth is the confidence interval's half-width at level as a percentage of the
// mean of xs: how far the true mean may be from the measured one. +Inf for fewer than two
// values or a zero mean.
func RelativeHalfWidth(xs []float64, level float64) float64 {
	if len(xs) < 2 {
		return math.Inf(1)
	}
	m := Mean(xs)
	if m == 0 {
		return math.Inf(1)
	}
	return CIHalfWidthAt(level, StdDev(xs), len(xs)) / math.Abs(m) * 100
}

// TargetMet is the stopping rule of adaptive sampling: the confidence interval of the mean of
// xs at level (e.g. 0.95) is within ±halfWidthPercent of the mean, with at least minN values.
// It returns the interval's relative half-width in percent as well.
func TargetMet(xs []float64, minN int, level, halfWidthPercent float64) (float64, bool) {
	w := RelativeHalfWidth(xs, level)
	return w, len(xs) >= minN && w <= halfWidthPercent
}

// SamplesNeeded estimates how many values with the coefficient of variation cov (stddev/mean)
// the interval at level needs to be within ±halfWidthPercent: the smallest n with
// t(n−1)·cov/√n ≤ halfWidthPercent/100, capped at limit (limit+1 means "more than limit").
func SamplesNeeded(cov, level, halfWidthPercent float64, limit int) int {
	for n := 2; n <= limit; n++ {
		if CIHalfWidthAt(level, cov, n)*100 <= halfWidthPercent {
			return n
		}
	}
	return limit + 1
}

// SteadyState compares the first interval of a sample with the rest.
type SteadyState struct {
	// FirstPercent is how far the first interval's rate is from the median of the others, in
	// percent of that median (negative: slower, as in a ramp-up).
	FirstPercent float64
	// NoisePercent is 3 scaled MADs of the other intervals, in percent of their median: how
	// far an interval may be from the median by noise alone.
	NoisePercent float64
	// RampUp is true when the first interval is further from the median than the noise (and
	// than RampUpMinPercent).
	RampUp bool
}

// RampUpMinPercent is the smallest difference SteadyStateOf calls a ramp-up, whatever the
// noise: intervals of a very steady flow can have a MAD of a few parts per million.
const RampUpMinPercent = 2

// SteadyStateMinIntervals is the fewest intervals SteadyStateOf judges: the noise comes from
// the MAD of the others, which needs five of them to mean anything.
const SteadyStateMinIntervals = 6

// SteadyStateOf compares rates[0] with rates[1:]. It needs SteadyStateMinIntervals intervals
// and a positive median of the rest.
func SteadyStateOf(rates []float64) (SteadyState, bool) {
	if len(rates) < SteadyStateMinIntervals {
		return SteadyState{}, false
	}
	rest := rates[1:]
	m := Median(rest)
	if !(m > 0) {
		return SteadyState{}, false
	}
	s := SteadyState{
		FirstPercent: (rates[0] - m) / m * 100,
		NoisePercent: OutlierMADs * MAD(rest) / m * 100,
	}
	d := math.Abs(s.FirstPercent)
	s.RampUp = d > s.NoisePercent && d > RampUpMinPercent
	return s, true
}
