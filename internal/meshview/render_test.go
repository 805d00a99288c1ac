package meshview_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/mesh"
	"github.com/cnperf/cnperf/internal/meshview"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// The fixtures' outlier flags come from mesh.Finish, as in a real run; this is an external
// test package so it can import internal/mesh (which imports meshview).

// fixtureRun is a 4-node mesh on the pod network (one failed pair, one slow pair) and a
// 3-node all-to-one through a Service, with node resources on every cell that ran.
func fixtureRun() *api.Run {
	nodes := []string{"node1", "node2", "node3", "node4"}
	run := &api.Run{APIVersion: api.APIVersion, Kind: api.KindRun, UUID: "00000000-0000-0000-0000-000000000001"}
	m := &api.Mesh{Mode: "mesh", Nodes: nodes, Profile: api.TCPStream, Driver: "native", Metric: "throughputBitsPerSecond",
		Unit: "bits/s", HigherIsBetter: true, PairsTotal: 12, Pairs: 12, Rounds: 6, OutlierMADs: 3}
	mat := api.MeshMatrix{Network: "pod"}
	i := 0
	for ci, c := range nodes {
		for si, s := range nodes {
			if c == s {
				continue
			}
			v := 9.4e9 + float64(ci*100+si*10)*1e6
			r := api.Result{Profile: api.TCPStream, Driver: "native", Path: api.PathPodPodCrossNode,
				Placement: &api.Placement{Client: api.Endpoint{Node: c}, Server: api.Endpoint{Node: s}},
				NodeResources: &api.NodeResourcesPair{
					Client: &api.NodeResources{Node: c, CPUs: 8, WindowSeconds: 10.2, CPUTotalPercent: 21 + float64(ci), CPUUserPercent: 3, CPUSystemPercent: 12, CPUSoftIRQPercent: 6, MemoryUsedEndBytes: 3 << 30},
					Server: &api.NodeResources{Node: s, CPUs: 8, WindowSeconds: 10.2, CPUTotalPercent: 30 + float64(si), CPUUserPercent: 2, CPUSystemPercent: 14, CPUSoftIRQPercent: 14, MemoryUsedEndBytes: 4 << 30},
				}}
			cell := api.MeshCell{Client: c, Server: s, Round: i % 6, Result: len(run.Results)}
			switch {
			case c == "node3" && s == "node1":
				r.Error = "all 1 samples failed; first: connect: connection refused"
				r.NodeResources = nil
				cell.Error = r.Error
			case c == "node2" && s == "node4":
				v = 1.2e9
				cell.Value = &v
			default:
				cell.Value = &v
			}
			run.Results = append(run.Results, r)
			mat.Cells = append(mat.Cells, cell)
			i++
		}
	}
	mesh.Finish(&mat, 3, true)
	m.Matrices = append(m.Matrices, mat)
	run.Mesh = m
	return run
}

func fixtureAllToOne() *api.Run {
	run := &api.Run{APIVersion: api.APIVersion, Kind: api.KindRun, UUID: "00000000-0000-0000-0000-000000000002"}
	m := &api.Mesh{Mode: "all-to-one", Nodes: []string{"a", "b", "c"}, Profile: api.TCPRR, Driver: "native",
		Metric: "latencyMicroseconds.p50", Unit: "µs", PairsTotal: 3, Pairs: 3, Rounds: 1, OutlierMADs: 3}
	mat := api.MeshMatrix{Network: "host", Via: "service", Concurrent: true}
	for i, c := range []string{"a", "b", "c"} {
		v := []float64{95.3, 97.1, 410}[i]
		run.Results = append(run.Results, api.Result{Profile: api.TCPRR, Driver: "native", Path: api.PathPodClusterIP})
		mat.Cells = append(mat.Cells, api.MeshCell{Client: c, Server: "a", Result: i, Value: &v})
	}
	mesh.Finish(&mat, 3, false)
	m.Matrices = append(m.Matrices, mat)
	run.Mesh = m
	return run
}

func TestRenderGolden(t *testing.T) {
	for _, tc := range []struct {
		name  string
		run   *api.Run
		write func(*bytes.Buffer, *api.Run) error
	}{
		{"mesh.table", fixtureRun(), func(b *bytes.Buffer, r *api.Run) error { return meshview.WriteTable(b, r) }},
		{"mesh.csv", fixtureRun(), func(b *bytes.Buffer, r *api.Run) error { return meshview.WriteMatrixCSV(b, r) }},
		{"mesh.cells.csv", fixtureRun(), func(b *bytes.Buffer, r *api.Run) error { return meshview.WriteCellsCSV(b, r) }},
		{"alltoone.table", fixtureAllToOne(), func(b *bytes.Buffer, r *api.Run) error { return meshview.WriteTable(b, r) }},
		{"alltoone.csv", fixtureAllToOne(), func(b *bytes.Buffer, r *api.Run) error { return meshview.WriteMatrixCSV(b, r) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.write(&b, tc.run); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "golden", tc.name)
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(b.Bytes(), want) {
				t.Fatalf("%s differs from the golden file (run with -update after checking):\n%s", tc.name, b.String())
			}
		})
	}
}

