package sockperf

import (
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/driver/toolkit/fixture"
	"github.com/cnperf/cnperf/internal/plan"
)

const captured = "testdata/captured"

func tcase(p api.Profile, mut ...func(*api.Params)) plan.Case {
	c := plan.Case{Profile: p, Driver: Name, Path: api.PathLoopback,
		Params: api.Params{DurationSeconds: 2, Samples: 1, Parallel: 1}}
	for _, m := range mut {
		m(&c.Params)
	}
	return c
}

func opts(kv ...string) func(*api.Params) {
	return func(p *api.Params) {
		if p.Options == nil {
			p.Options = map[string]string{}
		}
		for i := 0; i+1 < len(kv); i += 2 {
			p.Options[kv[i]] = kv[i+1]
		}
	}
}

func size(n int) func(*api.Params) { return func(p *api.Params) { p.MessageSizeBytes = n } }

func TestClientArgv(t *testing.T) {
	tg := driver.Target{Host: "10.9.8.7"}
	tests := []struct {
		name string
		c    plan.Case
		want string
		err  string
	}{
		{name: "tcp rr", c: tcase(api.TCPRR, size(64)), want: "sockperf ping-pong --tcp -i 10.9.8.7 -p 11111 -t 2 -m 64 --full-rtt"},
		{name: "udp rr half rtt", c: tcase(api.UDPRR, size(64), opts("fullRTT", "false")), want: "sockperf ping-pong -i 10.9.8.7 -p 11111 -t 2 -m 64"},
		{name: "under-load", c: tcase(api.UDPRR, size(64), opts("mode", "under-load", "mps", "5000")), want: "sockperf under-load -i 10.9.8.7 -p 11111 -t 2 -m 64 --mps 5000 --full-rtt"},
		{name: "throughput", c: tcase(api.TCPStream, size(1400)), want: "sockperf throughput --tcp -i 10.9.8.7 -p 11111 -t 2 -m 1400"},
		{name: "throughput with rate", c: tcase(api.UDPStream, size(1400), func(p *api.Params) { p.RateBitsPerSecond = 224e6 }),
			want: "sockperf throughput -i 10.9.8.7 -p 11111 -t 2 -m 1400 --mps 20000"},
		{name: "under-load at a rate", c: tcase(api.UDPRR, size(100), opts("mode", "ul"), func(p *api.Params) { p.RateBitsPerSecond = 8e6 }),
			want: "sockperf under-load -i 10.9.8.7 -p 11111 -t 2 -m 100 --mps 10000 --full-rtt"},
		{name: "rate and mps", c: tcase(api.UDPRR, size(100), opts("mode", "ul", "mps", "5"), func(p *api.Params) { p.RateBitsPerSecond = 8e6 }),
			err: "not both"},
		{name: "tiny message", c: tcase(api.TCPRR, size(1)), err: "below sockperf's minimum"},
		{name: "crr", c: tcase(api.TCPCRR), err: "cannot run profile TCP_CRR"},
		{name: "bad mode", c: tcase(api.TCPRR, opts("mode", "playback")), err: "unknown mode"},
		{name: "rate on ping-pong", c: tcase(api.TCPRR, func(p *api.Params) { p.RateBitsPerSecond = 1e6 }), err: "under-load"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			argv, err := fixture.Argv(Driver{}, tt.c, tg, false)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(argv, " "); got != tt.want {
				t.Errorf("\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestServers(t *testing.T) {
	got := driver.Servers(Driver{}, []plan.Case{tcase(api.TCPRR), tcase(api.TCPStream), tcase(api.UDPRR)})
	if len(got) != 2 {
		t.Fatalf("%+v", got)
	}
	if got[0].Name != "sockperf-tcp" || strings.Join(got[0].Argv, " ") != "sockperf server --tcp -i 0.0.0.0 -p 11111" || got[0].Ports[0].Protocol != "TCP" {
		t.Errorf("%+v", got[0])
	}
	if got[1].Name != "sockperf-udp" || strings.Join(got[1].Argv, " ") != "sockperf server -i 0.0.0.0 -p 11111" || got[1].Ports[0].Protocol != "UDP" {
		t.Errorf("%+v", got[1])
	}
}

// TestServersPerFamily: in a run with both families an IPv6 case has servers of its own on "::"
// and the next port, and its client dials that port (before, the IPv4 case's server on 0.0.0.0
// was the only one, and the IPv6 client was refused).
func TestServersPerFamily(t *testing.T) {
	fam := func(f string) func(*api.Params) { return func(p *api.Params) { p.IPFamily = f } }
	cases := []plan.Case{tcase(api.TCPRR, fam("ipv4")), tcase(api.TCPRR, fam("ipv6")),
		tcase(api.UDPRR, fam("ipv4")), tcase(api.UDPRR, fam("ipv6")), tcase(api.TCPRR, fam("ipv6"), opts("port", "2000"))}
	var got []string
	for _, s := range driver.Servers(Driver{}, cases) {
		got = append(got, fmt.Sprintf("%s %s: %s/%d", s.Name, strings.Join(s.Argv, " "), s.Ports[0].Protocol, s.Ports[0].Port))
	}
	want := []string{
		"sockperf-tcp sockperf server --tcp -i 0.0.0.0 -p 11111: TCP/11111",
		"sockperf-tcp-v6 sockperf server --tcp -i :: -p 11112: TCP/11112",
		"sockperf-udp sockperf server -i 0.0.0.0 -p 11111: UDP/11111",
		"sockperf-udp-v6 sockperf server -i :: -p 11112: UDP/11112",
		"sockperf-tcp-v6-2000 sockperf server --tcp -i :: -p 2001: TCP/2001",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("servers\n got %q\nwant %q", got, want)
	}
	for _, tc := range []struct {
		c    plan.Case
		want string
	}{
		{cases[0], "sockperf ping-pong --tcp -i 198.18.2.10 -p 11111 -t 2 --full-rtt"},
		{cases[1], "sockperf ping-pong --tcp -i 2001:2:0:2::a -p 11112 -t 2 --full-rtt"},
		{cases[3], "sockperf ping-pong -i 2001:2:0:2::a -p 11112 -t 2 --full-rtt"},
		{cases[4], "sockperf ping-pong --tcp -i 2001:2:0:2::a -p 2001 -t 2 --full-rtt"},
	} {
		host := "198.18.2.10"
		if tc.c.Params.IPFamily == "ipv6" {
			host = "2001:2:0:2::a"
		}
		argv, err := fixture.Argv(Driver{}, tc.c, driver.Target{Host: host}, false)
		if err != nil {
			t.Fatal(err)
		}
		if g := strings.Join(argv, " "); g != tc.want {
			t.Errorf("%s %s client\n got %s\nwant %s", tc.c.Profile, tc.c.Params.IPFamily, g, tc.want)
		}
	}
}

// caseFor maps a captured fixture name to its case.
func caseFor(name string) plan.Case {
	udp := strings.Contains(name, "_udp") || name == "no_server_udp"
	var c plan.Case
	switch {
	case strings.HasPrefix(name, "tp_"):
		c = tcase(api.TCPStream, size(1400))
		if udp {
			c.Profile = api.UDPStream
		}
		if strings.HasSuffix(name, "_mps") {
			c.Params.RateBitsPerSecond = 20000 * 1400 * 8
		}
	default:
		c = tcase(api.TCPRR, size(64))
		if udp {
			c.Profile = api.UDPRR
		}
		if strings.HasSuffix(name, "_m1024_fullrtt") {
			c.Params.MessageSizeBytes = 1024
		}
		if strings.HasSuffix(name, "halfrtt") {
			opts("fullRTT", "false")(&c.Params)
		}
		if strings.HasPrefix(name, "ul_") {
			opts("mode", "under-load")(&c.Params)
		}
	}
	opts("port", "47321")(&c.Params)
	return c
}

func TestCapturedArgvIsTheDriversArgv(t *testing.T) {
	for _, name := range fixture.Names(t, captured) {
		f := fixture.Load(t, captured, name)
		if f.Derived || !(strings.HasPrefix(name, "pp_") || strings.HasPrefix(name, "tp_") || strings.HasPrefix(name, "ul_")) {
			continue
		}
		got, err := fixture.Argv(Driver{}, caseFor(name), driver.Target{Host: "127.0.0.1"}, false)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, f.ToolArgv()) {
			t.Errorf("%s: driver %q, captured %q", name, got, f.ToolArgv())
		}
	}
}

func TestParseCapturedGolden(t *testing.T) {
	for _, name := range fixture.Names(t, captured) {
		t.Run(name, func(t *testing.T) {
			f := fixture.Load(t, captured, name)
			s, err := fixture.Parse(Driver{}, caseFor(name), []driver.Output{f.Output()})
			var r fixture.Result
			if err != nil {
				r.Error = err.Error()
			} else {
				r.Sample = &s
			}
			fixture.Golden(t, filepath.Join("testdata/golden", name+".json"), r)
		})
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

func TestHandVerified(t *testing.T) {
	parse := func(name string) api.Sample {
		f := fixture.Load(t, captured, name)
		s, err := fixture.Parse(Driver{}, caseFor(name), []driver.Output{f.Output()})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return s
	}
	// pp_udp_m64_halfrtt.stdout (no --full-rtt): "[Valid Duration] RunTime=1.548 sec;
	// SentMessages=28860; ReceivedMessages=28860", "avg-latency=26.788 (std-dev=210.053)",
	// "percentile 99.000 =  281.299", "percentile 50.000 =    9.237", "<MIN> observation =
	// 6.376": RTT/2 values, doubled.
	s := parse("pp_udp_m64_halfrtt")
	l := s.Latency
	if l.Method != "tool-rtt-from-one-way" || !near(*l.Mean, 53.576) || !near(*l.P99, 562.598) || !near(*l.P50, 18.474) ||
		!near(*l.Min, 12.752) || !near(*l.Stddev, 420.106) || *l.Count != 28860 {
		t.Errorf("half-RTT latency %+v", l)
	}
	if !near(*s.TransactionsPerSecond, 28860/1.548) || s.DurationSeconds != 1.548 {
		t.Errorf("tps %v", *s.TransactionsPerSecond)
	}
	// pp_tcp_m64_fullrtt: full RTT values as printed, Method "tool".
	s = parse("pp_tcp_m64_fullrtt")
	if s.Latency.Method != "tool" || s.Latency.P9999 == nil || !strings.Contains(s.Latency.Note, "p99.999") {
		t.Errorf("full RTT latency %+v", s.Latency)
	}
	// tp_tcp_m1400.stdout: "Message Rate is 492630 [msg/sec]", msg-size=1400, "BandWidth is
	// 657.732 MBps" (MiB/s): 492630*1400/2^20 = 657.73.
	s = parse("tp_tcp_m1400")
	if !near(*s.ThroughputBitsPerSecond, 492630*1400*8) {
		t.Errorf("tp %v", *s.ThroughputBitsPerSecond)
	}
	if math.Abs(492630*1400/1048576.0-657.732) > 0.001 {
		t.Error("sockperf MBps is not MiB/s")
	}
	// ul_udp_m64_fullrtt: packet rate offered, no transaction rate.
	s = parse("ul_udp_m64_fullrtt")
	if s.TransactionsPerSecond != nil || s.PacketsPerSecond == nil {
		t.Errorf("under-load: %+v", s)
	}
}

func TestFailures(t *testing.T) {
	for name, want := range map[string]string{
		"refused":       "sockperf: Can`t connect socket (errno=111 Connection refused)",
		"no_server_udp": "No messages were received from the server",
		"timeout":       "No messages were received from the server",
		"truncated":     "sockperf output has no",
		"garbage":       "not a client report",
		"nonutf8":       "not a client report",
	} {
		f := fixture.Load(t, captured, name)
		_, err := fixture.Parse(Driver{}, caseFor(name), []driver.Output{f.Output()})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", name, err, want)
		}
	}
	// A TCP capture is not a UDP sample.
	f := fixture.Load(t, captured, "pp_tcp_m64_fullrtt")
	if _, err := fixture.Parse(Driver{}, tcase(api.UDPRR, size(64)), []driver.Output{f.Output()}); err == nil {
		t.Error("TCP output accepted for UDP_RR")
	}
}

func TestImport(t *testing.T) {
	for name, want := range map[string]api.Profile{
		"pp_udp_m64_halfrtt": api.UDPRR, "pp_tcp_m64_fullrtt": api.TCPRR, "tp_udp_m1400": api.UDPStream, "ul_tcp_m64_fullrtt": api.TCPRR,
	} {
		got, err := Driver{}.Import(name, fixture.Load(t, captured, name).Stdout)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got[0].Profile != want {
			t.Errorf("%s: profile %s", name, got[0].Profile)
		}
		if name == "ul_tcp_m64_fullrtt" && got[0].Params.Options[OptMode] != ModeUnderLoad {
			t.Errorf("under-load not recognised: %+v", got[0].Params)
		}
	}
}

// TestImportFullLog: a --full-log file names no protocol, so its import asks for --profile
// (never a silent UDP guess), and keeps the --msg-size of sockperf's parameters line.
func TestImportFullLog(t *testing.T) {
	data := fixture.Load(t, captured, "fulllog_pp_tcp_m64").Stdout
	if _, err := (Driver{}).Import("full.csv", data); err == nil || !strings.Contains(err.Error(), "give it with --profile") ||
		!strings.Contains(err.Error(), "TCP_RR or UDP_RR") {
		t.Errorf("no profile: %v", err)
	}
	got, err := Driver{}.ImportAs("full.csv", data, api.TCPRR)
	if err != nil {
		t.Fatal(err)
	}
	// Read by eye from the file: --msg-size=64, avg-rtt 999 observations.
	s := got[0].Sample
	if got[0].Profile != api.TCPRR || got[0].Params.MessageSizeBytes != 64 || s.Latency == nil || *s.Latency.Count <= 0 {
		t.Errorf("%+v %+v", got[0].Params, s.Latency)
	}
	fixture.Golden(t, filepath.Join("testdata/golden/import", "fulllog_pp_tcp_m64.json"), got)
	// The profile must fit: a throughput profile for a ping-pong run, UDP for a TCP stdout.
	if _, err := (Driver{}).ImportAs("full.csv", data, api.TCPStream); err == nil || !strings.Contains(err.Error(), "does not fit") {
		t.Errorf("stream profile: %v", err)
	}
	tcp := fixture.Load(t, captured, "pp_tcp_m64_fullrtt").Stdout
	if _, err := (Driver{}).ImportAs("x", tcp, api.UDPRR); err == nil || !strings.Contains(err.Error(), "does not fit") {
		t.Errorf("UDP_RR for a TCP run: %v", err)
	}
	// A throughput report says its message size ("using msg-size="); a ping-pong report on
	// stdout does not (only --full-log writes the parameters line).
	for name, want := range map[string]int{"tp_udp_m1400": 1400, "pp_tcp_m64_fullrtt": 0} {
		got, err := Driver{}.Import(name, fixture.Load(t, captured, name).Stdout)
		if err != nil || got[0].Params.MessageSizeBytes != want {
			t.Errorf("%s: %v %+v", name, err, got)
		}
	}
}

// TestGarbledNumbers: a real capture with one figure garbled ("1.2.3") is refused or reads
// the figure as absent, never as a zero.
func TestGarbledNumbers(t *testing.T) {
	f := fixture.Load(t, captured, "pp_tcp_m64_fullrtt")
	for _, tt := range []struct{ old, new, want string }{
		{"avg-rtt=34.766", "avg-rtt=34.7.66", "no avg-rtt"},
		{"<MAX> observation = 42916.835", "<MAX> observation = 42916.8.35", "no percentile table"},
	} {
		garbled := strings.Replace(string(f.Stdout), tt.old, tt.new, 1)
		if garbled == string(f.Stdout) {
			t.Fatalf("%q not in the capture", tt.old)
		}
		if r, err := ParseOutput([]byte(garbled), nil); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v (avg %v, max %v), want %q", tt.new, err, r.Avg, r.Max, tt.want)
		}
	}
}
