package netperf

import (
	"errors"
	"fmt"
	"math"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver/toolkit"
)

// Aggregate combines the samples of parallel flows (separate netperf processes started
// together) into one sample that keeps the flows in Sample.Flows:
//
//   - throughput, transaction, connection and packet rates, bytes, packets and retransmits
//     add up;
//   - UDP loss is recomputed from the summed packet counts;
//   - latency keeps only what is mathematically valid across flows: the smallest minimum, the
//     largest maximum, and the mean and standard deviation pooled with each flow weighted by
//     its transactions (rate × elapsed time). Percentiles of different flows cannot be
//     combined without their histograms, which netperf does not print: they stay per flow
//     in Flows and a note says so;
//   - system-wide CPU utilisation is the mean over the flows (every netperf measures the same
//     machine); service demand is recomputed from it for the summed work when every flow
//     reported it, as the netperf manual says it must be for concurrent tests.
func Aggregate(p api.Profile, flows []api.Sample) (api.Sample, error) {
	if len(flows) == 0 {
		return api.Sample{}, errors.New("netperf: no flows to aggregate")
	}
	var s api.Sample
	s.Flows = flows
	sumF := func(get func(*api.Sample) *float64) *float64 {
		total, n := 0.0, 0
		for i := range flows {
			if v := get(&flows[i]); v != nil {
				total += *v
				n++
			}
		}
		if n != len(flows) {
			return nil // a sum over some flows would be a wrong figure
		}
		return toolkit.F(total)
	}
	sumI := func(get func(*api.Sample) *int64) *int64 {
		var total int64
		for i := range flows {
			v := get(&flows[i])
			if v == nil {
				return nil
			}
			total += *v
		}
		return toolkit.I(total)
	}
	s.ThroughputBitsPerSecond = sumF(func(x *api.Sample) *float64 { return x.ThroughputBitsPerSecond })
	s.TransactionsPerSecond = sumF(func(x *api.Sample) *float64 { return x.TransactionsPerSecond })
	s.ConnectionsPerSecond = sumF(func(x *api.Sample) *float64 { return x.ConnectionsPerSecond })
	s.PacketsPerSecond = sumF(func(x *api.Sample) *float64 { return x.PacketsPerSecond })
	s.Retransmits = sumF(func(x *api.Sample) *float64 { return x.Retransmits })
	s.BytesSent = sumI(func(x *api.Sample) *int64 { return x.BytesSent })
	s.BytesReceived = sumI(func(x *api.Sample) *int64 { return x.BytesReceived })
	s.PacketsSent = sumI(func(x *api.Sample) *int64 { return x.PacketsSent })
	s.PacketsReceived = sumI(func(x *api.Sample) *int64 { return x.PacketsReceived })
	s.PacketsLost = sumI(func(x *api.Sample) *int64 { return x.PacketsLost })
	if s.PacketsSent != nil && s.PacketsLost != nil && *s.PacketsSent > 0 {
		s.LossPercent = toolkit.F(100 * float64(*s.PacketsLost) / float64(*s.PacketsSent))
	}
	for i := range flows {
		if flows[i].DurationSeconds > s.DurationSeconds {
			s.DurationSeconds = flows[i].DurationSeconds
		}
	}
	if p.IsRR() {
		lat, err := poolLatency(flows)
		if err != nil {
			return api.Sample{}, err
		}
		s.Latency = lat
	}
	s.CPU = meanCPU(flows, s)
	toolkit.AddNote(&s, fmt.Sprintf("%d flows: separate netperf processes started together, each on its own data port; rates are their sums", len(flows)))
	return s, nil
}