func TestRenderWithoutMesh(t *testing.T) {
	var b bytes.Buffer
	for _, f := range []func() error{
		func() error { return meshview.WriteTable(&b, &api.Run{}) },
		func() error { return meshview.WriteMatrixCSV(&b, &api.Run{}) },
		func() error { return meshview.WriteCellsCSV(&b, &api.Run{}) },
	} {
		if f() == nil {
			t.Fatal("a run without a mesh rendered")
		}
	}
}

func TestLookupMetric(t *testing.T) {
	for _, tc := range []struct {
		name    string
		profile api.Profile
		want    string
		wantErr bool
	}{
		{"", api.TCPStream, "throughput", false},
		{"", api.UDPStream, "throughput", false},
		{"", api.TCPRR, "latency-p50", false},
		{"", api.TCPCRR, "cps", false},
		{"tps", api.TCPRR, "tps", false},
		{"latencyMicroseconds.p99", api.TCPRR, "latency-p99", false},
		{"bogus", api.TCPRR, "", true},
	} {
		m, err := meshview.LookupMetric(tc.name, tc.profile)
		if (err != nil) != tc.wantErr || m.Name != tc.want {
			t.Errorf("LookupMetric(%q, %s) = %q, %v", tc.name, tc.profile, m.Name, err)
		}
	}
	lat, _ := meshview.LookupMetric("latency-p50", api.TCPRR)
	if lat.HigherIsBetter {
		t.Fatal("latency: lower is better")
	}
	p50 := 95.3
	if v := lat.Value(&api.Summary{LatencyMicroseconds: &api.Latency{P50: &p50}}); v == nil || *v != 95.3 {
		t.Fatalf("latency value %v", v)
	}
	if v := lat.Value(&api.Summary{}); v != nil {
		t.Fatalf("no latency: %v", *v)
	}
	tp, _ := meshview.LookupMetric("throughput", api.TCPStream)
	if v := tp.Value(&api.Summary{ThroughputBitsPerSecond: &api.Stat{N: 2, Mean: 9e9}}); v == nil || *v != 9e9 {
		t.Fatalf("throughput value %v", v)
	}
	if v := tp.Value(&api.Summary{ThroughputBitsPerSecond: &api.Stat{N: 0}}); v != nil {
		t.Fatal("a stat over no samples is not a value")
	}
}

// A matrix on a secondary network says which network it is, its CNI plugin and MTU, and the
// NetworkPolicies that select its pods but do not filter it, within 120 columns; the CSVs name
// the network in their network column.
func TestWriteTableSecondaryNetwork(t *testing.T) {
	run := fixtureRun()
	mat := &run.Mesh.Matrices[0]
	mat.Network = "multus-e2e/e2e-bridge"
	mat.Attachment = &api.Attachment{Network: mat.Network, Type: "bridge", MTUBytes: 1500,
		PoliciesNotApplied: []string{"cnperf-mesh/deny-ingress", "cnperf-mesh/deny-egress"}}
	var b bytes.Buffer
	if err := meshview.WriteTable(&b, run); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"TCP_STREAM native, multus-e2e/e2e-bridge network: throughput",
		"\non secondary network multus-e2e/e2e-bridge (CNI plugin bridge, MTU 1500)\n",
		"\nNetworkPolicy cnperf-mesh/deny-ingress, cnperf-mesh/deny-egress selects the measured pods but does not apply on a",
		"the figures are unfiltered",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if w := utf8.RuneCountInString(line); w > 120 {
			t.Errorf("a line of %d columns: %s", w, line)
		}
	}
	b.Reset()
	if err := meshview.WriteCellsCSV(&b, run); err != nil || !strings.Contains(b.String(), "\nmultus-e2e/e2e-bridge,") {
		t.Errorf("cells CSV (%v) does not name the network:\n%s", err, b.String())
	}
	// all-to-one's title is longer: still 120 columns (it was 126 before it was wrapped)
	run.Mesh.Mode, mat.Via, mat.Network = "all-to-one", "direct", "multus-e2e/e2e-macvlan"
	b.Reset()
	if err := meshview.WriteTable(&b, run); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(b.String(), "\n") {
		if w := utf8.RuneCountInString(line); w > 120 {
			t.Errorf("all-to-one: a line of %d columns: %s", w, line)
		}
	}
}

// TestWriteTableSampledLowerIsBetter: matrices are separated by a blank line, a node without
// a cell has no row, lower-is-better outliers are above the median, and a sampled mesh says
// its seed.
func TestWriteTableSampledLowerIsBetter(t *testing.T) {
	run := fixtureRun()
	m := run.Mesh
	seed := uint64(7)
	m.Sampled, m.Seed, m.HigherIsBetter = true, &seed, false
	m.Nodes = append(m.Nodes, "node5")
	host := m.Matrices[0]
	host.Network = "host"
	m.Matrices = append(m.Matrices, host)
	var b bytes.Buffer
	if err := meshview.WriteTable(&b, run); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"\n\nTCP_STREAM native, host network: ", "; outliers (!) are above median + 3·MAD = ",
		"\nsampled 12 of 12 pairs (seed 7) in 6 rounds\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "node5 ") {
		t.Errorf("a row for node5, which has no cell:\n%s", out)
	}
}
