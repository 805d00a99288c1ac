package stats

import (
	"math"
	"strings"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/stats/hdr"
)

func f(v float64) *float64 { return &v }
func i64(v int64) *int64   { return &v }

// histOf records every value from lo to hi microseconds, one per µs.
func histOf(t *testing.T, loUS, hiUS int64) *api.LatencyHistogram {
	t.Helper()
	h := hdr.New()
	for us := loUS; us <= hiUS; us++ {
		h.Record(us * 1000)
	}
	return h.ToAPI()
}

func TestSummarizeCountsAndFigures(t *testing.T) {
	samples := []api.Sample{
		{Index: 0, Warmup: true, ThroughputBitsPerSecond: f(99e9)},
		{Index: 0, Warmup: true, Error: "warm-up failed"},
		{Index: 1, ThroughputBitsPerSecond: f(1e9), Retransmits: f(4),
			CPU: &api.SampleCPU{Client: &api.CPUUsage{ProcessPercent: f(50)}, Server: &api.CPUUsage{ProcessPercent: f(70)}}},
		{Index: 2, Error: "connect: connection refused"},
		{Index: 3, ThroughputBitsPerSecond: f(2e9), Retransmits: f(0),
			CPU: &api.SampleCPU{Client: &api.CPUUsage{ProcessPercent: f(60)}}},
		{Index: 4, ThroughputBitsPerSecond: f(3e9), Retransmits: f(2)},
	}
	s := Summarize(samples)
	if s.SamplesTotal != 4 || s.SamplesFailed != 1 {
		t.Errorf("total/failed = %d/%d, want 4/1", s.SamplesTotal, s.SamplesFailed)
	}
	tp := s.ThroughputBitsPerSecond
	if tp == nil || tp.N != 3 || tp.Mean != 2e9 || tp.Min != 1e9 || tp.Max != 3e9 || tp.Median != 2e9 {
		t.Fatalf("throughput = %+v, want n 3 mean 2e9 min 1e9 max 3e9", tp)
	}
	// s = 1e9, t(0.975,2) = 4.3026527 → half-width 4.3026527e9/√3 = 2.4841377e9.
	if math.Abs(tp.CI95High-2e9-2.4841377e9) > 1e3 {
		t.Errorf("ci95High = %v", tp.CI95High)
	}
	if s.Retransmits == nil || s.Retransmits.N != 3 || s.Retransmits.Mean != 2 {
		t.Errorf("retransmits = %+v", s.Retransmits)
	}
	if s.CPUPercent == nil || s.CPUPercent.Client == nil || s.CPUPercent.Client.N != 2 || s.CPUPercent.Client.Mean != 55 {
		t.Errorf("cpu client = %+v", s.CPUPercent)
	}
	if s.CPUPercent.Server == nil || s.CPUPercent.Server.N != 1 || s.CPUPercent.Server.Mean != 70 {
		t.Errorf("cpu server = %+v", s.CPUPercent.Server)
	}
	for name, st := range map[string]*api.Stat{"pps": s.PacketsPerSecond, "tps": s.TransactionsPerSecond,
		"cps": s.ConnectionsPerSecond, "loss": s.LossPercent, "jitter": s.JitterMicroseconds} {
		if st != nil {
			t.Errorf("%s = %+v, want nil (no sample carries it)", name, st)
		}
	}
	if s.LatencyMicroseconds != nil {
		t.Errorf("latency = %+v, want nil", s.LatencyMicroseconds)
	}
}

func TestSummarizeAllFailed(t *testing.T) {
	s := Summarize([]api.Sample{{Index: 1, Error: "timeout"}, {Index: 2, Error: "timeout"}})
	if s.SamplesTotal != 2 || s.SamplesFailed != 2 {
		t.Errorf("total/failed = %d/%d", s.SamplesTotal, s.SamplesFailed)
	}
	if s.ThroughputBitsPerSecond != nil || s.CPUPercent != nil || s.LatencyMicroseconds != nil {
		t.Errorf("failed samples produced figures: %+v", s)
	}
}

