//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/report"
)

// TestKubeNodeHardware: with a host path in the plan, every endpoint node's hardware is read by
// the agent in a host-network endpoint pod: the CPU, the kernel the node object reports, and
// the uplink that holds the node's InternalIP with its driver, MTU and the five offloads. The
// agent image must have `cnperf agent node-hardware` (the harness builds it from this tree).
func TestKubeNodeHardware(t *testing.T) {
	cl := kpClusterFromEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	runID := uuid.NewString()
	ns := kpNamespace("nodeinfo-e2e-hw")
	out, stderr, code := kpRunCLI(ctx, "run", "--platform", "kube", "--kubeconfig", cl.kubeconfig, "-n", ns, "--uuid", runID,
		"--image", agentImage(), "--driver", "native", "--profile", "TCP_RR", "--path", "host-host",
		"--duration", "1s", "--samples", "1", "-o", "json")
	t.Logf("stderr:\n%s", stderr)
	if code != exit.OK {
		t.Fatalf("exit %d", code)
	}
	run := kpDecodeRun(t, out)
	for _, l := range report.ClusterLines(run.Cluster) {
		t.Log(l)
	}
	if len(run.Cluster.Nodes) != 2 {
		t.Fatalf("%d endpoint nodes, want 2", len(run.Cluster.Nodes))
	}
	for _, n := range run.Cluster.Nodes {
		hw := n.Hardware
		if hw == nil {
			t.Errorf("node %s: no hardware", n.Name)
			continue
		}
		if hw.Source != "agent" || hw.CPUCount == 0 || hw.Kernel != n.Kernel || hw.Uplink == "" || hw.Driver == "" ||
			hw.MTUBytes < 576 || len(hw.Offloads) != 5 || hw.Note != "" {
			t.Errorf("node %s (kernel %s): %+v", n.Name, n.Kernel, hw)
		}
	}
	if left := kpLeftovers(context.Background(), t, cl.cs, runID); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}
