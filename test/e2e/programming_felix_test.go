//go:build e2e

// Felix, Calico's node agent, deliberately slowed on the server's node: `cnperf programming`
// measures the NetworkPolicy enforcement latency before and while Felix sleeps before every
// dataplane apply (its FelixConfiguration's debugSimulateDataplaneApplyDelay, a switch of
// Felix's own for its tests), and `cnperf compare` must call the slowed run significantly
// worse; Felix's own apply time, read beside it, must show the delay.
package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/programming"
	"github.com/cnperf/cnperf/internal/tigerbench"
)

// felixStarted reads the start time of the Felix on the node whose network namespace is
// netns (its process_start_time_seconds, on 127.0.0.1:9091 where the harness has it serve
// its metrics) once its health endpoint says it is ready; 0 while it is not (restarting).
func felixStarted(netns string) float64 {
	if out, err := nsRun(netns, "curl", "-s", "-m", "3", "-o", "/dev/null", "-w", "%{http_code}",
		"http://127.0.0.1:9099/readiness"); err != nil || strings.TrimSpace(out) != "200" {
		return 0
	}
	out, err := nsRun(netns, "curl", "-s", "-m", "3", fmt.Sprintf("http://127.0.0.1:%d/metrics", programming.FelixMetricsPort))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(l, "process_start_time_seconds "); ok {
			f, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return f
		}
	}
	return 0
}

// waitFelixRestarted waits until the node's Felix runs again, started after `after`, and is
// ready (Felix exits on a change of its configuration and the harness starts it again).
func waitFelixRestarted(t *testing.T, netns string, after float64) float64 {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		if s := felixStarted(netns); s > after {
			return s
		}
		time.Sleep(time.Second)
	}
	t.Fatalf("Felix in %s did not come back ready within 3 minutes of its configuration's change", netns)
	return 0
}

