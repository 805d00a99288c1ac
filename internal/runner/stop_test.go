package runner

import (
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

// TestStop: the stopping rule of a confidence target on hand-made throughput samples (the rule
// is arithmetic on the samples' figures; the runner tests drive it with replayed tool output).
func TestStop(t *testing.T) {
	gbit := func(vs ...float64) []api.Sample {
		var out []api.Sample
		for i, v := range vs {
			v := v * 1e9
			out = append(out, api.Sample{Index: i, ThroughputBitsPerSecond: &v})
		}
		return out
	}
	failed := func(n int) []api.Sample {
		out := make([]api.Sample, n)
		for i := range out {
			out[i] = api.Sample{Index: i, Error: "connection refused"}
		}
		return out
	}
	params := func(minN int) *api.Params {
		return &api.Params{Samples: minN, MaxSamples: 30, Confidence: &api.ConfidenceTarget{Level: 95, HalfWidthPercent: 5}}
	}
	noisy := []float64{10, 2, 9, 3, 10, 2}
	tests := []struct {
		name    string
		samples []api.Sample
		minN    int
		limit   int
		rule    Futility
		want    StopReason
	}{
		{"below the minimum", gbit(10, 10), 3, 30, DefaultFutility, Continue},
		{"quiet: met at the minimum", gbit(10, 10.01, 9.99), 3, 30, DefaultFutility, TargetMet},
		{"noisy, 3 samples: too early to give up", gbit(noisy[:3]...), 3, 30, DefaultFutility, Continue},
		{"noisy, 4 samples: gives up (default rule)", gbit(noisy[:4]...), 3, 30, DefaultFutility, GaveUp},
		{"noisy, 4 samples: the former rule waits for 6", gbit(noisy[:4]...), 3, 30, Futility{6, 3}, Continue},
		{"noisy, 6 samples: the former rule gives up", gbit(noisy...), 3, 30, Futility{6, 3}, GaveUp},
		{"noisy at the maximum: at limit, not given up", gbit(noisy[:4]...), 3, 4, DefaultFutility, AtLimit},
		{"a minimum of 5 delays giving up", gbit(noisy[:4]...), 5, 30, DefaultFutility, Continue},
		// spread 10 %: needs some 17 samples, fewer than 30: keeps going
		{"moderate spread: keeps going", gbit(10, 11, 9, 10), 3, 30, DefaultFutility, Continue},
		{"every sample failed", failed(3), 3, 30, DefaultFutility, AllFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Stop(tt.samples, params(tt.minN), api.TCPStream, tt.limit, tt.rule); got != tt.want {
				t.Errorf("Stop = %d, want %d", got, tt.want)
			}
		})
	}
}
