//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/kube"
)

// TestKubePodLabelsAnnotations: every pod of a run gets --pod-labels and --pod-annotations
// beside cnperf's own labels (kept with --keep to look at them), and `cnperf cleanup --run`
// still finds and removes everything by cnperf's labels.
func TestKubePodLabelsAnnotations(t *testing.T) {
	cl := kpClusterFromEnv(t)
	runID := uuid.NewString()
	ns := kpNamespace("pmtu-e2e-podmeta")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	args := append([]string{"run", "--platform", "kube", "--kubeconfig", cl.kubeconfig, "-n", ns, "--uuid", runID, "--keep",
		"--pod-labels", "team=net,example.com/tier=perf", "--pod-annotations", "sidecar.istio.io/inject=false",
		"--driver", "native", "--profile", "TCP_RR", "--path", "pod-pod-cross-node,host-host", "--duration", "1s", "--samples", "1",
		"-o", "json", "--no-progress"}, pmtuImage()...)
	_, stderr, code := kpRunCLI(ctx, args...)
	defer func() {
		if _, errOut, c := kpRunCLI(context.Background(), "cleanup", "--kubeconfig", cl.kubeconfig, "--run", runID); c != exit.OK {
			t.Errorf("cleanup exit %d:\n%s", c, errOut)
		}
		if left := kpLeftovers(context.Background(), t, cl.cs, runID); len(left) > 0 {
			t.Errorf("left behind: %v", left)
		}
	}()
	if code != exit.OK {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	pods, err := cl.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: kube.RunSelector(runID)})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) < 3 { // pod and host servers, a pod and a host client
		t.Fatalf("%d pods of the run, want at least 3", len(pods.Items))
	}
	for _, p := range pods.Items {
		if p.Labels["team"] != "net" || p.Labels["example.com/tier"] != "perf" || p.Labels[kube.LabelRun] != runID ||
			p.Annotations["sidecar.istio.io/inject"] != "false" {
			t.Errorf("pod %s: labels %v annotations %v", p.Name, p.Labels, p.Annotations)
		}
	}
}
