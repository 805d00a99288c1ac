package stats

import (
	"math"
	"slices"
	"testing"
)

func TestOutliers(t *testing.T) {
	// Expected flags worked out by hand: median ± 3 · 1.4826 · MAD.
	tests := []struct {
		name string
		in   []float64
		want []int
	}{
		{"too few", []float64{100, 101, 150, 99}, nil},
		// median 100.5, |dev| {0.5,0.5,1.5,0,29.5}, MAD 0.5 → scaled 0.7413, limit ±2.22: 130 is out.
		{"one high", []float64{100, 101, 99, 100.5, 130}, []int{4}},
		{"one low and one high", []float64{10, 10.2, 9.9, 10.1, 2, 10, 25}, []int{4, 6}},
		// within noise: a spread-out but symmetric set flags nothing
		{"spread", []float64{90, 100, 110, 95, 105}, nil},
		// more than half identical: MAD 0, no spread to judge by, nothing flagged
		{"MAD zero", []float64{5, 5, 5, 9, 5}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Outliers(tc.in); !slices.Equal(got, tc.want) {
				t.Errorf("Outliers(%v) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

func TestSpearmanTrend(t *testing.T) {
	// Exact p-values counted independently (Python, every distinct permutation of the ranks).
	tests := []struct {
		name      string
		in        []float64
		ok        bool
		rho, p    float64
		exact     bool
		significa bool
	}{
		{"too few", []float64{1, 2}, false, 0, 0, false, false},
		{"constant", []float64{3, 3, 3, 3}, false, 0, 0, false, false},
		{"rising 5", []float64{1, 2, 3, 4, 5}, true, 1, 2.0 / 120, true, true},
		{"mostly rising", []float64{1, 3, 2, 5, 4}, true, 0.8, 16.0 / 120, true, false},
		{"no order", []float64{5, 1, 4, 2, 3}, true, -0.3, 82.0 / 120, true, false},
		{"ties", []float64{10, 10, 11, 12, 13, 14}, true, 0.9856107606, 2.0 / 360, true, true},
		{"falling 8", []float64{9.1, 9.0, 8.8, 8.9, 8.5, 8.4, 8.6, 8.2}, true, -0.9047619048, 184.0 / 40320, true, true},
		{"rising 4 cannot be significant", []float64{1, 2, 3, 4}, true, 1, 2.0 / 24, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := SpearmanTrend(tc.in)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			if math.Abs(got.Rho-tc.rho) > 1e-9 || math.Abs(got.PValue-tc.p) > 1e-9 || got.Exact != tc.exact {
				t.Errorf("SpearmanTrend(%v) = %+v, want rho %.10g p %.10g exact %v", tc.in, got, tc.rho, tc.p, tc.exact)
			}
			if got.Significant() != tc.significa {
				t.Errorf("Significant() = %v, want %v", got.Significant(), tc.significa)
			}
		})
	}
}

func TestSpearmanTrendLargeN(t *testing.T) {
	// Above 8 values the p-value comes from t = ρ·√((n−2)/(1−ρ²)) with n−2 degrees of freedom.
	// 1..10 with the last two swapped: Σd² = 2, ρ = 1 − 6·2/(10·99) = 0.98787879.
	xs := []float64{1, 2, 3, 4, 5, 6, 7, 8, 10, 9}
	got, ok := SpearmanTrend(xs)
	if !ok || got.Exact {
		t.Fatalf("got %+v ok %v, want the t approximation", got, ok)
	}
	rho := 1 - 12.0/990
	if math.Abs(got.Rho-rho) > 1e-12 {
		t.Errorf("rho = %.12g, want %.12g", got.Rho, rho)
	}
	tt := rho * math.Sqrt(8/(1-rho*rho))
	if want := 2 * (1 - StudentTCDF(tt, 8)); math.Abs(got.PValue-want) > 1e-12 || !got.Significant() {
		t.Errorf("p = %g, want %g (significant)", got.PValue, want)
	}
	// A flat, noisy series of 12 has no trend.
	flat := []float64{100, 103, 98, 101, 99, 102, 100, 97, 103, 99, 101, 100}
	if got, _ := SpearmanTrend(flat); got.Significant() {
		t.Errorf("flat series: %+v is significant", got)
	}
}

func TestTargetMet(t *testing.T) {
	// {100, 102, 98}: mean 100, s 2, t(0.975, 2) = 4.30265 → half-width 4.30265·2/√3 = 4.9683 %.
	// {100, 110, 90}: s 10 → 24.84 %. {100, 101, 99, 100, 100}: s 0.7071, t(0.975,4) = 2.77645
	// → 0.8780 %. At 99 % the first set needs t(0.995, 2) = 9.92484 → 11.4602 %.
	tests := []struct {
		name   string
		xs     []float64
		minN   int
		level  float64
		target float64
		width  float64
		met    bool
	}{
		{"one sample never meets", []float64{100}, 1, 0.95, 5, math.Inf(1), false},
		{"three just inside", []float64{100, 102, 98}, 3, 0.95, 5, 4.968275, true},
		{"three just outside 4%", []float64{100, 102, 98}, 3, 0.95, 4, 4.968275, false},
		{"below the minimum", []float64{100, 102, 98}, 4, 0.95, 5, 4.968275, false},
		{"noisy", []float64{100, 110, 90}, 3, 0.95, 5, 24.841377, false},
		{"quiet five", []float64{100, 101, 99, 100, 100}, 3, 0.95, 5, 0.877981, true},
		{"99 percent", []float64{100, 102, 98}, 3, 0.99, 5, 11.460214, false},
		{"zero mean", []float64{-1, 1}, 2, 0.95, 5, math.Inf(1), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, met := TargetMet(tc.xs, tc.minN, tc.level, tc.target)
			if met != tc.met || !(math.IsInf(tc.width, 1) && math.IsInf(w, 1) || math.Abs(w-tc.width) < 1e-5) {
				t.Errorf("TargetMet = %.6f, %v; want %.6f, %v", w, met, tc.width, tc.met)
			}
		})
	}
}

func TestSamplesNeeded(t *testing.T) {
	// t(0.975, n−1)/√n ≤ cov/target: CoV 5 % for ±5 % needs t/√n ≤ 1: n=6 gives 1.0494, n=7 0.9249.
	tests := []struct {
		cov, level, target float64
		limit, want        int
	}{
		{0.05, 0.95, 5, 30, 7},
		{0.01, 0.95, 5, 30, 3}, // n=2: 12.706·0.01/√2 = 8.98 %; n=3: 4.30·0.01/√3 = 2.48 %
		{0.5, 0.95, 5, 30, 31}, // would need ~400
		{0, 0.95, 5, 30, 2},
	}
	for _, tc := range tests {
		if got := SamplesNeeded(tc.cov, tc.level, tc.target, tc.limit); got != tc.want {
			t.Errorf("SamplesNeeded(%v, %v, %v, %d) = %d, want %d", tc.cov, tc.level, tc.target, tc.limit, got, tc.want)
		}
	}
}

func TestSteadyStateOf(t *testing.T) {
	tests := []struct {
		name   string
		rates  []float64
		ok     bool
		first  float64
		rampUp bool
	}{
		{"too few intervals", []float64{1, 2, 3, 4, 5}, false, 0, false},
		// rest median 100, MAD 1·1.4826 → noise 4.45 %; first is −40 %
		{"slow start", []float64{60, 100, 101, 99, 100, 102, 98}, true, -40, true},
		// first within the noise of a noisy rest: rest {100,120,80,110,90}, median 100, MAD 10 → 44.5 %
		{"noisy rest", []float64{75, 100, 120, 80, 110, 90}, true, -25, false},
		// very steady rest (MAD 0): 1 % is below RampUpMinPercent
		{"tiny difference", []float64{99, 100, 100, 100, 100, 100}, true, -1, false},
		{"faster first", []float64{130, 100, 100.5, 99.5, 100, 100}, true, 30, true},
		{"no traffic after the first", []float64{100, 0, 0, 0, 0, 0}, false, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := SteadyStateOf(tc.rates)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			if math.Abs(got.FirstPercent-tc.first) > 1e-9 || got.RampUp != tc.rampUp {
				t.Errorf("SteadyStateOf(%v) = %+v, want first %v%% rampUp %v", tc.rates, got, tc.first, tc.rampUp)
			}
		})
	}
}
