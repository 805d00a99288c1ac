package loadgen

import (
	"context"
	"encoding/json"
	"math"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/loadgen/control"
	"github.com/cnperf/cnperf/internal/stats/hdr"
)

// testToken is the run token of the tests' servers and clients.
const testToken = "0123456789abcdef0123456789abcdef"

// startServer runs a real server on loopback for the test's lifetime.
func startServer(t *testing.T, cfg ServerConfig) *Server {
	t.Helper()
	return startServerWith(t, cfg, nil)
}

// startServerWith is startServer with the listener wrapped by wrap (when not nil).
func startServerWith(t *testing.T, cfg ServerConfig, wrap func(net.Listener) net.Listener) *Server {
	t.Helper()
	if cfg.Bind == "" {
		cfg.Bind = "127.0.0.1"
	}
	if cfg.Token == "" {
		cfg.Token = testToken
	}
	s, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if wrap != nil {
		s.ln = wrap(s.ln)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("server: %v", err)
		}
	})
	return s
}

func runClient(t *testing.T, s *Server, cfg ClientConfig) *Report {
	t.Helper()
	cfg.Host = "127.0.0.1"
	cfg.Port = s.Port()
	if cfg.Token == "" {
		cfg.Token = testToken
	}
	if cfg.Duration == 0 {
		cfg.Duration = 300 * time.Millisecond
	}
	if cfg.ClientCPU == 0 {
		cfg.ClientCPU = -1
	}
	if cfg.ServerCPU == 0 {
		cfg.ServerCPU = -1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rep, err := Run(ctx, cfg)
	if err != nil {
		t.Fatalf("%s: %v", cfg.Profile, err)
	}
	if _, err := json.Marshal(rep.Sample); err != nil {
		t.Fatal(err)
	}
	return rep
}

func sumClient(r *Report) (c ClientFlow) {
	for _, f := range r.ClientFlows {
		c.TotalBytesTx += f.TotalBytesTx
		c.TotalBytesRx += f.TotalBytesRx
		c.TotalTransactions += f.TotalTransactions
		c.WindowBytesTx += f.WindowBytesTx
		c.WindowBytesRx += f.WindowBytesRx
		c.WindowTransactions += f.WindowTransactions
		c.LastSeq += f.LastSeq
	}
	return c
}

func sumServer(r *Report) (s control.FlowCounters) {
	for _, f := range r.Server.Flows {
		s.TotalBytesRx += f.TotalBytesRx
		s.TotalBytesTx += f.TotalBytesTx
		s.TotalTransactions += f.TotalTransactions
		s.PacketsRx += f.PacketsRx
		s.Lost += f.Lost
	}
	return s
}

func TestTCPStreamCounts(t *testing.T) {
	s := startServer(t, ServerConfig{})
	for _, tc := range []struct {
		profile  string
		parallel int
		zc       bool
	}{{"TCP_STREAM", 1, false}, {"TCP_STREAM", 3, false}, {"TCP_SENDFILE", 2, false}, {"TCP_STREAM", 1, true}} {
		rep := runClient(t, s, ClientConfig{Profile: tc.profile, Parallel: tc.parallel, Warmup: 50 * time.Millisecond, ZeroCopy: tc.zc})
		c, sv := sumClient(rep), sumServer(rep)
		if c.TotalBytesTx == 0 || c.TotalBytesTx != sv.TotalBytesRx {
			t.Errorf("%s x%d zc=%v: client sent %d bytes, server received %d", tc.profile, tc.parallel, tc.zc, c.TotalBytesTx, sv.TotalBytesRx)
		}
		for i, f := range rep.ClientFlows {
			if f.TotalBytesTx != rep.Server.Flows[i].TotalBytesRx {
				t.Errorf("flow %d: sent %d, received %d", i, f.TotalBytesTx, rep.Server.Flows[i].TotalBytesRx)
			}
		}
		smp := rep.Sample
		if smp.ThroughputBitsPerSecond == nil || *smp.ThroughputBitsPerSecond <= 0 || smp.Error != "" {
			t.Errorf("%s: no throughput in %+v", tc.profile, smp)
		}
		if *smp.BytesReceived > sv.TotalBytesRx {
			t.Errorf("window bytes %d exceed total %d", *smp.BytesReceived, sv.TotalBytesRx)
		}
		if smp.CPU == nil || smp.CPU.Client == nil || smp.CPU.Server == nil || smp.CPU.Client.ProcessPercent == nil {
			t.Errorf("missing CPU figures")
		}
		if tc.zc && !strings.Contains(strings.Join(smp.Notes, ";"), "zero-copy") {
			t.Errorf("zero-copy run has no zero-copy note: %v", smp.Notes)
		}
	}
}

func TestTCPMaertsCounts(t *testing.T) {
	s := startServer(t, ServerConfig{})
	rep := runClient(t, s, ClientConfig{Profile: "TCP_MAERTS", Parallel: 2})
	c, sv := sumClient(rep), sumServer(rep)
	if sv.TotalBytesTx == 0 || sv.TotalBytesTx != c.TotalBytesRx {
		t.Fatalf("server sent %d bytes, client received %d", sv.TotalBytesTx, c.TotalBytesRx)
	}
	if c.TotalBytesTx != 0 {
		t.Fatalf("client sent %d bytes in a reverse test", c.TotalBytesTx)
	}
}

func TestRRCounts(t *testing.T) {
	s := startServer(t, ServerConfig{})
	for _, tc := range []struct {
		profile         string
		parallel, burst int
		msg, resp       int
		noHist          bool
	}{
		{"TCP_RR", 1, 0, 1, 1, false},
		{"TCP_RR", 4, 16, 1, 1, false},
		{"TCP_RR", 2, 3, 100, 4000, false},
		{"TCP_RR", 1, 0, 1, 1, true},
		{"UDP_RR", 1, 0, 1, 1, false},
		{"UDP_RR", 3, 8, 64, 1000, false},
	} {
		rep := runClient(t, s, ClientConfig{Profile: tc.profile, Parallel: tc.parallel, Burst: tc.burst,
			MessageSize: tc.msg, ResponseSize: tc.resp, NoHistogram: tc.noHist})
		c, sv := sumClient(rep), sumServer(rep)
		if c.TotalTransactions == 0 || c.TotalTransactions != sv.TotalTransactions {
			t.Errorf("%+v: client completed %d transactions, server answered %d", tc, c.TotalTransactions, sv.TotalTransactions)
		}
		smp := rep.Sample
		if smp.TransactionsPerSecond == nil || *smp.TransactionsPerSecond <= 0 {
			t.Errorf("%+v: no rate", tc)
		}
		if tc.noHist {
			if smp.Histogram != nil || smp.Latency != nil {
				t.Errorf("histogram present with NoHistogram")
			}
			continue
		}
		h, err := hdr.FromAPI(smp.Histogram)
		if err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		// every transaction timed in the window is one the client counted in it, give or
		// take those in flight at the window's edges and those completed while the
		// controller, between reading the counters and switching the phase, was off its CPU
		// (client and server share this test's process and its 2 CPUs: up to ~1 ms, 0.05 %
		// of the window was seen); a histogram that took in the warm-up or missed part of
		// the window would be off by far more
		slack := int64(tc.parallel*(tc.burst+1)*2) + c.WindowTransactions/500
		if d := h.Count() - c.WindowTransactions; d > slack || d < -slack {
			t.Errorf("%+v: histogram has %d transactions, window %d", tc, h.Count(), c.WindowTransactions)
		}
		if *smp.Latency.P50 <= 0 || *smp.Latency.Max < *smp.Latency.P50 {
			t.Errorf("bad latency %+v", smp.Latency)
		}
	}
}

func TestCRRCounts(t *testing.T) {
	s := startServer(t, ServerConfig{})
	for _, tc := range []struct {
		parallel int
		close    string
	}{{1, ""}, {4, control.CloseRST}, {2, control.CloseGraceful}} {
		rep := runClient(t, s, ClientConfig{Profile: "TCP_CRR", Parallel: tc.parallel, CRRClose: tc.close, Duration: 200 * time.Millisecond})
		c, sv := sumClient(rep), sumServer(rep)
		if c.TotalTransactions == 0 || c.TotalTransactions != sv.TotalTransactions {
			t.Errorf("%+v: client made %d connections, server served %d", tc, c.TotalTransactions, sv.TotalTransactions)
		}
		want := "graceful"
		if tc.close == control.CloseRST {
			want = "RST"
		}
		if !strings.Contains(strings.Join(rep.Sample.Notes, ";"), want) || rep.Sample.ConnectionsPerSecond == nil {
			t.Errorf("%+v: notes %v", tc, rep.Sample.Notes)
		}
	}
}

func TestUDPStreamCounts(t *testing.T) {
	s := startServer(t, ServerConfig{})
	for _, tc := range []struct {
		name     string
		size     int
		parallel int
		rate     float64
		noOff    bool
	}{
		{"paced 1400", 1400, 1, 50e6, false},
		{"paced 64 x2 no offload", 64, 2, 20e6, true},
		{"unlimited 1400", 1400, 1, 0, false},
	} {
		rep := runClient(t, s, ClientConfig{Profile: "UDP_STREAM", MessageSize: tc.size, Parallel: tc.parallel,
			RateBitsPerSecond: tc.rate, NoOffload: tc.noOff, Warmup: 50 * time.Millisecond})
		smp := rep.Sample
		sent, recv, lost := *smp.PacketsSent, *smp.PacketsReceived, *smp.PacketsLost
		if sent == 0 || recv == 0 {
			t.Fatalf("%s: sent %d received %d", tc.name, sent, recv)
		}
		// sequence-number accounting must agree with plain counting (no duplicates on loopback)
		if lost != sent-recv {
			t.Errorf("%s: lost %d by sequence numbers, sent-received = %d", tc.name, lost, sent-recv)
		}
		if smp.JitterMicroseconds == nil || smp.LossPercent == nil {
			t.Errorf("%s: missing jitter or loss", tc.name)
		}
	}
}

// TestUDPStreamLoss forces loss with a tiny receive buffer and an unpaced sender and checks
// that the loss counted from sequence numbers equals sent minus received.
func TestUDPStreamLoss(t *testing.T) {
	s := startServer(t, ServerConfig{})
	rep := runClient(t, s, ClientConfig{Profile: "UDP_STREAM", MessageSize: 1400, RecvBuffer: 4096, NoOffload: true, ServerCPU: 0})
	smp := rep.Sample
	sent, recv, lost := *smp.PacketsSent, *smp.PacketsReceived, *smp.PacketsLost
	if lost == 0 {
		t.Fatalf("no loss with a 4 KiB receive buffer (sent %d, received %d)", sent, recv)
	}
	if lost != sent-recv {
		t.Fatalf("lost %d by sequence numbers, sent-received = %d", lost, sent-recv)
	}
	want := 100 * float64(lost) / float64(sent)
	if *smp.LossPercent != want {
		t.Fatalf("loss %% %v, want %v", *smp.LossPercent, want)
	}
}

func TestFixedDataPortAndErrors(t *testing.T) {
	s := startServer(t, ServerConfig{DataPort: 0})
	ctx := context.Background()
	// no server on the port: an error, not a zero sample
	_, err := Run(ctx, ClientConfig{Host: "127.0.0.1", Port: 1, Profile: "TCP_STREAM", Duration: time.Second, ClientCPU: -1, ServerCPU: -1})
	if err == nil || !strings.Contains(err.Error(), "connect to agent") {
		t.Fatalf("err = %v", err)
	}
	_, err = Run(ctx, ClientConfig{Host: "127.0.0.1", Port: s.Port(), Profile: "TCP_FOO", Duration: time.Second, ClientCPU: -1, ServerCPU: -1, Token: testToken})
	if err == nil || !strings.Contains(err.Error(), "unknown profile") {
		t.Fatalf("err = %v", err)
	}
}

// TestDualStackServer runs a server bound to every address and clients over IPv4 and, when the
// host has it, IPv6 loopback.
func TestDualStackServer(t *testing.T) {
	s, err := NewServer(ServerConfig{Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	hosts := []string{"127.0.0.1"}
	if c, err := net.Dial("tcp", net.JoinHostPort("::1", strconv.Itoa(s.Port()))); err == nil {
		c.Close()
		hosts = append(hosts, "::1")
	}
	for _, h := range hosts {
		for _, p := range []string{"TCP_RR", "UDP_STREAM", "UDP_RR", "TCP_CRR"} {
			rep, err := Run(ctx, ClientConfig{Host: h, Port: s.Port(), Profile: p, Duration: 150 * time.Millisecond,
				RateBitsPerSecond: 10e6, ClientCPU: -1, ServerCPU: -1, Token: testToken})
			if err != nil {
				t.Fatalf("%s over %s: %v", p, h, err)
			}
			if rep.Sample.Error != "" {
				t.Fatalf("%s over %s: %s", p, h, rep.Sample.Error)
			}
		}
	}
}

func TestIntervalCount(t *testing.T) {
	for _, tc := range []struct {
		window time.Duration
		want   int
	}{
		{10 * time.Second, 10}, {2 * time.Second, 10}, {time.Second, 10}, {800 * time.Millisecond, 8},
		{600 * time.Millisecond, 6}, {599 * time.Millisecond, 0}, {200 * time.Millisecond, 0},
	} {
		if got := intervalCount(tc.window.Nanoseconds()); got != tc.want {
			t.Errorf("intervalCount(%s) = %d, want %d", tc.window, got, tc.want)
		}
	}
}

// TestIntervals checks that a sample's intervals tile its measured window exactly and add up
// to the client's own window counters (bits sent, or transactions), on loopback.
func TestIntervals(t *testing.T) {
	s := startServer(t, ServerConfig{})
	for _, profile := range []string{"TCP_STREAM", "TCP_MAERTS", "TCP_RR"} {
		rep := runClient(t, s, ClientConfig{Profile: profile, Duration: 800 * time.Millisecond})
		iv := rep.Sample.Intervals
		if len(iv) != 8 {
			t.Fatalf("%s: %d intervals, want 8", profile, len(iv))
		}
		var secs, total float64
		for i, x := range iv {
			if i > 0 && math.Abs(iv[i-1].StartSeconds+iv[i-1].DurationSeconds-x.StartSeconds) > 1e-9 {
				t.Errorf("%s: interval %d starts at %v, the one before ends at %v", profile, i, x.StartSeconds, iv[i-1].StartSeconds+iv[i-1].DurationSeconds)
			}
			secs += x.DurationSeconds
			switch {
			case x.BitsPerSecond != nil:
				total += *x.BitsPerSecond * x.DurationSeconds / 8
			case x.TransactionsPerSecond != nil:
				total += *x.TransactionsPerSecond * x.DurationSeconds
			}
		}
		if math.Abs(secs-rep.Sample.DurationSeconds) > 1e-6 {
			t.Errorf("%s: intervals cover %v s, window %v s", profile, secs, rep.Sample.DurationSeconds)
		}
		c := sumClient(rep)
		want := float64(c.WindowBytesTx)
		switch profile {
		case "TCP_MAERTS":
			want = float64(c.WindowBytesRx)
		case "TCP_RR":
			want = float64(c.WindowTransactions)
		}
		if want <= 0 || math.Abs(total-want) > 1e-6*want {
			t.Errorf("%s: intervals add up to %v, window counters %v", profile, total, want)
		}
	}
}

// TestStreamLatCounts: TCP_STREAM_LAT is P stream flows and one probe flow of small
// request/responses on its own connection: the throughput is the streams' (what the server
// read of them), the transactions and the latency histogram the probe's.
func TestStreamLatCounts(t *testing.T) {
	s := startServer(t, ServerConfig{})
	for _, tc := range []struct{ parallel, msg, probe int }{{1, 1024, 0}, {2, 65536, 64}} {
		rep := runClient(t, s, ClientConfig{Profile: "TCP_STREAM_LAT", Parallel: tc.parallel, MessageSize: tc.msg,
			ResponseSize: tc.probe, Warmup: 50 * time.Millisecond})
		if len(rep.ClientFlows) != tc.parallel+1 || len(rep.Server.Flows) != tc.parallel+1 {
			t.Fatalf("%+v: %d client and %d server flows", tc, len(rep.ClientFlows), len(rep.Server.Flows))
		}
		wantProbe := tc.probe
		if wantProbe == 0 {
			wantProbe = 1
		}
		if rep.Setup.ResponseBytes != wantProbe {
			t.Errorf("%+v: probe size %d", tc, rep.Setup.ResponseBytes)
		}
		var streamRx int64
		for _, f := range rep.Server.Flows {
			if f.Flow < tc.parallel {
				streamRx += f.WindowBytesRx
			}
		}
		probe, probeSrv := rep.ClientFlows[tc.parallel], rep.Server.Flows[tc.parallel]
		if probe.TotalTransactions == 0 || probe.TotalTransactions != probeSrv.TotalTransactions {
			t.Errorf("%+v: probe completed %d transactions, server answered %d", tc, probe.TotalTransactions, probeSrv.TotalTransactions)
		}
		smp := rep.Sample
		if smp.ThroughputBitsPerSecond == nil || *smp.BytesReceived != streamRx ||
			math.Abs(*smp.ThroughputBitsPerSecond-float64(streamRx)*8/(float64(rep.Server.WindowNs)/1e9)) > 1 {
			t.Errorf("%+v: throughput %v, streams received %d", tc, smp.ThroughputBitsPerSecond, streamRx)
		}
		if *smp.Transactions != probe.WindowTransactions || smp.Histogram == nil || smp.Latency == nil ||
			smp.Latency.Provenance != api.LatencyMeasured || *smp.Latency.P99 < *smp.Latency.P50 {
			t.Errorf("%+v: transactions %v latency %+v", tc, smp.Transactions, smp.Latency)
		}
		h, err := hdr.FromAPI(smp.Histogram)
		if err != nil {
			t.Fatal(err)
		}
		if d := h.Count() - probe.WindowTransactions; d > 2+probe.WindowTransactions/500 || d < -2-probe.WindowTransactions/500 {
			t.Errorf("%+v: histogram has %d transactions, probe window %d", tc, h.Count(), probe.WindowTransactions)
		}
	}
}
