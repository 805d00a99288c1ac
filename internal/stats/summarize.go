package stats

import (
	"fmt"
	"math"
	"sort"
	"strings"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/stats/hdr"
)

// Latency methods (api.Latency.Method) this package produces.
const (
	LatencyHistogram       = "histogram"
	LatencyPerSampleMedian = "per-sample-median"
)

// Successful reports whether a sample counts in a summary: measured (not warm-up), without
// error and not excluded (an outlier left out by params.excludeOutliers).
func Successful(s *api.Sample) bool { return !s.Warmup && s.Error == "" && !s.Excluded }

// Summarize summarises a case's samples. Warm-up samples are ignored entirely; SamplesTotal
// counts the measured samples, SamplesFailed those with an error and SamplesExcluded the
// successful ones marked excluded, which count in no figure. Every figure is a Stat
// over the successful samples that carry it (a figure no successful sample carries stays nil,
// never zero). Latency is summarised by SummarizeLatency.
func Summarize(samples []api.Sample) api.Summary {
	var sum api.Summary
	var ok []*api.Sample
	for i := range samples {
		s := &samples[i]
		if s.Warmup {
			continue
		}
		sum.SamplesTotal++
		if s.Error != "" {
			sum.SamplesFailed++
			continue
		}
		if s.Excluded {
			sum.SamplesExcluded++
			continue
		}
		ok = append(ok, s)
	}
	collect := func(get func(*api.Sample) *float64) *api.Stat {
		var xs []float64
		for _, s := range ok {
			if v := get(s); v != nil {
				xs = append(xs, *v)
			}
		}
		return Describe(xs)
	}
	sum.ThroughputBitsPerSecond = collect(func(s *api.Sample) *float64 { return s.ThroughputBitsPerSecond })
	sum.PacketsPerSecond = collect(func(s *api.Sample) *float64 { return s.PacketsPerSecond })
	sum.TransactionsPerSecond = collect(func(s *api.Sample) *float64 { return s.TransactionsPerSecond })
	sum.ConnectionsPerSecond = collect(func(s *api.Sample) *float64 { return s.ConnectionsPerSecond })
	sum.Retransmits = collect(func(s *api.Sample) *float64 { return s.Retransmits })
	sum.LossPercent = collect(func(s *api.Sample) *float64 { return s.LossPercent })
	sum.JitterMicroseconds = collect(func(s *api.Sample) *float64 { return s.JitterMicroseconds })
	sum.ProgrammingSeconds = collect(func(s *api.Sample) *float64 { return s.ProgrammingSeconds })
	client := collect(func(s *api.Sample) *float64 {
		if s.CPU == nil || s.CPU.Client == nil {
			return nil
		}
		return s.CPU.Client.ProcessPercent
	})
	server := collect(func(s *api.Sample) *float64 {
		if s.CPU == nil || s.CPU.Server == nil {
			return nil
		}
		return s.CPU.Server.ProcessPercent
	})
	if client != nil || server != nil {
		sum.CPUPercent = &api.CPUSummary{Client: client, Server: server}
	}
	sum.LatencyMicroseconds = SummarizeLatency(ok)
	return sum
}

// SummarizeLatency summarises the latency of successful samples:
//   - every sample has a histogram: the histograms are merged and every figure comes from all
//     transactions of all samples (Method "histogram");
//   - exactly one sample has tool-printed figures: they are copied, keeping their Method;
//   - several samples have only tool-printed figures: percentiles are never averaged; each
//     percentile is the median across samples, min is the smallest min, max the largest max,
//     and mean, count and stddev are pooled exactly when every sample gives count and mean
//     (Method "per-sample-median", with a Note saying so).
//
// It returns nil when no sample has latency data.
func SummarizeLatency(ok []*api.Sample) *api.Latency {
	if len(ok) == 0 {
		return nil
	}
	allHist := true
	for _, s := range ok {
		if s.Histogram == nil {
			allHist = false
			break
		}
	}
	var histErr error
	if allHist {
		l, err := mergeHistograms(ok)
		if err == nil {
			return l
		}
		histErr = err
	}
	var lats []*api.Latency
	for _, s := range ok {
		if s.Latency != nil {
			lats = append(lats, s.Latency)
		}
	}
	var out *api.Latency
	switch len(lats) {
	case 0:
		return nil
	case 1:
		c := *lats[0]
		out = &c
		if len(ok) > 1 {
			out.Note = joinNote(out.Note, fmt.Sprintf("latency from 1 of %d successful samples (the others carry none)", len(ok)))
		}
	default:
		out = perSampleMedian(lats)
		if len(lats) < len(ok) {
			out.Note = joinNote(out.Note, fmt.Sprintf("%d of %d successful samples carry latency", len(lats), len(ok)))
		}
	}
	if histErr != nil {
		out.Note = joinNote(out.Note, "histograms not merged: "+histErr.Error())
	}
	return out
}

func mergeHistograms(ok []*api.Sample) (*api.Latency, error) {
	merged := hdr.New()
	for _, s := range ok {
		h, err := hdr.FromAPI(s.Histogram)
		if err != nil {
			return nil, fmt.Errorf("sample %d: %w", s.Index, err)
		}
		merged.Merge(h)
	}
	if merged.Count() == 0 {
		return nil, fmt.Errorf("histograms hold no transactions")
	}
	l := merged.Latency()
	if len(ok) > 1 {
		l.Note = fmt.Sprintf("histograms of %d samples merged", len(ok))
	}
	return l, nil
}

