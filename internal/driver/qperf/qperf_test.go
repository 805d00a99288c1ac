package qperf

import (
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
		Params: api.Params{DurationSeconds: 1, Samples: 1, Parallel: 1}}
	for _, m := range mut {
		m(&c.Params)
	}
	return c
}

func TestClientArgv(t *testing.T) {
	tg := driver.Target{Host: "10.1.2.3"}
	tests := []struct {
		name   string
		c      plan.Case
		t      driver.Target
		warmup bool
		want   string
		err    string
	}{
		{name: "tcp_lat", c: tcase(api.TCPRR, func(p *api.Params) { p.MessageSizeBytes = 1 }), t: tg,
			want: "qperf 10.1.2.3 -lp 19765 -ip 19766 -t 1 -m 1 -vv -uu -un -e 6 tcp_lat"},
		{name: "udp_lat", c: tcase(api.UDPRR, func(p *api.Params) { p.MessageSizeBytes = 64; p.DurationSeconds = 30 }), t: tg,
			want: "qperf 10.1.2.3 -lp 19765 -ip 19766 -t 30 -m 64 -vv -uu -un -e 6 udp_lat"},
		{name: "tcp_bw default size", c: tcase(api.TCPStream, func(p *api.Params) { p.DurationSeconds = 0.3 }), t: tg,
			want: "qperf 10.1.2.3 -lp 19765 -ip 19766 -t 1 -vv -uu -un -e 6 tcp_bw"},
		{name: "udp_bw warm-up run", c: tcase(api.UDPStream, func(p *api.Params) { p.WarmupSeconds = 2; p.DurationSeconds = 10 }), t: tg, warmup: true,
			want: "qperf 10.1.2.3 -lp 19765 -ip 19766 -t 2 -vv -uu -un -e 6 udp_bw"},
		{name: "ports from options, control port NAT'ed", c: tcase(api.TCPRR, func(p *api.Params) {
			p.Options = map[string]string{"qperf.port": "47311", "dataPort": "47312"}
		}), t: driver.Target{Host: "svc", Ports: map[int]int{47311: 30311}},
			want: "qperf svc -lp 30311 -ip 47312 -t 1 -vv -uu -un -e 6 tcp_lat"},
		{name: "NAT'ed data port refused", c: tcase(api.TCPRR), t: driver.Target{Host: "svc", Ports: map[int]int{19766: 30766}},
			err: "under the same number"},
		{name: "crr refused", c: tcase(api.TCPCRR), t: tg, err: "cannot run profile TCP_CRR"},
		{name: "maerts refused", c: tcase(api.TCPMaerts), t: tg, err: "cannot run profile TCP_MAERTS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmds, err := fixture.Client(Driver{}, tt.c, tt.t, tt.warmup)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(cmds[0].Argv, " "); got != tt.want {
				t.Errorf("\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestServers(t *testing.T) {
	got := driver.Servers(Driver{}, []plan.Case{tcase(api.TCPRR), tcase(api.UDPStream),
		tcase(api.TCPRR, func(p *api.Params) { p.Options = map[string]string{"port": "47311"} })})
	if len(got) != 2 {
		t.Fatalf("%+v", got)
	}
	if strings.Join(got[0].Argv, " ") != "qperf -lp 19765" || len(got[0].Ports) != 3 || got[0].Ports[2].Protocol != "UDP" {
		t.Errorf("%+v", got[0])
	}
	if strings.Join(got[1].Argv, " ") != "qperf -lp 47311" || got[1].Ports[1].Port != 47312 {
		t.Errorf("%+v", got[1])
	}
}

func caseFor(name string) plan.Case {
	for _, p := range []api.Profile{api.TCPStream, api.UDPStream, api.TCPRR, api.UDPRR} {
		if strings.HasPrefix(name, Test(p)) {
			return tcase(p)
		}
	}
	return tcase(api.TCPRR)
}

func TestCapturedArgvIsTheDriversArgv(t *testing.T) {
	tg := driver.Target{Host: "127.0.0.1"}
	for _, name := range fixture.Names(t, captured) {
		f := fixture.Load(t, captured, name)
		if f.Derived || !strings.Contains(name, "_m") {
			continue
		}
		size := 64
		if strings.HasSuffix(name, "_m1024") {
			size = 1024
		}
		c := caseFor(name)
		c.Params.MessageSizeBytes = size
		c.Params.Options = map[string]string{"port": "47311"}
		got, err := fixture.Argv(Driver{}, c, tg, false)
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
	// tcp_lat_m64.stdout: "latency = 9548 ns" (one-way), "msg_rate = 104734 /sec" (both
	// directions), "loc_recv_msgs = 52367".
	s := parse("tcp_lat_m64")
	if !near(*s.Latency.Mean, 19.096) || s.Latency.Method != "tool-rtt-from-one-way" || s.Latency.P99 != nil {
		t.Errorf("RTT %v method %q", *s.Latency.Mean, s.Latency.Method)
	}
	if !near(*s.TransactionsPerSecond, 52367) || *s.Transactions != 52367 {
		t.Errorf("tps %v transactions %v", *s.TransactionsPerSecond, *s.Transactions)
	}
	if *s.CPU.Client.HostBusyCPUPercent != 200 || s.CPU.Client.ProcessPercent != nil {
		t.Errorf("cpu %+v", s.CPU.Client)
	}
	// tcp_bw_m1024.stdout: "bw = 450363392 bytes/sec".
	s = parse("tcp_bw_m1024")
	if !near(*s.ThroughputBitsPerSecond, 450363392*8) || *s.BytesReceived != 450363392 {
		t.Errorf("bw %v", *s.ThroughputBitsPerSecond)
	}
	// tcp_lat_default_units.stdout: "latency = 8.72 us" → 17.44 µs RTT, rounded by qperf.
	s = parse("tcp_lat_default_units")
	if !near(*s.Latency.Mean, 17.44) || !strings.Contains(strings.Join(s.Notes, ";"), "rounded") {
		t.Errorf("default units: %v %v", *s.Latency.Mean, s.Notes)
	}
	// tcp_bw_default_units.stdout: "msg_size = 64 KiB (65,536)" uses the exact value.
	r, err := ParseOutput(fixture.Load(t, captured, "tcp_bw_default_units").Stdout, false)
	if err != nil || r.Values["msg_size"] != 65536 || r.Values["port"] != 47312 {
		t.Errorf("default units: %v %v", r.Values, err)
	}
	// udp_bw loss: sent - received over sent.
	s = parse("udp_bw_m1024")
	if *s.PacketsLost != *s.PacketsSent-*s.PacketsReceived || !near(*s.LossPercent, 100*float64(*s.PacketsLost)/float64(*s.PacketsSent)) {
		t.Errorf("udp loss %v %v %v %v", *s.PacketsSent, *s.PacketsReceived, *s.PacketsLost, *s.LossPercent)
	}
}

func TestFailures(t *testing.T) {
	for name, want := range map[string]string{
		"refused":   "qperf tcp_lat: 127.0.0.1: failed to connect",
		"timeout":   "failed to receive port: timed out",
		"truncated": "incomplete",
		"garbage":   "not a test report",
		"nonutf8":   "",
	} {
		f := fixture.Load(t, captured, name)
		_, err := fixture.Parse(Driver{}, caseFor(name), []driver.Output{f.Output()})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", name, err, want)
		}
	}
	f := fixture.Load(t, captured, "tcp_bw_m64")
	if _, err := fixture.Parse(Driver{}, tcase(api.TCPRR), []driver.Output{f.Output()}); err == nil {
		t.Error("tcp_bw output accepted for TCP_RR")
	}
}

func TestImportSeveralTests(t *testing.T) {
	data := append(fixture.Load(t, captured, "tcp_bw_default_units").Stdout, fixture.Load(t, captured, "udp_lat_m64").Stdout...)
	got, err := Driver{}.Import("log.txt", data)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Profile != api.TCPStream || got[1].Profile != api.UDPRR || got[1].Params.MessageSizeBytes != 64 ||
		got[0].Params.MessageSizeBytes != 65536 || got[1].Params.DurationSeconds != 1 {
		t.Errorf("%+v", got)
	}
}
