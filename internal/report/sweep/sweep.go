// Package sweep finds parameter sweeps among a run's results: cases that are identical in
// everything (profile, path, driver, placement, topology, traffic parameters) except one
// swept parameter — parallel flows, message size or RR burst — which takes at least two
// distinct values. The text table and the HTML report both show sweeps from here (seed 003:
// TCP_RR latency against 1, 10, 20 and 40 connections).
package sweep

import (
	"fmt"
	"sort"
	"strings"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/figure"
)

// Param is a parameter a sweep varies.
type Param struct {
	// Name is the parameter's JSON name in api.Params.
	Name string
	// Label names it for people, e.g. "parallel flows"; Column heads its table column.
	Label, Column string
	get           func(*api.Params) int
	set           func(*api.Params, int)
	// Format prints a value of the parameter, e.g. "40" or "64KiB".
	Format func(int) string
}

// The parameters a sweep can vary, in the order sweeps of one set of results are listed.
var (
	Parallel = Param{Name: "parallel", Label: "parallel flows", Column: "PARALLEL",
		get: func(p *api.Params) int { return p.Parallel }, set: func(p *api.Params, v int) { p.Parallel = v },
		Format: func(v int) string { return fmt.Sprint(v) }}
	MessageSize = Param{Name: "messageSizeBytes", Label: "message size", Column: "MSG",
		get: func(p *api.Params) int { return p.MessageSizeBytes }, set: func(p *api.Params, v int) { p.MessageSizeBytes = v },
		Format: figure.Bytes}
	Burst = Param{Name: "burst", Label: "burst (transactions in flight)", Column: "BURST",
		get: func(p *api.Params) int { return p.Burst }, set: func(p *api.Params, v int) { p.Burst = v },
		Format: func(v int) string { return fmt.Sprint(v) }}
	Params = []Param{Parallel, MessageSize, Burst}
)

// Value reads the parameter from a result.
func (p Param) Value(r *api.Result) int { return p.get(&r.Params) }

// Point is one case of a sweep.
type Point struct {
	// Value is the swept parameter's value; Index the result's index in the input.
	Value, Index int
}

// Sweep is a set of cases that differ only in one parameter.
type Sweep struct {
	Param Param
	// Points are ordered by the parameter's value, ascending; one per distinct value.
	Points []Point
	// Key identifies the sweep within a run: every field of the cases but the swept one.
	// SeriesKey leaves out the driver and the nodes as well, so that sweeps of the same
	// workload by several drivers, or in several runs, can be drawn in one chart.
	Key, SeriesKey string
	// Label describes the cases without the swept parameter, e.g. "TCP_RR native loopback 1B".
	Label string
	// Nodes is "client → server" when sweeps of the same workload ran on different nodes
	// (Label then ends with it in parentheses); empty otherwise.
	Nodes string
	// Duplicates lists results whose value another result of the sweep already has (the same
	// case measured twice): the first one is the sweep's point, these are left out.
	Duplicates []int
}

// Values are the swept values in order.
func (s *Sweep) Values() []int {
	out := make([]int, len(s.Points))
	for i, p := range s.Points {
		out[i] = p.Value
	}
	return out
}

// Find returns the sweeps among results: for every parameter, the groups of results that
// agree in everything but that parameter and have at least two distinct values of it.
// Sweeps are ordered by their first result, then by parameter (parallel, message size,
// burst); a run whose cases form a grid (sizes × flows) has a sweep per row and per column.
func Find(results []api.Result) []Sweep {
	var out []Sweep
	type entry struct {
		s     *Sweep
		first int
		param int
		seen  map[int]bool
	}
	var entries []*entry
	for pi, p := range Params {
		groups := map[string]*entry{}
		var order []string
		for i := range results {
			r := &results[i]
			k := key(r, p)
			e := groups[k]
			if e == nil {
				e = &entry{s: &Sweep{Param: p, Key: k, SeriesKey: SeriesKey(r, p), Label: Label(r, p)}, first: i, param: pi, seen: map[int]bool{}}
				groups[k] = e
				order = append(order, k)
			}
			v := p.Value(r)
			if e.seen[v] {
				e.s.Duplicates = append(e.s.Duplicates, i)
				continue
			}
			e.seen[v] = true
			e.s.Points = append(e.s.Points, Point{Value: v, Index: i})
		}
		for _, k := range order {
			e := groups[k]
			if len(e.s.Points) < 2 {
				continue
			}
			sort.SliceStable(e.s.Points, func(a, b int) bool { return e.s.Points[a].Value < e.s.Points[b].Value })
			entries = append(entries, e)
		}
	}
	sort.SliceStable(entries, func(a, b int) bool {
		if entries[a].first != entries[b].first {
			return entries[a].first < entries[b].first
		}
		return entries[a].param < entries[b].param
	})
	// Sweeps of the same workload on different nodes share a label: name the nodes then.
	labels := map[string]int{}
	for _, e := range entries {
		labels[e.s.Label]++
	}
	for _, e := range entries {
		if labels[e.s.Label] > 1 {
			if n := nodes(&results[e.first]); n != "" {
				e.s.Nodes = n
				e.s.Label += " (" + n + ")"
			}
		}
		out = append(out, *e.s)
	}
	return out
}

