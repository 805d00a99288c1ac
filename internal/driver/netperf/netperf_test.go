package netperf

import (
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/driver/toolkit/fixture"
	"github.com/cnperf/cnperf/internal/plan"
)

// The fixtures in testdata/captured are real netperf 2.7.1 outputs on loopback, captured by
// testdata/tools/capture.sh (netperf built by .ci/install-third-party.sh); each .cmd file
// holds the argv, exit code, version and date.
const captured = "testdata/captured"

func tcase(p api.Profile, mut ...func(*api.Params)) plan.Case {
	c := plan.Case{Profile: p, Driver: Name, Path: api.PathPodPodCrossNode,
		Params: api.Params{DurationSeconds: 10, Samples: 1, Parallel: 1}}
	for _, m := range mut {
		m(&c.Params)
	}
	return c
}

var target = driver.Target{Host: "10.0.0.2"}

func TestClientArgv(t *testing.T) {
	tests := []struct {
		name   string
		c      plan.Case
		t      driver.Target
		flow   int
		warmup bool
		want   string // without the -k selector list
		err    string
	}{
		{name: "stream", c: tcase(api.TCPStream, func(p *api.Params) { p.MessageSizeBytes = 16384 }),
			want: "netperf -P 0 -H 10.0.0.2 -p 12865 -t TCP_STREAM -l 10 -f m -c -C -- -k SEND -P ,12866 -m 16384"},
		{name: "stream without send timing", c: tcase(api.TCPStream, func(p *api.Params) {
			p.Options = map[string]string{"netperf.sendTiming": "false"}
		}),
			want: "netperf -P 0 -H 10.0.0.2 -p 12865 -t TCP_STREAM -l 10 -f m -c -C -- -k STREAM -P ,12866"},
		{name: "duration rounds up to whole seconds", c: tcase(api.TCPStream, func(p *api.Params) { p.DurationSeconds = 60.4 }),
			want: "netperf -P 0 -H 10.0.0.2 -p 12865 -t TCP_STREAM -l 61 -f m -c -C -- -k SEND -P ,12866"},
		{name: "a minute is -l 60, never 1m0s", c: tcase(api.TCPStream, func(p *api.Params) { p.DurationSeconds = 60 }),
			want: "netperf -P 0 -H 10.0.0.2 -p 12865 -t TCP_STREAM -l 60 -f m -c -C -- -k SEND -P ,12866"},
		{name: "maerts sets netserver's send size", c: tcase(api.TCPMaerts, func(p *api.Params) { p.MessageSizeBytes = 65536 }),
			want: "netperf -P 0 -H 10.0.0.2 -p 12865 -t TCP_MAERTS -l 10 -f m -c -C -- -k STREAM -P ,12866 -m ,65536"},
		{name: "udp stream may be routed", c: tcase(api.UDPStream, func(p *api.Params) { p.MessageSizeBytes = 1400 }),
			want: "netperf -P 0 -H 10.0.0.2 -p 12865 -t UDP_STREAM -l 10 -f m -c -C -- -k SEND -P ,12866 -m 1400 -R 1"},
		{name: "sendfile keeps its banner", c: tcase(api.TCPSendfile, func(p *api.Params) { p.MessageSizeBytes = 16384 }),
			want: "netperf -H 10.0.0.2 -p 12865 -t TCP_SENDFILE -l 10 -f m -- -P ,12866 -m 16384"},
		{name: "rr", c: tcase(api.TCPRR),
			want: "netperf -P 0 -H 10.0.0.2 -p 12865 -t TCP_RR -l 10 -j -c -C -- -k RR -P ,12866"},
		{name: "rr sizes and burst, second flow, no cpu", c: tcase(api.UDPRR, func(p *api.Params) {
			p.MessageSizeBytes, p.ResponseSizeBytes, p.Burst, p.Parallel = 64, 1024, 4, 2
			p.Options = map[string]string{"netperf.cpu": "false"}
		}), flow: 1,
			want: "netperf -P 0 -H 10.0.0.2 -p 12865 -t UDP_RR -l 10 -j -- -k RR -P ,12867 -r 64,1024 -b 4"},
		{name: "response size alone", c: tcase(api.TCPRR, func(p *api.Params) { p.ResponseSizeBytes = 4096 }),
			want: "netperf -P 0 -H 10.0.0.2 -p 12865 -t TCP_RR -l 10 -j -c -C -- -k RR -P ,12866 -r 1,4096"},
		{name: "crr", c: tcase(api.TCPCRR),
			want: "netperf -P 0 -H 10.0.0.2 -p 12865 -t TCP_CRR -l 10 -j -c -C -- -k RR -P ,12866"},
		{name: "nodeport: control and data ports mapped", c: tcase(api.TCPRR, func(p *api.Params) { p.Parallel = 2 }), flow: 1,
			t:    driver.Target{Host: "192.168.1.5", Ports: map[int]int{12865: 30865, 12866: 30866, 12867: 30867}},
			want: "netperf -P 0 -H 192.168.1.5 -p 30865 -t TCP_RR -l 10 -j -c -C -- -k RR -P ,30867"},
		{name: "ports from options and ipv6", c: tcase(api.TCPRR, func(p *api.Params) {
			p.Options = map[string]string{"port": "47000", "dataPort": "47100"}
			p.IPFamily = "ipv6"
		}), t: driver.Target{Host: "fd00::2"},
			want: "netperf -P 0 -H fd00::2 -p 47000 -6 -t TCP_RR -l 10 -j -c -C -- -k RR -P ,47100 -6"},
		{name: "warm-up run", c: tcase(api.TCPRR, func(p *api.Params) { p.WarmupSeconds = 2 }), warmup: true,
			want: "netperf -P 0 -H 10.0.0.2 -p 12865 -t TCP_RR -l 2 -j -c -C -- -k RR -P ,12866"},
		{name: "rate refused", c: tcase(api.TCPStream, func(p *api.Params) { p.RateBitsPerSecond = 1e9 }), err: "cannot limit the send rate"},
		{name: "burst on a stream refused", c: tcase(api.TCPStream, func(p *api.Params) { p.Burst = 2 }), err: "burst applies to request/response"},
		{name: "control port among data ports", c: tcase(api.TCPRR, func(p *api.Params) {
			p.Parallel = 3
			p.Options = map[string]string{"port": "5002", "dataPort": "5000"}
		}), err: "among the data ports"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tg := tt.t
			if tg.Host == "" {
				tg = target
			}
			argv, err := clientArgv(tt.c, tg, tt.warmup, tt.flow)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Join(argv, " ")
			got = strings.Replace(got, strings.Join(sendSelectors, ","), "SEND", 1)
			got = strings.Replace(got, strings.Join(streamSelectors, ","), "STREAM", 1)
			got = strings.Replace(got, strings.Join(rrSelectors, ","), "RR", 1)
			if got != tt.want {
				t.Errorf("\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestClientOneCommandPerFlow(t *testing.T) {
	cmds, err := fixture.Client(Driver{}, tcase(api.TCPStream, func(p *api.Params) { p.Parallel = 4 }), target, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(cmds) != 4 {
		t.Fatalf("%d commands", len(cmds))
	}
	for i, c := range cmds {
		if !strings.Contains(strings.Join(c.Argv, " "), " -P ,1286"+string(rune('6'+i))) {
			t.Errorf("flow %d: %v", i, c.Argv)
		}
	}
}

func TestServers(t *testing.T) {
	got := driver.Servers(Driver{}, []plan.Case{
		tcase(api.TCPRR), tcase(api.TCPStream, func(p *api.Params) { p.Parallel = 3 }),
		{Driver: "iperf3", Profile: api.TCPStream},
	})
	if len(got) != 1 {
		t.Fatalf("%+v", got)
	}
	s := got[0]
	if strings.Join(s.Argv, " ") != "netserver -D -p 12865" || len(s.Ports) != 7 {
		t.Fatalf("%+v", s)
	}
	if s.Ports[5].Name != "data-2" || s.Ports[5].Port != 12868 || s.Ports[6].Protocol != "UDP" {
		t.Errorf("ports %+v", s.Ports)
	}
}

// capturedOpts are the ports capture.sh gave netserver.
var capturedOpts = map[string]string{"port": "47341", "dataPort": "47342"}

// fixtureCase maps a captured fixture that the driver's own argv produced to its case.
func fixtureCase(name string) plan.Case {
	one := func(p api.Profile, mut ...func(*api.Params)) plan.Case {
		c := tcase(p, mut...)
		c.Params.DurationSeconds = 1
		c.Params.Options = capturedOpts
		return c
	}
	switch name {
	case "tcp_stream", "truncated_stream":
		return one(api.TCPStream)
	case "tcp_stream_m1024":
		return one(api.TCPStream, func(p *api.Params) { p.MessageSizeBytes = 1024 })
	case "tcp_maerts":
		return one(api.TCPMaerts)
	case "udp_stream":
		return one(api.UDPStream, func(p *api.Params) { p.MessageSizeBytes = 1400 })
	case "tcp_sendfile":
		return one(api.TCPSendfile)
	case "tcp_rr_burst4":
		return one(api.TCPRR, func(p *api.Params) { p.Burst = 4 })
	case "tcp_rr_r1024":
		return one(api.TCPRR, func(p *api.Params) { p.MessageSizeBytes = 1024 })
	case "udp_rr":
		return one(api.UDPRR)
	case "tcp_crr":
		return one(api.TCPCRR)
	case "tcp_stream_p2_flow0", "tcp_stream_p2_flow1":
		return one(api.TCPStream, func(p *api.Params) { p.Parallel = 2 })
	case "tcp_rr_p2_flow0", "tcp_rr_p2_flow1":
		return one(api.TCPRR, func(p *api.Params) { p.Parallel = 2 })
	default:
		return one(api.TCPRR)
	}
}

// driverFixtures are the captures made with the driver's own argv.
var driverFixtures = []string{"tcp_stream", "tcp_stream_m1024", "tcp_maerts", "udp_stream", "tcp_sendfile",
	"tcp_rr", "tcp_rr_burst4", "tcp_rr_r1024", "udp_rr", "tcp_crr",
	"tcp_stream_p2_flow0", "tcp_stream_p2_flow1", "tcp_rr_p2_flow0", "tcp_rr_p2_flow1"}

func TestCapturedFixturesUseTheDriversArgv(t *testing.T) {
	tgt := driver.Target{Host: "127.0.0.1"}
	for _, name := range driverFixtures {
		f := fixture.Load(t, captured, name)
		flow := 0
		if strings.HasSuffix(name, "_flow1") {
			flow = 1
		}
		got, err := clientArgv(fixtureCase(name), tgt, false, flow)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, f.Argv) {
			t.Errorf("%s:\n driver %q\nfixture %q", name, got, f.Argv)
		}
	}
}

func TestParseCapturedGolden(t *testing.T) {
	names := append([]string{"refused", "interrupted", "truncated", "garbage", "nonutf8"}, driverFixtures...)
	for _, name := range names {
		if strings.Contains(name, "_flow") {
			continue // see TestParallelFlows
		}
		t.Run(name, func(t *testing.T) {
			f := fixture.Load(t, captured, name)
			s, err := fixture.Parse(Driver{}, fixtureCase(name), []driver.Output{f.Output()})
			var r fixture.Result
			if err != nil {
				r.Error = err.Error()
				if s.ThroughputBitsPerSecond != nil || s.TransactionsPerSecond != nil {
					t.Error("failed sample carries a figure")
				}
			} else {
				r.Sample = &s
			}
			fixture.Golden(t, filepath.Join("testdata/golden", name+".json"), r)
		})
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

func parse(t *testing.T, name string) api.Sample {
	t.Helper()
	f := fixture.Load(t, captured, name)
	s, err := fixture.Parse(Driver{}, fixtureCase(name), []driver.Output{f.Output()})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return s
}

func TestHandVerified(t *testing.T) {
	// tcp_stream.stdout: REMOTE_RECV_THROUGHPUT=893.40 with THROUGHPUT_UNITS=10^6bits/s:
	// exactly 893.40e6 bits/s (the receiver's rate, not LOCAL_SEND_THROUGHPUT=893.35);
	// LOCAL_TRANSPORT_RETRANS=38, REMOTE_TRANSPORT_RETRANS=0. Its latency selectors are the
	// send calls' time (MIN/MEAN/P50/P90/P99/MAX/STDDEV 1/122.90/3/4/1750/85334/1647.43 µs),
	// never a round trip.
	s := parse(t, "tcp_stream")
	if !near(*s.ThroughputBitsPerSecond, 893.40e6) || *s.Retransmits != 38 || s.Latency != nil || *s.BytesReceived != 132536617 {
		t.Errorf("stream %v retrans %v latency %v", *s.ThroughputBitsPerSecond, *s.Retransmits, s.Latency)
	}
	if l := s.SendCallMicroseconds; l == nil || *l.Min != 1 || *l.Mean != 122.90 || *l.P50 != 3 || *l.P90 != 4 || *l.P99 != 1750 ||
		*l.Max != 85334 || *l.Stddev != 1647.43 || l.Method != "tool" || l.Provenance != api.LatencyMeasured ||
		!strings.Contains(l.Note, "not a round trip") {
		t.Errorf("stream send calls %+v", l)
	}
	if *s.CPU.Client.HostPercent != 100 || *s.CPU.Server.ServiceDemandMicrosecondsPerKB != 18.340 {
		t.Errorf("cpu %+v %+v", s.CPU.Client, s.CPU.Server)
	}
	// tcp_maerts: LOCAL_RECV_THROUGHPUT=7319.74 is the receiver (netperf itself); netserver
	// retransmitted 11.
	if s := parse(t, "tcp_maerts"); !near(*s.ThroughputBitsPerSecond, 7319.74e6) || *s.Retransmits != 11 {
		t.Errorf("maerts %v %v", *s.ThroughputBitsPerSecond, *s.Retransmits)
	}
	// udp_stream: 60181 datagrams sent, 35188 received in 1.00 s; received 392.93 10^6bits/s;
	// send calls' P99_LATENCY=47 µs.
	s = parse(t, "udp_stream")
	if !near(*s.ThroughputBitsPerSecond, 392.93e6) || *s.PacketsLost != 60181-35188 ||
		!near(*s.LossPercent, 100*float64(60181-35188)/60181) || !near(*s.PacketsPerSecond, 35188) || s.Retransmits != nil {
		t.Errorf("udp %v lost %v %v pps %v", *s.ThroughputBitsPerSecond, *s.PacketsLost, *s.LossPercent, *s.PacketsPerSecond)
	}
	if s.SendCallMicroseconds == nil || *s.SendCallMicroseconds.P99 != 47 || s.Latency != nil {
		t.Errorf("udp send calls %+v latency %+v", s.SendCallMicroseconds, s.Latency)
	}
	// tcp_maerts asks for no latency selectors: netperf would time its receive calls.
	if s := parse(t, "tcp_maerts"); s.SendCallMicroseconds != nil {
		t.Errorf("maerts send calls %+v", s.SendCallMicroseconds)
	}
	// tcp_rr: TRANSACTION_RATE=59689.573, MIN/MEAN/P50/P90/P99/MAX/STDDEV 6/16.71/6/9/42/23367/273.08 µs.
	s = parse(t, "tcp_rr")
	l := s.Latency
	if *s.TransactionsPerSecond != 59689.573 || *l.Min != 6 || *l.Mean != 16.71 || *l.P50 != 6 || *l.P90 != 9 ||
		*l.P99 != 42 || *l.Max != 23367 || *l.Stddev != 273.08 || l.Method != "tool" || s.ConnectionsPerSecond != nil {
		t.Errorf("rr %v %+v", *s.TransactionsPerSecond, l)
	}
	if *s.CPU.Client.ServiceDemandMicrosecondsPerTransaction != 33.507 {
		t.Errorf("rr service demand %+v", s.CPU.Client)
	}
	// tcp_crr: connections per second = transactions per second = 15468.007; netserver's
	// REMOTE_CPU_UTIL=498.02 is no system-wide utilisation: left out, with a note.
	s = parse(t, "tcp_crr")
	if *s.ConnectionsPerSecond != 15468.007 || s.CPU.Server != nil || *s.CPU.Client.HostPercent != 99.51 ||
		!strings.Contains(strings.Join(s.Notes, " "), "REMOTE_CPU_UTIL=498.02") {
		t.Errorf("crr %v %+v %v", *s.ConnectionsPerSecond, s.CPU, s.Notes)
	}
	// tcp_sendfile (classic table): 4020.65 10^6bits/sec over 1.01 s.
	if s := parse(t, "tcp_sendfile"); !near(*s.ThroughputBitsPerSecond, 4020.65e6) || s.DurationSeconds != 1.01 {
		t.Errorf("sendfile %v", *s.ThroughputBitsPerSecond)
	}
}

func TestUnitsAreConvertedExactly(t *testing.T) {
	for units, want := range map[string]float64{
		"10^0bits/s": 1234.5, "10^3bits/s": 1234.5e3, "10^6bits/s": 1234.5e6, "10^9bits/s": 1234.5e9,
		"Bytes/s": 1234.5 * 8, "KBytes/s": 1234.5 * 8192, "MBytes/s": 1234.5 * 8 * 1048576, "GBytes/s": 1234.5 * 8 * 1073741824,
	} {
		r := Result{Values: map[string]string{"THROUGHPUT": "1234.5", "REMOTE_RECV_THROUGHPUT": "1234.5", "THROUGHPUT_UNITS": units}}
		s, err := r.ToSample(api.TCPStream)
		if err != nil || !near(*s.ThroughputBitsPerSecond, want) {
			t.Errorf("%s: %v %v", units, s.ThroughputBitsPerSecond, err)
		}
	}
	r := Result{Values: map[string]string{"THROUGHPUT": "10479.12", "THROUGHPUT_UNITS": "Trans/s"}}
	if _, err := r.ToSample(api.TCPStream); err == nil {
		t.Error("Trans/s accepted as a stream throughput")
	}
	r = Result{Values: map[string]string{"THROUGHPUT": "5", "THROUGHPUT_UNITS": "furlongs/s"}}
	if _, err := r.ToSample(api.TCPStream); err == nil {
		t.Error("unknown unit accepted")
	}
}

func TestFailures(t *testing.T) {
	for name, want := range map[string]string{
		"refused":     "netperf: establish control: are you sure there is a netserver listening on 127.0.0.1 at port 47399?",
		"interrupted": "netperf printed nothing (exit code 124)",
		"truncated":   "incomplete",
		"garbage":     "netperf output has no results",
		"nonutf8":     "incomplete",
	} {
		f := fixture.Load(t, captured, name)
		_, err := fixture.Parse(Driver{}, fixtureCase(name), []driver.Output{f.Output()})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", name, err, want)
		}
	}
	// A killed netperf (sample timeout): the execution error is the cause.
	_, err := fixture.Parse(Driver{}, tcase(api.TCPRR), []driver.Output{{ExitCode: -1, Err: errT("netperf did not finish within 40s and was killed")}})
	if err == nil || !strings.Contains(err.Error(), "did not finish") {
		t.Errorf("killed: %v", err)
	}
}

type errT string

func (e errT) Error() string { return string(e) }

func TestParallelFlows(t *testing.T) {
	c := fixtureCase("tcp_rr_p2_flow0")
	f0, f1 := fixture.Load(t, captured, "tcp_rr_p2_flow0"), fixture.Load(t, captured, "tcp_rr_p2_flow1")
	o0, o1 := f0.Output(), f1.Output()
	o1.StartTime = o1.StartTime.Add(3 * time.Millisecond)
	o1.EndTime = o1.EndTime.Add(5 * time.Millisecond)
	s, err := fixture.Parse(Driver{}, c, []driver.Output{o0, o1})
	if err != nil {
		t.Fatal(err)
	}
	// Rates add: 36271.149 + 35214.126.
	r0, r1 := 36271.149, 35214.126
	if !near(*s.TransactionsPerSecond, r0+r1) || len(s.Flows) != 2 || *s.Retransmits != 0 {
		t.Errorf("tps %v flows %d retrans %v", *s.TransactionsPerSecond, len(s.Flows), *s.Retransmits)
	}
	l := s.Latency
	// min of mins (6, 6), max of maxes (32412, 32345), mean weighted by transactions.
	wantMean := (r0*27.51 + r1*28.24) / (r0 + r1)
	if *l.Min != 6 || *l.Max != 32412 || !near(*l.Mean, wantMean) {
		t.Errorf("pooled latency %+v (want mean %v)", l, wantMean)
	}
	// Percentiles are never averaged: the aggregate has none, the flows keep theirs.
	if l.P50 != nil || l.P90 != nil || l.P99 != nil || !strings.Contains(l.Note, "percentiles cannot be combined") {
		t.Errorf("aggregate percentiles: %+v", l)
	}
	if *s.Flows[0].Latency.P99 != 58 || *s.Flows[1].Latency.P99 != 62 {
		t.Errorf("flow percentiles lost")
	}
	// Pooled stddev: sqrt(Σw(σ²+μ²)/Σw − μ²), w = transactions (rate × 1.00 s).
	w0, w1 := r0*1.00, r1*1.00
	wantSD := math.Sqrt((w0*(319.63*319.63+27.51*27.51)+w1*(324.16*324.16+28.24*28.24))/(w0+w1) - wantMean*wantMean)
	if !near(*l.Stddev, wantSD) {
		t.Errorf("stddev %v want %v", *l.Stddev, wantSD)
	}
	// CPU: mean of the system-wide figures; service demand recomputed for the summed work
	// with the CPU count (2) recovered from a flow's own figures.
	wantCPU := 100.0
	if !near(*s.CPU.Client.HostPercent, wantCPU) ||
		math.Abs(*s.CPU.Client.ServiceDemandMicrosecondsPerTransaction-wantCPU*1e4*2/(r0+r1)) > 1e-3 {
		t.Errorf("cpu %+v want sd %v", s.CPU.Client, wantCPU*1e4*2/(r0+r1))
	}
	if !s.StartTime.Equal(o0.StartTime) || !s.EndTime.Equal(o1.EndTime) {
		t.Errorf("window %v-%v", s.StartTime, s.EndTime)
	}
	fixture.Golden(t, "testdata/golden/tcp_rr_parallel2.json", s)

	// Streams: throughputs add.
	st0, st1 := fixture.Load(t, captured, "tcp_stream_p2_flow0"), fixture.Load(t, captured, "tcp_stream_p2_flow1")
	ss, err := fixture.Parse(Driver{}, fixtureCase("tcp_stream_p2_flow0"), []driver.Output{st0.Output(), st1.Output()})
	if err != nil || *ss.ThroughputBitsPerSecond <= *ss.Flows[0].ThroughputBitsPerSecond ||
		!near(*ss.ThroughputBitsPerSecond, *ss.Flows[0].ThroughputBitsPerSecond+*ss.Flows[1].ThroughputBitsPerSecond) {
		t.Errorf("stream flows: %v %+v", err, ss)
	}
	fixture.Golden(t, "testdata/golden/tcp_stream_parallel2.json", ss)

	// One failed flow fails the sample: a partial sum would be a wrong figure.
	bad := fixture.Load(t, captured, "refused").Output()
	if _, err := fixture.Parse(Driver{}, c, []driver.Output{o0, bad}); err == nil || !strings.Contains(err.Error(), "flow 2 of 2") {
		t.Errorf("partial failure: %v", err)
	}
}

func importOne(t *testing.T, name string, p api.Profile) driver.ImportedCase {
	t.Helper()
	got, err := Driver{}.ImportAs(name, fixture.Load(t, captured, name).Stdout, p)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(got) != 1 {
		t.Fatalf("%s: %d cases", name, len(got))
	}
	return got[0]
}

func TestImport(t *testing.T) {
	// The Mizar procedure's -o CSV (seed 003): 6,7.85,8078,70.28,126655.994.
	got := importOne(t, "mizar_csv", "")
	s := got.Sample
	if got.Profile != api.TCPRR || *s.TransactionsPerSecond != 126655.994 || *s.Latency.Mean != 7.85 ||
		*s.Latency.Min != 6 || *s.Latency.Max != 8078 || *s.Latency.Stddev != 70.28 || s.Latency.P99 != nil {
		t.Errorf("mizar: %+v %+v", got, s.Latency)
	}
	// k8s-netperf's keyval with banner (seed 000): THROUGHPUT=8255.84 10^6bits/s; RT_LATENCY=-1.000
	// is no figure; P99_LATENCY=6 is the send calls' p99, not a round trip.
	got = importOne(t, "k8s_netperf_stream", "")
	if got.Profile != api.TCPStream || !near(*got.Sample.ThroughputBitsPerSecond, 8255.84e6) || got.Sample.Latency != nil ||
		*got.Sample.Retransmits != 1 || got.Sample.SendCallMicroseconds == nil || *got.Sample.SendCallMicroseconds.P99 != 6 ||
		got.Sample.SendCallMicroseconds.P50 != nil {
		t.Errorf("k8s-netperf: %+v %+v", got, got.Sample.SendCallMicroseconds)
	}
	// Several tests in one log, split at their banners.
	two := append(fixture.Load(t, captured, "mizar_csv").Stdout, fixture.Load(t, captured, "k8s_netperf_stream").Stdout...)
	if got, err := (Driver{}).Import("two.txt", two); err != nil || len(got) != 2 {
		t.Errorf("two tests: %d %v", len(got), err)
	}
	// No banner and no PROTOCOL/DIRECTION: the profile must be given.
	var kv []byte
	for _, l := range strings.SplitAfter(string(fixture.Load(t, captured, "tcp_rr").Stdout), "\n") {
		if !strings.HasPrefix(l, "PROTOCOL=") && !strings.HasPrefix(l, "DIRECTION=") {
			kv = append(kv, l...)
		}
	}
	if _, err := (Driver{}).Import("kv.txt", kv); err == nil || !strings.Contains(err.Error(), "give the profile") {
		t.Errorf("no profile: %v", err)
	}
	if got, err := (Driver{}).ImportAs("kv.txt", kv, api.TCPRR); err != nil || got[0].Params.MessageSizeBytes != 1 || got[0].Params.DurationSeconds != 1 {
		t.Errorf("ImportAs: %+v %v", got, err)
	}
	if _, err := (Driver{}).Import("refused.txt", fixture.Load(t, captured, "refused").Stdout); err == nil || !strings.Contains(err.Error(), "netserver listening") {
		t.Errorf("refused: %v", err)
	}
	if _, err := (Driver{}).Import("classic_refused.txt", fixture.Load(t, captured, "classic_refused").Stdout); err == nil || !strings.Contains(err.Error(), "netserver listening") {
		t.Errorf("classic refused: %v", err)
	}
	if _, err := (Driver{}).Import("nohdr.csv", []byte("47,95.30,4210,38.71,10479.123\n")); err == nil || !strings.Contains(err.Error(), "column titles") {
		t.Errorf("headerless csv: %v", err)
	}
}

// TestImportClassic reads netperf's classic tables, captured for every test with and without
// -c -C and with and without banner (-P 0), and checks every figure against the raw files.
func TestImportClassic(t *testing.T) {
	type cpu struct{ lu, ru, lsd, rsd float64 }
	tests := []struct {
		name    string
		profile api.Profile // given only for -P 0 tables
		bps     float64     // throughput in bits/s, or
		tps     float64     // transactions/s
		elapsed float64
		cpu     *cpu
		// UDP_STREAM: datagrams sent and received
		sent, recvd int64
	}{
		{name: "classic_tcp_stream", bps: 2195.95e6, elapsed: 1.05},
		{name: "classic_tcp_stream_cpu", bps: 7787.75e6, elapsed: 1.00, cpu: &cpu{100, 100, 2.104, 2.104}},
		{name: "classic_tcp_stream_nobanner", profile: api.TCPStream, bps: 6618.12e6, elapsed: 1.00},
		{name: "classic_tcp_stream_fg"}, // -f g: 10^9bits/sec, checked below
		{name: "classic_tcp_stream_fk"}, // -f K: KBytes/sec of 1024 bytes, checked below
		{name: "classic_tcp_maerts"},
		{name: "classic_tcp_maerts_cpu", bps: 4295.82e6, elapsed: 1.00, cpu: &cpu{100, 100, 3.814, 3.814}},
		{name: "classic_tcp_maerts_nobanner", profile: api.TCPMaerts},
		{name: "classic_tcp_sendfile"},
		{name: "classic_tcp_sendfile_cpu"},
		{name: "classic_tcp_sendfile_nobanner", profile: api.TCPSendfile},
		{name: "classic_udp_stream", bps: 606.65e6, elapsed: 1.00, sent: 148554, recvd: 74279},
		{name: "classic_udp_stream_cpu"},
		{name: "classic_udp_stream_nobanner", profile: api.UDPStream},
		{name: "classic_tcp_rr"},
		{name: "classic_tcp_rr_cpu", tps: 62367.14, elapsed: 1.00, cpu: &cpu{100, 100, 32.068, 32.068}},
		{name: "classic_tcp_rr_nobanner", profile: api.TCPRR},
		{name: "classic_tcp_rr_r1_cpu"},
		{name: "classic_udp_rr"},
		{name: "classic_udp_rr_cpu"},
		{name: "classic_udp_rr_nobanner", profile: api.UDPRR},
		{name: "classic_tcp_crr"},
		{name: "classic_tcp_crr_cpu"},
		{name: "classic_tcp_crr_nobanner", profile: api.TCPCRR},
		{name: "classic_interrupted"},
		{name: "omni_csv_tcp_stream"},
		{name: "omni_csv_tcp_rr"},
		{name: "omni_keyval_tcp_rr"},
		{name: "omni_keyval_udp_stream"},
		{name: "classic_tcp_rr_v2", tps: 20402.71, elapsed: 1.00},
		{name: "omni_human_tcp_rr", elapsed: 1.00},
		{name: "omni_human_tcp_stream", bps: 2855.67e6, elapsed: 1.01},
		{name: "omni_human_sel_tcp_rr", tps: 23669.96},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := importOne(t, tt.name, tt.profile)
			s := got.Sample
			want := strings.ToUpper(strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(tt.name, "classic_"), "omni_"), "_cpu"), "_nobanner"))
			if p := string(got.Profile); !strings.HasPrefix(want, p) && !strings.HasSuffix(want, p) && tt.name != "classic_interrupted" {
				t.Errorf("profile %s for %s", p, tt.name)
			}
			if got.Profile.IsRR() {
				if s.TransactionsPerSecond == nil || *s.TransactionsPerSecond <= 0 {
					t.Fatalf("no transaction rate: %+v", s)
				}
			} else if s.ThroughputBitsPerSecond == nil || *s.ThroughputBitsPerSecond <= 0 {
				t.Fatalf("no throughput: %+v", s)
			}
			if tt.bps > 0 && !near(*s.ThroughputBitsPerSecond, tt.bps) {
				t.Errorf("throughput %v, want %v", *s.ThroughputBitsPerSecond, tt.bps)
			}
			if tt.tps > 0 && *s.TransactionsPerSecond != tt.tps {
				t.Errorf("rate %v, want %v", *s.TransactionsPerSecond, tt.tps)
			}
			if tt.elapsed > 0 && s.DurationSeconds != tt.elapsed {
				t.Errorf("elapsed %v, want %v", s.DurationSeconds, tt.elapsed)
			}
			if c := tt.cpu; c != nil {
				sd := func(u *api.CPUUsage) float64 {
					if got.Profile.IsRR() {
						return *u.ServiceDemandMicrosecondsPerTransaction
					}
					return *u.ServiceDemandMicrosecondsPerKB
				}
				if *s.CPU.Client.HostPercent != c.lu || *s.CPU.Server.HostPercent != c.ru || sd(s.CPU.Client) != c.lsd || sd(s.CPU.Server) != c.rsd {
					t.Errorf("cpu %+v %+v", s.CPU.Client, s.CPU.Server)
				}
			}
			if strings.HasSuffix(tt.name, "_cpu") && s.CPU == nil {
				t.Error("-c -C table without CPU figures")
			}
			if tt.sent > 0 && (*s.PacketsSent != tt.sent || *s.PacketsReceived != tt.recvd || *s.PacketsLost != tt.sent-tt.recvd ||
				!near(*s.LossPercent, 100*float64(tt.sent-tt.recvd)/float64(tt.sent))) {
				t.Errorf("udp %v %v %v %v", *s.PacketsSent, *s.PacketsReceived, *s.PacketsLost, *s.LossPercent)
			}
			fixture.Golden(t, filepath.Join("testdata/golden/import", tt.name+".json"), got)
		})
	}
	// The figures of the new forms, read from the raw files by eye.
	// -v 2: netperf's RoundTrip Latency line, which netperf computes from the rate (derived).
	if l := importOne(t, "classic_tcp_rr_v2", "").Sample.Latency; l == nil || *l.Mean != 49.013 ||
		l.Provenance != api.LatencyDerived {
		t.Errorf("classic_tcp_rr_v2 latency %+v", l)
	}
	// -O: the columns are the titles stacked over the values.
	sel := importOne(t, "omni_human_sel_tcp_rr", "")
	if l := sel.Sample.Latency; l == nil || *l.Mean != 42.19 || *l.P99 != 290 || l.Provenance != api.LatencyMeasured ||
		sel.Profile != api.TCPRR || sel.Params.MessageSizeBytes != 1 {
		t.Errorf("omni_human_sel_tcp_rr %+v latency %+v", sel.Params, l)
	}
	if st := importOne(t, "omni_human_tcp_stream", ""); st.Params.MessageSizeBytes != 16384 {
		t.Errorf("omni_human_tcp_stream message size %d", st.Params.MessageSizeBytes)
	}
	// The MAERTS table's message size is netserver's send size.
	for _, name := range []string{"classic_tcp_maerts", "classic_tcp_maerts_cpu"} {
		if m := importOne(t, name, "").Params.MessageSizeBytes; m != 16384 {
			t.Errorf("%s message size %d", name, m)
		}
	}
	if m := importOne(t, "classic_tcp_maerts_nobanner", api.TCPMaerts).Params.MessageSizeBytes; m != 16384 {
		t.Errorf("classic_tcp_maerts_nobanner message size %d", m)
	}
	// Units (netlib.c calc_thruput_interval): -f g is 10^9 bits/s, -f K is KBytes of 1024 bytes.
	for name, mult := range map[string]float64{"classic_tcp_stream_fg": 1e9, "classic_tcp_stream_fk": 8 * 1024} {
		f := fixture.Load(t, captured, name)
		fields := strings.Fields(strings.TrimSpace(string(f.Stdout))[strings.LastIndex(strings.TrimSpace(string(f.Stdout)), "\n")+1:])
		v, _ := strconv.ParseFloat(fields[len(fields)-1], 64)
		if got := importOne(t, name, ""); !near(*got.Sample.ThroughputBitsPerSecond, v*mult) {
			t.Errorf("%s: %v, want %v × %v", name, *got.Sample.ThroughputBitsPerSecond, v, mult)
		}
	}
	// A -P 0 table is refused as another test's table, and without a profile.
	if _, err := (Driver{}).ImportAs("x", fixture.Load(t, captured, "classic_tcp_rr_nobanner").Stdout, api.TCPStream); err == nil ||
		!strings.Contains(err.Error(), "request/response table, not TCP_STREAM") {
		t.Errorf("rr table as stream: %v", err)
	}
	if _, err := (Driver{}).Import("x", fixture.Load(t, captured, "classic_udp_stream_nobanner").Stdout); err == nil ||
		!strings.Contains(err.Error(), "give the profile") {
		t.Errorf("no profile: %v", err)
	}
}

