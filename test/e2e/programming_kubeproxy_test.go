//go:build e2e

// kube-proxy, which programs the Services, restarted on every node with other settings by the
// harness (test/e2e/harness/kube-proxy.sh): with a long minimum sync period `cnperf
// programming` must measure a slower Service programming and `cnperf compare` call it
// significantly worse, kube-proxy's own figure beside it showing the same; in its other mode
// (iptables or nftables) the same measurement, with kube-proxy's own figure, must work too.
// kube-proxy is put back as up.sh started it afterwards, also when the test fails.
package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/programming"
)

// kubeProxyScript runs test/e2e/harness/kube-proxy.sh ARGS and returns its output.
func kubeProxyScript(t *testing.T, args ...string) (string, error) {
	t.Helper()
	start := time.Now()
	out, err := exec.Command(filepath.Join(repoRoot(t), "test", "e2e", "harness", "kube-proxy.sh"), args...).CombinedOutput()
	t.Logf("kube-proxy.sh %s (%.1f s, err %v):\n%s", strings.Join(args, " "), time.Since(start).Seconds(), err, strings.TrimSpace(string(out)))
	return string(out), err
}

// kubeProxyRestartable skips unless this test can restart the harness's kube-proxies: root,
// and a kube-proxy process up.sh recorded for every node.
func kubeProxyRestartable(t *testing.T, nodes []string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("restarting kube-proxy takes root (the harness runs it in the nodes' network namespaces): run the e2e tests as root")
	}
	state := os.Getenv("CNPERF_E2E_STATE")
	if state == "" {
		t.Skip("CNPERF_E2E_STATE is not set: not the harness's cluster (up.sh's e2e.env sets it), so its kube-proxy cannot be restarted")
	}
	for _, n := range nodes {
		if _, err := os.Stat(filepath.Join(state, "pids", "kube-proxy-"+n+".argv")); err != nil {
			t.Skipf("kube-proxy on %s is not a process the harness recorded (%v): test/e2e/harness/kube-proxy.sh restarts only those", n, err)
		}
	}
	if _, err := os.Stat(filepath.Join(state, "kube-proxy.override")); err == nil {
		out, _ := kubeProxyScript(t, "status")
		t.Fatalf("kube-proxy is already running with other settings (someone's restart, or a crashed test's):\n%s\n"+
			"put it back with test/e2e/harness/kube-proxy.sh reset", out)
	}
}

// kubeProxyFigures checks kube-proxy's own figure on every result (its metric read, no error)
// and returns its mean for SERVICE_CREATE over the nodes, whose every result must have
// observations; clean says whether those were only the run's: kube-proxy counts every
// EndpointSlice change of the cluster in a window, and one of a pod that turned Ready minutes
// ago (another user's) brings that age into the mean.
func kubeProxyFigures(t *testing.T, name string, run *api.Run, changes int) (mean float64, clean bool) {
	t.Helper()
	var sum float64
	var n int
	clean = true
	for _, r := range run.Results {
		c := r.Programming.Component
		switch {
		case c == nil || c.Metric != programming.KubeProxyMetric || strings.Contains(c.Note, "read kube-proxy's metrics") ||
			strings.Contains(c.Note, "no kube-proxy metrics"):
			t.Errorf("%s: %s from %s on %s: kube-proxy's figure %+v", name, r.Profile, r.Placement.Client.Node, r.Path, c)
		case r.Profile != api.ServiceCreate:
		case c.Count < 1 || c.MeanSeconds <= 0:
			t.Errorf("%s: %s from %s on %s: kube-proxy observed nothing: %+v", name, r.Profile, r.Placement.Client.Node, r.Path, c)
		default:
			sum += c.MeanSeconds
			n++
			if c.Count > float64(changes) {
				clean = false
				t.Logf("%s: %s from %s on %s: kube-proxy counted %.0f observations for %d changes: other changes of the cluster in the windows",
					name, r.Profile, r.Placement.Client.Node, r.Path, c.Count, changes)
			}
		}
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), clean
}

