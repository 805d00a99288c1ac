package agentcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/iostreams"
	"github.com/cnperf/cnperf/internal/testport"
	"github.com/cnperf/cnperf/internal/ttfr"
)

// startTTFRServer runs the TTFR server on a free loopback port and returns its address.
func startTTFRServer(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- ttfr.Serve(ctx, "127.0.0.1:0", func(a net.Addr) { addrc <- a.String() }) }()
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

// freeAddr returns a loopback address nothing listens on, which nothing takes in the meantime
// (testport.Free).
func freeAddr(t *testing.T) string {
	t.Helper()
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(testport.Free(t)))
}

func runProbe(t *testing.T, cmdArgs ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	c := newTTFRCommand(iostreams.Streams{Out: &out, ErrOut: &errOut})
	if len(cmdArgs) > 0 && cmdArgs[0] == "dns" {
		c = newDNSCommand(iostreams.Streams{Out: &out, ErrOut: &errOut})
		cmdArgs = cmdArgs[1:]
	}
	c.SetArgs(cmdArgs)
	c.SetOut(&errOut)
	c.SetErr(&errOut)
	err := c.ExecuteContext(context.Background())
	return out.String(), err
}

// testStart is about the process start (package initialisation), from which `agent ttfr`'s
// --timeout counts (ttfr's clock starts a little earlier still).
var testStart = time.Now()

func TestAgentCommandPrintsOneJSONLine(t *testing.T) {
	addr := startTTFRServer(t)
	// 10 s from now, not from the process start: the package's earlier tests may have taken
	// that long on a loaded machine (and -count=N reruns it in the same process)
	timeout := time.Since(testStart) + 11*time.Second
	out, err := runProbe(t, "--target", addr, "--timeout", timeout.String())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(out, "\n") != 1 {
		t.Fatalf("want one line, got %q", out)
	}
	var r ttfr.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil || !r.OK || r.TTFRSeconds == nil || r.Target != addr {
		t.Errorf("%v %+v", err, r)
	}

	out, err = runProbe(t, "--target", freeAddr(t), "--timeout", "200ms")
	var fe *exit.FailureError
	if !errors.As(err, &fe) {
		t.Errorf("failed measurement: error %v, want a failure (exit 1)", err)
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.OK || r.Error == "" {
		t.Errorf("failure line %q: %v", out, err)
	}
}

func TestAgentCommandUsage(t *testing.T) {
	for _, args := range [][]string{{}, {"--target", "nohost"}, {"--target", "h:1", "--listen", ":1"}, {"--target", "h:99999"},
		{"--target", "h:1", "--protocol", "udp"}, {"dns"}, {"dns", "--target", "x", "--duration", "0s"}} {
		_, err := runProbe(t, args...)
		var ue *exit.UsageError
		if !errors.As(err, &ue) {
			t.Errorf("%q: error %v, want a usage error", args, err)
		}
	}
}

func TestDNSCommand(t *testing.T) {
	addr := startTTFRServer(t)
	_, port, _ := net.SplitHostPort(addr)
	out, err := runProbe(t, "dns", "--target", "127.0.0.1", "--port", port, "--duration", "100ms", "--interval", "10ms")
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var r struct {
		Lookups         int       `json:"lookups"`
		Connects        int       `json:"connects"`
		ConnectFailures int       `json:"connectFailures"`
		ConnectSeconds  []float64 `json:"connectSeconds"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.Lookups == 0 || r.ConnectFailures != 0 || len(r.ConnectSeconds) != r.Connects {
		t.Errorf("%v %+v", err, r)
	}
}
