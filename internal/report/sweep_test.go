package report

import (
	"path/filepath"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/runfile"
	"strings"
	"testing"
)

// TestSweepTableGolden renders a real sweep (testdata/real-sweep-run.jsonl: `cnperf run
// --profile TCP_RR --parallel 1,10,20,40 --duration 1s --samples 3` on loopback, this
// machine) as the text table: the main table, then the latency-vs-flows table of seed 003.
func TestSweepTableGolden(t *testing.T) {
	runs, err := runfile.Read(filepath.Join("testdata", "real-sweep-run.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	out := tableGolden(t, "table-sweep", runs...)
	if !strings.Contains(string(out), "TCP_RR native loopback 1B — latency and transaction rate vs parallel flows") {
		t.Errorf("no sweep section:\n%s", out)
	}
}

// TestSweepTableStreamsGolden: a message-size sweep of TCP_STREAM given out of order, and a
// UDP_STREAM sweep of flows whose last case failed (built like fixtureRun): throughput with
// its interval, packet rate and loss for UDP, and the failed row with its cause, not a zero.
func TestSweepTableStreamsGolden(t *testing.T) {
	tp := func(gbit ...float64) []api.Sample {
		var ss []api.Sample
		for i, g := range gbit {
			ss = append(ss, sample(i+1, func(x *api.Sample) { x.ThroughputBitsPerSecond = fp(g * 1e9) }))
		}
		return ss
	}
	udp := func(gbit, pps, loss float64) func(*api.Sample) {
		return func(x *api.Sample) {
			x.ThroughputBitsPerSecond, x.PacketsPerSecond, x.LossPercent = fp(gbit*1e9), fp(pps), fp(loss)
		}
	}
	run := &api.Run{APIVersion: api.APIVersion, Kind: api.KindRun, UUID: "5d0c7a52-8f0e-4c1e-9b1a-2f7e3c9d4b61", StartTime: t0,
		CnperfVersion: "v0.1.0-test", Platform: "local"}
	run.Results = []api.Result{
		result(api.TCPStream, "native", api.PathLoopback, 131072, 1, tp(41.2, 40.8, 41.5)),
		result(api.TCPStream, "native", api.PathLoopback, 1024, 1, tp(3.1, 3.3, 3.2)),
		result(api.TCPStream, "native", api.PathLoopback, 16384, 1, tp(21.0, 22.4, 21.9)),
		result(api.UDPStream, "native", api.PathLoopback, 1400, 1, []api.Sample{
			sample(1, udp(1.21, 108035, 0.12)), sample(2, udp(1.19, 106250, 0.31)), sample(3, udp(1.23, 109821, 0.08))}),
		result(api.UDPStream, "native", api.PathLoopback, 1400, 2, []api.Sample{
			sample(1, udp(2.01, 179464, 1.5)), sample(2, udp(1.96, 175000, 2.1)), failed(3, "read udp 127.0.0.1:7101: i/o timeout")}),
		result(api.UDPStream, "native", api.PathLoopback, 1400, 4, []api.Sample{
			failed(1, "dial udp 127.0.0.1:7101: connect: connection refused"), failed(2, "dial udp 127.0.0.1:7101: connect: connection refused")}),
	}
	out := tableGolden(t, "table-sweep-streams", run)
	for _, w := range []string{"TCP_STREAM native loopback x1 — throughput vs message size",
		"UDP_STREAM native loopback 1400B — throughput and packet rate vs parallel flows",
		"#6 FAILED: every sample failed: dial udp 127.0.0.1:7101: connect: connection refused"} {
		if !strings.Contains(string(out), w) {
			t.Errorf("table lacks %q", w)
		}
	}
}
