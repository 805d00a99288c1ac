//go:build e2e

// NetworkPolicy enforced for real: on a CNI that enforces it (the harness's Calico; the bridge
// plugin and Flannel do not), a policy that denies the measured traffic makes the case fail
// with the cause, never a zero; allowing the traffic again makes it pass.
package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/runfile"
)

// kpEnforcesPolicy skips the test unless the harness's CNI enforces NetworkPolicy.
func kpEnforcesPolicy(t *testing.T) {
	t.Helper()
	switch c := os.Getenv("CNPERF_E2E_CNI"); c {
	case "calico", "cilium":
	default:
		t.Skipf("CNPERF_E2E_CNI=%q does not enforce NetworkPolicy (make e2e CNI=calico)", c)
	}
}

// TestPolicyDenyFailsWithCause: a NetworkPolicy denying all ingress in the namespace cnperf
// measures in. The TCP_RR case on pod-pod-cross-node fails: every sample with an error that
// names the policy (the network error alone, an i/o timeout, does not say why), no figure, and
// cnperf exits 1. Then a policy allowing ingress from the namespace's pods is added and the same
// run passes: the deny was the cause.
func TestPolicyDenyFailsWithCause(t *testing.T) {
	kpEnforcesPolicy(t)
	cl := kpClusterFromEnv(t)
	ctx := context.Background()
	ns := kpNamespace("cnperf-e2e-policy")
	if _, err := cl.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	deny := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "deny-ingress"},
		Spec: networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}}}
	if _, err := cl.cs.NetworkingV1().NetworkPolicies(ns).Create(ctx, deny, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	run := func(name string) (*api.Run, int) {
		runID := uuid.NewString()
		results := filepath.Join(t.TempDir(), name+".jsonl")
		_, stderr, code := kpRunCLI(ctx, "run", "--platform", "kube", "--kubeconfig", cl.kubeconfig, "-n", ns, "--uuid", runID,
			"--driver", "native", "--profile", "TCP_RR", "--path", "pod-pod-cross-node",
			"--duration", "2s", "--samples", "2", "--timeout", "15s", "--results", results, "-o", "json")
		t.Logf("%s: cnperf exit %d, stderr:\n%s", name, code, stderr)
		runs, _, err := runfile.ReadWarnings(results)
		if err != nil || len(runs) != 1 || len(runs[0].Results) != 1 {
			t.Fatalf("%s: results file: %v (%d runs)", name, err, len(runs))
		}
		if left := kpLeftovers(ctx, t, cl.cs, runID); len(left) > 0 {
			t.Errorf("%s: left behind: %v", name, left)
		}
		return runs[0], code
	}

	denied, code := run("denied")
	res := denied.Results[0]
	if code != exit.Failed {
		t.Errorf("denied: cnperf exited %d, want %d (a case failed)", code, exit.Failed)
	}
	if res.Summary.SamplesFailed != res.Summary.SamplesTotal || res.Summary.SamplesTotal == 0 || res.Error == "" {
		t.Errorf("denied: %d of %d samples failed, case error %q: want all failed, with a cause", res.Summary.SamplesFailed, res.Summary.SamplesTotal, res.Error)
	}
	if res.Summary.TransactionsPerSecond != nil || res.Summary.LatencyMicroseconds != nil {
		t.Errorf("denied: the failed case carries figures: %+v", res.Summary)
	}
	for _, s := range res.Samples {
		t.Logf("denied: sample %d error %q", s.Index, s.Error)
		if s.Error == "" || s.TransactionsPerSecond != nil {
			t.Errorf("denied: sample %d did not fail, or carries a figure", s.Index)
		}
		if !strings.Contains(s.Error, "NetworkPolicy deny-ingress") {
			t.Errorf("denied: sample %d does not name the policy: %q", s.Index, s.Error)
		}
	}

	allow := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "allow-from-namespace"},
		Spec: networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{}}}}}}}
	if _, err := cl.cs.NetworkingV1().NetworkPolicies(ns).Create(ctx, allow, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	allowed, code := run("allowed")
	res = allowed.Results[0]
	if code != exit.OK || res.Failed() || res.Summary.TransactionsPerSecond == nil || res.Summary.TransactionsPerSecond.Mean <= 0 {
		t.Errorf("allowed: exit %d, case error %q, %d samples failed: want a clean pass", code, res.Error, res.Summary.SamplesFailed)
	}
}
