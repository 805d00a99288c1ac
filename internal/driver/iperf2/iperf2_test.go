package iperf2

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

func rr(size int) plan.Case {
	return plan.Case{Driver: Name, Profile: api.TCPRR, Params: api.Params{DurationSeconds: 1, Samples: 1, Parallel: 1,
		MessageSizeBytes: size, Options: map[string]string{"port": "47331"}}}
}

func TestCapturedArgvIsTheDriversArgv(t *testing.T) {
	for name, size := range map[string]int{"bounceback_l64": 64, "bounceback_l1024": 1024} {
		got, err := fixture.Argv(Driver{}, rr(size), driver.Target{Host: "127.0.0.1"}, false)
		if err != nil {
			t.Fatal(err)
		}
		if f := fixture.Load(t, captured, name); !reflect.DeepEqual(got, f.Argv) {
			t.Errorf("%s: driver %q, captured %q", name, got, f.Argv)
		}
	}
	if _, err := fixture.Argv(Driver{}, plan.Case{Profile: api.TCPStream}, driver.Target{Host: "h"}, false); err == nil {
		t.Error("TCP_STREAM accepted")
	}
}

func TestParseCapturedGolden(t *testing.T) {
	for _, name := range []string{"bounceback_l64", "bounceback_l1024", "refused"} {
		f := fixture.Load(t, captured, name)
		s, err := fixture.Parse(Driver{}, rr(64), []driver.Output{f.Output()})
		var r fixture.Result
		if err != nil {
			r.Error = err.Error()
		} else {
			r.Sample = &s
		}
		fixture.Golden(t, filepath.Join("testdata/golden", name+".json"), r)
	}
}

func TestHandVerified(t *testing.T) {
	// bounceback_l1024.stdout: "[  1] 0.0000-1.0011 sec ... 33484=0.029/0.019/7.592/0.106 ms".
	f := fixture.Load(t, captured, "bounceback_l1024")
	s, err := fixture.Parse(Driver{}, rr(1024), []driver.Output{f.Output()})
	if err != nil {
		t.Fatal(err)
	}
	l := s.Latency
	if *s.Transactions != 33484 || math.Abs(*s.TransactionsPerSecond-33484/1.0011) > 1e-6 ||
		math.Abs(*l.Mean-29) > 1e-9 || math.Abs(*l.Min-19) > 1e-9 || math.Abs(*l.Max-7592) > 1e-9 || l.P99 != nil {
		t.Errorf("%+v %+v", s, l)
	}
	// iperf 2 exits 0 when it cannot connect: the message decides.
	f = fixture.Load(t, captured, "refused")
	if _, err := fixture.Parse(Driver{}, rr(64), []driver.Output{f.Output()}); err == nil || !strings.Contains(err.Error(), "tcp connect failed: Connection refused") {
		t.Errorf("refused: %v", err)
	}
	got, err := Driver{}.Import("bb.txt", fixture.Load(t, captured, "bounceback_l64").Stdout)
	if err != nil || got[0].Params.MessageSizeBytes != 64 || got[0].Profile != api.TCPRR {
		t.Errorf("import: %+v %v", got, err)
	}
}

// TestBounceMessageSize: iperf 2 cannot bounce messages smaller than its header, so such a
// case is refused when the plan is checked (before anything runs), naming the field.
func TestBounceMessageSize(t *testing.T) {
	for _, tt := range []struct {
		size int
		ok   bool
	}{{0, true}, {1, false}, {63, false}, {64, true}, {1024, true}} {
		err := driver.List{Driver{}}.Check(rr(tt.size))
		if (err == nil) != tt.ok {
			t.Errorf("message size %d: %v, want ok %v", tt.size, err, tt.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "--message-size") {
			t.Errorf("message size %d: the error does not name the flag: %v", tt.size, err)
		}
	}
}

// TestGarbledNumbers: a real report with its mean latency garbled ("0.02.2") is no report
// iperf 2 prints: it is refused, not read as a latency of 0.
func TestGarbledNumbers(t *testing.T) {
	f := fixture.Load(t, captured, "bounceback_l64")
	garbled := strings.Replace(string(f.Stdout), "43785=0.022/", "43785=0.02.2/", 1)
	if garbled == string(f.Stdout) {
		t.Fatal("the report line is not in the capture")
	}
	if s, err := ParseOutput([]byte(garbled)); err == nil {
		t.Errorf("garbled report accepted: latency %+v", s.Latency)
	}
}

// TestServersPerFamily: iperf 2's server listens on IPv4 only without -V, and with -V on the IPv6
// wildcard, which takes the port for IPv4 too; in a run with both families the IPv6 case has a
// server of its own with -V on the next port, and its client dials that port with -V (before,
// the one "iperf -s -p 5001" refused the IPv6 client).
func TestServersPerFamily(t *testing.T) {
	c := func(fam string, kv ...string) plan.Case {
		c := rr(64)
		c.Params.IPFamily = fam
		c.Params.Options = map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			c.Params.Options[kv[i]] = kv[i+1]
		}
		return c
	}
	v4, v6, v6port, v6bind := c("ipv4"), c("ipv6"), c("ipv6", "port", "6000"), c("ipv6", "bind", "::1")
	var got []string
	for _, s := range driver.Servers(Driver{}, []plan.Case{v4, v6, v6port, v6bind}) {
		got = append(got, fmt.Sprintf("%s %s: %d", s.Name, strings.Join(s.Argv, " "), s.Ports[0].Port))
	}
	want := []string{"iperf2 iperf -s -p 5001: 5001", "iperf2-v6 iperf -s -p 5002 -V: 5002",
		"iperf2-v6-6000 iperf -s -p 6001 -V: 6001"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("servers\n got %q\nwant %q", got, want)
	}
	if s := driver.Servers(Driver{}, []plan.Case{v6bind}); strings.Join(s[0].Argv, " ") != "iperf -s -p 5002 -V -B ::1" {
		t.Errorf("bound IPv6 server %q", s[0].Argv)
	}
	for _, tc := range []struct {
		c          plan.Case
		host, want string
	}{
		{v4, "198.18.2.10", "iperf -c 198.18.2.10 -p 5001 -e --bounceback --bounceback-period 0 -t 1 -l 64"},
		{v6, "2001:2:0:2::a", "iperf -c 2001:2:0:2::a -p 5002 -e --bounceback --bounceback-period 0 -t 1 -l 64 -V"},
		{v6port, "2001:2:0:2::a", "iperf -c 2001:2:0:2::a -p 6001 -e --bounceback --bounceback-period 0 -t 1 -l 64 -V"},
	} {
		argv, err := fixture.Argv(Driver{}, tc.c, driver.Target{Host: tc.host}, false)
		if err != nil {
			t.Fatal(err)
		}
		if g := strings.Join(argv, " "); g != tc.want {
			t.Errorf("client\n got %s\nwant %s", g, tc.want)
		}
	}
}