// kubeProxyOwnByNode is kube-proxy's own SERVICE_CREATE mean per client node, from the
// results whose windows held only the run's changes (at most changes observations).
func kubeProxyOwnByNode(run *api.Run, changes int) map[string]float64 {
	sum, n := map[string]float64{}, map[string]int{}
	for _, r := range run.Results {
		c := r.Programming.Component
		if r.Profile != api.ServiceCreate || c == nil || c.Count < 1 || c.Count > float64(changes) {
			continue
		}
		sum[r.Placement.Client.Node] += c.MeanSeconds
		n[r.Placement.Client.Node]++
	}
	for node := range sum {
		sum[node] /= float64(n[node])
	}
	return sum
}

// TestProgrammingKubeProxy: SERVICE_CREATE and SERVICE_DELETE, 20 changes each, from every
// node through the ClusterIP and the node's NodePort, with kube-proxy as the harness runs it;
// then (slowed) with kube-proxy's minSyncPeriod at 5 s on every node instead of its 1 s
// default: a new Service must be significantly slower in `cnperf compare` on some node, and on
// every node where kube-proxy's own figure grew by a second or more — kube-proxy gets it
// as two events, the Service and then its EndpointSlice, and on a quiet cluster the second
// waits out the whole period after the first one's sync; on a busy one (a shared cluster:
// kube-proxy syncs other changes all the time) a change waits 0 to the period for the next
// sync — and kube-proxy's own figure for it larger where its windows hold only the run's
// changes; then (other-mode) in kube-proxy's other mode (nftables on an iptables cluster, and
// the other way round): every figure measured, kube-proxy's own beside it, the run saying the
// mode. The endpoint kinds are left out to keep the test short (docs/programming.md has them
// measured in both modes and slowed).
func TestProgrammingKubeProxy(t *testing.T) {
	kc, nodes := meshCluster(t)
	kubeProxyRestartable(t, nodes)
	mode := os.Getenv("CNPERF_E2E_KUBE_PROXY_MODE")
	if mode == "" {
		mode = "iptables" // up.sh's default; e2e.env of a cluster older than the knob lacks it
	}
	other := map[string]string{"iptables": "nftables", "nftables": "iptables"}[mode]
	if other == "" {
		t.Fatalf("CNPERF_E2E_KUBE_PROXY_MODE=%q: want iptables or nftables", mode)
	}
	t.Cleanup(func() {
		if _, err := kubeProxyScript(t, "reset"); err != nil {
			t.Errorf("kube-proxy not put back (do it by hand: test/e2e/harness/kube-proxy.sh reset): %v", err)
		}
	})
	const count, timeout, minSync = 20, 30 * time.Second, 5 * time.Second
	profiles := []api.Profile{api.ServiceCreate, api.ServiceDelete}
	dir := t.TempDir()
	// measure takes the (sub)test it runs in: a Fatalf on the parent from a subtest is refused
	measure := func(t *testing.T, name string) (*api.Run, string) {
		t.Helper()
		results := filepath.Join(dir, name+".jsonl")
		start := time.Now()
		run, code, ns := runProgramming(t, kc, "--kind", "service", "--count", strconv.Itoa(count),
			"--timeout", timeout.String(), "--results", results, "--label", "kube-proxy="+name)
		if code != 0 {
			t.Fatalf("%s: exit %d", name, code)
		}
		checkFigures(t, run, nodes, profiles, count, timeout)
		checkGone(t, kc, ns)
		table, _, _ := kpRunCLI(context.Background(), "report", results)
		t.Logf("%s: %.0f s; cnperf report %s:\n%s", name, time.Since(start).Seconds(), results, table)
		return run, results
	}
	base, baseFile := measure(t, mode)
	if got := base.Cluster; got == nil || got.KubeProxyMode != mode {
		t.Errorf("the run says kube-proxy's mode is %+v, want %q (the ConfigMap kube-system/kube-proxy)", got, mode)
	}
	baseOwn, baseClean := kubeProxyFigures(t, mode, base, count)

	t.Run("slowed", func(t *testing.T) {
		if _, err := kubeProxyScript(t, "restart", "--min-sync-period", minSync.String()); err != nil {
			t.Fatalf("restart kube-proxy with minSyncPeriod %s: %v", minSync, err)
		}
		slowed, slowedFile := measure(t, mode+"-slowed")
		slowedOwn, slowedClean := kubeProxyFigures(t, "slowed", slowed, count)
		t.Logf("kube-proxy's own mean for SERVICE_CREATE: %.3f s as it is, %.3f s with minSyncPeriod %s", baseOwn, slowedOwn, minSync)
		switch {
		case !baseClean || !slowedClean:
			t.Logf("kube-proxy's own figures not compared: they hold other changes of the cluster (a shared cluster); cnperf's are the run's own")
		case slowedOwn <= baseOwn:
			t.Errorf("kube-proxy's own SERVICE_CREATE mean %.3f s with minSyncPeriod %s, %.3f s as it is: want larger", slowedOwn, minSync, baseOwn)
		}
		verdicts := compareVerdicts(t, baseFile, slowedFile)
		// kube-proxy takes a new Service as two events (the Service, then its EndpointSlice)
		// and its sync runner (v1.34's runner.BoundedFrequencyRunner) leaves minSyncPeriod
		// between the end of a sync and the start of the next, coalescing the events that come
		// meanwhile: whether a node syncs the two events together or the second waits out the
		// period depends on when that node's kube-proxy last synced, so a node may see little
		// slowdown (CI, 2026-11-29: node1 4.19 s against 0.81 s, node2
		// 0.94 s against 0.82 s, kube-proxy's own figures 4.58 s and 1.34 s saying the same).
		// What must hold: the slowdown is seen end to end on some node, and on every node
		// where kube-proxy's own figure (windows holding only the run's changes) grew by a
		// second or more, cnperf calls both ways in significantly worse.
		baseNode, slowedNode := kubeProxyOwnByNode(base, count), kubeProxyOwnByNode(slowed, count)
		created, slowedNodes := 0, map[string]int{}
		for label, v := range verdicts {
			if !strings.HasPrefix(label, string(api.ServiceCreate)+" ") {
				continue
			}
			created++
			node := label[strings.LastIndex(label, " from ")+len(" from "):]
			worse := v.Verdict == "worse" && v.Change >= 50
			if worse {
				slowedNodes[node]++
			}
			b, okb := baseNode[node]
			sl, oks := slowedNode[node]
			t.Logf("compare, %s: %+v; kube-proxy's own mean on %s: %.3f s → %.3f s (clean windows: %v)", label, v, node, b, sl, okb && oks)
			if okb && oks && sl-b >= 1 && !worse {
				t.Errorf("compare, %s: %+v, want significantly worse by at least 50%%: kube-proxy's own mean on %s grew from %.3f s to %.3f s",
					label, v, node, b, sl)
			}
		}
		if want := 2 * len(nodes); created != want {
			t.Errorf("compare has %d SERVICE_CREATE cases, want %d (ClusterIP and NodePort from every node): %v", created, want, verdicts)
		}
		seen := false
		for _, n := range slowedNodes {
			seen = seen || n == 2
		}
		if !seen {
			t.Errorf("no node's SERVICE_CREATE (ClusterIP and NodePort) is significantly worse by at least 50%% with minSyncPeriod %s: %v", minSync, verdicts)
		}
	})

	t.Run("other-mode", func(t *testing.T) {
		if os.Getenv("CNPERF_E2E_KUBE_PROXY_OTHER_MODE") == "0" {
			t.Skipf("CNPERF_E2E_KUBE_PROXY_OTHER_MODE=0 (CI's ci.sh, for its time budget): kube-proxy's %s mode is not measured; make e2e-test measures it", other)
		}
		if _, err := exec.LookPath("nft"); other == "nftables" && err != nil {
			t.Skipf("kube-proxy's nftables mode runs the nft command, which this machine lacks (%v): install Debian's nftables", err)
		}
		if _, err := kubeProxyScript(t, "restart", "--mode", other); err != nil {
			t.Fatalf("restart kube-proxy in %s mode: %v", other, err)
		}
		run, file := measure(t, other)
		if got := run.Cluster; got == nil || got.KubeProxyMode != other {
			t.Errorf("the run says kube-proxy's mode is %+v, want %q", got, other)
		}
		own, _ := kubeProxyFigures(t, other, run, count)
		t.Logf("kube-proxy's own mean for SERVICE_CREATE: %.3f s in %s mode, %.3f s in %s mode", baseOwn, mode, own, other)
		verdicts := compareVerdicts(t, baseFile, file)
		if len(verdicts) != len(profiles)*2*len(nodes) {
			t.Errorf("compare %s %s: %d cases with a programming figure, want %d: %v", mode, other, len(verdicts), len(profiles)*2*len(nodes), verdicts)
		}
	})
}