// perSampleMedian summarises latencies without per-transaction data: each percentile the
// median of the samples', min and max the extremes, the mean pooled when it can be.
func perSampleMedian(lats []*api.Latency) *api.Latency {
	out := &api.Latency{Method: LatencyPerSampleMedian}
	out.P50 = medianOf(lats, func(l *api.Latency) *float64 { return l.P50 })
	out.P75 = medianOf(lats, func(l *api.Latency) *float64 { return l.P75 })
	out.P90 = medianOf(lats, func(l *api.Latency) *float64 { return l.P90 })
	out.P99 = medianOf(lats, func(l *api.Latency) *float64 { return l.P99 })
	out.P999 = medianOf(lats, func(l *api.Latency) *float64 { return l.P999 })
	out.P9999 = medianOf(lats, func(l *api.Latency) *float64 { return l.P9999 })
	out.Min = extremeOf(lats, func(l *api.Latency) *float64 { return l.Min }, true)
	out.Max = extremeOf(lats, func(l *api.Latency) *float64 { return l.Max }, false)
	pooled := poolMean(lats, out)
	if !pooled {
		out.Mean = medianOf(lats, func(l *api.Latency) *float64 { return l.Mean })
	}
	out.Provenance = pooledProvenance(lats)
	out.Note = perSampleNote(lats, pooled)
	return out
}

// medianOf is the median of one figure over the samples that have it, nil when none has.
func medianOf(lats []*api.Latency, get func(*api.Latency) *float64) *float64 {
	var xs []float64
	for _, l := range lats {
		if v := get(l); v != nil {
			xs = append(xs, *v)
		}
	}
	if len(xs) == 0 {
		return nil
	}
	m := Median(xs)
	return &m
}

// extremeOf is the smallest (less) or largest value of one figure over the samples that
// have it, nil when none has.
func extremeOf(lats []*api.Latency, get func(*api.Latency) *float64, less bool) *float64 {
	var best *float64
	for _, l := range lats {
		v := get(l)
		if v == nil {
			continue
		}
		if best == nil || (less && *v < *best) || (!less && *v > *best) {
			x := *v
			best = &x
		}
	}
	return best
}

// poolMean sets the mean, count and stddev of all transactions in out, exact when every
// sample gives its count and mean (and stddev for the pooled stddev), and reports whether it
// could.
func poolMean(lats []*api.Latency, out *api.Latency) bool {
	withSD := true
	for _, l := range lats {
		if l.Count == nil || l.Mean == nil || *l.Count <= 0 {
			return false
		}
		if l.Stddev == nil {
			withSD = false
		}
	}
	var n int64
	var sum float64
	for _, l := range lats {
		n += *l.Count
		sum += float64(*l.Count) * *l.Mean
	}
	mean := sum / float64(n)
	out.Count = &n
	out.Mean = &mean
	if withSD && n > 1 {
		// Stddevs are read as population stddevs (what histograms and tools report);
		// Σ n_i (s_i² + (m_i − M)²) / N is then the exact population variance of all values.
		var ss float64
		for _, l := range lats {
			d := *l.Mean - mean
			ss += float64(*l.Count) * (*l.Stddev**l.Stddev + d*d)
		}
		sd := math.Sqrt(ss / float64(n))
		out.Stddev = &sd
	}
	return true
}

// perSampleNote says where the figures came from, including the samples' own method (e.g.
// one-way doubled).
func perSampleNote(lats []*api.Latency, pooled bool) string {
	methods := map[string]bool{}
	for _, l := range lats {
		if l.Method != "" {
			methods[l.Method] = true
		}
	}
	var ms []string
	for m := range methods {
		ms = append(ms, m)
	}
	sort.Strings(ms)
	note := fmt.Sprintf("no per-transaction data to merge: each percentile is the median of %d samples' own percentiles, min/max the extremes", len(lats))
	if pooled {
		note += ", mean pooled by transaction count"
	} else {
		note += ", mean the median of the samples' means"
	}
	if len(ms) > 0 {
		note += "; samples' method: " + strings.Join(ms, ", ")
	}
	return note
}

// pooledProvenance is the provenance of figures pooled from several samples: derived when
// any sample's is (a derived figure taints the pool), measured when every sample's is, else
// unknown (results written before cnperf recorded it).
func pooledProvenance(lats []*api.Latency) string {
	measured := true
	for _, l := range lats {
		switch l.Provenance {
		case api.LatencyDerived:
			return api.LatencyDerived
		case api.LatencyMeasured:
		default:
			measured = false
		}
	}
	if measured {
		return api.LatencyMeasured
	}
	return ""
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// SampleP99 is one sample's 99th-percentile latency in microseconds: the tool's own figure,
// else the quantile of the sample's histogram; false when it has neither.
func SampleP99(s *api.Sample) (float64, bool) {
	if s.Latency != nil && s.Latency.P99 != nil {
		return *s.Latency.P99, true
	}
	if s.Histogram == nil {
		return 0, false
	}
	h, err := hdr.FromAPI(s.Histogram)
	if err != nil || h.Count() == 0 {
		return 0, false
	}
	return float64(h.Quantile(0.99)) / 1000, true
}
