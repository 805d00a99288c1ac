package relative

import (
	"bytes"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/report/reporttest"
)

func stat(v float64) *api.Stat { return &api.Stat{N: 3, Mean: v, Median: v, Min: v, Max: v} }
func fp(v float64) *float64    { return &v }

func result(p api.Profile, path api.Path, topo *api.Topology, tput, tps, p50us float64) api.Result {
	r := api.Result{Profile: p, Driver: "native", Path: path, Topology: topo,
		Params: api.Params{MessageSizeBytes: 1, Parallel: 1, Samples: 3}}
	if p.IsStream() {
		r.Params.MessageSizeBytes = 16384
	}
	if tput > 0 {
		r.Summary.ThroughputBitsPerSecond = stat(tput)
	}
	if tps > 0 {
		r.Summary.TransactionsPerSecond = stat(tps)
		if p == api.TCPCRR {
			r.Summary.ConnectionsPerSecond = stat(tps)
		}
	}
	if p50us > 0 {
		r.Summary.LatencyMicroseconds = &api.Latency{P50: fp(p50us)}
	}
	return r
}

// withCPU adds samples whose client+server service demand are the given values (µs/KB).
func withCPU(r api.Result, demands ...float64) api.Result {
	for i, d := range demands {
		r.Samples = append(r.Samples, api.Sample{Index: i, CPU: &api.SampleCPU{
			Client: &api.CPUUsage{ServiceDemandMicrosecondsPerKB: fp(d / 2)},
			Server: &api.CPUUsage{ServiceDemandMicrosecondsPerKB: fp(d / 2)}}})
	}
	r.Samples = append(r.Samples, api.Sample{Index: len(demands), Error: "failed: ignored"},
		api.Sample{Index: -1, Warmup: true, CPU: &api.SampleCPU{Client: &api.CPUUsage{ServiceDemandMicrosecondsPerKB: fp(1000)},
			Server: &api.CPUUsage{ServiceDemandMicrosecondsPerKB: fp(1000)}}})
	return r
}

func relativeFixture() []api.Result {
	hh := &api.Topology{Flavour: "underlay-bridge", MTUBytes: 1500}
	routed := &api.Topology{Flavour: "routed", MTUBytes: 1500}
	vxlan := &api.Topology{Flavour: "vxlan", MTUBytes: 1450}
	pol := &api.Topology{Flavour: "routed", MTUBytes: 1500, PolicyRules: 10000, PolicyStyle: "chains"}
	svc := &api.Topology{Flavour: "nftables", MTUBytes: 1500, Backends: 2}
	failed := result(api.TCPRR, api.PathPodClusterIP, svc, 0, 0, 0)
	failed.Error = "all 3 samples failed; first: connection refused"
	return []api.Result{
		result(api.TCPStream, api.PathLoopback, nil, 40e9, 0, 0),
		withCPU(result(api.TCPStream, api.PathHostHost, hh, 20e9, 0, 0), 3, 2, 4),
		result(api.TCPStream, api.PathPodPodCrossNode, routed, 18e9, 0, 0),
		withCPU(result(api.TCPStream, api.PathPodPodCrossNode, vxlan, 14e9, 0, 0), 4.5, 4, 5),
		result(api.TCPRR, api.PathHostHost, hh, 0, 40000, 24.5),
		result(api.TCPRR, api.PathPodPodCrossNode, vxlan, 0, 33000, 30),
		result(api.TCPRR, api.PathPodPodCrossNode, pol, 0, 5000, 190),
		failed,
		result(api.TCPCRR, api.PathPodClusterIP, svc, 0, 9000, 0),
		result(api.UDPRR, api.PathPodPodSameNode, &api.Topology{Flavour: "bridge", MTUBytes: 1500}, 0, 50000, 20),
		result(api.TCPRR, api.PathPodPodCrossNode, routed, 0, 36000, 26),
		result(api.TCPRR, api.PathPodPodSameNode, &api.Topology{Flavour: "bridge", MTUBytes: 1500, PolicyRules: 100, PolicyStyle: "sets"}, 0, 45000, 22),
	}
}

