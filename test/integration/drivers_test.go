// Package integration runs the external-tool drivers for real: `cnperf run --driver X` on the
// local platform (loopback) through internal/app.Run, with the Debian-packaged iperf3, qperf and
// sockperf. A test is skipped, saying why, only when its tool is not installed (.ci/run
// installs them). netperf and uperf are not packaged and are covered by their parsers' fixture
// tests.
package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/app"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/iostreams"
	"github.com/cnperf/cnperf/internal/selfexec"
)

// The local platform starts "cnperf ..." commands by re-executing this test binary.
func TestMain(m *testing.M) {
	selfexec.MaybeRun()
	os.Exit(m.Run())
}

func need(t *testing.T, tool string) {
	t.Helper()
	if _, err := exec.LookPath(tool); err != nil {
		t.Skipf("%s is not installed (apt-get install %s); skipping its real loopback run", tool, tool)
	}
}

// cnperf runs the CLI in-process and decodes its JSON run.
func cnperf(t *testing.T, args ...string) (*api.Run, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	all := append([]string{"run", "--platform", "local", "-o", "json", "--no-progress"}, args...)
	err := app.Run(ctx, iostreams.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errb}, all)
	if out.Len() == 0 {
		return nil, errb.String(), err
	}
	var r api.Run
	if jerr := json.Unmarshal(out.Bytes(), &r); jerr != nil {
		t.Fatalf("stdout is not a run: %v\n%s", jerr, out.String())
	}
	return &r, errb.String(), err
}

// ok fails the test unless every sample of every result succeeded.
func ok(t *testing.T, r *api.Run, stderr string, err error) {
	t.Helper()
	if err != nil || r == nil {
		t.Fatalf("run failed: %v\nstderr:\n%s", err, stderr)
	}
	for _, res := range r.Results {
		if res.Error != "" || res.Summary.SamplesFailed > 0 {
			var errs []string
			for _, s := range res.Samples {
				errs = append(errs, s.Error)
			}
			t.Fatalf("%s %s failed: %s %v\nstderr:\n%s", res.Driver, res.Profile, res.Error, errs, stderr)
		}
	}
}

func positive(t *testing.T, what string, v *float64) {
	t.Helper()
	if v == nil || !(*v > 0) {
		t.Errorf("%s = %v, want > 0", what, v)
	}
}

func find(t *testing.T, r *api.Run, p api.Profile) api.Result {
	t.Helper()
	for _, res := range r.Results {
		if res.Profile == p {
			return res
		}
	}
	t.Fatalf("no %s result", p)
	return api.Result{}
}

func TestIperf3Loopback(t *testing.T) {
	need(t, "iperf3")
	r, stderr, err := cnperf(t, "--driver", "iperf3", "--profile", "TCP_STREAM,TCP_MAERTS,TCP_SENDFILE,UDP_STREAM",
		"--duration", "1s", "--samples", "1", "--message-size", "1400", "--parallel", "2")
	ok(t, r, stderr, err)
	for _, p := range []api.Profile{api.TCPStream, api.TCPMaerts, api.TCPSendfile, api.UDPStream} {
		res := find(t, r, p)
		s := res.Samples[0]
		positive(t, string(p)+" throughput", s.ThroughputBitsPerSecond)
		if s.CPU == nil || s.CPU.Client.ProcessPercent == nil {
			t.Errorf("%s: no CPU figures", p)
		}
		argv := strings.Join(res.Commands[0], " ")
		if !strings.HasPrefix(argv, "iperf3 -c 127.0.0.1 ") || !strings.Contains(argv, " -J ") || !strings.Contains(argv, "-P 2") {
			t.Errorf("%s argv %q", p, argv)
		}
	}
	udp := find(t, r, api.UDPStream).Samples[0]
	if udp.LossPercent == nil || udp.PacketsReceived == nil || *udp.PacketsReceived <= 0 {
		t.Errorf("UDP figures: %+v", udp)
	}
	if find(t, r, api.TCPStream).Samples[0].Retransmits == nil {
		t.Error("TCP retransmits missing")
	}
}

func TestIperf3WarmupIsInline(t *testing.T) {
	need(t, "iperf3")
	r, stderr, err := cnperf(t, "--driver", "iperf3", "--profile", "TCP_STREAM", "--duration", "1s", "--warmup", "1s", "--samples", "2")
	ok(t, r, stderr, err)
	res := r.Results[0]
	if len(res.Samples) != 2 || res.Summary.ThroughputBitsPerSecond == nil || res.Summary.ThroughputBitsPerSecond.N != 2 {
		t.Fatalf("summary %+v", res.Summary)
	}
	if argv := strings.Join(res.Commands[0], " "); !strings.Contains(argv, "-O 1") {
		t.Errorf("warm-up not passed as -O: %s", argv)
	}
	for _, s := range res.Samples {
		if s.Warmup || !strings.Contains(strings.Join(s.Notes, ";"), "omitted") {
			t.Errorf("sample %d: warmup=%v notes %v", s.Index, s.Warmup, s.Notes)
		}
	}
}

