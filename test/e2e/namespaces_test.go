//go:build e2e

// Client and server in namespaces of their own (--client-namespace, --server-namespace;
// k8s-netperf #130).
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
	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/runfile"
)

// TestKubeCrossNamespace: the servers (and their Service) in a namespace the user made, with a
// NetworkPolicy that lets in only the pods of that namespace; the clients in a namespace cnperf
// creates. On a CNI that enforces NetworkPolicy (the harness's Calico or Cilium; with the
// bridge CNI and Flannel this first step is skipped) the cross-namespace case fails with the
// policy named as the cause; once a policy
// whose namespaceSelector selects the clients' namespace is added, pod-pod-cross-node,
// pod-clusterip and pod-hairpin (whose client is the server pod, so in the servers' namespace)
// pass, every placement names the right namespace, the clients' namespace is gone and the
// servers' is kept with the user's objects only.
func TestKubeCrossNamespace(t *testing.T) {
	cl := kpClusterFromEnv(t)
	enforced := os.Getenv("CNPERF_E2E_CNI") == "calico" || os.Getenv("CNPERF_E2E_CNI") == "cilium"
	ctx := context.Background()
	srvNS := kpNamespace("nodeinfo-e2e-xns-srv")
	cliNS := kpNamespace("nodeinfo-e2e-xns-cli")
	if _, err := cl.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: srvNS}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.cs.CoreV1().Namespaces().Delete(context.Background(), srvNS, metav1.DeleteOptions{}) })
	ingress := networkingv1.PolicyTypeIngress
	same := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "same-namespace-only"},
		Spec: networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{ingress},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{}}}}}}}
	if _, err := cl.cs.NetworkingV1().NetworkPolicies(srvNS).Create(ctx, same, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	run := func(name, paths string) (*api.Run, int) {
		runID := uuid.NewString()
		results := filepath.Join(t.TempDir(), name+".jsonl")
		_, stderr, code := kpRunCLI(ctx, "run", "--platform", "kube", "--kubeconfig", cl.kubeconfig,
			"--server-namespace", srvNS, "--client-namespace", cliNS, "--uuid", runID,
			"--driver", "native", "--profile", "TCP_RR", "--path", paths,
			"--duration", "1s", "--samples", "1", "--timeout", "15s", "--results", results, "-o", "json")
		t.Logf("%s: cnperf exit %d, stderr:\n%s", name, code, stderr)
		runs, _, err := runfile.ReadWarnings(results)
		if err != nil || len(runs) != 1 {
			t.Fatalf("%s: results file: %v (%d runs)", name, err, len(runs))
		}
		if left := kpLeftovers(ctx, t, cl.cs, runID); len(left) > 0 {
			t.Errorf("%s: left behind: %v", name, left)
		}
		if _, err := cl.cs.CoreV1().Namespaces().Get(ctx, cliNS, metav1.GetOptions{}); err == nil {
			t.Errorf("%s: the clients' namespace %s, which cnperf created, is still there", name, cliNS)
		}
		if _, err := cl.cs.CoreV1().Namespaces().Get(ctx, srvNS, metav1.GetOptions{}); err != nil {
			t.Errorf("%s: the servers' namespace %s, which cnperf did not create, is gone: %v", name, srvNS, err)
		}
		return runs[0], code
	}

	if enforced {
		denied, code := run("denied", "pod-pod-cross-node")
		if code != exit.Failed || len(denied.Results) != 1 || !denied.Results[0].Failed() {
			t.Fatalf("denied: exit %d, %d results: want the one case failed", code, len(denied.Results))
		}
		if e := denied.Results[0].Samples[0].Error; !strings.Contains(e, "server pod "+srvNS+"/") || !strings.Contains(e, "NetworkPolicy same-namespace-only") {
			t.Errorf("denied: the sample's error does not name the server pod in %s and the policy: %q", srvNS, e)
		}
	} else {
		t.Logf("CNPERF_E2E_CNI=%q does not enforce NetworkPolicy: the denied step is skipped", os.Getenv("CNPERF_E2E_CNI"))
	}

	fromClients := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "from-the-clients-namespace"},
		Spec: networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{ingress},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{corev1.LabelMetadataName: cliNS}}}}}}}}
	if _, err := cl.cs.NetworkingV1().NetworkPolicies(srvNS).Create(ctx, fromClients, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	allowed, code := run("allowed", "pod-pod-cross-node,pod-clusterip,pod-hairpin")
	if code != exit.OK || len(allowed.Results) != 3 {
		t.Fatalf("allowed: exit %d, %d results, want 3 passing", code, len(allowed.Results))
	}
	for _, r := range allowed.Results {
		pl := r.Placement
		if r.Failed() || pl == nil {
			t.Fatalf("%s: %s", r.Path, r.Error)
		}
		wantClient := cliNS
		if r.Path == api.PathPodHairpin {
			wantClient = srvNS
		}
		t.Logf("%s: client %s/%s, server %s/%s, target %s: %.0f transactions/s", r.Path, pl.Client.Namespace, pl.Client.Pod,
			pl.Server.Namespace, pl.Server.Pod, pl.Target, r.Summary.TransactionsPerSecond.Mean)
		if pl.Server.Namespace != srvNS || pl.Client.Namespace != wantClient {
			t.Errorf("%s: client in %q, server in %q; want %s and %s", r.Path, pl.Client.Namespace, pl.Server.Namespace, wantClient, srvNS)
		}
	}
	pods, _ := cl.cs.CoreV1().Pods(srvNS).List(ctx, metav1.ListOptions{LabelSelector: kube.LabelManagedBy + "=cnperf"})
	if len(pods.Items) != 0 {
		t.Errorf("%d cnperf pods left in %s", len(pods.Items), srvNS)
	}
	if pols, _ := cl.cs.NetworkingV1().NetworkPolicies(srvNS).List(ctx, metav1.ListOptions{}); len(pols.Items) != 2 {
		t.Errorf("%d NetworkPolicies in %s, want the user's 2 kept", len(pols.Items), srvNS)
	}
}
