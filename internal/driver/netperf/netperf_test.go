package netperf

import (
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/driver/toolkit/fixture"
	"github.com/cnperf/cnperf/internal/plan"
)

// netperf is not packaged on this machine: the fixtures in testdata/manual are written (by
// testdata/tools/netperf-fixtures.py) after the netperf 2.7 manual, not captured; each .cmd
// file names the manual section it follows.
const manual = "testdata/manual"

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
			want: "netperf -P 0 -H 10.0.0.2 -p 12865 -t TCP_STREAM -l 10 -f m -c -C -- -k STREAM -P ,12866 -m 16384"},
		{name: "duration rounds up to whole seconds", c: tcase(api.TCPStream, func(p *api.Params) { p.DurationSeconds = 60.4 }),
			want: "netperf -P 0 -H 10.0.0.2 -p 12865 -t TCP_STREAM -l 61 -f m -c -C -- -k STREAM -P ,12866"},
		{name: "a minute is -l 60, never 1m0s", c: tcase(api.TCPStream, func(p *api.Params) { p.DurationSeconds = 60 }),
			want: "netperf -P 0 -H 10.0.0.2 -p 12865 -t TCP_STREAM -l 60 -f m -c -C -- -k STREAM -P ,12866"},
		{name: "maerts sets netserver's send size", c: tcase(api.TCPMaerts, func(p *api.Params) { p.MessageSizeBytes = 65536 }),
			want: "netperf -P 0 -H 10.0.0.2 -p 12865 -t TCP_MAERTS -l 10 -f m -c -C -- -k STREAM -P ,12866 -m ,65536"},
		{name: "udp stream may be routed", c: tcase(api.UDPStream, func(p *api.Params) { p.MessageSizeBytes = 1400 }),
			want: "netperf -P 0 -H 10.0.0.2 -p 12865 -t UDP_STREAM -l 10 -f m -c -C -- -k STREAM -P ,12866 -m 1400 -R 1"},
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
			argv, err := ClientArgv(tt.c, tg, tt.warmup, tt.flow)
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
			got = strings.Replace(got, strings.Join(streamSelectors, ","), "STREAM", 1)
			got = strings.Replace(got, strings.Join(rrSelectors, ","), "RR", 1)
			if got != tt.want {
				t.Errorf("\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestClientOneCommandPerFlow(t *testing.T) {
	cmds, err := Driver{}.Client(tcase(api.TCPStream, func(p *api.Params) { p.Parallel = 4 }), target, false)
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
	got := Driver{}.Servers([]plan.Case{
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

// fixtureCase maps a manual fixture to its case.
func fixtureCase(name string) plan.Case {
	switch name {
	case "tcp_stream":
		return tcase(api.TCPStream, func(p *api.Params) { p.MessageSizeBytes = 16384 })
	case "tcp_maerts":
		return tcase(api.TCPMaerts, func(p *api.Params) { p.MessageSizeBytes = 65536 })
	case "udp_stream":
		return tcase(api.UDPStream, func(p *api.Params) { p.MessageSizeBytes = 1400 })
	case "tcp_sendfile":
		return tcase(api.TCPSendfile, func(p *api.Params) { p.MessageSizeBytes = 16384 })
	case "tcp_rr_burst":
		return tcase(api.TCPRR, func(p *api.Params) { p.Burst = 8 })
	case "udp_rr":
		return tcase(api.UDPRR, func(p *api.Params) { p.MessageSizeBytes, p.ResponseSizeBytes = 64, 1024 })
	case "tcp_crr":
		return tcase(api.TCPCRR)
	case "truncated":
		return tcase(api.TCPStream)
	default:
		return tcase(api.TCPRR)
	}
}

func TestManualFixturesUseTheDriversArgv(t *testing.T) {
	for _, name := range []string{"tcp_stream", "tcp_maerts", "udp_stream", "tcp_sendfile", "tcp_rr", "tcp_rr_burst", "udp_rr", "tcp_crr"} {
		f := fixture.Load(t, manual, name)
		got, err := ClientArgv(fixtureCase(name), target, false, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, f.Argv) {
			t.Errorf("%s:\n driver %q\nfixture %q", name, got, f.Argv)
		}
	}
	for i, name := range []string{"tcp_rr_flow0", "tcp_rr_flow1"} {
		got, _ := ClientArgv(tcase(api.TCPRR, func(p *api.Params) { p.MessageSizeBytes, p.Parallel = 64, 2 }), target, false, i)
		if f := fixture.Load(t, manual, name); !reflect.DeepEqual(got, f.Argv) {
			t.Errorf("%s:\n driver %q\nfixture %q", name, got, f.Argv)
		}
	}
}

func TestParseManualGolden(t *testing.T) {
	for _, name := range fixture.Names(t, manual) {
		if strings.HasPrefix(name, "mizar") || strings.HasPrefix(name, "k8s") || strings.HasPrefix(name, "tcp_rr_flow") {
			continue // import-only fixtures and flows (see TestParallelFlows)
		}
		t.Run(name, func(t *testing.T) {
			f := fixture.Load(t, manual, name)
			s, err := Driver{}.Parse(fixtureCase(name), []driver.Output{f.Output()})
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
	f := fixture.Load(t, manual, name)
	s, err := Driver{}.Parse(fixtureCase(name), []driver.Output{f.Output()})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return s
}

func TestHandVerified(t *testing.T) {
	// tcp_stream.stdout: REMOTE_RECV_THROUGHPUT=9384.36 with THROUGHPUT_UNITS=10^6bits/s:
	// exactly 9384.36e6 bits/s (the receiver's rate, not LOCAL_SEND_THROUGHPUT=9384.52).
	s := parse(t, "tcp_stream")
	if !near(*s.ThroughputBitsPerSecond, 9384.36e6) || *s.Retransmits != 27 || s.Latency != nil {
		t.Errorf("stream %v retrans %v latency %v", *s.ThroughputBitsPerSecond, *s.Retransmits, s.Latency)
	}
	if *s.CPU.Client.HostPercent != 21.37 || *s.CPU.Server.ServiceDemandMicrosecondsPerKB != 0.874 {
		t.Errorf("cpu %+v %+v", s.CPU.Client, s.CPU.Server)
	}
	// tcp_maerts: LOCAL_RECV_THROUGHPUT=9961.37 is the receiver (netperf itself).
	if s := parse(t, "tcp_maerts"); !near(*s.ThroughputBitsPerSecond, 9961.37e6) || *s.Retransmits != 112 {
		t.Errorf("maerts %v %v", *s.ThroughputBitsPerSecond, *s.Retransmits)
	}
	// udp_stream: 1000000 datagrams sent, 987654 received.
	s = parse(t, "udp_stream")
	if !near(*s.ThroughputBitsPerSecond, 1106.17e6) || *s.PacketsLost != 12346 || !near(*s.LossPercent, 1.2346) ||
		!near(*s.PacketsPerSecond, 98765.4) || s.Retransmits != nil {
		t.Errorf("udp %v lost %v %v pps %v", *s.ThroughputBitsPerSecond, *s.PacketsLost, *s.LossPercent, *s.PacketsPerSecond)
	}
	// tcp_rr: TRANSACTION_RATE=10479.123, MIN/MEAN/P50/P90/P99/MAX/STDDEV 47/95.30/88/112/231/4210/38.71 µs.
	s = parse(t, "tcp_rr")
	l := s.Latency
	if *s.TransactionsPerSecond != 10479.123 || *l.Min != 47 || *l.Mean != 95.30 || *l.P50 != 88 || *l.P90 != 112 ||
		*l.P99 != 231 || *l.Max != 4210 || *l.Stddev != 38.71 || l.Method != "tool" || s.ConnectionsPerSecond != nil {
		t.Errorf("rr %+v", l)
	}
	if *s.CPU.Client.ServiceDemandMicrosecondsPerTransaction != 42.752 {
		t.Errorf("rr service demand %+v", s.CPU.Client)
	}
	// tcp_crr: connections per second = transactions per second.
	if s := parse(t, "tcp_crr"); *s.ConnectionsPerSecond != 3046.127 {
		t.Errorf("crr %v", *s.ConnectionsPerSecond)
	}
	// tcp_sendfile (classic table): 9311.04 10^6bits/sec.
	if s := parse(t, "tcp_sendfile"); !near(*s.ThroughputBitsPerSecond, 9311.04e6) || s.DurationSeconds != 10 {
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
		"refused":      "netperf: establish control: are you sure there is a netserver listening on 10.0.0.2 at port 12865?",
		"data_timeout": "connect_data_socket failed: Connection timed out",
		"truncated":    "incomplete",
		"garbage":      "netperf output has no results",
		"nonutf8":      "incomplete",
	} {
		f := fixture.Load(t, manual, name)
		_, err := Driver{}.Parse(fixtureCase(name), []driver.Output{f.Output()})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", name, err, want)
		}
	}
	// A killed netperf (sample timeout): the execution error is the cause.
	_, err := Driver{}.Parse(tcase(api.TCPRR), []driver.Output{{ExitCode: -1, Err: errT("netperf did not finish within 40s and was killed")}})
	if err == nil || !strings.Contains(err.Error(), "did not finish") {
		t.Errorf("killed: %v", err)
	}
}

type errT string

func (e errT) Error() string { return string(e) }

func TestParallelFlows(t *testing.T) {
	c := tcase(api.TCPRR, func(p *api.Params) { p.MessageSizeBytes, p.Parallel = 64, 2 })
	f0, f1 := fixture.Load(t, manual, "tcp_rr_flow0"), fixture.Load(t, manual, "tcp_rr_flow1")
	o0, o1 := f0.Output(), f1.Output()
	o1.StartTime = o1.StartTime.Add(3 * time.Millisecond)
	o1.EndTime = o1.EndTime.Add(5 * time.Millisecond)
	s, err := Driver{}.Parse(c, []driver.Output{o0, o1})
	if err != nil {
		t.Fatal(err)
	}
	// Rates add: 6012.440 + 5890.017.
	if !near(*s.TransactionsPerSecond, 6012.440+5890.017) || len(s.Flows) != 2 || *s.Retransmits != 3 {
		t.Errorf("tps %v flows %d retrans %v", *s.TransactionsPerSecond, len(s.Flows), *s.Retransmits)
	}
	l := s.Latency
	// min of mins (52, 49), max of maxes (6033, 7120), mean weighted by transactions.
	wantMean := (6012.440*166.10 + 5890.017*169.55) / (6012.440 + 5890.017)
	if *l.Min != 49 || *l.Max != 7120 || !near(*l.Mean, wantMean) {
		t.Errorf("pooled latency %+v (want mean %v)", l, wantMean)
	}
	// Percentiles are never averaged: the aggregate has none, the flows keep theirs.
	if l.P50 != nil || l.P90 != nil || l.P99 != nil || !strings.Contains(l.Note, "percentiles cannot be combined") {
		t.Errorf("aggregate percentiles: %+v", l)
	}
	if *s.Flows[0].Latency.P99 != 402 || *s.Flows[1].Latency.P99 != 455 {
		t.Errorf("flow percentiles lost")
	}
	// Pooled stddev: sqrt(Σw(σ²+μ²)/Σw − μ²).
	w0, w1 := 6012.440*10, 5890.017*10
	wantSD := math.Sqrt((w0*(61.20*61.20+166.10*166.10)+w1*(70.05*70.05+169.55*169.55))/(w0+w1) - wantMean*wantMean)
	if !near(*l.Stddev, wantSD) {
		t.Errorf("stddev %v want %v", *l.Stddev, wantSD)
	}
	// CPU: mean of the system-wide figures; service demand recomputed for the summed work
	// with the CPU count (4) recovered from a flow's own figures.
	wantCPU := (23.10 + 22.90) / 2
	if !near(*s.CPU.Client.HostPercent, wantCPU) ||
		math.Abs(*s.CPU.Client.ServiceDemandMicrosecondsPerTransaction-wantCPU*1e4*4/(6012.440+5890.017)) > 1e-9 {
		t.Errorf("cpu %+v", s.CPU.Client)
	}
	if !s.StartTime.Equal(o0.StartTime) || !s.EndTime.Equal(o1.EndTime) {
		t.Errorf("window %v-%v", s.StartTime, s.EndTime)
	}
	fixture.Golden(t, "testdata/golden/tcp_rr_parallel2.json", s)

	// One failed flow fails the sample: a partial sum would be a wrong figure.
	bad := fixture.Load(t, manual, "refused").Output()
	if _, err := (Driver{}).Parse(c, []driver.Output{o0, bad}); err == nil || !strings.Contains(err.Error(), "flow 2 of 2") {
		t.Errorf("partial failure: %v", err)
	}
}

func TestImport(t *testing.T) {
	// The Mizar procedure's -o CSV (seed 003).
	got, err := Driver{}.Import("mizar.txt", fixture.Load(t, manual, "mizar_csv").Stdout)
	if err != nil {
		t.Fatal(err)
	}
	s := got[0].Sample
	if got[0].Profile != api.TCPRR || *s.TransactionsPerSecond != 10479.123 || *s.Latency.Mean != 95.30 ||
		*s.Latency.Min != 47 || *s.Latency.Max != 4210 || *s.Latency.Stddev != 38.71 || s.Latency.P99 != nil {
		t.Errorf("mizar: %+v %+v", got[0], s.Latency)
	}
	// k8s-netperf's keyval with banner (seed 000): stream "latency" selectors are ignored.
	got, err = Driver{}.Import("k8s.txt", fixture.Load(t, manual, "k8s_netperf_stream").Stdout)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Profile != api.TCPStream || !near(*got[0].Sample.ThroughputBitsPerSecond, 2702.23e6) || got[0].Sample.Latency != nil ||
		*got[0].Sample.Retransmits != 15 {
		t.Errorf("k8s-netperf: %+v", got[0])
	}
	// Several tests in one log, split at their banners.
	two := append(fixture.Load(t, manual, "mizar_csv").Stdout, fixture.Load(t, manual, "k8s_netperf_stream").Stdout...)
	if got, err := (Driver{}).Import("two.txt", two); err != nil || len(got) != 2 {
		t.Errorf("two tests: %d %v", len(got), err)
	}
	// No banner and no PROTOCOL/DIRECTION: the profile must be given.
	var kv []byte
	for _, l := range strings.SplitAfter(string(fixture.Load(t, manual, "tcp_rr").Stdout), "\n") {
		if !strings.HasPrefix(l, "PROTOCOL=") && !strings.HasPrefix(l, "DIRECTION=") {
			kv = append(kv, l...)
		}
	}
	if _, err := (Driver{}).Import("kv.txt", kv); err == nil || !strings.Contains(err.Error(), "give the profile") {
		t.Errorf("no profile: %v", err)
	}
	if got, err := (Driver{}).ImportAs("kv.txt", kv, api.TCPRR); err != nil || got[0].Params.MessageSizeBytes != 1 || got[0].Params.DurationSeconds != 10 {
		t.Errorf("ImportAs: %+v %v", got, err)
	}
	if _, err := (Driver{}).Import("refused.txt", fixture.Load(t, manual, "refused").Stdout); err == nil || !strings.Contains(err.Error(), "netserver listening") {
		t.Errorf("refused: %v", err)
	}
	if _, err := (Driver{}).Import("nohdr.csv", []byte("47,95.30,4210,38.71,10479.123\n")); err == nil || !strings.Contains(err.Error(), "column titles") {
		t.Errorf("headerless csv: %v", err)
	}
}