// poolLatency combines per-flow latency summaries. Weights are the flows' transaction counts,
// estimated as rate × elapsed time (netperf prints both, not the count).
func poolLatency(flows []api.Sample) (*api.Latency, error) {
	out := &api.Latency{Method: "tool", Provenance: api.LatencyMeasured}
	var wSum, meanSum, sqSum float64
	poolable := true
	any := false
	for i := range flows {
		l := flows[i].Latency
		if l == nil {
			poolable = false
			continue
		}
		any = true
		if l.Min != nil && (out.Min == nil || *l.Min < *out.Min) {
			out.Min = toolkit.F(*l.Min)
		}
		if l.Max != nil && (out.Max == nil || *l.Max > *out.Max) {
			out.Max = toolkit.F(*l.Max)
		}
		rate := flows[i].TransactionsPerSecond
		if l.Mean == nil || rate == nil || flows[i].DurationSeconds <= 0 {
			poolable = false
			continue
		}
		w := *rate * flows[i].DurationSeconds
		wSum += w
		meanSum += w * *l.Mean
		if l.Stddev != nil {
			sqSum += w * (*l.Stddev**l.Stddev + *l.Mean**l.Mean)
		} else {
			sqSum = math.NaN()
		}
	}
	if !any {
		return nil, nil
	}
	if poolable && wSum > 0 {
		mean := meanSum / wSum
		out.Mean = toolkit.F(mean)
		if !math.IsNaN(sqSum) {
			out.Stddev = toolkit.F(math.Sqrt(math.Max(sqSum/wSum-mean*mean, 0)))
		}
	}
	out.Note = fmt.Sprintf("%d parallel flows: min is the smallest flow minimum, max the largest flow maximum, "+
		"mean and stddev pooled over the flows weighted by transactions; percentiles cannot be combined "+
		"without netperf's histograms, so they are per flow only (see flows[])", len(flows))
	return out, nil
}

func meanCPU(flows []api.Sample, total api.Sample) *api.SampleCPU {
	side := func(get func(*api.SampleCPU) *api.CPUUsage) *api.CPUUsage {
		sum, n := 0.0, 0
		for i := range flows {
			if flows[i].CPU == nil {
				return nil
			}
			u := get(flows[i].CPU)
			if u == nil || u.HostPercent == nil {
				return nil
			}
			sum += *u.HostPercent
			n++
		}
		if n == 0 {
			return nil
		}
		mean := sum / float64(n)
		c := &api.CPUUsage{HostPercent: toolkit.F(mean)}
		// netperf's service demand (netlib.c calc_service_demand_internal) is
		// util × 1e4 × CPUs ÷ (work per second). The CPU count is recovered from the first
		// flow's own figures (rounded to a whole number), then applied to the summed work.
		first := get(flows[0].CPU)
		switch {
		case first.ServiceDemandMicrosecondsPerKB != nil && flows[0].ThroughputBitsPerSecond != nil && total.ThroughputBitsPerSecond != nil && *first.HostPercent > 0:
			kbps := *flows[0].ThroughputBitsPerSecond / 8 / 1024
			cpus := math.Round(*first.ServiceDemandMicrosecondsPerKB * kbps / (*first.HostPercent * 1e4))
			if cpus < 1 {
				break
			}
			c.ServiceDemandMicrosecondsPerKB = toolkit.F(mean * 1e4 * cpus / (*total.ThroughputBitsPerSecond / 8 / 1024))
		case first.ServiceDemandMicrosecondsPerTransaction != nil && flows[0].TransactionsPerSecond != nil && total.TransactionsPerSecond != nil && *first.HostPercent > 0:
			cpus := math.Round(*first.ServiceDemandMicrosecondsPerTransaction * *flows[0].TransactionsPerSecond / (*first.HostPercent * 1e4))
			if cpus < 1 {
				break
			}
			c.ServiceDemandMicrosecondsPerTransaction = toolkit.F(mean * 1e4 * cpus / *total.TransactionsPerSecond)
		}
		return c
	}
	client := side(func(c *api.SampleCPU) *api.CPUUsage { return c.Client })
	server := side(func(c *api.SampleCPU) *api.CPUUsage { return c.Server })
	if client == nil && server == nil {
		return nil
	}
	return &api.SampleCPU{Client: client, Server: server}
}
