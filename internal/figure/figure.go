// Package figure names the quantities a result carries — throughput, packet rate, latency
// percentiles, CPU — once, for every encoder and for compare: how to read each from a summary
// and from a raw sample, which direction is better, and how to print it for people.
package figure

import (
	"math"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/stats/hdr"
)

// Figure is one measured quantity of a result.
type Figure struct {
	// Key is the JSON name in the summary, e.g. "throughputBitsPerSecond", "latencyMicroseconds.p99".
	Key string
	// Label is a short human name, e.g. "throughput", "latency p99".
	Label string
	Unit  Unit
	// HigherIsBetter is true for rates, false for latency, loss, retransmits and CPU.
	HigherIsBetter bool
	// Primary marks a case's headline figures (rates and latency percentiles), the ones a
	// regression gate looks at; secondary figures (CPU, retransmits, loss, jitter) are shown
	// but too noisy or too small to gate on by default.
	Primary bool
	// Stat reads the figure's summary statistic; nil when the summary lacks it. Latency
	// figures have no Stat (they come from merged transactions, not from sample means).
	Stat func(*api.Summary) *api.Stat
	// Value reads the figure's summary value (the Stat's mean, or the latency figure).
	Value func(*api.Summary) (float64, bool)
	// Sample reads the figure from one raw sample (for significance tests); latency
	// percentiles come from the sample's histogram when it has one.
	Sample func(*api.Sample) (float64, bool)
}

func statFig(key, label string, u Unit, higher, primary bool, st func(*api.Summary) *api.Stat, smp func(*api.Sample) *float64) Figure {
	return Figure{
		Key: key, Label: label, Unit: u, HigherIsBetter: higher, Primary: primary,
		Stat: st,
		Value: func(s *api.Summary) (float64, bool) {
			if x := st(s); x != nil {
				return x.Mean, true
			}
			return 0, false
		},
		Sample: func(s *api.Sample) (float64, bool) {
			if v := smp(s); v != nil {
				return *v, true
			}
			return 0, false
		},
	}
}

// cpuFig is the process CPU of one side (role "client" or "server"); side and sample pick
// that side from the summary's CPU and from a sample's.
func cpuFig(role string, side func(*api.CPUSummary) *api.Stat, sample func(*api.SampleCPU) *api.CPUUsage) Figure {
	return statFig("cpuPercent."+role, "CPU "+role, Percent, false, false,
		func(s *api.Summary) *api.Stat {
			if s.CPUPercent == nil {
				return nil
			}
			return side(s.CPUPercent)
		},
		func(s *api.Sample) *float64 {
			if s.CPU == nil {
				return nil
			}
			if u := sample(s.CPU); u != nil {
				return u.ProcessPercent
			}
			return nil
		})
}

func latFig(key, label string, primary bool, get func(*api.Latency) *float64, quantile float64) Figure {
	return Figure{
		Key: "latencyMicroseconds." + key, Label: label, Unit: Microseconds, Primary: primary,
		Value: func(s *api.Summary) (float64, bool) {
			if s.LatencyMicroseconds == nil {
				return 0, false
			}
			if v := get(s.LatencyMicroseconds); v != nil {
				return *v, true
			}
			return 0, false
		},
		Sample: func(s *api.Sample) (float64, bool) {
			// The sample's own histogram is exact; tool-printed figures are the fallback.
			if s.Histogram != nil {
				if h, err := hdr.FromAPI(s.Histogram); err == nil && h.Count() > 0 {
					switch {
					case quantile >= 0:
						return float64(h.Quantile(quantile)) / 1000, true
					case key == "mean":
						return h.Mean() / 1000, true
					}
				}
			}
			if s.Latency != nil {
				if v := get(s.Latency); v != nil {
					return *v, true
				}
			}
			return 0, false
		},
	}
}