func TestQperfLoopback(t *testing.T) {
	need(t, "qperf")
	r, stderr, err := cnperf(t, "--driver", "qperf", "--profile", "TCP_RR,UDP_RR,TCP_STREAM,UDP_STREAM",
		"--duration", "1s", "--samples", "1", "--message-size", "64")
	ok(t, r, stderr, err)
	for _, p := range []api.Profile{api.TCPRR, api.UDPRR} {
		s := find(t, r, p).Samples[0]
		positive(t, string(p)+" tps", s.TransactionsPerSecond)
		if s.Latency == nil || s.Latency.Method != "tool-rtt-from-one-way" || s.Latency.Mean == nil {
			t.Fatalf("%s latency %+v", p, s.Latency)
		}
		// RTT and rate agree: one transaction in flight, RTT ≈ 1/rate (qperf's one-way time doubled).
		rtt := *s.Latency.Mean / 1e6
		if ratio := rtt * *s.TransactionsPerSecond; ratio < 0.9 || ratio > 1.1 {
			t.Errorf("%s: RTT %v s × rate %v = %v, want ≈ 1 (was one-way time doubled?)", p, rtt, *s.TransactionsPerSecond, ratio)
		}
		if s.CPU == nil || s.CPU.Client.HostBusyCPUPercent == nil {
			t.Errorf("%s: no CPU", p)
		}
	}
	for _, p := range []api.Profile{api.TCPStream, api.UDPStream} {
		positive(t, string(p)+" throughput", find(t, r, p).Samples[0].ThroughputBitsPerSecond)
	}
}

func TestSockperfLoopback(t *testing.T) {
	need(t, "sockperf")
	r, stderr, err := cnperf(t, "--driver", "sockperf", "--profile", "TCP_RR,UDP_RR,TCP_STREAM",
		"--duration", "2s", "--samples", "1", "--message-size", "1400")
	ok(t, r, stderr, err)
	for _, p := range []api.Profile{api.TCPRR, api.UDPRR} {
		s := find(t, r, p).Samples[0]
		l := s.Latency
		if l == nil || l.Method != "tool" || l.P50 == nil || l.P99 == nil || l.P9999 == nil || l.Count == nil || *l.Count <= 0 {
			t.Fatalf("%s latency %+v", p, l)
		}
		if !(*l.Min <= *l.P50 && *l.P50 <= *l.P99 && *l.P99 <= *l.Max) {
			t.Errorf("%s percentiles out of order: %+v", p, l)
		}
		positive(t, string(p)+" tps", s.TransactionsPerSecond)
	}
	positive(t, "TCP_STREAM throughput", find(t, r, api.TCPStream).Samples[0].ThroughputBitsPerSecond)
}

// Without --full-rtt sockperf prints RTT/2: cnperf doubles every figure and says so.
func TestSockperfHalfRTTIsDoubled(t *testing.T) {
	need(t, "sockperf")
	r, stderr, err := cnperf(t, "--driver", "sockperf", "--profile", "UDP_RR", "--duration", "2s", "--samples", "1",
		"--message-size", "64", "--option", "fullRTT=false")
	ok(t, r, stderr, err)
	s := r.Results[0].Samples[0]
	if s.Latency.Method != "tool-rtt-from-one-way" || !strings.Contains(s.Latency.Note, "doubled") {
		t.Fatalf("latency %+v", s.Latency)
	}
	if strings.Contains(strings.Join(r.Results[0].Commands[0], " "), "--full-rtt") {
		t.Error("--full-rtt passed although fullRTT=false")
	}
	// The doubled mean is a round trip: with one message in flight, mean RTT × rate ≈ 1.
	if ratio := *s.Latency.Mean / 1e6 * *s.TransactionsPerSecond; ratio < 0.5 || ratio > 1.5 {
		t.Errorf("mean RTT × rate = %v, want ≈ 1", ratio)
	}
}

func TestIperf2BouncebackLoopback(t *testing.T) {
	need(t, "iperf")
	r, stderr, err := cnperf(t, "--driver", "iperf2", "--profile", "TCP_RR", "--duration", "1s", "--samples", "1", "--message-size", "64")
	ok(t, r, stderr, err)
	s := r.Results[0].Samples[0]
	positive(t, "tps", s.TransactionsPerSecond)
	if s.Latency == nil || s.Latency.Mean == nil || *s.Latency.Count <= 0 || *s.Latency.Min > *s.Latency.Max {
		t.Fatalf("latency %+v", s.Latency)
	}
}

// A profile the tool cannot run is refused before anything starts, naming drivers that can.
func TestCapabilityRefusedBeforeRunning(t *testing.T) {
	_, stderr, err := cnperf(t, "--driver", "iperf3", "--profile", "TCP_RR", "--duration", "1s", "--samples", "1")
	if err == nil || exit.Code(err) != exit.BadInput {
		t.Fatalf("err %v (exit %d), want exit 2", err, exit.Code(err))
	}
	msg := err.Error() + stderr
	if !strings.Contains(msg, `driver "iperf3" cannot run profile TCP_RR`) || !strings.Contains(msg, "netperf") || !strings.Contains(msg, "sockperf") {
		t.Errorf("message: %s", msg)
	}
	if strings.Contains(stderr, "started iperf3 server") {
		t.Error("a server was started for a refused plan")
	}
	_, _, err = cnperf(t, "--driver", "sockperf", "--profile", "TCP_STREAM", "--message-size", "131072", "--duration", "1s")
	if err == nil || !strings.Contains(err.Error(), "65507") {
		t.Errorf("sockperf oversize message: %v", err)
	}
}