func TestToHostHost(t *testing.T) {
	rs := relativeFixture()
	cs := ToHostHost(rs)
	if len(cs) != len(rs) {
		t.Fatalf("%d comparisons for %d results", len(cs), len(rs))
	}
	want := map[int]string{
		0: "2.00× throughput",
		1: "1.00× throughput, 1.00× CPU per byte",
		3: "0.70× throughput, 1.50× CPU per byte",
		5: "0.82× transactions/s, +5.50 µs p50",
		6: "0.12× transactions/s, +166 µs p50",
		7: "no figures: all 3 samples failed; first: connection refused",
		8: "no host-host result to compare with",
	}
	for i, w := range want {
		if got := cs[i].Text(); got != w {
			t.Errorf("comparison %d (%s): %q, want %q", i, cs[i].Name, got, w)
		}
	}
	if cs[3].Baseline != 1 || cs[6].Baseline != 4 {
		t.Errorf("baselines %d, %d; want 1, 4", cs[3].Baseline, cs[6].Baseline)
	}
}

func TestWrite(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, relativeFixture()); err != nil {
		t.Fatal(err)
	}
	reporttest.Golden(t, "relative.txt", b.Bytes())
}

func TestPolicy(t *testing.T) {
	cs := Policy(relativeFixture())
	if len(cs) != 2 {
		t.Fatalf("%d policy comparisons, want 2: %+v", len(cs), cs)
	}
	if cs[0].Index != 6 || cs[0].Baseline != 10 || cs[0].Text() != "0.14× transactions/s, +164 µs p50" {
		t.Errorf("10000 rules: %+v %q", cs[0], cs[0].Text())
	}
	if cs[1].Baseline != -1 || cs[1].Text() != "no result without policy rules to compare with" {
		t.Errorf("same-node sets: %+v %q", cs[1], cs[1].Text())
	}
}

func TestApplies(t *testing.T) {
	for _, tc := range []struct {
		name    string
		results []api.Result
		want    bool
	}{
		{"lab results", relativeFixture(), true},
		{"loopback only", []api.Result{result(api.TCPRR, api.PathLoopback, nil, 0, 1, 1)}, false},
		{"a cluster's host-host (no topology)", []api.Result{result(api.TCPRR, api.PathHostHost, nil, 0, 1, 1)}, false},
		{"none", nil, false},
	} {
		if got := Applies(tc.results); got != tc.want {
			t.Errorf("%s: Applies = %t, want %t", tc.name, got, tc.want)
		}
	}
}

// A TCP_CRR result whose tool reported transactions but no connection rate is compared on
// its transaction rate, and says so (it used to be labelled "connections/s").
func TestMetricNamesWhatItCompares(t *testing.T) {
	hh := &api.Topology{Flavour: "underlay-bridge"}
	base := result(api.TCPCRR, api.PathHostHost, hh, 0, 10000, 0)
	crr := result(api.TCPCRR, api.PathPodPodCrossNode, &api.Topology{Flavour: "routed"}, 0, 5000, 0)
	base.Summary.ConnectionsPerSecond, crr.Summary.ConnectionsPerSecond = nil, nil
	cs := ToHostHost([]api.Result{base, crr})
	if got, want := cs[1].Text(), "0.50× transactions/s"; got != want {
		t.Errorf("TCP_CRR without connections/s: %q, want %q", got, want)
	}
	with := ToHostHost([]api.Result{result(api.TCPCRR, api.PathHostHost, hh, 0, 10000, 0)})
	if got, want := with[0].Text(), "1.00× connections/s"; got != want {
		t.Errorf("TCP_CRR with connections/s: %q, want %q", got, want)
	}
}
