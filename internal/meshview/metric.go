// Package meshview is what a mesh run's matrices show and how they print: the metrics a
// matrix can hold (by --metric name), their display units, and the node × node table and CSV
// forms of run.Mesh. It depends on the API types only (no Kubernetes client), so both
// cnperf mesh (internal/mesh) and cnperf report (internal/report) render with it.
package meshview

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

// MinCellsForOutliers is the fewest successful cells outliers are looked for in.
const MinCellsForOutliers = 3

// Metric is a figure a matrix shows.
type Metric struct {
	// Name is the --metric name; Field the figure's JSON name in the result summary.
	Name, Field string
	// Unit is the base unit; Display/Scale how tables show it (value / Scale, in Display).
	Unit, Display  string
	Scale          float64
	HigherIsBetter bool
	get            func(*api.Summary) *float64
}

// Value extracts the metric from a summary: the mean over the samples for rates, the
// merged percentile or mean for latency. nil when the summary lacks it.
func (m Metric) Value(s *api.Summary) *float64 {
	if s == nil {
		return nil
	}
	return m.get(s)
}

func statMean(f func(*api.Summary) *api.Stat) func(*api.Summary) *float64 {
	return func(s *api.Summary) *float64 {
		st := f(s)
		if st == nil || st.N == 0 {
			return nil
		}
		v := st.Mean
		return &v
	}
}

func latency(f func(*api.Latency) *float64) func(*api.Summary) *float64 {
	return func(s *api.Summary) *float64 {
		if s.LatencyMicroseconds == nil {
			return nil
		}
		if v := f(s.LatencyMicroseconds); v != nil {
			x := *v
			return &x
		}
		return nil
	}
}

// Metrics are the figures a matrix can show, by --metric name.
var Metrics = []Metric{
	{Name: "throughput", Field: "throughputBitsPerSecond", Unit: "bits/s", Display: "Gbit/s", Scale: 1e9, HigherIsBetter: true,
		get: statMean(func(s *api.Summary) *api.Stat { return s.ThroughputBitsPerSecond })},
	{Name: "pps", Field: "packetsPerSecond", Unit: "packets/s", Display: "kpps", Scale: 1e3, HigherIsBetter: true,
		get: statMean(func(s *api.Summary) *api.Stat { return s.PacketsPerSecond })},
	{Name: "tps", Field: "transactionsPerSecond", Unit: "transactions/s", Display: "trans/s", Scale: 1, HigherIsBetter: true,
		get: statMean(func(s *api.Summary) *api.Stat { return s.TransactionsPerSecond })},
	{Name: "cps", Field: "connectionsPerSecond", Unit: "connections/s", Display: "conn/s", Scale: 1, HigherIsBetter: true,
		get: statMean(func(s *api.Summary) *api.Stat { return s.ConnectionsPerSecond })},
	{Name: "latency-p50", Field: "latencyMicroseconds.p50", Unit: "µs", Display: "µs", Scale: 1,
		get: latency(func(l *api.Latency) *float64 { return l.P50 })},
	{Name: "latency-mean", Field: "latencyMicroseconds.mean", Unit: "µs", Display: "µs", Scale: 1,
		get: latency(func(l *api.Latency) *float64 { return l.Mean })},
	{Name: "latency-p99", Field: "latencyMicroseconds.p99", Unit: "µs", Display: "µs", Scale: 1,
		get: latency(func(l *api.Latency) *float64 { return l.P99 })},
}

// MetricNames lists the --metric names.
func MetricNames() []string {
	out := make([]string, len(Metrics))
	for i, m := range Metrics {
		out[i] = m.Name
	}
	return out
}

// LookupMetric finds a metric by --metric name or by its field name; "" picks the
// profile's natural one: throughput for streams, p50 latency for TCP_RR/UDP_RR,
// connections/s for TCP_CRR.
func LookupMetric(name string, p api.Profile) (Metric, error) {
	if name == "" {
		switch {
		case p == api.TCPCRR:
			name = "cps"
		case p.IsRR():
			name = "latency-p50"
		default:
			name = "throughput"
		}
	}
	for _, m := range Metrics {
		if m.Name == name || m.Field == name {
			return m, nil
		}
	}
	return Metric{}, fmt.Errorf("unknown metric %q (known: %s)", name, strings.Join(MetricNames(), ", "))
}

// FormatValue prints a metric value in its display unit with 3 significant figures or
// more (no exponent).
func FormatValue(m Metric, v float64) string {
	x := v / m.Scale
	prec := 2
	switch a := math.Abs(x); {
	case a >= 100:
		prec = 0
	case a >= 10:
		prec = 1
	}
	return strconv.FormatFloat(x, 'f', prec, 64)
}
