//go:build e2e

// `cnperf programming` on the e2e cluster: how fast kube-proxy programs a Service and its
// endpoints (every cluster: the harness runs kube-proxy), and how fast the CNI enforces a
// NetworkPolicy (only where it does: on a CNI that does not, the command reports the policy
// kinds as failed with that cause, and the test skips saying so).
package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/programming"
	"github.com/cnperf/cnperf/internal/text"
)

// runProgramming runs `cnperf programming ARGS -o json` in a namespace of its own and returns
// the run, the exit code and the namespace; stderr goes to the test log.
func runProgramming(t *testing.T, kubeconfig string, args ...string) (*api.Run, int, string) {
	t.Helper()
	ns := fmt.Sprintf("cnperf-e2e-prog-%d-%d", os.Getpid()%10000, time.Now().UnixNano()%100000)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	argv := append([]string{"programming", "--kubeconfig", kubeconfig, "-n", ns, "-o", "json",
		"--image", os.Getenv("CNPERF_E2E_AGENT_IMAGE"), "--image-pull-policy", "IfNotPresent"}, args...)
	out, stderr, code := kpRunCLI(ctx, argv...)
	t.Logf("cnperf %s (exit %d):\n%s", strings.Join(argv, " "), code, stderr)
	if strings.TrimSpace(out) == "" {
		t.Fatalf("no run printed (exit %d)", code)
	}
	return kpDecodeRun(t, out), code, ns
}

// checkGone: everything the run created went with its namespace.
func checkGone(t *testing.T, kubeconfig, ns string) {
	t.Helper()
	cs, _, err := kube.NewClientset(kubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = cs.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("namespace %s is still there after the run (err %v)", ns, err)
	}
}

// checkFigures: every result of the profiles has count successful changes from every node,
// each figure between 0 and the timeout, their percentiles, and what bounds the error.
func checkFigures(t *testing.T, run *api.Run, nodes []string, profiles []api.Profile, count int, timeout time.Duration) {
	t.Helper()
	seen := map[string]bool{}
	for _, r := range run.Results {
		p := r.Programming
		if r.Error != "" || p == nil || r.Placement == nil {
			t.Errorf("%s: error %q, programming %v", r.Profile, r.Error, p)
			continue
		}
		node := r.Placement.Client.Node
		seen[string(r.Profile)+"|"+node] = true
		ok, positive := 0, 0
		for _, s := range r.Samples {
			if s.Error != "" || s.ProgrammingSeconds == nil {
				t.Errorf("%s from %s, change %d: %q", r.Profile, node, s.Index, s.Error)
				continue
			}
			v := *s.ProgrammingSeconds
			if v < 0 || v >= timeout.Seconds() {
				t.Errorf("%s from %s, change %d: %.4f s, want in [0, %s)", r.Profile, node, s.Index, v, timeout)
			}
			ok++
			if v > 0 {
				positive++
			}
		}
		if ok != count || positive == 0 {
			t.Errorf("%s from %s: %d of %d changes measured, %d above 0", r.Profile, node, ok, count, positive)
		}
		if len(p.Percentiles) != 4 || p.ProbeIntervalSeconds <= 0 || p.ErrorBoundSeconds < p.ProbeIntervalSeconds {
			t.Errorf("%s from %s: percentiles %v, interval %v, error bound %v", r.Profile, node, p.Percentiles, p.ProbeIntervalSeconds, p.ErrorBoundSeconds)
		}
		if p.MeasuredOffsetLowSeconds > p.MeasuredOffsetHighSeconds {
			t.Errorf("%s from %s: clock offset bounds %v > %v", r.Profile, node, p.MeasuredOffsetLowSeconds, p.MeasuredOffsetHighSeconds)
		}
		checkFloor(t, r, count)
	}
	for _, pr := range profiles {
		for _, n := range nodes {
			if !seen[string(pr)+"|"+n] {
				t.Errorf("no %s result from %s", pr, n)
			}
		}
	}
}

