package runfile

import (
	"strings"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/stats"
)

// TestCheckResultEveryStat: the reader distrusts every Stat of a summary, programmingSeconds
// included (it was left out of the checks before they read the figure table).
func TestCheckResultEveryStat(t *testing.T) {
	programming := func(xs ...float64) []api.Sample {
		var out []api.Sample
		for i, x := range xs {
			out = append(out, api.Sample{Index: i, ProgrammingSeconds: new(x)})
		}
		return out
	}
	throughput := func(xs ...float64) []api.Sample {
		var out []api.Sample
		for i, x := range xs {
			out = append(out, api.Sample{Index: i, ThroughputBitsPerSecond: new(x)})
		}
		return out
	}
	tests := []struct {
		name              string
		samples           []api.Sample
		tamper            func(*api.Summary)
		keepSamples       bool
		wantWarn, wantErr string
	}{
		{name: "programming summary agrees", samples: programming(1, 2, 3), tamper: func(*api.Summary) {}, keepSamples: true},
		{name: "programming mean contradicts the samples", samples: programming(1, 2, 3), keepSamples: true,
			tamper:   func(s *api.Summary) { s.ProgrammingSeconds.Mean = 9 },
			wantWarn: "programmingSeconds: summary says mean 9, the samples 2"},
		{name: "throughput mean contradicts the samples", samples: throughput(1, 2, 3), keepSamples: true,
			tamper:   func(s *api.Summary) { s.ThroughputBitsPerSecond.Mean = 9 },
			wantWarn: "throughputBitsPerSecond: summary says mean 9, the samples 2"},
		{name: "programming n above the samples, summary only", samples: programming(1, 2),
			tamper:  func(s *api.Summary) { s.ProgrammingSeconds.N = 5 },
			wantErr: "summary.programmingSeconds: n 5 is more than the 2 successful samples"},
		{name: "programming min above max, summary only", samples: programming(1, 2),
			tamper:  func(s *api.Summary) { s.ProgrammingSeconds.Min = 5 },
			wantErr: "summary.programmingSeconds: mean 1.5 and median 1.5 are not between min 5"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := api.Result{Profile: api.TCPStream, Driver: "native", Path: api.PathLoopback, Summary: stats.Summarize(tc.samples)}
			tc.tamper(&r.Summary)
			if tc.keepSamples {
				r.Samples = tc.samples
			}
			warn, err := checkResult(&r)
			if (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("err = %v, want %q", err, tc.wantErr)
			}
			if (warn == "") != (tc.wantWarn == "") || !strings.Contains(warn, tc.wantWarn) {
				t.Errorf("warning = %q, want %q", warn, tc.wantWarn)
			}
		})
	}
}
