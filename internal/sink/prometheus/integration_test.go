package prometheus

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/agenttoken"
	"github.com/cnperf/cnperf/internal/loadgen"
	"github.com/cnperf/cnperf/internal/testdaemon"
	"github.com/cnperf/cnperf/internal/testport"
)

func skipOrFail(t *testing.T, format string, a ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, a...)
	if os.Getenv("CNPERF_REQUIRE_PROMETHEUS") != "" {
		t.Fatal(msg + " (CNPERF_REQUIRE_PROMETHEUS is set)")
	}
	t.Skip(msg + "; set CNPERF_REQUIRE_PROMETHEUS=1 to make this a failure")
}

// start runs a daemon in its own process group, stopped at cleanup.
func start(t *testing.T, bin string, args ...string) *bytes.Buffer {
	t.Helper()
	logs, _ := testdaemon.Start(t, exec.Command(bin, args...), 10*time.Second)
	return logs
}

func waitHTTP(t *testing.T, url string, logs *bytes.Buffer) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s did not answer:\n%s", url, logs.String())
}

// startNodeExporter starts Debian's prometheus-node-exporter with the given collectors and a
// prometheus scraping it every second, both on loopback and stopped at cleanup, and returns a
// Collector once node-exporter has been scraped a few times. Without the binaries the test is
// skipped (or fails with CNPERF_REQUIRE_PROMETHEUS).
func startNodeExporter(t *testing.T, ctx context.Context, collectors ...string) *Collector {
	t.Helper()
	if testing.Short() {
		t.Skip("starts Prometheus and node-exporter; skipped with -short")
	}
	promBin, err1 := exec.LookPath("prometheus")
	neBin, err2 := exec.LookPath("prometheus-node-exporter")
	if err1 != nil || err2 != nil {
		skipOrFail(t, "prometheus or prometheus-node-exporter not installed (apt-get install prometheus prometheus-node-exporter)")
	}
	dir := t.TempDir()
	nePort, promPort := testport.Free(t), testport.Free(t)
	neLogs := start(t, neBin, append([]string{fmt.Sprintf("--web.listen-address=127.0.0.1:%d", nePort),
		"--collector.disable-defaults"}, collectors...)...)
	waitHTTP(t, fmt.Sprintf("http://127.0.0.1:%d/metrics", nePort), neLogs)
	cfg := fmt.Sprintf("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: node\n    static_configs:\n      - targets: ['127.0.0.1:%d']\n", nePort)
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	promLogs := start(t, promBin, "--config.file="+cfgPath, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", promPort))
	promURL := fmt.Sprintf("http://127.0.0.1:%d", promPort)
	waitHTTP(t, promURL+"/-/ready", promLogs)

	c, err := New(Config{URL: promURL})
	if err != nil {
		t.Fatal(err)
	}
	// Wait until node-exporter has been scraped a few times.
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := c.Query(ctx, `count_over_time(up{job="node"}[10s])`, time.Now())
		if err == nil && len(res) == 1 && res[0].Value >= 3 {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("node-exporter not scraped: %v %v\n%s", res, err, promLogs.String())
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// TestCollectFromRealPrometheus starts Debian's prometheus-node-exporter and prometheus on
// loopback (scraping every second), runs a real TCP_STREAM with the built-in load generator
// on loopback as a local-platform case does, and queries the figures for that window.
func TestCollectFromRealPrometheus(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := startNodeExporter(t, ctx, "--collector.cpu", "--collector.netdev", "--collector.uname")

	// A real loopback TCP_STREAM case with the built-in generator.
	tok, err := agenttoken.New()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := loadgen.NewServer(loadgen.ServerConfig{Bind: "127.0.0.1", Token: tok})
	if err != nil {
		t.Fatal(err)
	}
	sctx, scancel := context.WithCancel(ctx)
	defer scancel()
	go func() { _ = srv.Serve(sctx) }()
	rep, err := loadgen.Run(ctx, loadgen.ClientConfig{Host: "127.0.0.1", Port: srv.Port(), Profile: "TCP_STREAM",
		Duration: 3 * time.Second, ClientCPU: -1, ServerCPU: -1, Token: tok})
	if err != nil {
		t.Fatal(err)
	}
	res := api.Result{Profile: api.TCPStream, Driver: "native", Path: api.PathLoopback,
		StartTime: rep.Sample.StartTime, EndTime: rep.Sample.EndTime, Samples: []api.Sample{rep.Sample}}
	// Wait until Prometheus has scraped node-exporter a second past the end of the window (a
	// fixed 2.5 s was a guess a loaded machine's scrapes could miss).
	past := float64(res.EndTime.Add(time.Second).UnixNano()) / 1e9
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		last, err := c.Query(ctx, `max(timestamp(up{job="node"}))`, time.Now())
		if err == nil && len(last) == 1 && last[0].Value >= past {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no scrape after the window's end within 30 s: %v %v", last, err)
		}
	}

	if err := c.Annotate(ctx, &res); err != nil {
		t.Fatal(err)
	}
	m := res.Metrics
	if m == nil || len(m.Nodes) != 1 {
		t.Fatalf("metrics = %+v", m)
	}
	n := m.Nodes[0]
	t.Logf("window %.2fs step %gs: node %s cpus %d user %.1f%% system %.1f%% softirq %.1f%% busy %.1f%% (max %.1f%%); throughput %.2f Gbit/s",
		m.WindowSeconds, m.StepSeconds, n.Node, n.CPUs, val(n.CPUUserPercent), val(n.CPUSystemPercent), val(n.CPUSoftIRQPercent),
		val(n.CPUBusyPercent), val(n.CPUBusyMaxPercent), val(rep.Sample.ThroughputBitsPerSecond)/1e9)
	if n.CPUs != runtime.NumCPU() {
		t.Errorf("cpus = %d, want %d", n.CPUs, runtime.NumCPU())
	}
	host, _ := os.Hostname()
	if n.Node != host {
		t.Errorf("node = %q, want %q", n.Node, host)
	}
	// A loopback stream keeps the kernel busy: system CPU and busy CPU are clearly above zero.
	if n.CPUSystemPercent == nil || *n.CPUSystemPercent < 5 || n.CPUBusyPercent == nil || *n.CPUBusyPercent < 10 ||
		n.CPUUserPercent == nil || n.CPUSoftIRQPercent == nil || n.CPUBusyMaxPercent == nil || *n.CPUBusyMaxPercent < *n.CPUBusyPercent-1 {
		t.Errorf("node CPU = %+v", n)
	}
	if *n.CPUBusyPercent > 100.5 || *n.CPUUserPercent+*n.CPUSystemPercent+*n.CPUSoftIRQPercent > *n.CPUBusyPercent+5 { // rates of separate counters: a few % of slack
		t.Errorf("inconsistent CPU figures: user %v system %v softirq %v busy %v", val(n.CPUUserPercent), val(n.CPUSystemPercent), val(n.CPUSoftIRQPercent), val(n.CPUBusyPercent))
	}
	if n.RxDropsPerSecond == nil {
		t.Errorf("no interface figures: %+v", n)
	}
	// No kubelet here: agent pod metrics are absent, which is a warning, not a failure.
	joined := strings.Join(m.Warnings, "\n")
	if !strings.Contains(joined, "agent pod CPU: no data") || !strings.Contains(joined, "agent pod memory: no data") {
		t.Errorf("warnings = %q", m.Warnings)
	}
	if !m.WindowStart.Equal(rep.Sample.StartTime) || m.WindowSeconds < 2.9 || m.StepSeconds != 1 {
		t.Errorf("window = %v + %vs, step %v", m.WindowStart, m.WindowSeconds, m.StepSeconds)
	}
}

func val(p *float64) float64 {
	if p == nil {
		return -1
	}
	return *p
}