// The figures, in the order reports show them.
var (
	Throughput = statFig("throughputBitsPerSecond", "throughput", BitsPerSecond, true, true,
		func(s *api.Summary) *api.Stat { return s.ThroughputBitsPerSecond },
		func(s *api.Sample) *float64 { return s.ThroughputBitsPerSecond })
	PacketRate = statFig("packetsPerSecond", "packet rate", PacketsPerSecond, true, true,
		func(s *api.Summary) *api.Stat { return s.PacketsPerSecond },
		func(s *api.Sample) *float64 { return s.PacketsPerSecond })
	TransactionRate = statFig("transactionsPerSecond", "transactions", TransactionsPerSecond, true, true,
		func(s *api.Summary) *api.Stat { return s.TransactionsPerSecond },
		func(s *api.Sample) *float64 { return s.TransactionsPerSecond })
	ConnectionRate = statFig("connectionsPerSecond", "connections", ConnectionsPerSecond, true, true,
		func(s *api.Summary) *api.Stat { return s.ConnectionsPerSecond },
		func(s *api.Sample) *float64 { return s.ConnectionsPerSecond })
	LatencyMean = latFig("mean", "latency mean", false, func(l *api.Latency) *float64 { return l.Mean }, -1)
	LatencyP50  = latFig("p50", "latency p50", true, func(l *api.Latency) *float64 { return l.P50 }, 0.50)
	LatencyP90  = latFig("p90", "latency p90", false, func(l *api.Latency) *float64 { return l.P90 }, 0.90)
	LatencyP99  = latFig("p99", "latency p99", true, func(l *api.Latency) *float64 { return l.P99 }, 0.99)
	LatencyP999 = latFig("p999", "latency p99.9", false, func(l *api.Latency) *float64 { return l.P999 }, 0.999)
	// Programming is a programming profile's figure: how long the network took to obey a
	// change (cnperf programming), a Stat over the changes (mean, median, interval).
	Programming = statFig("programmingSeconds", "programming", Seconds, false, true,
		func(s *api.Summary) *api.Stat { return s.ProgrammingSeconds },
		func(s *api.Sample) *float64 { return s.ProgrammingSeconds })
	Retransmits = statFig("retransmits", "retransmits", Count, false, false,
		func(s *api.Summary) *api.Stat { return s.Retransmits },
		func(s *api.Sample) *float64 { return s.Retransmits })
	Loss = statFig("lossPercent", "loss", Percent, false, false,
		func(s *api.Summary) *api.Stat { return s.LossPercent },
		func(s *api.Sample) *float64 { return s.LossPercent })
	Jitter = statFig("jitterMicroseconds", "jitter", Microseconds, false, false,
		func(s *api.Summary) *api.Stat { return s.JitterMicroseconds },
		func(s *api.Sample) *float64 { return s.JitterMicroseconds })
	CPUClient = cpuFig("client",
		func(c *api.CPUSummary) *api.Stat { return c.Client }, func(c *api.SampleCPU) *api.CPUUsage { return c.Client })
	CPUServer = cpuFig("server",
		func(c *api.CPUSummary) *api.Stat { return c.Server }, func(c *api.SampleCPU) *api.CPUUsage { return c.Server })
)

// All lists every figure in report order.
var All = []Figure{Throughput, PacketRate, TransactionRate, ConnectionRate,
	LatencyMean, LatencyP50, LatencyP90, LatencyP99, LatencyP999, Programming,
	Retransmits, Loss, Jitter, CPUClient, CPUServer}

// Main is a result's headline figure: throughput for streams, connections/s for TCP_CRR,
// transactions/s for RR, the programming time for a programming profile; failing that, the first rate the summary carries. ok is false when
// the summary carries no rate at all (a failed case).
func Main(r *api.Result) (Figure, bool) {
	order := mainOrder(r.Profile)
	for _, f := range order {
		if f.Stat(&r.Summary) != nil {
			return f, true
		}
	}
	return order[0], false
}

// MainFor is profile p's headline figure, the one Main picks when the summary carries it:
// for what is said of every result of a profile at once (a chart per profile).
func MainFor(p api.Profile) Figure { return mainOrder(p)[0] }

// mainOrder is the order in which Main looks for a profile's headline figure.
func mainOrder(p api.Profile) []Figure {
	switch {
	case p.IsProgramming():
		return []Figure{Programming}
	case p == api.TCPCRR:
		return []Figure{ConnectionRate, TransactionRate, Throughput, PacketRate}
	case p.IsRR():
		return []Figure{TransactionRate, ConnectionRate, Throughput, PacketRate}
	default:
		return []Figure{Throughput, PacketRate, TransactionRate, ConnectionRate}
	}
}

// Present returns the figures the summary carries, in report order.
func Present(s *api.Summary) []Figure {
	var out []Figure
	for _, f := range All {
		if _, ok := f.Value(s); ok {
			out = append(out, f)
		}
	}
	return out
}

// ChangePercent is (new − base) / |base| · 100; NaN when base is 0.
func ChangePercent(base, new float64) float64 {
	if base == 0 {
		return math.NaN()
	}
	return (new - base) / math.Abs(base) * 100
}

// Better reports whether moving from base to new is an improvement for f.
func (f Figure) Better(base, new float64) bool {
	if f.HigherIsBetter {
		return new > base
	}
	return new < base
}

// ByKey finds a figure by its Key.
func ByKey(key string) (Figure, bool) {
	for _, f := range All {
		if f.Key == key {
			return f, true
		}
	}
	return Figure{}, false
}
