package sweep

import (
	"fmt"
	"reflect"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

// res builds a result; mod adjusts it.
func res(p api.Profile, driver string, path api.Path, msg, par int, mod ...func(*api.Result)) api.Result {
	r := api.Result{Profile: p, Driver: driver, Path: path,
		Params: api.Params{DurationSeconds: 1, Samples: 3, MessageSizeBytes: msg, Parallel: par}}
	for _, m := range mod {
		m(&r)
	}
	return r
}

func onNodes(c, s string) func(*api.Result) {
	return func(r *api.Result) {
		r.Placement = &api.Placement{Client: api.Endpoint{Role: "client", Node: c, Pod: "client-" + fmt.Sprint(r.Params.Parallel)},
			Server: api.Endpoint{Role: "server", Node: s, PodIP: "10.0.0." + fmt.Sprint(r.Params.Parallel)}}
	}
}

// got is a sweep reduced to what the tests compare.
type got struct {
	Param  string
	Values []int
	Index  []int
	Label  string
	Dups   []int
}

func reduce(ss []Sweep) []got {
	var out []got
	for _, s := range ss {
		g := got{Param: s.Param.Name, Values: s.Values(), Label: s.Label, Dups: s.Duplicates}
		for _, p := range s.Points {
			g.Index = append(g.Index, p.Index)
		}
		out = append(out, g)
	}
	return out
}

func TestFind(t *testing.T) {
	rr := func(par int, mod ...func(*api.Result)) api.Result {
		return res(api.TCPRR, "native", api.PathPodPodCrossNode, 1, par, mod...)
	}
	st := func(msg, par int, mod ...func(*api.Result)) api.Result {
		return res(api.TCPStream, "native", api.PathLoopback, msg, par, mod...)
	}
	withDriver := func(d string) func(*api.Result) { return func(r *api.Result) { r.Driver = d } }
	flavour := func(f string) func(*api.Result) {
		return func(r *api.Result) { r.Topology = &api.Topology{Flavour: f} }
	}
	tests := []struct {
		name    string
		results []api.Result
		want    []got
	}{
		{"seed 003: 1, 10, 20, 40 connections, ordered by value not by run order",
			[]api.Result{rr(40), rr(1), rr(20), rr(10)},
			[]got{{Param: "parallel", Values: []int{1, 10, 20, 40}, Index: []int{1, 3, 2, 0}, Label: "TCP_RR native pod-pod-cross-node 1B"}}},
		{"numeric order, not string order",
			[]api.Result{rr(100), rr(9), rr(20)},
			[]got{{Param: "parallel", Values: []int{9, 20, 100}, Index: []int{1, 2, 0}, Label: "TCP_RR native pod-pod-cross-node 1B"}}},
		{"one value is no sweep", []api.Result{rr(1)}, nil},
		{"the same case twice is no sweep", []api.Result{rr(1), rr(1)}, nil},
		{"different profiles are no sweep",
			[]api.Result{rr(1), res(api.UDPRR, "native", api.PathPodPodCrossNode, 1, 10)}, nil},
		{"two parameters changing at once are no sweep", []api.Result{st(1024, 1), st(65536, 4)}, nil},
		{"drivers sweep separately",
			[]api.Result{rr(1), rr(1, withDriver("netperf")), rr(10), rr(10, withDriver("netperf"))},
			[]got{{Param: "parallel", Values: []int{1, 10}, Index: []int{0, 2}, Label: "TCP_RR native pod-pod-cross-node 1B"},
				{Param: "parallel", Values: []int{1, 10}, Index: []int{1, 3}, Label: "TCP_RR netperf pod-pod-cross-node 1B"}}},
		{"lab topologies sweep separately",
			[]api.Result{rr(1, flavour("routed")), rr(1, flavour("vxlan")), rr(4, flavour("routed")), rr(4, flavour("vxlan"))},
			[]got{{Param: "parallel", Values: []int{1, 4}, Index: []int{0, 2}, Label: "TCP_RR native pod-pod-cross-node 1B [routed]"},
				{Param: "parallel", Values: []int{1, 4}, Index: []int{1, 3}, Label: "TCP_RR native pod-pod-cross-node 1B [vxlan]"}}},
		{"message sizes",
			[]api.Result{st(65536, 1), st(1024, 1), st(64, 1)},
			[]got{{Param: "messageSizeBytes", Values: []int{64, 1024, 65536}, Index: []int{2, 1, 0}, Label: "TCP_STREAM native loopback x1"}}},
		{"a grid of sizes × flows has a sweep per row and per column",
			[]api.Result{st(1024, 1), st(1024, 8), st(65536, 1), st(65536, 8)},
			[]got{{Param: "parallel", Values: []int{1, 8}, Index: []int{0, 1}, Label: "TCP_STREAM native loopback 1KiB"},
				{Param: "messageSizeBytes", Values: []int{1024, 65536}, Index: []int{0, 2}, Label: "TCP_STREAM native loopback x1"},
				{Param: "messageSizeBytes", Values: []int{1024, 65536}, Index: []int{1, 3}, Label: "TCP_STREAM native loopback x8"},
				{Param: "parallel", Values: []int{1, 8}, Index: []int{2, 3}, Label: "TCP_STREAM native loopback 64KiB"}}},
		{"burst of RR",
			[]api.Result{rr(1, func(r *api.Result) { r.Params.Burst = 0 }), rr(1, func(r *api.Result) { r.Params.Burst = 16 })},
			[]got{{Param: "burst", Values: []int{0, 16}, Index: []int{0, 1}, Label: "TCP_RR native pod-pod-cross-node 1B x1"}}},
		{"a repeated case: the first is the point, the repeat is listed",
			[]api.Result{rr(1), rr(10), rr(1)},
			[]got{{Param: "parallel", Values: []int{1, 10}, Index: []int{0, 1}, Label: "TCP_RR native pod-pod-cross-node 1B", Dups: []int{2}}}},
		{"pods and addresses may change between cases, nodes may not",
			[]api.Result{rr(1, onNodes("a", "b")), rr(10, onNodes("a", "b")), rr(1, onNodes("b", "a")), rr(10, onNodes("b", "a"))},
			[]got{{Param: "parallel", Values: []int{1, 10}, Index: []int{0, 1}, Label: "TCP_RR native pod-pod-cross-node 1B (a → b)"},
				{Param: "parallel", Values: []int{1, 10}, Index: []int{2, 3}, Label: "TCP_RR native pod-pod-cross-node 1B (b → a)"}}},
		{"options and services are part of the case",
			[]api.Result{rr(1), rr(10, func(r *api.Result) { r.Params.Options = map[string]string{"zerocopy": "true"} }),
				rr(20, func(r *api.Result) { r.Params.Service = true })}, nil},
		{"failed cases are points too (shown with their cause)",
			[]api.Result{rr(1), rr(10, func(r *api.Result) { r.Error = "every sample failed" })},
			[]got{{Param: "parallel", Values: []int{1, 10}, Index: []int{0, 1}, Label: "TCP_RR native pod-pod-cross-node 1B"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if g := reduce(Find(tc.results)); !reflect.DeepEqual(g, tc.want) {
				t.Errorf("Find =\n%+v\nwant\n%+v", g, tc.want)
			}
		})
	}
}

func TestSeriesKeyIgnoresDriverAndNodes(t *testing.T) {
	a := res(api.TCPRR, "native", api.PathPodPodCrossNode, 1, 1, onNodes("a", "b"))
	b := res(api.TCPRR, "netperf", api.PathPodPodCrossNode, 1, 40, onNodes("x", "y"))
	c := res(api.TCPRR, "netperf", api.PathPodPodSameNode, 1, 40)
	if SeriesKey(&a, Parallel) != SeriesKey(&b, Parallel) {
		t.Error("series keys differ by driver, nodes or the swept value")
	}
	if SeriesKey(&a, Parallel) == SeriesKey(&c, Parallel) {
		t.Error("series keys equal across paths")
	}
	if SeriesKey(&a, Parallel) == SeriesKey(&a, MessageSize) {
		t.Error("series keys equal across swept parameters")
	}
}

func TestTitle(t *testing.T) {
	for _, tc := range []struct {
		r    api.Result
		p    Param
		want string
	}{
		{res(api.TCPRR, "native", api.PathPodPodCrossNode, 1, 10), Parallel,
			"TCP_RR native pod-pod-cross-node 1B — latency and transaction rate vs parallel flows"},
		{res(api.TCPStream, "iperf3", api.PathHostHost, 131072, 1), MessageSize,
			"TCP_STREAM iperf3 host-host x1 — throughput vs message size"},
		{res(api.UDPStream, "native", api.PathLoopback, 1400, 2), Parallel,
			"UDP_STREAM native loopback 1400B — throughput and packet rate vs parallel flows"},
		{res(api.TCPCRR, "native", api.PathPodClusterIP, 1, 2), Parallel,
			"TCP_CRR native pod-clusterip 1B — latency and connection rate vs parallel flows"},
	} {
		s := Sweep{Param: tc.p, Label: Label(&tc.r, tc.p)}
		if g := Title(&s, &tc.r); g != tc.want {
			t.Errorf("Title = %q, want %q", g, tc.want)
		}
	}
	if MessageSize.Format(65536) != "64KiB" || Parallel.Format(40) != "40" {
		t.Error("value formats")
	}
}