// checkFloor: the result carries the run's probe floor, measured for as many changes as the
// run made and at least programming.MinFloorChanges: changes with no latency give figures from
// 0 to about one probe interval (a busy machine delays an attempt now and then, never by the
// timeout), with a median above 0 — the method's floor is not zero.
func checkFloor(t *testing.T, r api.Result, count int) {
	t.Helper()
	f := r.Programming.ProbeFloor
	if want := programming.FloorChanges(count); f == nil || f.Changes != want || f.Error != "" || len(f.Percentiles) != 4 {
		t.Errorf("%s: probe floor %+v, want %d changes and 4 percentiles", r.Profile, f, want)
		return
	}
	interval := r.Programming.ProbeIntervalSeconds
	if med, top := f.Percentiles[0].Seconds, f.Percentiles[3].Seconds; med <= 0 || med > 2*interval || top > 0.5 {
		t.Errorf("%s: probe floor median %v s, maximum %v s; want the median in (0, 2 × %v s] and the maximum below 0.5 s",
			r.Profile, med, top, interval)
	}
}

// TestProgrammingServiceLatency: a Service created and deleted 3 times, seen from a client on
// every node through its ClusterIP and its node's NodePort; then compare takes the results
// file.
func TestProgrammingServiceLatency(t *testing.T) {
	kc, nodes := meshCluster(t)
	results := filepath.Join(t.TempDir(), "programming.jsonl")
	const count, timeout = 3, 20 * time.Second
	run, code, ns := runProgramming(t, kc, "--kind", "service", "--count", fmt.Sprint(count), "--timeout", timeout.String(), "--results", results)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	checkFigures(t, run, nodes, []api.Profile{api.ServiceCreate, api.ServiceDelete}, count, timeout)
	// --nodeport (the default): every profile from every node through the ClusterIP and
	// through the client's own node's NodePort
	paths := map[api.Path]int{}
	for _, r := range run.Results {
		paths[r.Path]++
	}
	if want := 2 * len(nodes); paths[api.PathPodClusterIP] != want || paths[api.PathPodNodePort] != want {
		t.Errorf("results per path: %v, want %d ClusterIP and %d NodePort", paths, want, want)
	}
	// --kube-proxy-metrics (the default): the harness runs kube-proxy with its metrics on
	// 127.0.0.1:10249; every result carries its figure, and a created Service's EndpointSlice
	// gives it observations
	for _, r := range run.Results {
		c := r.Programming.Component
		switch {
		case c == nil || c.Metric != "kubeproxy_network_programming_duration_seconds" || strings.Contains(c.Note, "read kube-proxy's metrics"):
			t.Errorf("%s from %s on %s: component figure %+v", r.Profile, r.Placement.Client.Node, r.Path, c)
		case r.Profile == api.ServiceCreate && (c.Count < 1 || c.MeanSeconds <= 0):
			t.Errorf("%s from %s: kube-proxy observed nothing: %+v", r.Profile, r.Placement.Client.Node, c)
		}
	}
	checkGone(t, kc, ns)
	out, stderr, code := kpRunCLI(context.Background(), "compare", results, results)
	if code != 0 || !strings.Contains(out, "SERVICE_CREATE probe pod-clusterip from "+nodes[0]) || !strings.Contains(out, "programming") {
		t.Errorf("compare: exit %d\n%s\n%s", code, out, stderr)
	}
}