func TestSummarizeLatencyMergesHistograms(t *testing.T) {
	// Sample 1 holds 1..100 µs, sample 2 holds 101..200 µs, so all transactions are 1..200 µs:
	// mean 100.5, min 1, max 200, p50 = 100th value = 100, p90 = 180, p99 = 198, p99.9 = 200.
	// A per-sample view would give p50s of 50 and 150 — merging is what makes p50 = 100.
	samples := []api.Sample{
		{Index: 1, TransactionsPerSecond: f(1000), Histogram: histOf(t, 1, 100), Latency: &api.Latency{P50: f(50), Method: "tool"}},
		{Index: 2, TransactionsPerSecond: f(1000), Histogram: histOf(t, 101, 200)},
		{Index: 3, Error: "boom"},
	}
	l := Summarize(samples).LatencyMicroseconds
	if l == nil {
		t.Fatal("no latency")
	}
	if l.Method != LatencyHistogram {
		t.Errorf("method = %q", l.Method)
	}
	if l.Count == nil || *l.Count != 200 {
		t.Errorf("count = %v", l.Count)
	}
	within := func(name string, got *float64, want, rel float64) {
		t.Helper()
		if got == nil {
			t.Errorf("%s missing", name)
			return
		}
		if math.Abs(*got-want) > rel*want {
			t.Errorf("%s = %v, want %v ±%.1f%%", name, *got, want, rel*100)
		}
	}
	within("mean", l.Mean, 100.5, 1e-12)
	within("min", l.Min, 1, 1e-12)
	within("max", l.Max, 200, 1e-12)
	within("p50", l.P50, 100, 0.005)
	within("p90", l.P90, 180, 0.005)
	within("p99", l.P99, 198, 0.005)
	within("p999", l.P999, 200, 0.005)
	// Population stddev of 1..200 = sqrt((200²−1)/12) = 57.7343; buckets are midpoints → 1%.
	within("stddev", l.Stddev, 57.7343, 0.01)
}

func TestSummarizeLatencyToolFigures(t *testing.T) {
	one := []api.Sample{{Index: 1, Latency: &api.Latency{P50: f(20), P99: f(40), Min: f(10), Max: f(90),
		Method: "tool-rtt-from-one-way", Note: "doubled"}}}
	l := Summarize(one).LatencyMicroseconds
	if l == nil || l.Method != "tool-rtt-from-one-way" || *l.P99 != 40 || l.Note != "doubled" {
		t.Errorf("single sample latency not copied: %+v", l)
	}
	// A copy, not the sample's own pointer.
	if l == one[0].Latency {
		t.Error("summary aliases the sample's latency")
	}

	// Three samples, tool-printed only: medians per percentile, extremes for min/max,
	// mean pooled by count: (10·10 + 30·20 + 60·30)/100 = 25.
	several := []api.Sample{
		{Index: 1, Latency: &api.Latency{Count: i64(10), Mean: f(10), P50: f(9), P99: f(100), Min: f(5), Max: f(150), Method: "tool"}},
		{Index: 2, Latency: &api.Latency{Count: i64(30), Mean: f(20), P50: f(19), P99: f(300), Min: f(3), Max: f(400), Method: "tool"}},
		{Index: 3, Latency: &api.Latency{Count: i64(60), Mean: f(30), P50: f(29), P99: f(200), Min: f(4), Max: f(250), Method: "tool"}},
	}
	l = Summarize(several).LatencyMicroseconds
	if l == nil {
		t.Fatal("no latency")
	}
	if l.Method != LatencyPerSampleMedian {
		t.Errorf("method = %q", l.Method)
	}
	if *l.P50 != 19 || *l.P99 != 200 || *l.Min != 3 || *l.Max != 400 || *l.Count != 100 || *l.Mean != 25 {
		t.Errorf("per-sample-median = p50 %v p99 %v min %v max %v count %v mean %v", *l.P50, *l.P99, *l.Min, *l.Max, *l.Count, *l.Mean)
	}
	if l.P90 != nil {
		t.Errorf("p90 = %v, want nil (no sample has it)", *l.P90)
	}
	if !strings.Contains(l.Note, "median") || !strings.Contains(l.Note, "tool") {
		t.Errorf("note = %q", l.Note)
	}

	// Without counts the mean is the median of the means, never their average.
	noCount := []api.Sample{
		{Index: 1, Latency: &api.Latency{Mean: f(10), P99: f(1)}},
		{Index: 2, Latency: &api.Latency{Mean: f(11), P99: f(2)}},
		{Index: 3, Latency: &api.Latency{Mean: f(90), P99: f(3)}},
	}
	l = Summarize(noCount).LatencyMicroseconds
	if *l.Mean != 11 || l.Count != nil {
		t.Errorf("mean = %v count = %v, want 11 and none", *l.Mean, l.Count)
	}
}

