//go:build e2e

// End-to-end runs of netperf and uperf, the tools k8s-netperf drives, in the agent image on
// the harness's cluster: both drivers on pod-pod-cross-node, host-host and pod-clusterip, and
// k8s-netperf's own shipped netperf.yml run end to end with -o k8s-netperf-csv.
package e2e

import (
	"context"
	"encoding/csv"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/text"
)

// TestKubeNetperfUperfPaths: every sample of netperf and uperf, 1 and 2 flows, on the three
// paths, succeeds with a non-zero figure; nothing is left behind.
func TestKubeNetperfUperfPaths(t *testing.T) {
	// Its 36 one-second cases take about 100 s and change nothing outside its namespace: it
	// runs beside the chart tests, which mostly wait for a CronJob's minutes (go test starts
	// parallel tests after the sequential ones); it checks only that each figure is there
	// and above 0, which their load does not change.
	t.Parallel()
	cl := kpClusterFromEnv(t)
	runID := uuid.NewString()
	ns := kpNamespace("cnperf-e2e-tools")
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	out, stderr, code := kpRunCLI(ctx, "run", "--platform", "kube", "--kubeconfig", cl.kubeconfig, "-n", ns, "--uuid", runID,
		"--driver", "netperf,uperf", "--profile", "TCP_STREAM,UDP_STREAM,TCP_RR", "--message-size", "1400",
		"--path", "pod-pod-cross-node,host-host,pod-clusterip", "--parallel", "1,2",
		"--duration", "1s", "--samples", "1", "-o", "json", "--no-progress")
	t.Logf("stderr:\n%s", stderr)
	if code != exit.OK {
		t.Errorf("exit code %d", code)
	}
	run := kpDecodeRun(t, out)
	paths := map[string]int{}
	for _, r := range run.Results {
		name := r.Driver + " " + string(r.Profile) + " " + string(r.Path) + " x" + strconv.Itoa(r.Params.Parallel)
		if r.Failed() || r.Summary.SamplesFailed > 0 {
			var raw string
			if len(r.Samples) > 0 {
				raw = r.Samples[0].Raw
			}
			t.Errorf("%s failed: %s\n%s", name, r.Error, raw)
			continue
		}
		s := r.Samples[0]
		v := s.ThroughputBitsPerSecond
		if r.Profile.IsRR() {
			v = s.TransactionsPerSecond
		}
		if v == nil || !(*v > 0) {
			t.Errorf("%s: figure %v", name, v)
			continue
		}
		t.Logf("%s: %.4g", name, *v)
		paths[r.Driver+" "+string(r.Path)]++
	}
	for _, d := range []string{"netperf", "uperf"} {
		for _, p := range []api.Path{api.PathPodPodCrossNode, api.PathHostHost, api.PathPodClusterIP} {
			if paths[d+" "+string(p)] == 0 {
				t.Errorf("%s did not run on %s", d, p)
			}
		}
	}
	if left := kpLeftovers(context.Background(), t, cl.cs, runID); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestKubeK8sNetperfShippedFile runs k8s-netperf's own netperf.yml (its default file, as
// shipped at github.com/cloud-bulldozer/k8s-netperf fb9a2ec, the newest commit read; the peer
// file is named by the first commit holding that content, 492f5514295f) with both of its drivers, netperf and
// uperf (k8s-netperf's --uperf), and reads the k8s-netperf CSV it prints: one row per case
// with a non-zero average. Its TCP_STREAM_LAT test runs with uperf (k8s-netperf's profile;
// netperf cannot run it) and uperf's TCP_CRR is skipped: each skip with a warning, as
// k8s-netperf skips them.
//
// The file asks for 3 samples of 10 s per test (300 s of measurement, 6 min in all); the test
// overrides them with --duration 3s --samples 1, as a user trying the file quickly would, so
// that CI's budget holds. That the file's own durations and sample counts expand as
// k8s-netperf expands them is TestPeerFiles' job (internal/config); this test proves that
// every case of the unchanged file runs on a real cluster with the real tools.
func TestKubeK8sNetperfShippedFile(t *testing.T) {
	cl := kpClusterFromEnv(t)
	file, err := filepath.Abs("../../internal/config/testdata/peers/k8s-netperf/netperf.yml@492f5514295f.yml")
	if err != nil {
		t.Fatal(err)
	}
	runID := uuid.NewString()
	ns := kpNamespace("cnperf-e2e-k8snetperf")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	out, stderr, code := kpRunCLI(ctx, "run", "--platform", "kube", "--kubeconfig", cl.kubeconfig, "-n", ns, "--uuid", runID,
		"-c", file, "--driver", "netperf,uperf", "--duration", "3s", "--samples", "1", "-o", "k8s-netperf-csv", "--no-progress")
	t.Logf("stdout:\n%s\nstderr:\n%s", out, stderr)
	if code != exit.OK {
		t.Errorf("exit code %d", code)
	}
	if !text.ContainsFolded(stderr, `driver "netperf" cannot run profile TCP_STREAM_LAT`) {
		t.Error("no warning about netperf skipping the TCP_STREAM_LAT test")
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(rows) < 1 {
		t.Fatalf("not a CSV: %v", err)
	}
	if strings.Join(rows[0], ",") != strings.Join(report.K8sNetperfCSVHeader, ",") {
		t.Errorf("header %q", rows[0])
	}
	// 6 netperf cases (TCPStream, TCPStream2, UDPStream, CRR, CRRService, RR) and 5 uperf
	// cases (no TCP_CRR; TCP_STREAM_LAT, which netperf skips): every test of the file runs.
	if len(rows) != 12 {
		t.Errorf("%d rows, want 11 cases", len(rows)-1)
	}
	streamLat := 0
	for _, r := range rows[1:] {
		if len(r) > 1 && r[0] == "uperf" && r[1] == "TCP_STREAM_LAT" {
			streamLat++
		}
	}
	if streamLat != 1 {
		t.Errorf("%d uperf TCP_STREAM_LAT rows, want 1", streamLat)
	}
	avg := -1
	for i, h := range rows[0] {
		if h == "Avg Throughput" {
			avg = i
		}
	}
	for _, r := range rows[1:] {
		v, err := strconv.ParseFloat(r[avg], 64)
		if err != nil || !(v > 0) {
			t.Errorf("row %q: average %q", r, r[avg])
		}
	}
	// netperf's stream rows carry its send calls' p99 (P99_LATENCY), as k8s-netperf's do.
	p99 := slices.Index(rows[0], "99%tile Observed Latency")
	for _, r := range rows[1:] {
		if p99 < 0 || len(r) <= p99 || r[0] != "netperf" || (r[1] != "TCP_STREAM" && r[1] != "UDP_STREAM") {
			continue
		}
		if v, err := strconv.ParseFloat(r[p99], 64); err != nil || v < 0 {
			t.Errorf("row %q: 99%%tile %q, want netperf's send-call p99", r, r[p99])
		}
	}
	if left := kpLeftovers(context.Background(), t, cl.cs, runID); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}