// without returns a copy of r's params with p zeroed (the response size follows the message
// size when it is unset, so zeroing the message size leaves it unset).
func without(r *api.Result, p Param) api.Result {
	c := *r
	c.Params.Options = r.Params.Options
	p.set(&c.Params, 0)
	return c
}

// key is everything that makes a case but p: workload, driver, topology and the nodes both
// ends ran on (not pods or addresses, which a platform may renew between cases).
func key(r *api.Result, p Param) string {
	c := without(r, p)
	return p.Name + "|" + figure.CaseKey(&c) + figure.TopologyKey(&c) + "|" + placementKey(r)
}

// SeriesKey is key without the driver and the nodes: the same workload in another run or by
// another driver is another series of the same chart.
func SeriesKey(r *api.Result, p Param) string {
	c := without(r, p)
	return p.Name + "|" + figure.Workload(&c) + figure.TopologyKey(&c)
}

func placementKey(r *api.Result) string {
	pl := r.Placement
	if pl == nil {
		return ""
	}
	return fmt.Sprintf("%s/%s/%t>%s/%s/%t", pl.Client.Node, pl.Client.Zone, pl.Client.HostNetwork,
		pl.Server.Node, pl.Server.Zone, pl.Server.HostNetwork)
}

func nodes(r *api.Result) string {
	pl := r.Placement
	if pl == nil || (pl.Client.Node == "" && pl.Server.Node == "") {
		return ""
	}
	return pl.Client.Node + " → " + pl.Server.Node
}

// Label is figure.CaseLabel without the swept parameter: "TCP_RR native loopback 1B" for a
// sweep of parallel flows, "TCP_STREAM native loopback x1" for one of message sizes.
func Label(r *api.Result, p Param) string {
	return label(r, p, true)
}

// ChartLabel is Label without the driver (the chart's series say it).
func ChartLabel(r *api.Result, p Param) string {
	return label(r, p, false)
}

func label(r *api.Result, p Param, driver bool) string {
	pa := r.Params
	parts := []string{string(r.Profile)}
	if driver {
		parts = append(parts, r.Driver)
	}
	parts = append(parts, string(r.Path))
	if p.Name != MessageSize.Name {
		s := figure.Bytes(pa.MessageSizeBytes)
		if pa.ResponseSizeBytes > 0 && pa.ResponseSizeBytes != pa.MessageSizeBytes {
			s += "/" + figure.Bytes(pa.ResponseSizeBytes)
		}
		parts = append(parts, s)
	} else if pa.ResponseSizeBytes > 0 {
		parts = append(parts, "response "+figure.Bytes(pa.ResponseSizeBytes))
	}
	if p.Name != Parallel.Name {
		parts = append(parts, fmt.Sprintf("x%d", pa.Parallel))
	}
	if p.Name != Burst.Name && pa.Burst > 0 {
		parts = append(parts, fmt.Sprintf("burst %d", pa.Burst))
	}
	if pa.RateBitsPerSecond > 0 {
		parts = append(parts, "@"+figure.BitsPerSecond.Format(pa.RateBitsPerSecond))
	}
	if pa.HostNetwork {
		parts = append(parts, "hostNetwork")
	}
	if pa.Service {
		parts = append(parts, "service")
	}
	if pa.IPFamily != "" && pa.IPFamily != "ipv4" {
		parts = append(parts, pa.IPFamily)
	}
	if t := r.Topology; t != nil && t.Flavour != "" {
		parts = append(parts, "["+t.Flavour+"]")
	}
	return strings.Join(parts, " ")
}

// Title heads a sweep's table or chart: "TCP_RR native loopback 1B — latency and
// transactions vs parallel flows".
func Title(s *Sweep, r *api.Result) string {
	return s.Label + " — " + What(r) + " vs " + s.Param.Label
}

// What names the figures a sweep of r's profile shows: the headline rate, and latency for
// request/response profiles.
func What(r *api.Result) string {
	switch {
	case r.Profile == api.TCPCRR:
		return "latency and connection rate"
	case r.Profile.IsRR():
		return "latency and transaction rate"
	case r.Profile == api.UDPStream:
		return "throughput and packet rate"
	}
	return "throughput"
}
