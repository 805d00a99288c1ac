package ttfr

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/testport"
)

// startServer runs the TTFR server on a free loopback port and returns its address.
func startServer(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, "127.0.0.1:0", func(a net.Addr) { addrc <- a.String() }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("server: %v", err)
		}
	})
	select {
	case a := <-addrc:
		return a
	case err := <-done:
		t.Fatalf("server did not start: %v", err)
	}
	return ""
}

// freePort returns a loopback address nothing listens on, which nothing takes before the test
// listens there itself (testport.Free: a port from listen(":0") was soon another test's).
func freePort(t *testing.T) string {
	t.Helper()
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(testport.Free(t)))
}

func TestMeasureReachesServer(t *testing.T) {
	addr := startServer(t)
	for _, proto := range []string{"http", "tcp"} {
		start := time.Now()
		res := Measure(context.Background(), ClientConfig{Target: addr, Protocol: proto, Timeout: 10 * time.Second, Start: start})
		if !res.OK || res.TTFRSeconds == nil || *res.TTFRSeconds <= 0 || res.Attempts < 1 || res.Error != "" {
			t.Errorf("%s: %+v", proto, res)
		}
		if *res.TTFRSeconds > time.Since(start).Seconds() {
			t.Errorf("%s: ttfr %v longer than the measurement itself", proto, *res.TTFRSeconds)
		}
	}
}

// A server that appears late: the client keeps trying, and the figure includes the wait.
func TestMeasureWaitsForLateServer(t *testing.T) {
	addr := freePort(t)
	delay := 300 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now() // before the server's delay begins, or the server may come up sooner after start
	go func() {
		time.Sleep(delay)
		_ = Serve(ctx, addr, nil)
	}()
	res := Measure(context.Background(), ClientConfig{Target: addr, Timeout: 20 * time.Second, Start: start})
	if !res.OK {
		t.Fatalf("%+v", res)
	}
	if *res.TTFRSeconds < delay.Seconds() {
		t.Errorf("ttfr %.3fs shorter than the server's start delay %s", *res.TTFRSeconds, delay)
	}
	if res.Attempts < 2 || !strings.Contains(res.LastError, "refused") {
		t.Errorf("attempts %d, last error %q: the refused attempts before the server came up are not visible", res.Attempts, res.LastError)
	}
}

func TestMeasureFailureHasCause(t *testing.T) {
	addr := freePort(t)
	res := Measure(context.Background(), ClientConfig{Target: addr, Timeout: 300 * time.Millisecond, Start: time.Now()})
	if res.OK || res.TTFRSeconds != nil {
		t.Fatalf("nothing listens, yet %+v", res)
	}
	if !strings.Contains(res.Error, "no response within 300ms") || !strings.Contains(res.Error, "connection refused") {
		t.Errorf("error %q", res.Error)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res = Measure(ctx, ClientConfig{Target: addr, Timeout: time.Minute})
	if res.OK || !strings.Contains(res.Error, "interrupted") {
		t.Errorf("cancelled: %+v", res)
	}
}

func TestMeasureDNS(t *testing.T) {
	addr := startServer(t)
	_, portStr, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portStr)
	// "localhost" resolves from /etc/hosts through Go's resolver, without a DNS server.
	res := MeasureDNS(context.Background(), DNSConfig{Name: "localhost", Port: port, Duration: 200 * time.Millisecond, Interval: 10 * time.Millisecond})
	if res.Lookups == 0 || res.LookupFailures != 0 || len(res.LookupSeconds) != res.Lookups {
		t.Errorf("lookups %+v", res)
	}
	// localhost may resolve to ::1 first, where nothing listens: connects are attempted either way.
	if res.Connects != res.Lookups || len(res.ConnectSeconds)+res.ConnectFailures != res.Connects {
		t.Errorf("connects %+v", res)
	}

	// A DNS server that cannot be reached: failures are counted with their cause.
	broken := &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("dns server unreachable")
	}}
	res = MeasureDNS(context.Background(), DNSConfig{Name: "svc.example.test", Port: port, Duration: 50 * time.Millisecond, Resolver: broken})
	if res.Lookups == 0 || res.LookupFailures != res.Lookups || res.Connects != 0 || len(res.LookupSeconds) != 0 || len(res.Failures) != 1 {
		t.Errorf("broken resolver: %+v", res)
	}
}

// A target that comes up late: with WaitReady the set-up is waited out, not counted.
func TestMeasureDNSWaitsForTarget(t *testing.T) {
	addr := freePort(t)
	_, portStr, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portStr)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		time.Sleep(300 * time.Millisecond)
		_ = Serve(ctx, addr, nil)
	}()
	res := MeasureDNS(context.Background(), DNSConfig{Name: "127.0.0.1", Port: port, Duration: 100 * time.Millisecond,
		Interval: 10 * time.Millisecond, WaitReady: 10 * time.Second})
	if res.ConnectFailures != 0 || res.Connects == 0 || res.WaitedSeconds < 0.3 {
		t.Errorf("%+v", res)
	}
}
