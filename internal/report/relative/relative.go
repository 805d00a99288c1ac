// Package relative is the lab's relative view: every result next to the host-host result of
// the same shape (what a datapath costs over plain node-to-node traffic on this machine), and
// results with policy rules next to the same path without them. The table encoder ends a lab
// run's table with it.
package relative

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/figure"
)

// Cost is one result set against the host-host result of the same shape (profile,
// driver, message and response size, parallelism, burst, rate): what a datapath costs over
// plain node-to-node traffic on this machine. Ratios and deltas use the median of the
// samples and the p50 round-trip latency; a nil field means a side lacks the figure.
type Cost struct {
	Index    int    // of the result in the input
	Baseline int    // index of the host-host result; -1 when there is none
	Name     string // path and topology label: "pod-pod-cross-node vxlan mtu1450"
	Shape    string // "TCP_RR native 1B x1"
	// Metric is what the ratio compares: "throughput", "transactions/s" or "connections/s".
	Metric string
	Ratio  *float64
	// P50DeltaMicroseconds is the p50 latency of the result minus the baseline's (RR profiles).
	P50DeltaMicroseconds *float64
	// CPUPerByteRatio compares the CPU both sides spent per byte (stream profiles; the median
	// over the samples of client + server service demand): less disturbed than the throughput
	// when other work shares the CPUs.
	CPUPerByteRatio *float64
	// Note explains a missing figure ("case failed", "no host-host result").
	Note string
}

// Text is the comparison as one phrase: "0.70× throughput", "0.85× transactions/s, +9 µs p50".
func (c Cost) Text() string {
	if c.Ratio == nil && c.P50DeltaMicroseconds == nil {
		return c.Note
	}
	var parts []string
	if c.Ratio != nil {
		parts = append(parts, fmt.Sprintf("%.2f× %s", *c.Ratio, c.Metric))
	}
	if c.P50DeltaMicroseconds != nil {
		d := *c.P50DeltaMicroseconds
		sign := "+"
		if d < 0 {
			sign = "−"
		}
		parts = append(parts, fmt.Sprintf("%s%s µs p50", sign, fmtMicro(math.Abs(d))))
	}
	if c.CPUPerByteRatio != nil {
		parts = append(parts, fmt.Sprintf("%.2f× CPU per byte", *c.CPUPerByteRatio))
	}
	return strings.Join(parts, ", ")
}

