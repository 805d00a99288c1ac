package runner

import (
	"slices"
	"strings"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/stats"
)

// rateSamples makes successful TCP_STREAM samples with the given throughputs (Gbit/s) and
// failed ones where the value is 0.
func rateSamples(gbps ...float64) []api.Sample {
	out := make([]api.Sample, len(gbps))
	for i, g := range gbps {
		out[i].Index = i
		if g == 0 {
			out[i].Error = "connection refused"
			continue
		}
		v := g * 1e9
		out[i].ThroughputBitsPerSecond = &v
	}
	return out
}

func TestTargetMetStoppingRule(t *testing.T) {
	conf := &api.ConfidenceTarget{Level: 95, HalfWidthPercent: 5}
	tests := []struct {
		name    string
		samples []api.Sample
		minN    int
		exclude bool
		want    bool
	}{
		// mean 10, s 0.2, t(0.975,2)·0.2/√3 = 0.497 → 4.97 %
		{"three quiet samples", rateSamples(10, 10.2, 9.8), 3, false, true},
		{"quiet but below the minimum", rateSamples(10, 10.2, 9.8), 4, false, false},
		{"noisy", rateSamples(10, 12, 8), 3, false, false},
		// a failed sample counts towards the minimum but not towards the interval: two values
		// 10 and 10.1 give 12.706·0.0707/√2 = 0.635 → 6.3 %
		{"failed sample", rateSamples(10, 0, 10.1), 3, false, false},
		// 4 quiet values and one far outlier: 95 % CI ±55 % with it; excluded, ±0.9 %
		{"outlier kept", rateSamples(10, 10.05, 9.95, 10, 20), 3, false, false},
		{"outlier excluded", rateSamples(10, 10.05, 9.95, 10, 20), 3, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := api.Params{Samples: tc.minN, MaxSamples: 30, Confidence: conf, ExcludeOutliers: tc.exclude}
			markOutliers(tc.samples, api.TCPStream, tc.exclude)
			if got := targetMet(tc.samples, &p, api.TCPStream); got != tc.want {
				t.Errorf("targetMet = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestAssess(t *testing.T) {
	conf := &api.ConfidenceTarget{Level: 95, HalfWidthPercent: 5}
	tests := []struct {
		name         string
		samples      []api.Sample
		exclude      bool
		met          bool
		outliers     []int
		excluded     []int
		trend        bool
		reasonPrefix []string
	}{
		{"met", rateSamples(10, 10.2, 9.8), false, true, nil, nil, false, nil},
		{"noisy", rateSamples(10, 12, 8, 11, 9), false, false, nil, nil, false, []string{ReasonNoisy}},
		// strictly falling over 6 samples: ρ −1, exact p 2/720
		{"trend", rateSamples(12, 11.5, 11, 10.5, 10, 9.5), false, false, nil, nil, true, []string{ReasonTrend, ReasonNoisy}},
		{"outlier", rateSamples(10, 10.05, 9.95, 10, 20), false, false, []int{4}, nil, false, []string{ReasonOutliers}},
		{"outlier excluded", rateSamples(10, 10.05, 9.95, 10, 20), true, true, []int{4}, []int{4}, false, nil},
		{"failed", rateSamples(10, 0, 12, 0, 8), false, false, nil, nil, false, []string{ReasonFailed, ReasonNoisy}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := api.Result{Profile: api.TCPStream, Samples: tc.samples,
				Params: api.Params{Samples: 3, MaxSamples: 30, Confidence: conf, ExcludeOutliers: tc.exclude}}
			markOutliers(res.Samples, res.Profile, tc.exclude)
			res.Summary = stats.Summarize(res.Samples)
			assess(&res)
			c, st := res.Confidence, res.Stability
			if c == nil || st == nil {
				t.Fatalf("confidence %v stability %v", c, st)
			}
			if c.Met != tc.met || c.Samples != len(tc.samples) || c.Figure != "throughputBitsPerSecond" {
				t.Errorf("confidence = %+v, want met %v after %d samples", c, tc.met, len(tc.samples))
			}
			if c.Met && (c.FinalHalfWidthPercent == nil || *c.FinalHalfWidthPercent > 5) {
				t.Errorf("met with half-width %v", c.FinalHalfWidthPercent)
			}
			if !slices.Equal(st.OutlierSamples, tc.outliers) || !slices.Equal(st.ExcludedSamples, tc.excluded) {
				t.Errorf("outliers %v excluded %v, want %v %v", st.OutlierSamples, st.ExcludedSamples, tc.outliers, tc.excluded)
			}
			if got := st.Trend != nil && st.Trend.Significant; got != tc.trend {
				t.Errorf("trend %+v, want significant %v", st.Trend, tc.trend)
			}
			if len(c.Reasons) != len(tc.reasonPrefix) {
				t.Fatalf("reasons %q, want %q", c.Reasons, tc.reasonPrefix)
			}
			for i, p := range tc.reasonPrefix {
				if !strings.HasPrefix(c.Reasons[i], p) {
					t.Errorf("reason %d %q, want %q…", i, c.Reasons[i], p)
				}
			}
			if tc.exclude && res.Summary.SamplesExcluded != len(tc.excluded) {
				t.Errorf("summary excludes %d samples, want %d", res.Summary.SamplesExcluded, len(tc.excluded))
			}
		})
	}
}

func TestAssessWithoutTarget(t *testing.T) {
	res := api.Result{Profile: api.TCPStream, Samples: rateSamples(10, 10.2, 9.8), Params: api.Params{Samples: 3}}
	res.Summary = stats.Summarize(res.Samples)
	assess(&res)
	if res.Confidence != nil || res.Stability == nil || res.Stability.Figure != "throughputBitsPerSecond" {
		t.Errorf("confidence %+v stability %+v: want no outcome, stability on the throughput", res.Confidence, res.Stability)
	}
}

func TestSetSteadyState(t *testing.T) {
	iv := func(tps ...float64) []api.SampleInterval {
		out := make([]api.SampleInterval, len(tps))
		for i := range tps {
			v := tps[i]
			out[i] = api.SampleInterval{StartSeconds: float64(i) * 0.2, DurationSeconds: 0.2, TransactionsPerSecond: &v}
		}
		return out
	}
	tests := []struct {
		name      string
		intervals []api.SampleInterval
		set       bool
		rampUp    bool
	}{
		{"none", nil, false, false},
		{"too few", iv(1, 2, 3), false, false},
		{"slow first", iv(5000, 10000, 10100, 9900, 10000, 10050), true, true},
		{"steady", iv(10000, 10000, 10100, 9900, 10000, 10050), true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := api.Sample{Intervals: tc.intervals}
			setSteadyState(&s)
			if (s.SteadyState != nil) != tc.set || (s.SteadyState != nil && s.SteadyState.RampUp != tc.rampUp) {
				t.Errorf("steady state %+v, want set %v ramp-up %v", s.SteadyState, tc.set, tc.rampUp)
			}
		})
	}
}

func TestHopeless(t *testing.T) {
	tests := []struct {
		samples []api.Sample
		minN    int
		want    bool
	}{
		{rateSamples(0, 0), 3, false},
		{rateSamples(0, 0, 0), 3, true},
		{rateSamples(0, 10, 0), 3, false},
	}
	for i, tc := range tests {
		if got := hopeless(tc.samples, tc.minN); got != tc.want {
			t.Errorf("%d: hopeless = %v, want %v", i, got, tc.want)
		}
	}
}
