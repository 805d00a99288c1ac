package mesh

import (
	"fmt"
	"math"
	"sort"
	"strings"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

// madScale makes the median absolute deviation estimate σ for normally distributed data
// (1/Φ⁻¹(3/4)), as R's mad() does.
const madScale = 1.4826

// minRelativeMAD floors the MAD at this fraction of |median|: when most cells are identical
// (a rate limit, a saturated link) the raw MAD is 0 and any hair's-breadth dip would be an
// outlier.
const minRelativeMAD = 0.005

// MinCellsForOutliers is the fewest successful cells outliers are looked for in.
const MinCellsForOutliers = 3

// Spread is the centre and scale of a matrix's values and the outlier threshold.
type Spread struct {
	Median, MAD, Threshold float64
}

// Outliers flags the values on the bad side of median ∓ k·MAD: below median − k·MAD when
// higher is better (throughput, rates), above median + k·MAD when lower is better (latency).
// MAD is scaled by 1.4826 and floored at 0.5 % of |median|. With fewer than
// MinCellsForOutliers values nothing is flagged and ok is false.
func Outliers(values []float64, k float64, higherIsBetter bool) (sp Spread, flags []bool, ok bool) {
	flags = make([]bool, len(values))
	if len(values) < MinCellsForOutliers {
		return Spread{}, flags, false
	}
	med := median(values)
	dev := make([]float64, len(values))
	for i, v := range values {
		dev[i] = math.Abs(v - med)
	}
	mad := madScale * median(dev)
	if floor := minRelativeMAD * math.Abs(med); mad < floor {
		mad = floor
	}
	sp = Spread{Median: med, MAD: mad}
	if higherIsBetter {
		sp.Threshold = med - k*mad
	} else {
		sp.Threshold = med + k*mad
	}
	for i, v := range values {
		if higherIsBetter {
			flags[i] = v < sp.Threshold
		} else {
			flags[i] = v > sp.Threshold
		}
	}
	return sp, flags, true
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

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

// Finish fills a matrix's spread and outlier flags from its cells' values.
func Finish(m *api.MeshMatrix, k float64, higherIsBetter bool) {
	var vals []float64
	var idx []int
	for i := range m.Cells {
		m.Cells[i].Outlier = false
		if m.Cells[i].Value != nil && m.Cells[i].Error == "" {
			vals = append(vals, *m.Cells[i].Value)
			idx = append(idx, i)
		}
	}
	sp, flags, ok := Outliers(vals, k, higherIsBetter)
	m.Median, m.MAD, m.Threshold = nil, nil, nil
	if !ok {
		return
	}
	m.Median, m.MAD, m.Threshold = ptr(sp.Median), ptr(sp.MAD), ptr(sp.Threshold)
	for j, i := range idx {
		m.Cells[i].Outlier = flags[j]
	}
}

func ptr(v float64) *float64 { return &v }
