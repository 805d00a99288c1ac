package tigerbench

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/config"
	"github.com/cnperf/cnperf/internal/report/reporttest"
	"github.com/cnperf/cnperf/internal/stats"
)

func f(v float64) *float64 { return &v }

var t0 = time.Date(2026, 11, 21, 7, 0, 0, 0, time.UTC)

func sample(i int, tput, rtt, retr *float64, errMsg string) api.Sample {
	s := api.Sample{Index: i, StartTime: t0.Add(time.Duration(i) * 10 * time.Second), EndTime: t0.Add(time.Duration(i)*10*time.Second + 5*time.Second), Error: errMsg}
	if errMsg != "" {
		return s
	}
	s.ThroughputBitsPerSecond, s.Retransmits = tput, retr
	if rtt != nil {
		s.Latency = &api.Latency{Mean: rtt, Method: "tool-rtt-from-one-way"}
	}
	return s
}

func result(group string, p api.Profile, drv string, path api.Path, samples ...api.Sample) api.Result {
	r := api.Result{Name: group, Group: group, Profile: p, Driver: drv, Path: path,
		Params:    api.Params{DurationSeconds: 5, Samples: len(samples), MessageSizeBytes: 65536, Parallel: 1},
		StartTime: t0, EndTime: t0.Add(time.Minute), Samples: samples,
		Placement: &api.Placement{Client: api.Endpoint{Role: "client", Namespace: "testns"}, Target: "10.244.2.7"}}
	r.Summary = stats.Summarize(samples)
	return r
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fixtureRun is a run of a tiger-bench testconfig.yaml with each kind of test; it is also
// written to testdata/run.json for the junit encoder's tests.
func fixtureRun(t *testing.T) *api.Run {
	tl := config.TigerBenchTestConfig{TestKind: "thruput-latency", NumPolicies: 5, NumServices: 10, NumPods: 7, TestNamespace: "testns",
		Iterations: 2, Duration: 5, LeaveStandingConfig: true,
		Perf: &config.TigerBenchPerfConfig{Direct: true, Service: true, External: true, ControlPort: 32000, TestPort: 32221, ExternalIPOrFQDN: "10.123.0.11"}}
	ip := config.TigerBenchTestConfig{TestKind: "iperf", NumPods: 6, TestNamespace: "testns", Iterations: 1, Duration: 10, Encap: "ipip", Dataplane: "bpf",
		Perf: &config.TigerBenchPerfConfig{Direct: true, ControlPort: 32000, TestPort: 32001}}
	tt := config.TigerBenchTestConfig{TestKind: "ttfr", NumPolicies: 100, NumServices: 10, NumPods: 7, TestNamespace: "testns2", Iterations: 1,
		Duration: 60, TTFRConfig: &config.TigerBenchTTFRConfig{TestPodsPerNode: 53, Rate: 2.5}}
	dn := config.TigerBenchTestConfig{TestKind: "dnsperf", TestNamespace: "testns", Duration: 30, DNSPerf: &config.TigerBenchDNSConfig{Mode: "Inline", NumDomains: 2}}
	run := &api.Run{
		APIVersion: api.APIVersion, Kind: api.KindRun, UUID: "5f0c8a56-1b47-4c2e-9a55-0e2f3f2b9d11", StartTime: t0, EndTime: t0.Add(10 * time.Minute),
		CnperfVersion: "v0.1.0", Platform: "kube",
		Host: &api.HostInfo{Hostname: "ci-runner-1"},
		Cluster: &api.ClusterDetails{KubernetesVersion: "v1.34.4", NodeCount: 2, CNI: "Calico", CNIVersion: "v3.30.2", IPFamily: "ipv4",
			Nodes: []api.NodeInfo{{Name: "node1", OSImage: "Debian GNU/Linux 12 (bookworm)", Kernel: "6.1.0-27-amd64", Arch: "amd64",
				ContainerRuntime: "containerd://1.6.20", KubeletVersion: "v1.34.4", Labels: map[string]string{"kubernetes.io/os": "linux"}}},
			Calico: &api.CalicoDetails{Product: "calico", Version: "v3.30.2", Encapsulation: "VXLANCrossSubnet", Dataplane: "iptables",
				IPFamily: "ipv4", ClusterType: "k8s,bgp,kubeadm,operator", CNIType: "Calico"}},
		Results: []api.Result{
			result("thruput-latency-1", api.TCPStream, "qperf", api.PathPodPodCrossNode, sample(0, f(2.12e9), nil, nil, ""), sample(1, f(2.2e9), nil, nil, "")),
			result("thruput-latency-1", api.TCPStream, "qperf", api.PathPodClusterIP, sample(0, f(2.0e9), nil, nil, ""), sample(1, nil, nil, nil, "qperf: failed to receive RDMA CM TCP IPv4 server port: timed out")),
			func() api.Result {
				r := result("thruput-latency-1", api.TCPStream, "qperf", api.PathExternalService)
				r.Error = "place endpoints: dial tcp 10.123.0.11:32000: connect: connection refused"
				return r
			}(),
			result("thruput-latency-1", api.TCPRR, "qperf", api.PathPodPodCrossNode, sample(0, nil, f(408), nil, ""), sample(1, nil, f(400), nil, "")),
			result("thruput-latency-1", api.TCPRR, "qperf", api.PathPodClusterIP, sample(0, nil, f(390), nil, ""), sample(1, nil, f(392.5), nil, "")),
			result("iperf-2", api.TCPStream, "iperf3", api.PathPodPodCrossNode, sample(0, f(91701.305416915e6), nil, f(56242), "")),
		},
		TigerBench: []api.TigerBenchTest{
			{Index: 0, Kind: "thruput-latency", Group: "thruput-latency-1", Config: mustJSON(t, tl), StartTime: t0, EndTime: t0.Add(2 * time.Minute),
				Standing: &api.StandingConfig{Namespace: "testns", Pods: 7, Services: 10, ServiceBackends: 10, Policies: 5, Nodes: []string{"node1", "node2"},
					ObjectsApplied: 20, ApplySeconds: 0.8, ReadySeconds: 6.5, ObjectsPerSecond: 25, PodsPerSecond: 2.6, Parallelism: 20, Kept: true}},
			{Index: 1, Kind: "iperf", Group: "iperf-2", Config: mustJSON(t, ip), StartTime: t0.Add(2 * time.Minute), EndTime: t0.Add(3 * time.Minute),
				Calico: &api.CalicoChange{Encap: "ipip", Dataplane: "bpf", PreviousEncap: "VXLANCrossSubnet", PreviousDataplane: "iptables",
					Changes: []string{"IPPool default-ipv4-ippool: ipipMode Never -> Always", "Installation default: linuxDataplane Iptables -> BPF"}}},
			{Index: 2, Kind: "ttfr", Group: "ttfr-3", Config: mustJSON(t, tt), StartTime: t0.Add(3 * time.Minute), EndTime: t0.Add(5 * time.Minute),
				TTFR: &api.TTFRResult{Nodes: []string{"node1", "node2"}, RequestedPodsPerSecond: 2.5, AchievedPodsPerSecond: 2.4, PodsPerNode: 53,
					DurationSeconds: 60, PodsCreated: 6, Datapoints: 5, Failures: 1,
					FailureReasons:          []api.Count{{What: "no response within 60s: dial tcp 10.244.1.9:8080: connect: connection refused", Count: 1}},
					TTFRSeconds:             Distribute([]float64{0.0012, 0.0031, 0.0028, 0.0045, 0.0019}),
					PodCreateToReadySeconds: Distribute([]float64{1.9, 2.1, 2.4, 2.0, 1.8, 2.2}),
					Values:                  []float64{0.0012, 0.0031, 0.0028, 0.0045, 0.0019},
					Warnings:                []string{"unable to keep up with 2.5 pods/s for 3s: all 106 pod slots (53 per node x 2 nodes) were busy"}}},
			{Index: 3, Kind: "dnsperf", Group: "dnsperf-4", Config: mustJSON(t, dn), StartTime: t0.Add(5 * time.Minute), EndTime: t0.Add(6 * time.Minute),
				DNS: &api.DNSResult{Target: "standing-svc-00000.testns.svc.cluster.local", Port: 80, Pods: 2, Lookups: 120, LookupFailures: 1, Connects: 119, ConnectFailures: 0,
					LookupSeconds:  &api.Distribution{N: 119, Min: 0.0004, Max: 0.012, Mean: 0.0011, P50: 0.0009, P75: 0.0012, P90: 0.0018, P99: 0.009},
					ConnectSeconds: &api.Distribution{N: 119, Min: 0.0001, Max: 0.003, Mean: 0.0003, P50: 0.0002, P75: 0.0003, P90: 0.0005, P99: 0.002},
					FailureReasons: []api.Count{{What: "lookup: i/o timeout", Count: 1}}}},
		},
	}
	return run
}

// plainRun is a cnperf run that did not come from testconfig.yaml.
func plainRun() *api.Run {
	return &api.Run{APIVersion: api.APIVersion, Kind: api.KindRun, UUID: "0b5e7a4c-93d1-4c4e-8f0e-5d2a1c9b7e33", StartTime: t0, Platform: "kube",
		Results: []api.Result{
			result("qperf-default", api.TCPStream, "qperf", api.PathPodPodCrossNode, sample(0, f(9.4e9), nil, nil, "")),
			result("qperf-default", api.TCPRR, "qperf", api.PathPodPodCrossNode, sample(0, nil, f(31.6), nil, "")),
		}}
}

func encode(t *testing.T, runs ...*api.Run) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Encode(&b, runs); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestGolden(t *testing.T) {
	run := fixtureRun(t)
	reporttest.Golden(t, "results.json", encode(t, run))
	reporttest.Golden(t, "results-plain.json", encode(t, plainRun()))
	// The fixture itself, for the junit encoder's tests.
	b, err := json.MarshalIndent(run, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	reporttest.Golden(t, "run.json", append(b, '\n'))
}

// TestSchema checks the structure against tiger-bench's own reference results.json: the keys of
// every object, in order, and the figures computed from the samples.
func TestSchema(t *testing.T) {
	var got []map[string]json.RawMessage
	if err := json.Unmarshal(encode(t, fixtureRun(t)), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("%d elements, want 4 (one per test)", len(got))
	}
	var cfg map[string]any
	if err := json.Unmarshal(got[0]["config"], &cfg); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"TestKind", "Encap", "Dataplane", "NumPolicies", "NumServices", "NumPods", "HostNetwork", "TestNamespace",
		"Iterations", "Duration", "DNSPerf", "Perf", "TTFRConfig", "CalicoNodeCPULimit", "LeaveStandingConfig"} {
		if _, ok := cfg[k]; !ok {
			t.Errorf("config lacks %s: %v", k, cfg)
		}
	}
	var cd ClusterDetails
	if err := json.Unmarshal(got[0]["ClusterDetails"], &cd); err != nil {
		t.Fatal(err)
	}
	want := ClusterDetails{Cloud: "unknown", Provisioner: "kubeadm", NodeType: "linux", NodeOS: "Debian GNU/Linux 12 (bookworm)",
		NodeKernel: "6.1.0-27-amd64", NodeArch: "amd64", NumNodes: 2, Dataplane: "iptables", IPFamily: "ipv4",
		Encapsulation: "VXLANCrossSubnet", Product: "calico", CalicoVersion: "v3.30.2", K8SVersion: "v1.34.4",
		CRIVersion: "containerd://1.6.20", CNIOption: "Calico"}
	if cd != want {
		t.Errorf("ClusterDetails\n got %+v\nwant %+v", cd, want)
	}
	var tl ThruputLatency
	if err := json.Unmarshal(got[0]["thruput-latency"], &tl); err != nil {
		t.Fatal(err)
	}
	// pod-pod: two samples of 2120 and 2200 Mb/s; RTT 408 and 400 µs are one-way 204 and 200.
	if d := tl.Throughput.Direct; d.Min != 2120 || d.Max != 2200 || d.Avg != 2160 || d.Datapoints != 2 || d.Unit != "Mb/sec" || d.P50 != 2120 || d.P99 != 2200 {
		t.Errorf("pod-pod throughput %+v", d)
	}
	if d := tl.Latency.Direct; d.Min != 200 || d.Max != 204 || d.Unit != "us" || d.Datapoints != 2 {
		t.Errorf("pod-pod latency %+v (want one-way: half of cnperf's round trip)", d)
	}
	// pod-svc-pod throughput: one good sample, one failed: counted, not dropped.
	if d := tl.Throughput.Service; d.Datapoints != 1 || d.Failures == nil || *d.Failures != 1 {
		t.Errorf("pod-svc-pod throughput %+v", d)
	}
	// The external case failed as a whole: no figure, a failure.
	if !strings.Contains(string(got[0]["thruput-latency"]), `"ext-svc-pod": {}`) {
		t.Errorf("ext-svc-pod latency should be {} (nothing measured):\n%s", got[0]["thruput-latency"])
	}
	if !strings.Contains(string(got[0]["thruput-latency"]), `"ext-svc-pod": {
        "datapoints": 0,
        "failures": 1
      }`) && !strings.Contains(string(got[0]["thruput-latency"]), `"failures": 1`) {
		t.Errorf("ext-svc-pod throughput failure not counted:\n%s", got[0]["thruput-latency"])
	}
	// The iperf test ran with Calico reconfigured: its ClusterDetails say so.
	var cd2 ClusterDetails
	if err := json.Unmarshal(got[1]["ClusterDetails"], &cd2); err != nil || cd2.Encapsulation != "IPIP" || cd2.Dataplane != "bpf" {
		t.Errorf("ClusterDetails of the reconfigured test: %+v %v", cd2, err)
	}
	var ip Iperf
	if err := json.Unmarshal(got[1]["iperf"], &ip); err != nil {
		t.Fatal(err)
	}
	if ip.Throughput.Direct.Unit != "Mb/sec" || ip.Retries.Direct.Avg != 56242 || ip.Retries.Direct.Unit != "none" {
		t.Errorf("iperf %+v", ip)
	}
	var tt []TTFRSummary
	if err := json.Unmarshal(got[2]["ttfr"], &tt); err != nil {
		t.Fatal(err)
	}
	if s := tt[0].TTFRSummary; s.Datapoints != 5 || s.Unit != "seconds" || s.Failures == nil || *s.Failures != 1 || s.Min != 0.0012 || s.Max != 0.0045 || s.P50 != 0.0028 {
		t.Errorf("ttfr %+v", s)
	}
	var dns DNSPerf
	if err := json.Unmarshal(got[3]["dnsperf"], &dns); err != nil {
		t.Fatal(err)
	}
	if dns.FailedCurls != 1 || dns.SuccessfulCurls != 119 || dns.DuplicateSYN != nil || dns.LookupTime.Unit != "seconds" {
		t.Errorf("dnsperf %+v", dns)
	}
	if !strings.Contains(string(got[3]["dnsperf"]), `"DuplicateSYN": null`) {
		t.Errorf("DuplicateSYN must be null when not captured, never 0:\n%s", got[3]["dnsperf"])
	}
}

// TestReadsAsTigerBenchReference decodes tiger-bench's own reference results.json shape: our
// output must decode into the same structure a tiger-bench reader uses.
func TestReadsAsTigerBenchReference(t *testing.T) {
	type summary struct {
		Min, Max, Avg      float64
		P50, P75, P90, P99 float64
		Unit               string
	}
	type ref struct {
		Config struct {
			TestKind string
			Perf     *struct{ Direct, Service, External bool }
		} `json:"config"`
		ClusterDetails struct{ NumNodes int }
		TL             *struct{ Latency, Throughput map[string]summary } `json:"thruput-latency"`
		TTFR           []struct {
			S summary `json:"ttfrSummary"`
		} `json:"ttfr"`
	}
	var got []ref
	if err := json.Unmarshal(encode(t, fixtureRun(t)), &got); err != nil {
		t.Fatal(err)
	}
	if got[0].Config.TestKind != "thruput-latency" || got[0].TL == nil || got[0].TL.Latency["pod-pod"].Unit != "us" ||
		got[0].ClusterDetails.NumNodes != 2 || got[2].TTFR[0].S.Unit != "seconds" {
		t.Errorf("decoded as tiger-bench: %+v", got)
	}
}

func TestPlainRunMakesConfig(t *testing.T) {
	out, err := Build([]*api.Run{plainRun()})
	if err != nil {
		t.Fatal(err)
	}
	var cfg config.TigerBenchTestConfig
	if err := json.Unmarshal(out[0].Config, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.TestKind != "thruput-latency" || cfg.Perf == nil || !cfg.Perf.Direct || cfg.Perf.Service || cfg.Duration != 5 || cfg.Iterations != 1 || cfg.TestNamespace != "testns" {
		t.Errorf("config %+v perf %+v", cfg, cfg.Perf)
	}
	if out[0].ThruputLatency.Throughput.Direct.Avg != 9400 || out[0].ThruputLatency.Latency.Direct.Avg != 15.8 {
		t.Errorf("figures %+v", out[0].ThruputLatency)
	}
}

func TestDistributeNearestRank(t *testing.T) {
	tests := []struct {
		in   []float64
		want api.Distribution
	}{
		{[]float64{5}, api.Distribution{N: 1, Min: 5, Max: 5, Mean: 5, P50: 5, P75: 5, P90: 5, P99: 5}},
		{[]float64{4, 1, 3, 2}, api.Distribution{N: 4, Min: 1, Max: 4, Mean: 2.5, P50: 2, P75: 3, P90: 4, P99: 4}},
		// 10 values: P90 is the 9th, P99 the 10th (ceil(9.9)).
		{[]float64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, api.Distribution{N: 10, Min: 1, Max: 10, Mean: 5.5, P50: 5, P75: 8, P90: 9, P99: 10}},
	}
	for _, tt := range tests {
		in := append([]float64(nil), tt.in...)
		got := Distribute(tt.in)
		if !reflect.DeepEqual(*got, tt.want) {
			t.Errorf("Distribute(%v) = %+v, want %+v", in, *got, tt.want)
		}
		if !reflect.DeepEqual(in, tt.in) {
			t.Errorf("input modified: %v", tt.in)
		}
	}
	if Distribute(nil) != nil {
		t.Error("Distribute(nil) should be nil")
	}
}
