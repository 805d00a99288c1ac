package iperf3

import (
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/driver/toolkit/fixture"
	"github.com/cnperf/cnperf/internal/plan"
)

const captured = "testdata/captured"

func tcase(p api.Profile, mut ...func(*api.Params)) plan.Case {
	c := plan.Case{Profile: p, Driver: Name, Path: api.PathLoopback,
		Params: api.Params{DurationSeconds: 1, Samples: 1, Parallel: 1}}
	for _, m := range mut {
		m(&c.Params)
	}
	return c
}

func TestClientArgv(t *testing.T) {
	target := driver.Target{Host: "10.0.0.7"}
	tests := []struct {
		name   string
		c      plan.Case
		t      driver.Target
		warmup bool
		want   string
		err    string
	}{
		{name: "stream", c: tcase(api.TCPStream), t: target,
			want: "iperf3 -c 10.0.0.7 -p 5201 -J -t 1"},
		{name: "duration rounds up, never 1m0s", c: tcase(api.TCPStream, func(p *api.Params) { p.DurationSeconds = 59.2 }), t: target,
			want: "iperf3 -c 10.0.0.7 -p 5201 -J -t 60"},
		{name: "warm-up inline with -O", c: tcase(api.TCPStream, func(p *api.Params) { p.DurationSeconds = 10; p.WarmupSeconds = 2 }), t: target,
			want: "iperf3 -c 10.0.0.7 -p 5201 -J -t 10 -O 2"},
		{name: "discarded warm-up run", c: tcase(api.TCPStream, func(p *api.Params) { p.DurationSeconds = 10; p.WarmupSeconds = 2.5 }), t: target, warmup: true,
			want: "iperf3 -c 10.0.0.7 -p 5201 -J -t 3"},
		{name: "parallel and message size", c: tcase(api.TCPStream, func(p *api.Params) { p.Parallel = 4; p.MessageSizeBytes = 65536 }), t: target,
			want: "iperf3 -c 10.0.0.7 -p 5201 -J -t 1 -P 4 -l 65536"},
		{name: "sendfile", c: tcase(api.TCPSendfile), t: target,
			want: "iperf3 -c 10.0.0.7 -p 5201 -J -t 1 -Z"},
		{name: "zerocopy option", c: tcase(api.TCPStream, func(p *api.Params) { p.Options = map[string]string{"zerocopy": "true"} }), t: target,
			want: "iperf3 -c 10.0.0.7 -p 5201 -J -t 1 -Z"},
		{name: "maerts", c: tcase(api.TCPMaerts), t: target,
			want: "iperf3 -c 10.0.0.7 -p 5201 -J -t 1 -R"},
		{name: "udp unlimited by default", c: tcase(api.UDPStream, func(p *api.Params) { p.MessageSizeBytes = 1400 }), t: target,
			want: "iperf3 -c 10.0.0.7 -p 5201 -J -t 1 -u -l 1400 -b 0"},
		{name: "rate is the total over streams", c: tcase(api.UDPStream, func(p *api.Params) { p.Parallel = 4; p.RateBitsPerSecond = 1e9 }), t: target,
			want: "iperf3 -c 10.0.0.7 -p 5201 -J -t 1 -P 4 -u -b 250000000"},
		{name: "bidir and port option with NAT'ed target port", c: tcase(api.TCPStream, func(p *api.Params) {
			p.Options = map[string]string{"iperf3.bidir": "true", "port": "47301"}
		}), t: driver.Target{Host: "node1", Ports: map[int]int{47301: 31001}},
			want: "iperf3 -c node1 -p 31001 -J -t 1 --bidir"},
		{name: "ipv6", c: tcase(api.TCPStream, func(p *api.Params) { p.IPFamily = "ipv6" }), t: driver.Target{Host: "fd00::7"},
			want: "iperf3 -c fd00::7 -p 5201 -J -6 -t 1"},
		{name: "rr refused", c: tcase(api.TCPRR), t: target, err: `cannot run profile TCP_RR`},
		{name: "unknown prefixed option", c: tcase(api.TCPStream, func(p *api.Params) { p.Options = map[string]string{"iperf3.frobnicate": "1"} }), t: target,
			err: `unknown iperf3 option "iperf3.frobnicate"`},
		{name: "bad boolean", c: tcase(api.TCPStream, func(p *api.Params) { p.Options = map[string]string{"bidir": "maybe"} }), t: target,
			err: `not a boolean`},
		{name: "maerts with bidir", c: tcase(api.TCPMaerts, func(p *api.Params) { p.Options = map[string]string{"bidir": "true"} }), t: target,
			err: `makes no sense`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmds, err := fixture.Client(Driver{}, tt.c, tt.t, tt.warmup)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error = %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(cmds) != 1 {
				t.Fatalf("%d commands", len(cmds))
			}
			if got := strings.Join(cmds[0].Argv, " "); got != tt.want {
				t.Errorf("argv\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestServers(t *testing.T) {
	cases := []plan.Case{
		tcase(api.TCPStream),
		tcase(api.UDPStream),
		tcase(api.TCPStream, func(p *api.Params) { p.Options = map[string]string{"port": "47301"} }),
		{Driver: "netperf", Profile: api.TCPRR},
	}
	got := driver.Servers(Driver{}, cases)
	if len(got) != 2 {
		t.Fatalf("got %d servers: %+v", len(got), got)
	}
	if got[0].Name != "iperf3" || strings.Join(got[0].Argv, " ") != "iperf3 -s -p 5201 --forceflush" || got[0].Ready != Ready {
		t.Errorf("server 0: %+v", got[0])
	}
	if got[1].Name != "iperf3-47301" || got[1].Ports[0].Port != 47301 || got[1].Ports[1].Protocol != "UDP" {
		t.Errorf("server 1: %+v", got[1])
	}
}

// caseFor is the case a captured fixture corresponds to (the capture script's argv).
func caseFor(name string) plan.Case {
	switch {
	case strings.HasPrefix(name, "udp"):
		return tcase(api.UDPStream)
	case strings.HasPrefix(name, "tcp_maerts"):
		return tcase(api.TCPMaerts)
	case strings.HasPrefix(name, "tcp_sendfile"):
		return tcase(api.TCPSendfile)
	default:
		return tcase(api.TCPStream)
	}
}

// TestCapturedArgvIsTheDriversArgv: the capture script ran exactly what the driver builds.
func TestCapturedArgvIsTheDriversArgv(t *testing.T) {
	target := driver.Target{Host: "127.0.0.1"}
	opt := map[string]string{"port": "47301"}
	cases := map[string]plan.Case{
		"tcp_stream":           tcase(api.TCPStream, func(p *api.Params) { p.Options = opt }),
		"tcp_stream_p2_l65536": tcase(api.TCPStream, func(p *api.Params) { p.Options = opt; p.Parallel = 2; p.MessageSizeBytes = 65536 }),
		"tcp_stream_omit":      tcase(api.TCPStream, func(p *api.Params) { p.Options = opt; p.WarmupSeconds = 1 }),
		"tcp_sendfile":         tcase(api.TCPSendfile, func(p *api.Params) { p.Options = opt }),
		"tcp_maerts":           tcase(api.TCPMaerts, func(p *api.Params) { p.Options = opt }),
		"tcp_stream_bidir":     tcase(api.TCPStream, func(p *api.Params) { p.Options = map[string]string{"port": "47301", "bidir": "true"} }),
		"tcp_stream_rate":      tcase(api.TCPStream, func(p *api.Params) { p.Options = opt; p.RateBitsPerSecond = 2e8 }),
		"udp_stream":           tcase(api.UDPStream, func(p *api.Params) { p.Options = opt; p.MessageSizeBytes = 1400 }),
		"udp_stream_rate":      tcase(api.UDPStream, func(p *api.Params) { p.Options = opt; p.MessageSizeBytes = 1400; p.RateBitsPerSecond = 5e7 }),
		"udp_stream_p2":        tcase(api.UDPStream, func(p *api.Params) { p.Options = opt; p.MessageSizeBytes = 1024; p.Parallel = 2 }),
	}
	for name, c := range cases {
		f := fixture.Load(t, captured, name)
		got, err := fixture.Argv(Driver{}, c, target, false)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, f.ToolArgv()) {
			t.Errorf("%s: driver argv %q, captured with %q", name, got, f.ToolArgv())
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
				if !utf8.ValidString(r.Error) {
					t.Errorf("error is not valid UTF-8: %q", r.Error)
				}
				if s.ThroughputBitsPerSecond != nil {
					t.Errorf("failed sample carries a figure")
				}
			} else {
				r.Sample = &s
			}
			fixture.Golden(t, filepath.Join("testdata/golden", name+".json"), r)
		})
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

func parseFixture(t *testing.T, name string) api.Sample {
	t.Helper()
	f := fixture.Load(t, captured, name)
	s, err := fixture.Parse(Driver{}, caseFor(name), []driver.Output{f.Output()})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return s
}

// TestHandVerified checks figures against numbers read by eye from the raw JSON files.
func TestHandVerified(t *testing.T) {
	// tcp_stream.stdout, end.sum_received: "bytes": 1062272971, "seconds": 1.002996,
	// "bits_per_second": 8472799261.412807; end.sum_sent: "retransmits": 27.
	s := parseFixture(t, "tcp_stream")
	if !near(*s.ThroughputBitsPerSecond, 8472799261.412807) {
		t.Errorf("tcp_stream throughput %v", *s.ThroughputBitsPerSecond)
	}
	if !near(1062272971*8/1.002996, *s.ThroughputBitsPerSecond) {
		t.Errorf("receiver rate is not bytes*8/seconds")
	}
	if *s.Retransmits != 27 || *s.BytesReceived != 1062272971 || *s.BytesSent != 1062993920 {
		t.Errorf("tcp_stream retransmits %v bytes %v/%v", *s.Retransmits, *s.BytesSent, *s.BytesReceived)
	}
	if s.CPU == nil || s.CPU.Client.ProcessPercent == nil || s.CPU.Server.ProcessPercent == nil {
		t.Errorf("tcp_stream CPU missing")
	}

	// tcp_stream_bidir.stdout: sum_received 4392521166.348614 + sum_received_bidir_reverse
	// 3947277369.853729; retransmits 0 + 1.
	s = parseFixture(t, "tcp_stream_bidir")
	if !near(*s.ThroughputBitsPerSecond, 4392521166.348614+3947277369.853729) || *s.Retransmits != 1 {
		t.Errorf("bidir throughput %v retransmits %v", *s.ThroughputBitsPerSecond, *s.Retransmits)
	}

	// udp_stream.stdout: sum_received "bytes": 90228600, "bits_per_second": 721796319.1656375,
	// "packets": 123464, "lost_packets": 59015, "seconds": 1.000045; sum "lost_percent":
	// 47.79703571717826, "jitter_ms": 0.002608338598502622; sum_sent "packets": 123470.
	s = parseFixture(t, "udp_stream")
	if !near(*s.ThroughputBitsPerSecond, 721796319.1656375) {
		t.Errorf("udp throughput %v (must be the receiver's, not the sender's 1382851554)", *s.ThroughputBitsPerSecond)
	}
	if *s.PacketsReceived != 123464-59015 || *s.PacketsReceived*1400 != 90228600 {
		t.Errorf("udp packets received %v", *s.PacketsReceived)
	}
	if !near(*s.PacketsPerSecond, 64449/1.000045) || !near(*s.LossPercent, 47.79703571717826) ||
		!near(*s.JitterMicroseconds, 2.608338598502622) || *s.PacketsSent != 123470 || *s.PacketsLost != 59015 {
		t.Errorf("udp figures pps %v loss %v jitter %v sent %v lost %v", *s.PacketsPerSecond, *s.LossPercent,
			*s.JitterMicroseconds, *s.PacketsSent, *s.PacketsLost)
	}

	// tcp_stream_omit.stdout: "omit": 1 in test_start → a note.
	s = parseFixture(t, "tcp_stream_omit")
	if !strings.Contains(strings.Join(s.Notes, ";"), "omitted") {
		t.Errorf("omit note missing: %v", s.Notes)
	}
}

func TestFailures(t *testing.T) {
	tests := map[string]string{
		"refused":     "iperf3: unable to connect to server: Connection refused",
		"timeout":     "iperf3: interrupt - the client has terminated",
		"interrupted": "iperf3: interrupt - the client has terminated",
		"truncated":   "truncated",
		"garbage":     "not JSON",
		"nonutf8":     "truncated",
	}
	for name, want := range tests {
		f := fixture.Load(t, captured, name)
		_, err := fixture.Parse(Driver{}, caseFor(name), []driver.Output{f.Output()})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", name, err, want)
		}
	}
	// A run killed by the sample timeout (exit error, nothing printed) names the execution error.
	_, err := fixture.Parse(Driver{}, tcase(api.TCPStream), []driver.Output{{Argv: []string{"iperf3"}, ExitCode: -1,
		Err: errString("iperf3 did not finish within 31s and was killed")}})
	if err == nil || !strings.Contains(err.Error(), "did not finish") {
		t.Errorf("killed run: %v", err)
	}
	// The profile must match what ran.
	f := fixture.Load(t, captured, "udp_stream")
	if _, err := fixture.Parse(Driver{}, tcase(api.TCPStream), []driver.Output{f.Output()}); err == nil {
		t.Error("UDP output accepted for a TCP case")
	}
}

type errString string

func (e errString) Error() string { return string(e) }

func TestImport(t *testing.T) {
	a := fixture.Load(t, captured, "udp_stream_p2")
	b := fixture.Load(t, captured, "tcp_maerts")
	data := append(append(append([]byte{}, a.Stdout...), '\n'), b.Stdout...)
	got, err := Driver{}.Import("two.json", data)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d cases", len(got))
	}
	if got[0].Profile != api.UDPStream || got[0].Params.Parallel != 2 || got[0].Params.MessageSizeBytes != 1024 || got[0].Params.DurationSeconds != 1 {
		t.Errorf("case 0: %+v", got[0])
	}
	if got[1].Profile != api.TCPMaerts || got[1].Sample.ThroughputBitsPerSecond == nil || got[1].Sample.StartTime.IsZero() {
		t.Errorf("case 1: %+v", got[1])
	}
	if _, err := (Driver{}).Import("refused.json", fixture.Load(t, captured, "refused").Stdout); err == nil ||
		!strings.Contains(err.Error(), "Connection refused") {
		t.Errorf("refused import: %v", err)
	}
}