// clientArgv is the argv of flow i of one sample of case c.
func clientArgv(c plan.Case, t driver.Target, warmup bool, flow int) ([]string, error) {
	cmds, err := fixture.Client(Driver{}, c, t, warmup)
	if err != nil {
		return nil, err
	}
	if flow >= len(cmds) {
		return nil, fmt.Errorf("flow %d of %d commands", flow, len(cmds))
	}
	return cmds[flow].Argv, nil
}

// TestParseClassicBranches covers what the captured tables do not: lines that are no part of
// a table, outputs without results and tables whose rows are not the header's.
func TestParseClassicBranches(t *testing.T) {
	const streamHeader = "Recv   Send    Send\nSocket Socket  Message  Elapsed\nSize   Size    Size     Time     Throughput\nbytes  bytes   bytes    secs.    10^6bits/sec\n"
	tests := []struct {
		name, in  string
		err       string // a part of the error, or
		other     []string
		headless  bool
		throughpt string
	}{
		{name: "empty", in: "", err: "netperf printed nothing"},
		{name: "banner only", in: "MIGRATED TCP STREAM TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to 127.0.0.1 () port 0 AF_INET\n",
			err: "netperf printed its banner and no results (cut short?): MIGRATED TCP STREAM TEST"},
		{name: "words only", in: "hello there\n", err: "netperf output has no results: hello there"},
		{name: "no table", in: "1 2 3\n", err: "netperf classic output: rows of 3 columns are no table netperf prints"},
		{name: "header and rows differ", in: streamHeader + "16384 131072 1 1 1.00 100.00\n16384 131072\n",
			err: "netperf classic output: its header and its 6-column rows are different tables"},
		{name: "stray line kept", in: "a note\n" + streamHeader + "131072  16384  16384    1.00     2195.95\n",
			other: []string{"a note"}, throughpt: "2195.95"},
		{name: "headerless rr", in: "16384 131072 1 1 1.00 100.00\n16384 131072\n", headless: true, throughpt: "100.00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ParseClassic([]byte(tt.in))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(r.Other, tt.other) || r.Headerless != tt.headless || r.Values["THROUGHPUT"] != tt.throughpt {
				t.Errorf("other %q headerless %v throughput %q", r.Other, r.Headerless, r.Values["THROUGHPUT"])
			}
		})
	}
}
