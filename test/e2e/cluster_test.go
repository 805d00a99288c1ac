//go:build e2e

// Smoke test of the e2e cluster itself (test/e2e/harness): nodes Ready with zones, pods on
// every node from the locally imported agent image, exec, cross-node pod traffic, a ClusterIP
// Service and cluster DNS. It talks to the cluster through kubectl only, so it needs no Go
// dependency. Run with `make e2e`, or `make e2e-up` then `make e2e-test`.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// clusterEnv is what test/e2e/harness/up.sh exports (see docs/e2e.md).
type clusterEnv struct {
	kubeconfig string
	kubectl    string
	nodes      int
	image      string
}

func clusterFromEnv(t *testing.T) clusterEnv {
	t.Helper()
	kc := os.Getenv("CNPERF_E2E_KUBECONFIG")
	if kc == "" {
		t.Skip("CNPERF_E2E_KUBECONFIG is not set: no e2e cluster given (run `make e2e`, or `make e2e-up` then `make e2e-test`)")
	}
	c := clusterEnv{kubeconfig: kc, kubectl: os.Getenv("CNPERF_E2E_KUBECTL"), image: os.Getenv("CNPERF_E2E_AGENT_IMAGE")}
	if c.kubectl == "" {
		c.kubectl = "kubectl"
	}
	if c.image == "" {
		t.Fatal("CNPERF_E2E_AGENT_IMAGE is not set")
	}
	n, err := strconv.Atoi(os.Getenv("CNPERF_E2E_NODES"))
	if err != nil || n < 2 {
		t.Fatalf("CNPERF_E2E_NODES=%q: want a number >= 2", os.Getenv("CNPERF_E2E_NODES"))
	}
	c.nodes = n
	return c
}

