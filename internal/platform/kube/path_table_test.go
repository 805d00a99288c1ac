package kube

import (
	"bytes"
	"context"
	"encoding/csv"
	"strings"
	"testing"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/gate"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/stats"
)

// A new path is one row of the path table: a host-network pair on one node (a path cnperf
// does not have) added as a row flows through the kube platform's placement, the table
// encoder, the k8s-netperf CSV and the --tolerance gate with no other change.
func TestFakePathIsOneRow(t *testing.T) {
	const fake api.Path = "host-host-same-node"
	remove := api.AddPath(api.PathRow{Path: fake, ClientNetwork: api.NetworkHost, ServerNetwork: api.NetworkHost,
		Nodes: api.NodesSame, Access: api.AccessDirect, Tolerance: "same-node"})
	defer remove()
	if !fake.Valid() {
		t.Fatalf("%s is not a valid path after AddPath", fake)
	}
	// the paths suggested instead of hostNetwork: true come from the table
	if _, err := routeFor(plan.Case{Path: api.PathPodNodePort, Params: api.Params{HostNetwork: true}}, "pod"); err == nil ||
		!strings.Contains(err.Error(), "(use host-host, pod-host, host-pod or "+string(fake)+")") {
		t.Errorf("hostNetwork on pod-nodeport: %v, want %s among the paths suggested", err, fake)
	}

	// placement: both endpoints on the server's node, on its own network
	ctx := context.Background()
	c := newCluster(t, node("node1", "zone-a"), node("node2", "zone-a"))
	p := newTestPlatform(t, c, Options{})
	cases := []plan.Case{{Profile: api.TCPStream, Path: fake, Driver: "iperf3",
		Params: api.Params{DurationSeconds: 1, Samples: 1, MessageSizeBytes: 1024, Parallel: 1}}}
	if err := p.CheckPath(cases[0]); err != nil {
		t.Fatalf("CheckPath: %v", err)
	}
	if err := p.Prepare(ctx, cases, testDrivers); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Close(ctx) }()
	pair, err := p.Pair(ctx, cases[0])
	if err != nil {
		t.Fatal(err)
	}
	pl := pair.Placement
	if pl.Client.Node != "node1" || pl.Server.Node != "node1" || !pl.Client.HostNetwork || !pl.Server.HostNetwork ||
		pair.Target.Host != "10.0.0.1" {
		t.Errorf("placement: client %s (host %v), server %s (host %v), target %s; want both on node1's own network, target 10.0.0.1",
			pl.Client.Node, pl.Client.HostNetwork, pl.Server.Node, pl.Server.HostNetwork, pair.Target.Host)
	}

	// a run with the new path and pod-pod-same-node, 40% apart
	t0 := time.Date(2026, 11, 28, 19, 0, 0, 0, time.UTC)
	result := func(path api.Path, bps float64) api.Result {
		r := api.Result{Profile: api.TCPStream, Driver: "iperf3", Path: path, StartTime: t0, EndTime: t0.Add(30 * time.Second),
			Params: api.Params{DurationSeconds: 10, Samples: 3, MessageSizeBytes: 1024, Parallel: 1}}
		for i := range 3 {
			v := bps
			r.Samples = append(r.Samples, api.Sample{Index: i, StartTime: t0, EndTime: t0.Add(10 * time.Second),
				DurationSeconds: 10, ThroughputBitsPerSecond: &v})
		}
		r.Summary = stats.Summarize(r.Samples)
		return r
	}
	run := &api.Run{UUID: "0b5c3e2a-1f0d-4c6b-9a51-0d7e3f2a9c11", StartTime: t0, EndTime: t0.Add(time.Minute),
		Results: []api.Result{result(fake, 10e9), result(api.PathPodPodSameNode, 6e9)}}

	// the table: the path's name, no "+hostnet" (the row is on the host network already)
	var table bytes.Buffer
	if err := report.Encode(&table, "table", []*api.Run{run}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), string(fake)) || strings.Contains(table.String(), "+hostnet") {
		t.Errorf("table:\n%s\nwant a row for %s without +hostnet", table.String(), fake)
	}

	// k8s-netperf's CSV: Same node and Host Network true
	var out bytes.Buffer
	if err := report.Encode(&out, "k8s-netperf-csv", []*api.Run{run}); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&out).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	if got := rows[1]; got[col["Same node"]] != "true" || got[col["Host Network"]] != "true" || got[col["Service"]] != "false" {
		t.Errorf("k8s-netperf CSV row %q (header %q): want Same node, Host Network true, Service false", got, rows[0])
	}

	// the tolerance gate pairs it (host) with pod-pod-same-node (pod) in the same-node class
	rep, violations := gate.Tolerance(run, 10)
	if len(violations) != 1 || !strings.Contains(violations[0].Message, string(fake)) ||
		!strings.Contains(violations[0].Message, string(api.PathPodPodSameNode)) {
		t.Errorf("tolerance 10%%: violations %v (report %s), want one comparing %s with %s", violations, rep, fake, api.PathPodPodSameNode)
	}
}
