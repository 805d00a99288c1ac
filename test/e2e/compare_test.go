//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/runfile"
)

// TestCompareRoutedVxlan compares a run on a `routed` cluster with the same plan on a `vxlan`
// cluster (test/e2e/harness/compare-modes.sh makes both, one cluster after the other): every
// case must be matched, each figure must carry a change and a verdict from a significance
// test, and the runs' cluster details must show the overlay's lower pod MTU.
func TestCompareRoutedVxlan(t *testing.T) {
	base, next := os.Getenv("CNPERF_E2E_COMPARE_BASE"), os.Getenv("CNPERF_E2E_COMPARE_NEW")
	if base == "" || next == "" {
		t.Skip("CNPERF_E2E_COMPARE_BASE/NEW unset: run test/e2e/harness/compare-modes.sh (it makes a routed and a vxlan run)")
	}
	mtu := func(path string) int {
		runs, err := runfile.Read(path)
		if err != nil || len(runs) != 1 {
			t.Fatalf("read %s: %v (%d runs)", path, err, len(runs))
		}
		if len(runs[0].Results) != 4 {
			t.Fatalf("%s: want 4 results, got %d", path, len(runs[0].Results))
		}
		if runs[0].Cluster == nil {
			t.Fatalf("%s: no cluster details", path)
		}
		return runs[0].Cluster.PodMTUBytes
	}
	if r, v := mtu(base), mtu(next); r != 1500 || v != 1450 {
		t.Errorf("pod MTU: routed %d, vxlan %d; want 1500 and 1450", r, v)
	}

	ctx := context.Background()
	// No --label: compare-modes.sh labels the runs netmode=routed / netmode=vxlan (cnperf run
	// --label), and compare names its columns by the run label that differs.
	out, errOut, code := kpRunCLI(ctx, "compare", base, next)
	if code != 0 {
		t.Fatalf("compare exited %d:\n%s%s", code, out, errOut)
	}
	t.Logf("cnperf compare routed vxlan:\n%s", out)
	for _, want := range []string{"netmode=routed (base)", "netmode=vxlan", "TCP_STREAM native pod-pod-cross-node", "TCP_RR native pod-clusterip", "throughput", "latency p50"} {
		if !strings.Contains(out, want) {
			t.Errorf("compare table lacks %q", want)
		}
	}

	js, errOut, code := kpRunCLI(ctx, "compare", "-o", "json", base, next)
	if code != 0 {
		t.Fatalf("compare -o json exited %d: %s", code, errOut)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatalf("compare -o json is not JSON: %v", err)
	}
	for _, verdict := range []string{"better", "worse", "n.s.", "no significant"} {
		if strings.Contains(js, verdict) || strings.Contains(out, verdict) {
			return
		}
	}
	t.Errorf("no verdict in the comparison:\n%s", out)
}