// compareVerdicts runs `cnperf compare -o json BASE NEW` and returns, per case label, the
// programming figure's verdict and change in percent.
func compareVerdicts(t *testing.T, base, next string) map[string]struct {
	Verdict string
	Change  float64
} {
	t.Helper()
	out, stderr, code := kpRunCLI(context.Background(), "compare", "-o", "json", base, next)
	if code != 0 {
		t.Fatalf("compare: exit %d\n%s", code, stderr)
	}
	var rep struct {
		Cases []struct {
			Label   string `json:"label"`
			Metrics []struct {
				Key   string `json:"key"`
				Cells []struct {
					ChangePercent float64 `json:"changePercent"`
					Verdict       string  `json:"verdict"`
				} `json:"cells"`
			} `json:"metrics"`
		} `json:"cases"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("compare -o json: %v\n%s", err, out)
	}
	v := map[string]struct {
		Verdict string
		Change  float64
	}{}
	for _, c := range rep.Cases {
		for _, m := range c.Metrics {
			if m.Key == "programmingSeconds" && len(m.Cells) == 2 {
				v[c.Label] = struct {
					Verdict string
					Change  float64
				}{m.Cells[1].Verdict, m.Cells[1].ChangePercent}
			}
		}
	}
	table, _, _ := kpRunCLI(context.Background(), "compare", base, next)
	t.Logf("cnperf compare %s %s:\n%s", base, next, table)
	return v
}

// TestProgrammingSlowedFelix: POLICY_DENY 20 times from every node with Felix as it is, then
// with Felix on the server's node sleeping 250 ms before each dataplane apply (a per-node
// FelixConfiguration, removed right after the slowed run and also when the test fails: other
// users of the cluster share this Felix; Felix restarts on each change of it and the test
// waits for it to be ready again). Both runs give 20 figures from every node and Felix's own
// apply time (at least the delay while slowed); `cnperf compare` calls every case of the
// slowed run significantly worse.
func TestProgrammingSlowedFelix(t *testing.T) {
	kc, nodes := meshCluster(t)
	if cni := os.Getenv("CNPERF_E2E_CNI"); cni != "calico" {
		t.Skipf("needs the harness's Calico (CNPERF_E2E_CNI=calico, this cluster: %q): the component slowed is Calico's Felix, "+
			"through its FelixConfiguration's debugSimulateDataplaneApplyDelay", cni)
	}
	c := tbClusterFromEnv(t)
	server := nodes[0]
	netns := "/run/netns/cnpe2e-" + server
	if _, err := os.Stat(netns); err != nil {
		t.Skipf("no network namespace %s of the harness's node %s to read its Felix's health in: %v", netns, server, err)
	}
	const count, timeout, delay = 20, 30 * time.Second, 250 * time.Millisecond
	dir := t.TempDir()
	measure := func(name string) (*api.Run, string) {
		t.Helper()
		results := filepath.Join(dir, name+".jsonl")
		run, code, ns := runProgramming(t, kc, "--kind", "policy-deny", "--count", strconv.Itoa(count), "--timeout", timeout.String(),
			"--server-node", server, "--results", results, "--label", "felix="+name)
		if code != 0 {
			t.Fatalf("%s: exit %d", name, code)
		}
		checkFigures(t, run, nodes, []api.Profile{api.PolicyDeny}, count, timeout)
		checkGone(t, kc, ns)
		table, _, _ := kpRunCLI(context.Background(), "report", results)
		t.Logf("cnperf report %s:\n%s", results, table)
		return run, results
	}
	felixMean := func(run *api.Run) float64 {
		t.Helper()
		var mean float64
		for _, r := range run.Results {
			f := r.Programming.Component
			if f == nil || f.Metric != programming.FelixMetric || f.Count < 1 || f.MeanSeconds <= 0 || strings.Contains(f.Note, "read Felix's metrics") ||
				!strings.Contains(f.Source, server+" (the server's node)") {
				t.Fatalf("%s from %s: Felix's figure %+v", r.Profile, r.Placement.Client.Node, f)
			}
			mean = f.MeanSeconds
		}
		return mean
	}
	normal, normalFile := measure("as-is")
	normalApply := felixMean(normal)

	name := "node." + server
	fc := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "crd.projectcalico.org/v1", "kind": "FelixConfiguration",
		"metadata": map[string]any{"name": name}, "spec": map[string]any{"debugSimulateDataplaneApplyDelay": delay.String()}}}
	started := felixStarted(netns)
	if started == 0 {
		t.Fatalf("Felix on %s is not ready, or serves no process_start_time_seconds on 127.0.0.1:%d", server, programming.FelixMetricsPort)
	}
	ctx := context.Background()
	felixConfigs := c.dyn.Resource(tigerbench.GVRFelixConfiguration)
	if _, err := felixConfigs.Create(ctx, fc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create FelixConfiguration %s: %v", name, err)
	}
	restored := false
	restore := func() {
		if restored {
			return
		}
		restored = true
		if err := felixConfigs.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete FelixConfiguration %s (remove it by hand: kubectl delete felixconfigurations.crd.projectcalico.org %s): %v", name, name, err)
			return
		}
		waitFelixRestarted(t, netns, started)
		t.Logf("FelixConfiguration %s removed, Felix on %s ready again", name, server)
	}
	t.Cleanup(restore)
	slowedAt := time.Now()
	started = waitFelixRestarted(t, netns, started)
	t.Logf("Felix on %s restarted with a %s apply delay (%.1f s after the change)", server, delay, time.Since(slowedAt).Seconds())
	slowed, slowedFile := measure("slowed")
	restore()
	slowedApply := felixMean(slowed)
	t.Logf("Felix's own mean apply time: %.1f ms as it is, %.1f ms slowed", normalApply*1e3, slowedApply*1e3)
	if slowedApply < delay.Seconds() || normalApply >= delay.Seconds() {
		t.Errorf("Felix's mean apply time %.4f s as it is and %.4f s slowed; want below and at least the delay %s", normalApply, slowedApply, delay)
	}
	verdicts := compareVerdicts(t, normalFile, slowedFile)
	for _, n := range nodes {
		label := fmt.Sprintf("POLICY_DENY probe %s from %s with 0 policies", map[bool]api.Path{true: api.PathPodPodSameNode, false: api.PathPodPodCrossNode}[n == server], n)
		v, ok := verdicts[label]
		if !ok || v.Verdict != "worse" || v.Change < 100 {
			t.Errorf("compare, %s: %+v (found %v), want significantly worse by at least 100%% (cases: %v)", label, v, ok, verdicts)
		}
	}
}
