package stats

import (
	"math"
	"sort"
)

// QuantileEstimate is a quantile of a sample with its distribution-free confidence interval.
type QuantileEstimate struct {
	Quantile float64
	// Value is the nearest-rank quantile: the ceil(q·n)-th smallest value (the largest for q=1).
	Value float64
	// Low and High bound the quantile with at least the asked confidence; HasLow/HasHigh are
	// false when the sample is too small to give that bound (e.g. the upper bound of p99 of 20
	// values).
	Low, High       float64
	HasLow, HasHigh bool
}

// QuantileCI estimates the q-quantile (0 < q ≤ 1) of xs with a confidence interval at level
// (e.g. 0.95) from order statistics: the number of values below the true quantile is
// Binomial(n, q), so [x(l), x(u)] covers it with probability P(l ≤ B < u), chosen as the
// narrowest ranks with at most (1−level)/2 outside on each side. It assumes nothing about the
// distribution (programming latencies are skewed and lumpy: sync periods). ok is false for an
// empty sample or a q outside (0, 1].
func QuantileCI(xs []float64, q, level float64) (QuantileEstimate, bool) {
	n := len(xs)
	if n == 0 || !(q > 0 && q <= 1) || !(level > 0 && level < 1) {
		return QuantileEstimate{}, false
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	rank := int(math.Ceil(q * float64(n)))
	rank = min(max(rank, 1), n)
	e := QuantileEstimate{Quantile: q, Value: s[rank-1]}
	if q == 1 {
		return e, true // the maximum: no interval from the sample alone
	}
	alpha := (1 - level) / 2
	// l: the largest rank with P(B ≤ l−1) ≤ alpha; u: the smallest with P(B ≤ u−1) ≥ 1−alpha.
	l := 0
	for k := 1; k <= n; k++ {
		if binomCDF(k-1, n, q) <= alpha {
			l = k
		} else {
			break
		}
	}
	u := n + 1
	for k := n; k >= 1; k-- {
		if binomCDF(k-1, n, q) >= 1-alpha {
			u = k
		} else {
			break
		}
	}
	if l >= 1 {
		e.Low, e.HasLow = s[l-1], true
	}
	if u <= n {
		e.High, e.HasHigh = s[u-1], true
	}
	return e, true
}

// binomCDF is P(B ≤ k) for B ~ Binomial(n, p).
func binomCDF(k, n int, p float64) float64 {
	if k < 0 {
		return 0
	}
	if k >= n {
		return 1
	}
	sum := 0.0
	lp, lq := math.Log(p), math.Log1p(-p)
	for i := 0; i <= k; i++ {
		sum += math.Exp(lchoose(n, i) + float64(i)*lp + float64(n-i)*lq)
	}
	return math.Min(sum, 1)
}

func lchoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}
