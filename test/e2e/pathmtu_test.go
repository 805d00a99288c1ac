//go:build e2e

package e2e

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/figure"
	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/pathmtu"
	"github.com/cnperf/cnperf/internal/platform"
	"github.com/cnperf/cnperf/internal/text"
	"github.com/cnperf/cnperf/internal/version"
)

// pmtuImage is the agent image the tests' pods run: the harness's (CNPERF_E2E_AGENT_IMAGE), or
// cnperf's default when the variable is not set.
func pmtuImage() []string {
	if im := os.Getenv("CNPERF_E2E_AGENT_IMAGE"); im != "" {
		return []string{"--image", im}
	}
	return nil
}

// TestPathMTUHealthy: `cnperf run --platform kube --check-mtu` on a healthy cluster checks
// every path of the plan, both ways, and finds no mismatch: full-size packets (the interface
// MTU, the pod MTU cnperf records for pod ends) pass with don't-fragment set, no warning is
// printed, and nothing is left behind.
func TestPathMTUHealthy(t *testing.T) {
	cl := kpClusterFromEnv(t)
	runID := uuid.NewString()
	ns := kpNamespace("pmtu-e2e")
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	paths := []api.Path{api.PathPodPodCrossNode, api.PathPodPodSameNode, api.PathHostHost, api.PathPodClusterIP}
	var names []string
	for _, p := range paths {
		names = append(names, string(p))
	}
	args := append([]string{"run", "--platform", "kube", "--kubeconfig", cl.kubeconfig, "-n", ns, "--uuid", runID,
		"--check-mtu", "--driver", "native", "--profile", "TCP_RR", "--path", strings.Join(names, ","),
		"--duration", "1s", "--samples", "1", "-o", "json", "--no-progress"}, pmtuImage()...)
	out, stderr, code := kpRunCLI(ctx, args...)
	t.Logf("stderr:\n%s", stderr)
	if code != exit.OK {
		t.Fatalf("exit %d", code)
	}
	run := kpDecodeRun(t, out)
	if len(run.PathMTU) != len(paths) {
		t.Fatalf("%d path-MTU checks, want %d: %+v", len(run.PathMTU), len(paths), run.PathMTU)
	}
	for _, m := range run.PathMTU {
		t.Log(figure.PathMTULine(m))
		if m.Finding != "" {
			t.Errorf("%s: finding %q on a healthy cluster: %s", m.Path, m.Finding, m.Consequence)
		}
		for _, p := range []api.PathMTUProbe{m.Forward, m.Reverse} {
			if p.Error != "" || p.LargestBytes == 0 || p.LargestBytes != p.InterfaceMTUBytes || p.From == "" {
				t.Errorf("%s: %+v", m.Path, p)
			}
		}
		if m.Path != api.PathHostHost && run.Cluster != nil && run.Cluster.PodMTUBytes > 0 &&
			m.Forward.InterfaceMTUBytes != run.Cluster.PodMTUBytes {
			t.Errorf("%s: the client's interface MTU %d is not the pod MTU %d", m.Path, m.Forward.InterfaceMTUBytes, run.Cluster.PodMTUBytes)
		}
	}
	if text.ContainsFolded(stderr, "warning: path MTU") {
		t.Errorf("a healthy cluster warned")
	}
	if left := kpLeftovers(context.Background(), t, cl.cs, runID); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestPathMTUPodAboveThePath breaks the MTU inside pods of its own and nowhere else: a client
// pod on one node raises its own eth0 MTU to 9000 (its network namespace is its own; the
// node's side of its veth keeps the cluster's MTU), and the path-MTU check between it and a
// server pod on another node, run through the same pathmtu.Check as `cnperf run --check-mtu`,
// must name a black hole client → server (packets above the path's MTU vanish at the node's
// side of the veth) and find the other direction healthy. The namespace is deleted at the end.
func TestPathMTUPodAboveThePath(t *testing.T) {
	cl := kpClusterFromEnv(t)
	_, cfg, err := kube.NewClientset(cl.kubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	nodes, err := cl.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for i := range nodes.Items {
		if !nodes.Items[i].Spec.Unschedulable {
			names = append(names, nodes.Items[i].Name)
		}
	}
	slices.Sort(names)
	if len(names) < 2 {
		t.Skipf("needs two schedulable nodes, the cluster has %v", names)
	}
	image := version.DefaultImage()
	if im := pmtuImage(); im != nil {
		image = im[1]
	}
	runID := uuid.NewString()
	ns := kpNamespace("pmtu-e2e-broken")
	if _, err := kube.CreateNamespace(ctx, cl.cs, kube.BuildNamespace(ns, runID, true), nil); err != nil {
		t.Fatal(err)
	}
	defer func() {
		dctx, dcancel := context.WithTimeout(context.Background(), time.Minute)
		defer dcancel()
		if err := cl.cs.CoreV1().Namespaces().Delete(dctx, ns, metav1.DeleteOptions{}); err != nil {
			t.Errorf("delete namespace %s: %v", ns, err)
		}
	}()
	pod := func(name, node string, privileged bool) *corev1.Pod {
		co := kube.ContainerOptions{Image: image, PullPolicy: corev1.PullIfNotPresent, Privileged: privileged}
		return kube.PodOptions{Name: name, Namespace: ns, Labels: kube.RunLabels(runID), Nodes: []string{node}, GraceSeconds: 1,
			RunOnce: true, Containers: []corev1.Container{co.Container("agent", kube.IdleCommand)}}.Pod()
	}
	// the client changes its own interface: privileged inside its own network namespace only
	for _, p := range []*corev1.Pod{pod("pmtu-client", names[0], true), pod("pmtu-server", names[1], false)} {
		if _, err := cl.cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pods, err := kube.WaitReady(ctx, cl.cs, ns, kube.RunSelector(runID), []string{"pmtu-client", "pmtu-server"}, 3*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	stream := kube.RemoteStreamer(cl.cs, cfg)
	exe := func(name string) *kube.PodExecutor {
		return &kube.PodExecutor{Stream: stream, Namespace: ns, Pod: name, Container: "agent", DefaultTimeout: 90 * time.Second,
			MaxOutput: kube.DefaultMaxOutputBytes}
	}
	client, server := exe("pmtu-client"), exe("pmtu-server")
	if o := client.Exec(ctx, driver.Command{Argv: []string{"ip", "link", "set", "dev", "eth0", "mtu", "9000"}}); o.Err != nil || o.ExitCode != 0 {
		t.Fatalf("raise the client pod's MTU: exit %d %v %s", o.ExitCode, o.Err, o.Stderr)
	}
	pair := &platform.Pair{Client: client, Server: server, Placement: &api.Placement{
		Client: api.Endpoint{PodIP: pods["pmtu-client"].Status.PodIP}, Server: api.Endpoint{PodIP: pods["pmtu-server"].Status.PodIP}}}
	m := pathmtu.Check(ctx, api.PathPodPodCrossNode, pair, pathmtu.DefaultOptions())
	t.Logf("forward %+v\nreverse %+v\n%s: %s", m.Forward, m.Reverse, m.Finding, m.Consequence)
	if m.Finding != pathmtu.FindingBlackHole || !strings.Contains(m.Consequence, "client → server packets above") {
		t.Errorf("finding %q (%s), want a black hole client → server", m.Finding, m.Consequence)
	}
	if f := m.Forward; f.Error != "" || f.InterfaceMTUBytes != 9000 || f.LargestBytes >= 9000 || f.SilentDropBytes == 0 {
		t.Errorf("client → server: %+v", f)
	}
	if r := m.Reverse; r.Error != "" || r.LargestBytes != r.InterfaceMTUBytes {
		t.Errorf("server → client: %+v", r)
	}
}

// TestKubeHairpin: pod-hairpin (perf-tests' "Hairpin Pod to own Virtual IP") runs the client in
// the server pod itself, dialling its own ClusterIP Service, whose only backend is itself; the
// packets leave the pod, are DNATed back to it and must turn round on the node.
func TestKubeHairpin(t *testing.T) {
	cl := kpClusterFromEnv(t)
	runID := uuid.NewString()
	ns := kpNamespace("pmtu-e2e-hairpin")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	args := append([]string{"run", "--platform", "kube", "--kubeconfig", cl.kubeconfig, "-n", ns, "--uuid", runID,
		// pod-pod-same-node first: cnperf does not wait for a new Service to be programmed on the
		// node (kube-proxy), so a Service path measured first within a second or two of set-up
		// can meet "connection refused" (seen here; pod-clusterip has the same gap)
		"--driver", "native", "--profile", "TCP_RR,TCP_STREAM", "--path", "pod-pod-same-node,pod-hairpin", "--duration", "1s",
		"--samples", "2", "-o", "json", "--no-progress"}, pmtuImage()...)
	out, stderr, code := kpRunCLI(ctx, args...)
	t.Logf("stderr:\n%s", stderr)
	if code != exit.OK {
		t.Fatalf("exit %d", code)
	}
	run := kpDecodeRun(t, out)
	if len(run.Results) != 4 {
		t.Fatalf("%d results, want 4", len(run.Results))
	}
	for _, r := range run.Results {
		if r.Path != api.PathPodHairpin {
			continue
		}
		pl := r.Placement
		if r.Failed() || pl == nil {
			t.Fatalf("%s: %s (placement %+v)", r.Profile, r.Error, pl)
		}
		if pl.Client.Pod == "" || pl.Client.Pod != pl.Server.Pod || pl.Client.PodIP != pl.Server.PodIP {
			t.Errorf("%s: client %s (%s) is not the server pod %s (%s)", r.Profile, pl.Client.Pod, pl.Client.PodIP, pl.Server.Pod, pl.Server.PodIP)
		}
		if pl.Target == "" || pl.Target == pl.Server.PodIP {
			t.Errorf("%s: the client dialled %q, not a ClusterIP (its own pod IP is %s)", r.Profile, pl.Target, pl.Server.PodIP)
		}
	}
	if left := kpLeftovers(context.Background(), t, cl.cs, runID); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}