// run runs kubectl and returns its stdout; the error carries the command and its stderr.
func (c clusterEnv) run(ctx context.Context, stdin string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.kubectl, append([]string{"--kubeconfig", c.kubeconfig}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("kubectl %s: %w\nstdout: %s\nstderr: %s",
			strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String(), nil
}

type clusterNodeList struct {
	Items []struct {
		Metadata struct {
			Name   string            `json:"name"`
			Labels map[string]string `json:"labels"`
		} `json:"metadata"`
		Status struct {
			Conditions []struct{ Type, Status string }  `json:"conditions"`
			Addresses  []struct{ Type, Address string } `json:"addresses"`
			NodeInfo   struct {
				KubeletVersion string `json:"kubeletVersion"`
			} `json:"nodeInfo"`
		} `json:"status"`
	} `json:"items"`
}

func TestClusterNodesReady(t *testing.T) {
	c := clusterFromEnv(t)
	out, err := c.run(context.Background(), "", "get", "nodes", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var nl clusterNodeList
	if err := json.Unmarshal([]byte(out), &nl); err != nil {
		t.Fatalf("parse nodes: %v", err)
	}
	if len(nl.Items) != c.nodes {
		t.Fatalf("got %d nodes, want %d", len(nl.Items), c.nodes)
	}
	zones := map[string]bool{}
	for _, n := range nl.Items {
		ready := false
		for _, cond := range n.Status.Conditions {
			if cond.Type == "Ready" && cond.Status == "True" {
				ready = true
			}
		}
		if !ready {
			t.Errorf("node %s is not Ready", n.Metadata.Name)
		}
		z := n.Metadata.Labels["topology.kubernetes.io/zone"]
		if z == "" {
			t.Errorf("node %s has no topology.kubernetes.io/zone label", n.Metadata.Name)
		}
		zones[z] = true
		t.Logf("node %s ready=%v zone=%s kubelet=%s addresses=%v", n.Metadata.Name, ready, z,
			n.Status.NodeInfo.KubeletVersion, n.Status.Addresses)
	}
	if want := os.Getenv("CNPERF_E2E_ZONES"); want != "" && strconv.Itoa(len(zones)) != want {
		t.Errorf("nodes span %d zones, want %s", len(zones), want)
	}
}

// TestClusterPodsExecServiceDNS places a server pod on the first node and a client pod on
// every node, then checks exec, pod-to-pod across nodes, a ClusterIP Service and DNS.
func TestClusterPodsExecServiceDNS(t *testing.T) {
	c := clusterFromEnv(t)
	ctx := context.Background()
	ns := fmt.Sprintf("cnperf-e2e-smoke-%d", time.Now().UnixNano()%1000000)
	if _, err := c.run(ctx, "", "create", "namespace", ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := c.run(context.Background(), "", "delete", "namespace", ns, "--wait=false"); err != nil {
			t.Log(err)
		}
	})

	pod := func(name, node, labels, command string) string {
		return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %s, labels: {%s}}
spec:
  nodeSelector: {kubernetes.io/hostname: %s}
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: %s
    imagePullPolicy: Never
    command: %s
---
`, name, labels, node, c.image, command)
	}
	var manifest strings.Builder
	manifest.WriteString(pod("server", "node1", "app: smoke-server",
		`["httpd", "-f", "-p", "8080", "-h", "/etc"]`))
	for i := 1; i <= c.nodes; i++ {
		manifest.WriteString(pod(fmt.Sprintf("client%d", i), fmt.Sprintf("node%d", i), "app: smoke-client",
			`["sleep", "infinity"]`))
	}
	manifest.WriteString(`apiVersion: v1
kind: Service
metadata: {name: smoke-server}
spec:
  selector: {app: smoke-server}
  ports: [{port: 80, targetPort: 8080, protocol: TCP}]
`)
	if _, err := c.run(ctx, manifest.String(), "-n", ns, "apply", "-f", "-"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.run(ctx, "", "-n", ns, "wait", "--for=condition=Ready", "pod", "--all", "--timeout=90s"); err != nil {
		out, _ := c.run(ctx, "", "-n", ns, "get", "pods", "-o", "wide")
		ev, _ := c.run(ctx, "", "-n", ns, "get", "events")
		t.Fatalf("%v\npods:\n%s\nevents:\n%s", err, out, ev)
	}
	out, _ := c.run(ctx, "", "-n", ns, "get", "pods", "-o", "wide")
	t.Logf("pods:\n%s", out)

	// every client runs on the node it was pinned to
	for i := 1; i <= c.nodes; i++ {
		node, err := c.run(ctx, "", "-n", ns, "get", "pod", fmt.Sprintf("client%d", i), "-o", "jsonpath={.spec.nodeName}")
		if err != nil || node != fmt.Sprintf("node%d", i) {
			t.Errorf("client%d runs on %q (err %v), want node%d", i, node, err, i)
		}
	}
	serverIP, err := c.run(ctx, "", "-n", ns, "get", "pod", "server", "-o", "jsonpath={.status.podIP}")
	if err != nil || serverIP == "" {
		t.Fatalf("server pod IP %q: %v", serverIP, err)
	}
	if _, err := c.run(ctx, "", "-n", ns, "wait", "--for=jsonpath={.endpoints[0].addresses[0]}="+serverIP,
		"endpointslice", "-l", "kubernetes.io/service-name=smoke-server", "--timeout=30s"); err != nil {
		t.Fatal(err)
	}

	podExec := func(t *testing.T, pod string, cmd ...string) string {
		t.Helper()
		out, err := c.run(ctx, "", append([]string{"-n", ns, "exec", pod, "--"}, cmd...)...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	// httpGet fetches /hostname from busybox httpd with nc: Debian's busybox-static wget
	// segfaults on this machine (see docs/e2e.md), nc and nslookup work.
	httpGet := func(t *testing.T, pod, host, port string) {
		t.Helper()
		out := podExec(t, pod, "sh", "-c", "printf 'GET /hostname HTTP/1.0\\r\\n\\r\\n' | nc -w 5 "+host+" "+port)
		if !strings.Contains(out, "200 OK") || !strings.HasSuffix(strings.TrimSpace(out), "server") {
			t.Errorf("%s: GET http://%s:%s/hostname: want 200 OK from pod server, got\n%s", pod, host, port, out)
		}
	}
	last := fmt.Sprintf("client%d", c.nodes) // on another node than the server
	t.Run("exec", func(t *testing.T) {
		if got := podExec(t, last, "hostname"); strings.TrimSpace(got) != last {
			t.Errorf("hostname = %q, want %q", got, last)
		}
	})
	t.Run("agent-image-tools", func(t *testing.T) {
		out := podExec(t, last, "sh", "-c", "ls -l /usr/local/bin/cnperf && iperf3 --version && qperf --version && "+
			"sockperf --version && { iperf -v 2>&1 || true; }")
		for _, want := range []string{"/usr/local/bin/cnperf", "iperf 3.", "qperf", "sockperf", "iperf version 2"} {
			if !strings.Contains(out, want) {
				t.Errorf("agent image: no %q in\n%s", want, out)
			}
		}
	})
	t.Run("pod-to-pod-cross-node", func(t *testing.T) {
		httpGet(t, last, serverIP, "8080")
	})
	t.Run("clusterip-service", func(t *testing.T) {
		ip, err := c.run(ctx, "", "-n", ns, "get", "svc", "smoke-server", "-o", "jsonpath={.spec.clusterIP}")
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i <= c.nodes; i++ {
			httpGet(t, fmt.Sprintf("client%d", i), ip, "80")
		}
	})
	t.Run("dns", func(t *testing.T) {
		if os.Getenv("CNPERF_E2E_DNS") == "0" {
			t.Skip("cluster started with DNS=0")
		}
		out := podExec(t, last, "nslookup", "smoke-server."+ns+".svc.cluster.local")
		if !strings.Contains(out, "10.96.") {
			t.Errorf("nslookup: no ClusterIP in\n%s", out)
		}
		// short name through the search path, as a program would use it
		httpGet(t, last, "smoke-server", "80")
	})
	t.Run("kubernetes-api-from-pod", func(t *testing.T) {
		podExec(t, last, "sh", "-c", "echo | nc -w 5 10.96.0.1 443 >/dev/null")
	})
}