// TestProgrammingPolicyLatency: first one deny policy, to learn whether the CNI enforces
// NetworkPolicy at all (the command says so in the results: never a figure); where it does, a
// deny and an allow under a default deny, 3 times each, with 0 and then 100 standing policies.
func TestProgrammingPolicyLatency(t *testing.T) {
	kc, nodes := meshCluster(t)
	run, code, ns := runProgramming(t, kc, "--kind", "policy-deny", "--count", "1", "--timeout", "10s", "--settle", "20s")
	checkGone(t, kc, ns)
	const notEnforced = "NetworkPolicy is not enforced here"
	for _, r := range run.Results {
		if !strings.Contains(r.Error, notEnforced) {
			continue
		}
		if code == 0 || r.Summary.ProgrammingSeconds != nil {
			t.Errorf("not enforced, yet exit %d and figures %v", code, r.Summary.ProgrammingSeconds)
		}
		if cni := os.Getenv("CNPERF_E2E_CNI"); cni == "calico" || cni == "cilium" {
			t.Fatalf("CNPERF_E2E_CNI=%s enforces NetworkPolicy, but: %s", cni, r.Error)
		}
		t.Skipf("this cluster does not enforce NetworkPolicy (CNPERF_E2E_CNI=%q), as cnperf measured: %s", os.Getenv("CNPERF_E2E_CNI"), r.Error)
	}
	if code != 0 {
		t.Fatalf("probe run: exit %d", code)
	}
	const count, timeout = 3, 30 * time.Second
	run, code, ns = runProgramming(t, kc, "--kind", "policy-deny,policy-allow", "--count", fmt.Sprint(count), "--timeout", timeout.String(),
		"--standing-policies", "0,100")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	checkFigures(t, run, nodes, []api.Profile{api.PolicyDeny, api.PolicyAllow}, count, timeout)
	checkPolicyComponent(t, run, os.Getenv("CNPERF_E2E_CNI"))
	var standing []int
	for _, r := range run.Results {
		if !slices.Contains(standing, r.Programming.StandingPolicies) {
			standing = append(standing, r.Programming.StandingPolicies)
		}
	}
	if !slices.Equal(standing, []int{0, 100}) {
		t.Errorf("standing policies of the results: %v, want [0 100]", standing)
	}
	checkGone(t, kc, ns)
}

// TestProgrammingResultsFileUnwritable: a --results file that cannot be created is bad input,
// found before anything runs (exit code 2, as README's table says), and nothing is created.
func TestProgrammingResultsFileUnwritable(t *testing.T) {
	kc, _ := meshCluster(t)
	ns := fmt.Sprintf("cnperf-e2e-prog-%d-%d", os.Getpid()%10000, time.Now().UnixNano()%100000)
	results := filepath.Join(t.TempDir(), "no-such-dir", "programming.jsonl")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, stderr, code := kpRunCLI(ctx, "programming", "--kubeconfig", kc, "-n", ns, "--count", "1", "--results", results)
	if code != 2 || !text.ContainsFolded(stderr, "--results") || !text.ContainsFolded(stderr, "no-such-dir") {
		t.Errorf("exit %d, want 2 and the file named:\n%s", code, stderr)
	}
	checkGone(t, kc, ns)
}

// TestProgrammingPodReachability: 3 pods created on one node, each probed from a client on
// every node from the moment it has an IP: POD_CREATE (from the create call) is measured from
// every node and above 0 (the pod cannot answer before it exists); POD_READY (from cnperf
// seeing it Ready) is measured too, 0 allowed (the pod answered before it was Ready).
func TestProgrammingPodReachability(t *testing.T) {
	kc, nodes := meshCluster(t)
	const count, timeout = 3, 30 * time.Second
	run, code, ns := runProgramming(t, kc, "--kind", "pod", "--count", fmt.Sprint(count), "--timeout", timeout.String())
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var created api.Run
	for _, r := range run.Results {
		if r.Profile == api.PodCreate {
			created.Results = append(created.Results, r)
			continue
		}
		for _, s := range r.Samples {
			if s.ProgrammingSeconds == nil || *s.ProgrammingSeconds < 0 || *s.ProgrammingSeconds >= timeout.Seconds() {
				t.Errorf("%s from %s, change %d: %v (%q)", r.Profile, r.Placement.Client.Node, s.Index, s.ProgrammingSeconds, s.Error)
			}
		}
	}
	checkFigures(t, &created, nodes, []api.Profile{api.PodCreate}, count, timeout)
	if len(run.Results) != 2*len(nodes) {
		t.Errorf("%d results, want POD_CREATE and POD_READY from %d nodes", len(run.Results), len(nodes))
	}
	checkGone(t, kc, ns)
}
