package stats

import (
	"math"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

func TestDescribe(t *testing.T) {
	// Expected values computed by hand (and checked with Python's statistics module):
	// {2,4,4,4,5,5,7,9}: mean 5, Σ(x−5)² = 32, s² = 32/7, s = 2.1380899, t(0.975,7) = 2.3646243,
	// half-width = 2.3646243 · 2.1380899/√8 = 1.7874879.
	tests := []struct {
		name string
		in   []float64
		want *api.Stat
	}{
		{"empty", nil, nil},
		{"only NaN", []float64{math.NaN()}, nil},
		{"one value", []float64{42}, &api.Stat{N: 1, Mean: 42, Median: 42, Min: 42, Max: 42, CI95Low: 42, CI95High: 42}},
		{"two values", []float64{12, 10}, &api.Stat{N: 2, Mean: 11, Median: 11, Stddev: 1.4142136, CoV: 0.1285649,
			Min: 10, Max: 12, CI95Low: -1.7062047, CI95High: 23.7062047}},
		{"eight values", []float64{9, 2, 4, 4, 5, 4, 5, 7}, &api.Stat{N: 8, Mean: 5, Median: 4.5, Stddev: 2.1380899,
			CoV: 0.4276180, Min: 2, Max: 9, CI95Low: 3.2125121, CI95High: 6.7874879}},
		{"throughput scale", []float64{9.41e9, 9.38e9, 9.52e9}, &api.Stat{N: 3, Mean: 9436666666.67, Median: 9.41e9,
			Stddev: 73711147.958, CoV: 0.0078111425, Min: 9.38e9, Max: 9.52e9, CI95Low: 9253558024.25, CI95High: 9619775309.09}},
		// Issue 28 finding 7: squares of values ≥ ~1e154 overflowed to +Inf (stddev, CI, CoV
		// Inf or NaN); scaled by a power of two the figures are the "eight values" ones × 1e300.
		{"huge values", []float64{9e300, 2e300, 4e300, 4e300, 5e300, 4e300, 5e300, 7e300}, &api.Stat{N: 8, Mean: 5e300,
			Median: 4.5e300, Stddev: 2.1380899e300, CoV: 0.4276180, Min: 2e300, Max: 9e300, CI95Low: 3.2125121e300, CI95High: 6.7874879e300}},
		// t(0.975, 2) · s/√3 = 1.4342176e307: the interval's top, 1.81e308, is past the
		// largest float64 and is clamped to it rather than become +Inf.
		{"near the float64 limit", []float64{1.7e308, 1.7e308, 1.6e308}, &api.Stat{N: 3, Mean: 1.6666666667e308, Median: 1.7e308,
			Stddev: 5.7735027e306, CoV: 0.0346410162, Min: 1.6e308, Max: 1.7e308, CI95Low: 1.5232449e308, CI95High: math.MaxFloat64}},
		{"zero mean", []float64{-1, 1}, &api.Stat{N: 2, Mean: 0, Median: 0, Stddev: 1.4142136, CoV: 0,
			Min: -1, Max: 1, CI95Low: -12.7062047, CI95High: 12.7062047}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Describe(tc.in)
			if (got == nil) != (tc.want == nil) {
				t.Fatalf("Describe = %+v, want %+v", got, tc.want)
			}
			if got == nil {
				return
			}
			if got.N != tc.want.N {
				t.Errorf("N = %d, want %d", got.N, tc.want.N)
			}
			check := func(field string, g, w float64) {
				tol := 1e-6 * math.Max(1, math.Abs(w))
				if !(math.Abs(g-w) <= tol) { // NaN must fail too

					t.Errorf("%s = %.10g, want %.10g", field, g, w)
				}
			}
			check("mean", got.Mean, tc.want.Mean)
			check("median", got.Median, tc.want.Median)
			check("stddev", got.Stddev, tc.want.Stddev)
			check("cov", got.CoV, tc.want.CoV)
			check("min", got.Min, tc.want.Min)
			check("max", got.Max, tc.want.Max)
			check("ci95Low", got.CI95Low, tc.want.CI95Low)
			check("ci95High", got.CI95High, tc.want.CI95High)
		})
	}
}

func TestDescribeDoesNotModifyInput(t *testing.T) {
	in := []float64{3, 1, 2}
	Describe(in)
	Median(in)
	if in[0] != 3 || in[1] != 1 || in[2] != 2 {
		t.Errorf("input reordered: %v", in)
	}
}

func TestSkewness(t *testing.T) {
	// Adjusted Fisher–Pearson G1, checked with scipy.stats.skew(bias=False).
	tests := []struct {
		in   []float64
		want float64
	}{
		{[]float64{2, 4, 4, 4, 5, 5, 7, 9}, 0.8184876},
		{[]float64{1, 1, 1, 1, 2, 10}, 2.3853287},
		{[]float64{1, 2, 3}, 0},
		{[]float64{5, 5, 5, 5}, 0},
		{[]float64{1, 2}, 0},
	}
	for _, tc := range tests {
		if got := Skewness(tc.in); math.Abs(got-tc.want) > 1e-6 {
			t.Errorf("Skewness(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
