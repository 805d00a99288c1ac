package integration

import (
	"bytes"
	"strings"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	fig "github.com/cnperf/cnperf/internal/figure"
	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/runner"
	"github.com/cnperf/cnperf/internal/stats"
)

// TestConfidenceTargetLoopback runs the native generator on loopback with a confidence target
// and checks that every case stopped at the first sample that met it (or ran to the maximum
// and says why not), and that the result, the samples and the table record it.
func TestConfidenceTargetLoopback(t *testing.T) {
	r, stderr, err := cnperf(t, "--driver", "native", "--profile", "TCP_STREAM,TCP_RR", "--duration", "0.6s",
		"--confidence", "95,5", "--samples", "3,30")
	ok(t, r, stderr, err)
	for _, res := range r.Results {
		c := res.Confidence
		if c == nil || c.Level != 95 || c.HalfWidthPercent != 5 {
			t.Fatalf("%s: confidence %+v", res.Profile, c)
		}
		f, has := fig.Main(&res)
		if !has || c.Figure != f.Key || res.Stability == nil || res.Stability.Figure != f.Key {
			t.Fatalf("%s: figure %q, stability %+v, want %q", res.Profile, c.Figure, res.Stability, f.Key)
		}
		n := len(res.Samples)
		if c.Samples != n || n < 3 || n > 30 || res.Params.Samples != 3 || res.Params.MaxSamples != 30 {
			t.Fatalf("%s: %d samples, outcome says %d, params %d..%d", res.Profile, n, c.Samples, res.Params.Samples, res.Params.MaxSamples)
		}
		var xs []float64
		for i, s := range res.Samples {
			v, _ := f.Sample(&res.Samples[i])
			xs = append(xs, v)
			if len(s.Intervals) != 6 || s.SteadyState == nil {
				t.Errorf("%s sample %d: %d intervals, steady state %+v; want 6 and a comparison", res.Profile, i, len(s.Intervals), s.SteadyState)
			}
			// The rule is checked after every sample from the third: no earlier one may have met it.
			if i+1 >= 3 && i+1 < n {
				if w, met := stats.TargetMet(xs, 3, 0.95, 5); met {
					t.Errorf("%s: the target was met after %d samples (±%.2f%%) but the case went on to %d", res.Profile, i+1, w, n)
				}
			}
		}
		w, met := stats.TargetMet(xs, 3, 0.95, 5)
		if met != c.Met || c.FinalHalfWidthPercent == nil || abs(*c.FinalHalfWidthPercent-w) > 1e-9 {
			t.Errorf("%s: outcome %+v, recomputed ±%.3f%% met %v", res.Profile, c, w, met)
		}
		if !c.Met && (!(n == 30 || c.GaveUp && n >= runner.DefaultFutility.MinSamples) || len(c.Reasons) == 0) {
			t.Errorf("%s: target missed after %d samples (gave up %v) with reasons %q; want 30 samples, or giving up after %d or more, and a reason",
				res.Profile, n, c.GaveUp, c.Reasons, runner.DefaultFutility.MinSamples)
		}
		t.Logf("%s: %d samples, ±%.2f%%, met %v %q", res.Profile, n, w, c.Met, c.Reasons)
	}
	var table bytes.Buffer
	enc, _ := report.Lookup("table")
	if err := enc.Encode(&table, []*api.Run{r}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "CHECKS") || !strings.Contains(table.String(), "CI ±") {
		t.Errorf("the table does not show the confidence outcome:\n%s", table.String())
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
