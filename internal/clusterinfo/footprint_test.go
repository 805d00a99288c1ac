package clusterinfo

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
)

func readSummaryCapture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "summary", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// kubeSystemPods are the pods of kube-system as the e2e cluster listed them (kubectl get pods
// -o json) when the summaries were taken: a host-network DaemonSet cnperf does not know.
func kubeSystemPods(t *testing.T) []corev1.Pod {
	t.Helper()
	var l corev1.PodList
	if err := json.Unmarshal(readSummaryCapture(t, "kube-system-pods.json"), &l); err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// TestFootprintOfCapturedSummaries: two kubelet summaries of node1 of the e2e cluster, taken 15 s
// apart (kubectl get --raw /api/v1/nodes/node1/proxy/stats/summary), while a host-network
// DaemonSet in kube-system ran `while :; do sleep 0.02; done` and cnperf runs of other tests
// had pods in their namespaces. The DaemonSet's pod is the one agent ("other": not a CNI
// cnperf knows), its CPU the rate between the kubelet's two readings (28 s apart), its memory
// the last working set; the runs' pods are not agents.
func TestFootprintOfCapturedSummaries(t *testing.T) {
	pods := map[string]*corev1.Pod{}
	items := kubeSystemPods(t)
	for i := range items {
		pods["kube-system/"+items[i].Name] = &items[i]
	}
	agents, stale, err := footprintOf("node1", readSummaryCapture(t, "node1-before.json"), readSummaryCapture(t, "node1-after.json"), pods)
	if err != nil {
		t.Fatal(err)
	}
	if len(stale) != 0 || len(agents) != 1 {
		t.Fatalf("agents %+v, stale %v: want the DaemonSet's pod only", agents, stale)
	}
	a := agents[0]
	// usageCoreNanoSeconds 415185321 at 01:25:41Z, 1131172399 at 01:26:09Z
	wantCPU := float64(1131172399-415185321) / 1e6 / 28
	if a.Node != "node1" || a.Component != "other" || a.Namespace != "kube-system" || a.Pod != "nodeinfo-capture-agent-vp7lt" ||
		math.Abs(a.CPUMillicores-wantCPU) > 1e-9 || a.WindowSeconds != 28 || a.MemoryWorkingSetBytes == nil || *a.MemoryWorkingSetBytes != 1892352 {
		t.Errorf("got %+v, want other kube-system/nodeinfo-capture-agent-vp7lt %.2f millicores over 28 s, 1892352 bytes", a, wantCPU)
	}

	// Without the pods' labels and owners (no right to list them), a pod is recognised by its
	// name only: this one is not.
	if agents, _, err := footprintOf("node1", readSummaryCapture(t, "node1-before.json"), readSummaryCapture(t, "node1-after.json"), nil); err != nil || len(agents) != 0 {
		t.Errorf("by name only: %+v, %v; want none", agents, err)
	}
	// The same summary twice: no reading moved, so no rate.
	same := readSummaryCapture(t, "node1-after.json")
	if agents, stale, _ := footprintOf("node1", same, same, pods); len(agents) != 0 || len(stale) != 1 {
		t.Errorf("unchanged readings: agents %+v, stale %v; want the pod stale", agents, stale)
	}
	if _, _, err := footprintOf("node1", []byte("{"), same, pods); err == nil || !strings.Contains(err.Error(), "kubelet summary") {
		t.Errorf("a cut summary: %v", err)
	}
}

func TestAgentComponent(t *testing.T) {
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   string
		known  bool
	}{
		{"calico-node-x7k2p", map[string]string{"k8s-app": "calico-node"}, "calico-node", true},
		{"calico-node-x7k2p", nil, "calico-node", true},
		{"kube-proxy-node1", map[string]string{"component": "kube-proxy", "tier": "node"}, "kube-proxy", true},
		{"kube-proxy-abcde", nil, "kube-proxy", true},
		{"cilium-4fzq2", map[string]string{"k8s-app": "cilium"}, "cilium-agent", true},
		{"cilium-envoy-q8x9z", nil, "cilium-envoy", true},
		{"cilium-operator-5d8f9-abcde", map[string]string{"name": "cilium-operator"}, "", true},
		{"cilium-operator-5d8f9-abcde", nil, "", true},
		{"kube-flannel-ds-2xk4l", map[string]string{"app": "flannel"}, "flannel", true},
		{"calico-kube-controllers-7d9c-xx", map[string]string{"k8s-app": "calico-kube-controllers"}, "", true},
		{"coredns-5d78c9869d-abcde", map[string]string{"k8s-app": "kube-dns"}, "", false},
	} {
		got, known := AgentComponent(tc.name, tc.labels)
		if got != tc.want || known != tc.known {
			t.Errorf("%s %v: %q %v, want %q %v", tc.name, tc.labels, got, known, tc.want, tc.known)
		}
	}
}

// TestIdleFootprintNoSummary: without the right to read the kubelet summary, the footprint says
// which permission it needs, and nothing fails.
func TestIdleFootprintNoSummary(t *testing.T) {
	items := kubeSystemPods(t)
	objs := []runtime.Object{}
	for i := range items {
		objs = append(objs, &items[i])
	}
	cs := fake.NewClientset(objs...)
	denied := func(context.Context, string) ([]byte, error) {
		return nil, &forbiddenErr{}
	}
	fp := IdleFootprint(context.Background(), cs, denied, []string{"node1"}, time.Millisecond)
	if len(fp.Agents) != 0 || !strings.Contains(fp.Note, FootprintAccess) || !strings.Contains(fp.Note, "node1") {
		t.Errorf("got %+v, want a note naming %q", fp, FootprintAccess)
	}
}

type forbiddenErr struct{}

func (forbiddenErr) Error() string {
	return `nodes "node1" is forbidden: User "u" cannot get resource "nodes/proxy" in API group "" at the cluster scope`
}

// TestIdleFootprintSamples: the sampling loop over the captured summaries (served in order,
// the second one until the end): the agent found, the window measured.
func TestIdleFootprintSamples(t *testing.T) {
	items := kubeSystemPods(t)
	objs := []runtime.Object{}
	for i := range items {
		objs = append(objs, &items[i])
	}
	cs := fake.NewClientset(objs...)
	reads := 0
	summaries := func(_ context.Context, node string) ([]byte, error) {
		reads++
		if reads == 1 {
			return readSummaryCapture(t, "node1-before.json"), nil
		}
		return readSummaryCapture(t, "node1-after.json"), nil
	}
	fp := IdleFootprint(context.Background(), cs, summaries, []string{"node1"}, 10*time.Millisecond)
	if len(fp.Agents) != 1 || fp.Agents[0].Component != "other" || fp.Note != "" || fp.Source != FootprintSource || fp.WindowSeconds <= 0 {
		t.Errorf("got %+v", fp)
	}
}
