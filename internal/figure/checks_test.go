package figure

import (
	"reflect"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

func TestChecks(t *testing.T) {
	w := func(v float64) *float64 { return &v }
	target := api.ConfidenceTarget{Level: 95, HalfWidthPercent: 5}
	steady := func(ramp ...bool) []api.Sample {
		out := make([]api.Sample, len(ramp))
		for i, r := range ramp {
			out[i] = api.Sample{Index: i, SteadyState: &api.SteadyState{RampUp: r}}
		}
		return out
	}
	tests := []struct {
		name string
		r    api.Result
		want []string
	}{
		{"nothing to say", api.Result{Stability: &api.Stability{Figure: "throughputBitsPerSecond"}}, nil},
		{"no stability", api.Result{}, nil},
		{"met", api.Result{Confidence: &api.ConfidenceOutcome{ConfidenceTarget: target, Met: true, Samples: 4, FinalHalfWidthPercent: w(2.14)}},
			[]string{"CI ±2.1% ≤ ±5% in 4"}},
		{"missed at 99", api.Result{Confidence: &api.ConfidenceOutcome{ConfidenceTarget: api.ConfidenceTarget{Level: 99, HalfWidthPercent: 2.5},
			Samples: 30, FinalHalfWidthPercent: w(9.84),
			Reasons: []string{"trend (falling, Spearman ρ -0.75, p < 0.001)", "noisy path (CoV 73.1%: more than 1000 samples needed)"}}},
			[]string{"MISSED CI ±9.8% > ±2.5% at 99% after 30: trend, noisy path"}},
		{"gave up", api.Result{Confidence: &api.ConfidenceOutcome{ConfidenceTarget: target, Samples: 6, GaveUp: true, FinalHalfWidthPercent: w(60),
			Reasons: []string{"noisy path (CoV 58.0%: more than 1000 samples needed)"}}},
			[]string{"MISSED CI ±60.0% > ±5% after 6 (gave up): noisy path"}},
		{"no interval", api.Result{Confidence: &api.ConfidenceOutcome{ConfidenceTarget: target, Samples: 3, Reasons: []string{"failed samples (3 of 3)"}}},
			[]string{"MISSED no CI > ±5% after 3: failed samples"}},
		{"outliers, trend, ramp-up", api.Result{Samples: steady(true, false, false, true, false),
			Stability: &api.Stability{OutlierSamples: []int{2, 4}, Trend: &api.Trend{SpearmanRho: 0.9, PValue: 0.0374, Significant: true}, RampUpSamples: []int{0, 3}}},
			[]string{"outliers #3 #5", "trend ↑ ρ 0.90 p 0.037", "ramp-up in 2/5 samples"}},
		{"excluded, trend not significant", api.Result{Stability: &api.Stability{OutlierSamples: []int{0}, ExcludedSamples: []int{0},
			Trend: &api.Trend{SpearmanRho: -0.5, PValue: 0.2}}},
			[]string{"outliers #1 excluded"}},
		{"tiny p", api.Result{Stability: &api.Stability{Trend: &api.Trend{SpearmanRho: -0.99, PValue: 1e-7, Significant: true}}},
			[]string{"trend ↓ ρ -0.99 p < 0.001"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Checks(&tc.r); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Checks = %q, want %q", got, tc.want)
			}
		})
	}
}