func fmtMicro(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// ResultName is a result's path with its topology label: "pod-pod-cross-node vxlan mtu1450".
func ResultName(r api.Result) string {
	if l := figure.TopologyLabel(r.Topology); l != "" {
		return string(r.Path) + " " + l
	}
	return string(r.Path)
}

// shape is the comparable part of a case.
func shape(r api.Result) string {
	p := r.Params
	s := fmt.Sprintf("%s %s %dB x%d", r.Profile, r.Driver, p.MessageSizeBytes, p.Parallel)
	if p.ResponseSizeBytes > 0 && p.ResponseSizeBytes != p.MessageSizeBytes {
		s += fmt.Sprintf(" resp %dB", p.ResponseSizeBytes)
	}
	if p.Burst > 0 {
		s += fmt.Sprintf(" burst %d", p.Burst)
	}
	if p.RateBitsPerSecond > 0 {
		s += fmt.Sprintf(" rate %.0f", p.RateBitsPerSecond)
	}
	if p.IPFamily != "" && p.IPFamily != "ipv4" {
		s += " " + p.IPFamily
	}
	return s
}

// metric is a result's headline figure (figure.Main) as the view names it, and its median.
func metric(r api.Result) (string, *float64) {
	f, _ := figure.Main(&r)
	name := f.Unit.Base // "transactions/s", "connections/s"
	if f.Key == figure.Throughput.Key {
		name = f.Label
	}
	st := f.Stat(&r.Summary)
	if st == nil || st.N == 0 {
		return name, nil
	}
	v := st.Median
	return name, &v
}

func p50(r api.Result) *float64 {
	if r.Summary.LatencyMicroseconds == nil {
		return nil
	}
	return r.Summary.LatencyMicroseconds.P50
}

// ToHostHost compares every result with the first host-host result of the same shape, in the
// order of the input. The host-host results compare with themselves (1.00×).
func ToHostHost(results []api.Result) []Cost {
	base := map[string]int{}
	for i, r := range results {
		if r.Path != api.PathHostHost {
			continue
		}
		if _, ok := base[shape(r)]; !ok {
			if _, v := metric(r); v != nil && *v > 0 {
				base[shape(r)] = i
			}
		}
	}
	out := make([]Cost, 0, len(results))
	for i, r := range results {
		out = append(out, compare(results, i, base, shape(r)))
	}
	return out
}

// Policy compares every result with policy rules against the result of the same
// shape, path and flavour without rules: what the rules alone cost. Results without rules
// are not listed.
func Policy(results []api.Result) []Cost {
	key := func(r api.Result) string {
		f := ""
		if r.Topology != nil {
			f = r.Topology.Flavour
		}
		return shape(r) + "|" + string(r.Path) + "|" + f
	}
	base := map[string]int{}
	for i, r := range results {
		if r.Topology == nil || r.Topology.PolicyRules != 0 {
			continue
		}
		if _, ok := base[key(r)]; !ok {
			if _, v := metric(r); v != nil && *v > 0 {
				base[key(r)] = i
			}
		}
	}
	var out []Cost
	for i, r := range results {
		if r.Topology == nil || r.Topology.PolicyRules == 0 {
			continue
		}
		c := compare(results, i, base, key(r))
		c.Shape = shape(r) + " " + string(r.Path) + " " + r.Topology.Flavour
		if c.Note == "no host-host result to compare with" {
			c.Note = "no result without policy rules to compare with"
		}
		out = append(out, c)
	}
	return out
}

// compare builds the comparison of results[i] with the baseline registered under k.
func compare(results []api.Result, i int, base map[string]int, k string) Cost {
	r := results[i]
	c := Cost{Index: i, Baseline: -1, Name: ResultName(r), Shape: shape(r)}
	c.Metric, _ = metric(r)
	b, ok := base[k]
	_, v := metric(r)
	switch {
	case !ok:
		c.Note = "no host-host result to compare with"
	case v == nil:
		c.Baseline = b
		c.Note = "no figures (case failed)"
		if r.Error != "" {
			c.Note = "no figures: " + r.Error
		}
	default:
		c.Baseline = b
		_, bv := metric(results[b])
		ratio := *v / *bv
		c.Ratio = &ratio
		if r.Profile.IsRR() {
			if lp, bp := p50(r), p50(results[b]); lp != nil && bp != nil {
				d := *lp - *bp
				c.P50DeltaMicroseconds = &d
			}
		}
		if r.Profile.IsStream() {
			if sd, bsd := serviceDemand(r), serviceDemand(results[b]); sd != nil && bsd != nil && *bsd > 0 {
				ratio := *sd / *bsd
				c.CPUPerByteRatio = &ratio
			}
		}
	}
	return c
}

// serviceDemand is the median over the measured samples of client + server CPU per KB.
func serviceDemand(r api.Result) *float64 {
	var xs []float64
	for _, s := range r.Samples {
		if s.Warmup || s.Error != "" || s.CPU == nil || s.CPU.Client == nil || s.CPU.Server == nil {
			continue
		}
		c, sv := s.CPU.Client.ServiceDemandMicrosecondsPerKB, s.CPU.Server.ServiceDemandMicrosecondsPerKB
		if c == nil || sv == nil {
			continue
		}
		xs = append(xs, *c+*sv)
	}
	if len(xs) == 0 {
		return nil
	}
	sort.Float64s(xs)
	m := xs[len(xs)/2]
	if len(xs)%2 == 0 {
		m = (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
	}
	return &m
}

// Write writes the comparisons as a text table grouped by case shape, each group
// headed by the host-host figures it is relative to; then, when some results have policy
// rules, the same for them against their path without rules.
func Write(w io.Writer, results []api.Result) error {
	if err := writeGroups(w, "Relative to host-host (medians of the samples; latency is the p50 round trip):",
		results, ToHostHost(results)); err != nil {
		return err
	}
	if pc := Policy(results); len(pc) > 0 {
		fmt.Fprintln(w)
		return writeGroups(w, "Cost of the policy rules (relative to the same path without rules):", results, pc)
	}
	return nil
}

func writeGroups(w io.Writer, title string, results []api.Result, comps []Cost) error {
	var shapes []string
	groups := map[string][]Cost{}
	for _, c := range comps {
		if _, ok := groups[c.Shape]; !ok {
			shapes = append(shapes, c.Shape)
		}
		groups[c.Shape] = append(groups[c.Shape], c)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, title)
	for _, sh := range shapes {
		g := groups[sh]
		head := sh
		if b := g[0].Baseline; b >= 0 {
			head += " (" + ResultName(results[b]) + ": " + headline(results[b]) + ")"
		}
		fmt.Fprintf(tw, "%s\n", head)
		for _, c := range g {
			fmt.Fprintf(tw, "  %s\t%s\n", c.Name, c.Text())
		}
	}
	return tw.Flush()
}

// headline is a result's main figures: "9.410 Gbit/s" or "25.00 k trans/s, p50 38.0 µs".
func headline(r api.Result) string {
	f, _ := figure.Main(&r)
	_, v := metric(r)
	if v == nil {
		return "no figures"
	}
	s := f.Unit.Format(*v)
	if r.Profile.IsRR() {
		if p := p50(r); p != nil {
			s += ", p50 " + fmtMicro(*p) + " µs"
		}
	}
	return s
}

// Applies reports whether results come from the lab (they carry its topology), so the view
// has something to say about them.
func Applies(results []api.Result) bool {
	for _, r := range results {
		if r.Topology != nil {
			return true
		}
	}
	return false
}
