package figure

import (
	"math"
	"strings"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

func TestUnitFormat(t *testing.T) {
	tests := []struct {
		u    Unit
		v    float64
		want string
	}{
		{BitsPerSecond, 9.4123e9, "9.412 Gbit/s"},
		{BitsPerSecond, 941.23e6, "941.2 Mbit/s"},
		{BitsPerSecond, 94.12e6, "94.12 Mbit/s"},
		{BitsPerSecond, 1.5e12, "1.500 Tbit/s"},
		{BitsPerSecond, 512, "512.0 bit/s"},
		{BitsPerSecond, 0, "0 bit/s"},
		{PacketsPerSecond, 1.234e6, "1.234 Mpps"},
		{PacketsPerSecond, 32028, "32.03 kpps"},
		{TransactionsPerSecond, 28411, "28.41 k trans/s"},
		{ConnectionsPerSecond, 950, "950.0 conn/s"},
		{Microseconds, 12345.6, "12346 µs"},
		{Microseconds, 45.25, "45.25 µs"},
		{Percent, 0.17, "0.170%"},
		{Count, 3, "3.000"},
	}
	for _, tc := range tests {
		if got := tc.u.Format(tc.v); got != tc.want {
			t.Errorf("Format(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
	if got := BitsPerSecond.FormatCI(41.17e9, 0.87e9); got != "41.17 ± 0.87 Gbit/s" {
		t.Errorf("FormatCI = %q", got)
	}
	if got := BitsPerSecond.FormatCI(41.17e9, 0); got != "41.17 Gbit/s" {
		t.Errorf("FormatCI without spread = %q", got)
	}
}

func TestSignedPercent(t *testing.T) {
	for v, want := range map[float64]string{-10.106: "−10.1%", 2.21: "+2.2%", 0.01: "±0.0%", math.NaN(): "n/a", math.Inf(1): "n/a"} {
		if got := SignedPercent(v); got != want {
			t.Errorf("SignedPercent(%v) = %q, want %q", v, got, want)
		}
	}
	if !math.IsNaN(ChangePercent(0, 3)) || ChangePercent(200, 150) != -25 || ChangePercent(-4, -2) != 50 {
		t.Error("ChangePercent")
	}
}

func TestMainFigure(t *testing.T) {
	st := &api.Stat{N: 1, Mean: 1}
	tests := []struct {
		p    api.Profile
		s    api.Summary
		want string
		ok   bool
	}{
		{api.TCPStream, api.Summary{ThroughputBitsPerSecond: st, PacketsPerSecond: st}, "throughputBitsPerSecond", true},
		{api.UDPStream, api.Summary{PacketsPerSecond: st}, "packetsPerSecond", true},
		{api.TCPRR, api.Summary{TransactionsPerSecond: st, ThroughputBitsPerSecond: st}, "transactionsPerSecond", true},
		{api.TCPCRR, api.Summary{TransactionsPerSecond: st, ConnectionsPerSecond: st}, "connectionsPerSecond", true},
		{api.TCPCRR, api.Summary{TransactionsPerSecond: st}, "transactionsPerSecond", true},
		{api.TCPStream, api.Summary{}, "throughputBitsPerSecond", false},
	}
	for _, tc := range tests {
		r := &api.Result{Profile: tc.p, Summary: tc.s}
		f, ok := Main(r)
		if f.Key != tc.want || ok != tc.ok {
			t.Errorf("%s: Main = %s %v, want %s %v", tc.p, f.Key, ok, tc.want, tc.ok)
		}
	}
}

func TestCaseKeyIgnoresProcedureButNotWorkload(t *testing.T) {
	a := &api.Result{Profile: api.TCPRR, Driver: "native", Path: api.PathLoopback,
		Params: api.Params{DurationSeconds: 10, Samples: 3, MessageSizeBytes: 1, Parallel: 1, Options: map[string]string{"b": "2", "a": "1"}}}
	b := *a
	b.Params.DurationSeconds, b.Params.Samples, b.Params.WarmupSeconds = 30, 5, 2
	b.Params.Options = map[string]string{"a": "1", "b": "2"}
	if CaseKey(a) != CaseKey(&b) {
		t.Errorf("procedure changed the key:\n%s\n%s", CaseKey(a), CaseKey(&b))
	}
	c := *a
	c.Params.Burst = 4
	d := *a
	d.Driver = "netperf"
	if CaseKey(a) == CaseKey(&c) || CaseKey(a) == CaseKey(&d) || Workload(a) != Workload(&d) {
		t.Error("burst or driver not part of the key")
	}
	if got := CaseLabel(&c); got != "TCP_RR native loopback 1B x1 burst 4" {
		t.Errorf("label = %q", got)
	}
}

// A secondary network is part of the workload (the default network's figure and the attachment's
// are two cases of one run), named in the label with what the run found it to be; a case without
// one keeps the key it always had.
func TestCaseKeySecondaryNetwork(t *testing.T) {
	a := &api.Result{Profile: api.TCPStream, Driver: "native", Path: api.PathPodPodCrossNode,
		Params: api.Params{MessageSizeBytes: 131072, Parallel: 1}}
	b := *a
	b.Params.Network = "multus-e2e/e2e-bridge"
	if CaseKey(a) == CaseKey(&b) || strings.Contains(CaseKey(a), "|net=") {
		t.Errorf("keys %q and %q", CaseKey(a), CaseKey(&b))
	}
	if got := CaseLabel(&b); got != "TCP_STREAM native pod-pod-cross-node 128KiB x1 net multus-e2e/e2e-bridge" {
		t.Errorf("label without a placement = %q", got)
	}
	b.Placement = &api.Placement{Attachment: &api.Attachment{Network: "multus-e2e/e2e-bridge", Type: "bridge", MTUBytes: 1500}}
	if got := CaseLabel(&b); got != "TCP_STREAM native pod-pod-cross-node 128KiB x1 net multus-e2e/e2e-bridge (bridge mtu1500)" {
		t.Errorf("label = %q", got)
	}
}

func TestLatencyFromSampleHistogram(t *testing.T) {
	s := &api.Sample{Latency: &api.Latency{P99: fpt(5)}}
	if v, ok := LatencyP99.Sample(s); !ok || v != 5 {
		t.Errorf("tool p99 = %v %v", v, ok)
	}
	if _, ok := LatencyP50.Sample(s); ok {
		t.Error("p50 from nothing")
	}
}

func fpt(v float64) *float64 { return &v }

func TestMainFor(t *testing.T) {
	for _, tc := range []struct {
		p    api.Profile
		want Figure
	}{
		{api.TCPStream, Throughput}, {api.TCPMaerts, Throughput}, {api.UDPStream, Throughput},
		{api.TCPRR, TransactionRate}, {api.UDPRR, TransactionRate}, {api.TCPCRR, ConnectionRate},
	} {
		if got := MainFor(tc.p); got.Key != tc.want.Key {
			t.Errorf("MainFor(%s) = %s, want %s", tc.p, got.Key, tc.want.Key)
		}
		// Main of a result that carries every rate is MainFor of its profile.
		st := &api.Stat{N: 1, Mean: 1}
		r := api.Result{Profile: tc.p, Summary: api.Summary{ThroughputBitsPerSecond: st, PacketsPerSecond: st,
			TransactionsPerSecond: st, ConnectionsPerSecond: st}}
		if got, ok := Main(&r); !ok || got.Key != tc.want.Key {
			t.Errorf("Main(%s) = %s %t, want %s", tc.p, got.Key, ok, tc.want.Key)
		}
	}
}

// A programming result's headline is its programming time, and its label names the client
// node (and the standing policies): results differ only in those.
func TestProgrammingResult(t *testing.T) {
	v := 0.25
	r := api.Result{Profile: api.PolicyDeny, Driver: api.ProgrammingDriver, Path: api.PathPodPodCrossNode,
		Params:  api.Params{Samples: 1, Options: map[string]string{"node": "node2", "standingPolicies": "100"}},
		Summary: api.Summary{ProgrammingSeconds: &api.Stat{N: 1, Mean: v}}}
	f, ok := Main(&r)
	if !ok || f.Key != "programmingSeconds" || f.HigherIsBetter {
		t.Errorf("Main = %s (%v), want programmingSeconds, lower is better", f.Key, ok)
	}
	if got := CaseLabel(&r); got != "POLICY_DENY probe pod-pod-cross-node from node2 with 100 policies" {
		t.Errorf("CaseLabel = %q", got)
	}
	if got := Seconds.Format(v); got != "250.0 ms" {
		t.Errorf("Seconds.Format(0.25) = %q", got)
	}
}

// TestFailureSummary: a failed result's cause in a phrase, its own error first, else the count
// of its failed samples (the exit summaries of cnperf run and tiger-bench, the table's PARTIAL
// cell, junit's SamplesFailed message).
func TestFailureSummary(t *testing.T) {
	for _, tt := range []struct {
		r    api.Result
		want string
	}{
		{api.Result{Error: "all 2 samples failed; first: refused", Summary: api.Summary{SamplesTotal: 2, SamplesFailed: 2}},
			"all 2 samples failed; first: refused"},
		{api.Result{Summary: api.Summary{SamplesTotal: 3, SamplesFailed: 1}}, "1 of 3 samples failed"},
		{api.Result{Error: "no server"}, "no server"},
	} {
		if got := FailureSummary(&tt.r); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.r, got, tt.want)
		}
	}
}
