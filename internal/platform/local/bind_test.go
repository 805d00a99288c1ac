package local

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/driver/all"
	"github.com/cnperf/cnperf/internal/plan"
)

// listening returns the local address of every listening TCP socket and bound UDP socket of
// this host by port, from /proc/net/{tcp,udp}[6] ("0100007F" is 127.0.0.1).
func listening(t *testing.T) map[int][]string {
	t.Helper()
	out := map[int][]string{}
	for _, f := range []string{"tcp", "tcp6", "udp", "udp6"} {
		fh, err := os.Open("/proc/net/" + f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		sc.Scan() // header
		for sc.Scan() {
			fs := strings.Fields(sc.Text())
			if len(fs) < 4 || (strings.HasPrefix(f, "tcp") && fs[3] != "0A") { // 0A: LISTEN
				continue
			}
			addr, port, _ := strings.Cut(fs[1], ":")
			n, err := strconv.ParseInt(port, 16, 32)
			if err == nil {
				out[int(n)] = append(out[int(n)], f+" "+addr)
			}
		}
		fh.Close()
	}
	return out
}

// The servers of the drivers that can be told an address (driver.Binder) listen on 127.0.0.1
// only on the loopback path; for the others (qperf, uperf) the run says they cannot. Real
// servers, started by Prepare; their sockets read from /proc/net.
func TestLoopbackServersListenOnLoopbackOnly(t *testing.T) {
	tools := map[string]string{"iperf3": "iperf3", "iperf2": "iperf", "netperf": "netserver", "sockperf": "sockperf", "qperf": "qperf", "uperf": "uperf"}
	var cases []plan.Case
	drivers := map[string]driver.Driver{}
	for _, name := range []string{"iperf3", "iperf2", "netperf", "sockperf", "qperf", "uperf"} {
		if _, err := exec.LookPath(tools[name]); err != nil {
			t.Logf("%s is not installed: not checked", tools[name])
			continue
		}
		d, err := all.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		drivers[name] = d
		prof := api.TCPRR
		if name == "iperf3" {
			prof = api.TCPStream
		}
		cases = append(cases, plan.Case{Profile: prof, Path: api.PathLoopback, Driver: name, Params: api.Params{DurationSeconds: 1, Samples: 1}})
	}
	if len(cases) == 0 {
		t.Skip("none of the tools is installed")
	}
	var log strings.Builder
	p := New(Options{}, &log)
	defer func() { _ = p.Close(context.Background()) }()
	if err := p.Prepare(context.Background(), cases, drivers); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	socks := listening(t)
	p.mu.Lock()
	servers := append([]*serverProc(nil), p.servers...)
	p.mu.Unlock()
	for _, s := range servers {
		_, binder := drivers[s.driver].(driver.Binder)
		for _, port := range s.spec.Ports {
			got := socks[port.Port]
			if len(got) == 0 && strings.HasPrefix(port.Name, "data") {
				continue // a data socket opened per test (netperf, qperf, uperf; iperf3's UDP)
			}
			if len(got) == 0 {
				t.Errorf("%s server %s: nothing listens on port %d", s.driver, s.spec.Name, port.Port)
			}
			for _, g := range got {
				loop := strings.HasSuffix(g, " 0100007F")
				if binder && !loop {
					t.Errorf("%s server %s (%s): port %d listens on %s, want 127.0.0.1 only", s.driver, s.spec.Name, strings.Join(s.spec.Argv, " "), port.Port, g)
				}
				if !binder && loop {
					t.Errorf("%s server %s listens on 127.0.0.1 only, yet the run warns it listens on every address", s.driver, s.spec.Name)
				}
			}
		}
		if !binder && !strings.Contains(log.String(), fmt.Sprintf("warning: %s's server cannot be told an address to listen on", s.driver)) {
			t.Errorf("no warning that %s listens on every address:\n%s", s.driver, log.String())
		}
	}
	t.Logf("servers:\n%s", log.String())
}