func TestSummarizeLatencyPooledStddev(t *testing.T) {
	// Two samples {1,3} and {5,7}: counts 2, means 2 and 6, population sd 1 each.
	// All values {1,3,5,7}: mean 4, population variance (9+1+1+9)/4 = 5.
	s := []api.Sample{
		{Index: 1, Latency: &api.Latency{Count: i64(2), Mean: f(2), Stddev: f(1)}},
		{Index: 2, Latency: &api.Latency{Count: i64(2), Mean: f(6), Stddev: f(1)}},
	}
	l := Summarize(s).LatencyMicroseconds
	if l.Stddev == nil || math.Abs(*l.Stddev-math.Sqrt(5)) > 1e-12 {
		t.Errorf("stddev = %v, want √5", l.Stddev)
	}
}

func TestSummarizeLatencyFallsBack(t *testing.T) {
	// Not every sample has a histogram: the histograms are not merged, tool figures are used.
	mixed := []api.Sample{
		{Index: 1, Histogram: histOf(t, 1, 10), Latency: &api.Latency{P99: f(10), Method: "tool"}},
		{Index: 2, Latency: &api.Latency{P99: f(30), Method: "tool"}},
	}
	l := Summarize(mixed).LatencyMicroseconds
	if l.Method != LatencyPerSampleMedian || *l.P99 != 20 {
		t.Errorf("mixed: method %q p99 %v", l.Method, *l.P99)
	}
	// A corrupt histogram falls back to tool figures and says why.
	bad := histOf(t, 1, 10)
	bad.Scheme = "something-else"
	corrupt := []api.Sample{{Index: 1, Histogram: bad, Latency: &api.Latency{P99: f(7), Method: "tool"}}}
	l = Summarize(corrupt).LatencyMicroseconds
	if l == nil || *l.P99 != 7 || !strings.Contains(l.Note, "histograms not merged") {
		t.Errorf("corrupt: %+v", l)
	}
	// A corrupt histogram and nothing else gives no latency rather than a made-up one.
	if l := Summarize([]api.Sample{{Index: 1, Histogram: bad}}).LatencyMicroseconds; l != nil {
		t.Errorf("corrupt only: %+v", l)
	}
}

func TestSummarizeLatencyProvenance(t *testing.T) {
	m := func(p string) api.Sample {
		return api.Sample{Latency: &api.Latency{Mean: f(10), Method: "tool", Provenance: p}}
	}
	tests := []struct {
		name    string
		samples []api.Sample
		want    string
	}{
		{"one measured", []api.Sample{m(api.LatencyMeasured)}, api.LatencyMeasured},
		{"one derived", []api.Sample{m(api.LatencyDerived)}, api.LatencyDerived},
		{"all measured", []api.Sample{m(api.LatencyMeasured), m(api.LatencyMeasured)}, api.LatencyMeasured},
		{"a derived one taints the pool", []api.Sample{m(api.LatencyMeasured), m(api.LatencyDerived)}, api.LatencyDerived},
		{"unknown (old results)", []api.Sample{m(api.LatencyMeasured), m("")}, ""},
		{"histograms", []api.Sample{{Histogram: histOf(t, 1, 10)}, {Histogram: histOf(t, 2, 10)}}, api.LatencyMeasured},
	}
	for _, tt := range tests {
		for i := range tt.samples {
			tt.samples[i].Index = i + 1
		}
		l := Summarize(tt.samples).LatencyMicroseconds
		if l == nil || l.Provenance != tt.want {
			t.Errorf("%s: %+v, want provenance %q", tt.name, l, tt.want)
		}
	}
}
