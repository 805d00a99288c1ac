//go:build e2e

// The idle footprint (--idle-footprint): the CNI's and proxy's agents' CPU and memory with no
// load, from the kubelets' summaries, before the measurement.
package e2e

import (
	"cmp"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/version"
)

// agentImage is the agent image the harness loaded (CNPERF_E2E_AGENT_IMAGE), else this
// version's.
func agentImage() string { return cmp.Or(os.Getenv("CNPERF_E2E_AGENT_IMAGE"), version.DefaultImage()) }

// TestKubeIdleFootprint: the harness runs its CNI's agents and kube-proxy as host processes, not
// pods, which the kubelet does not see; so the test adds a node agent of its own, a
// host-network DaemonSet in kube-system that wakes 20 times a second. cnperf must find it on
// both endpoint nodes as an agent it does not know ("other"), with a CPU rate above zero and a
// working set, in the run's cluster details and in the table's footnote; and no other pod.
func TestKubeIdleFootprint(t *testing.T) {
	cl := kpClusterFromEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const name = "cnperf-e2e-footprint-agent"
	labels := map[string]string{"app": name}
	no := false
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system"},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{HostNetwork: true, AutomountServiceAccountToken: &no, Containers: []corev1.Container{{
					Name: "agent", Image: agentImage(), ImagePullPolicy: corev1.PullIfNotPresent,
					Command: []string{"sh", "-c", "while :; do sleep 0.05; done"}}}}}}}
	if _, err := cl.cs.AppsV1().DaemonSets("kube-system").Create(ctx, ds, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cl.cs.AppsV1().DaemonSets("kube-system").Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	for {
		got, err := cl.cs.AppsV1().DaemonSets("kube-system").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status.DesiredNumberScheduled > 0 && got.Status.NumberReady == got.Status.DesiredNumberScheduled {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the DaemonSet's pods are not ready: %+v", got.Status)
		case <-time.After(time.Second):
		}
	}

	runID := uuid.NewString()
	ns := kpNamespace("nodeinfo-e2e-footprint")
	out, stderr, code := kpRunCLI(ctx, "run", "--platform", "kube", "--kubeconfig", cl.kubeconfig, "-n", ns, "--uuid", runID,
		"--image", agentImage(), "--idle-footprint", "15s", "--driver", "native", "--profile", "TCP_RR", "--path", "pod-pod-cross-node",
		"--duration", "1s", "--samples", "1", "-o", "json")
	t.Logf("stderr:\n%s", stderr)
	if code != exit.OK {
		t.Fatalf("exit %d", code)
	}
	run := kpDecodeRun(t, out)
	fp := run.Cluster.IdleFootprint
	if fp == nil {
		t.Fatal("no idle footprint in the run's cluster details")
	}
	for _, l := range report.ClusterLines(run.Cluster) {
		t.Log(l)
	}
	nodes := map[string]bool{}
	for _, a := range fp.Agents {
		if a.MemoryWorkingSetBytes == nil {
			t.Errorf("%s %s %s/%s: no memory reading", a.Node, a.Component, a.Namespace, a.Pod)
			continue
		}
		t.Logf("%s %s %s/%s: %.2f millicores over %.0f s, %d bytes", a.Node, a.Component, a.Namespace, a.Pod, a.CPUMillicores, a.WindowSeconds, *a.MemoryWorkingSetBytes)
		if a.Component != "other" || a.Namespace != "kube-system" || !strings.HasPrefix(a.Pod, name+"-") {
			t.Errorf("an agent that is not the test's: %+v", a)
			continue
		}
		if a.CPUMillicores <= 0 || *a.MemoryWorkingSetBytes == 0 || a.WindowSeconds <= 0 {
			t.Errorf("%s: no figures: %+v", a.Node, a)
		}
		nodes[a.Node] = true
	}
	for _, n := range run.Cluster.Nodes {
		if !nodes[n.Name] {
			t.Errorf("endpoint node %s: the test's agent was not found (footprint %+v)", n.Name, fp)
		}
	}
	if fp.WindowSeconds < 15 {
		t.Errorf("sampled for %.1f s, asked 15 s", fp.WindowSeconds)
	}
	if left := kpLeftovers(context.Background(), t, cl.cs, runID); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}
