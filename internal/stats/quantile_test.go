package stats

import (
	"math/rand/v2"
	"testing"
)

func TestQuantileCI(t *testing.T) {
	xs := make([]float64, 20)
	for i := range xs {
		xs[i] = float64(20 - i) // 20..1, unsorted on purpose
	}
	for _, c := range []struct {
		q                float64
		value, low, high float64
		hasLow, hasHigh  bool
	}{
		// Median of 20: ranks 6 and 15 (P(B ≤ 5) = 0.0207 ≤ 0.025, P(B ≤ 14) = 0.9793 ≥ 0.975):
		// the textbook interval for n = 20 (e.g. Conover, table A3).
		{0.5, 10, 6, 15, true, true},
		// p90 of 20: lower rank 15 (P(B ≤ 14) = 0.0113), no upper bound (P(B ≤ 19) = 0.878).
		{0.9, 18, 15, 0, true, false},
		// p99 of 20: lower rank 19 (P(B ≤ 18) = 0.0169), no upper bound.
		{0.99, 20, 19, 0, true, false},
		{1, 20, 0, 0, false, false},
	} {
		e, ok := QuantileCI(xs, c.q, 0.95)
		if !ok || e.Value != c.value || e.HasLow != c.hasLow || e.HasHigh != c.hasHigh ||
			(c.hasLow && e.Low != c.low) || (c.hasHigh && e.High != c.high) {
			t.Errorf("q=%v: got %+v, want value %v low %v(%v) high %v(%v)", c.q, e, c.value, c.low, c.hasLow, c.high, c.hasHigh)
		}
	}
	if _, ok := QuantileCI(nil, 0.5, 0.95); ok {
		t.Error("empty sample gave an estimate")
	}
}

// TestQuantileCICoverage: over many samples of an exponential distribution, the median's
// interval covers the true median at least 95% of the time.
func TestQuantileCICoverage(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const trueMedian = 0.6931471805599453 // ln 2
	covered, trials := 0, 2000
	for range trials {
		xs := make([]float64, 30)
		for i := range xs {
			xs[i] = r.ExpFloat64()
		}
		e, _ := QuantileCI(xs, 0.5, 0.95)
		if e.HasLow && e.HasHigh && e.Low <= trueMedian && trueMedian <= e.High {
			covered++
		}
	}
	if f := float64(covered) / float64(trials); f < 0.94 {
		t.Errorf("coverage %.3f, want ≥ 0.95", f)
	}
}
