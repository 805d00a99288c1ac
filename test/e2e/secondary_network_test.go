//go:build e2e

// Secondary networks measured for real: on a cluster with Multus (make e2e MULTUS=1, which
// brings up the NetworkAttachmentDefinitions multus-e2e/e2e-bridge and multus-e2e/e2e-macvlan,
// test/e2e/harness/multus.sh), cnperf puts the client and server pods on the attachment and
// measures between their addresses on it, same node and cross node, beside the default network.
package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/runfile"
)

// snNAD is one of the harness's NetworkAttachmentDefinitions: its name, the CNI plugin type and
// the subnet its whereabouts IPAM allocates from (read from the definition itself).
type snNAD struct {
	network, typ string
	subnet       *net.IPNet
}

// snNeedMultus skips the test unless the cluster has the NetworkAttachmentDefinition CRD and
// the harness's two definitions, and returns them.
func snNeedMultus(ctx context.Context, t *testing.T, cl kpCluster) []snNAD {
	t.Helper()
	if _, err := cl.cs.Discovery().ServerResourcesForGroupVersion("k8s.cni.cncf.io/v1"); err != nil {
		t.Skipf("the cluster has no NetworkAttachmentDefinition CRD (k8s.cni.cncf.io/v1: %v): no Multus; make e2e MULTUS=1 brings it up", err)
	}
	var out []snNAD
	for _, n := range []string{"multus-e2e/e2e-bridge", "multus-e2e/e2e-macvlan"} {
		ns, name, _ := strings.Cut(n, "/")
		raw, err := cl.cs.CoreV1().RESTClient().Get().AbsPath("/apis/k8s.cni.cncf.io/v1/namespaces", ns, "network-attachment-definitions", name).DoRaw(ctx)
		if err != nil {
			t.Skipf("Multus is installed but not the harness's NetworkAttachmentDefinition %s (test/e2e/harness/multus.sh up makes it): %v", n, err)
		}
		var nad struct {
			Spec struct{ Config string } `json:"spec"`
		}
		var conf struct {
			Type string `json:"type"`
			IPAM struct {
				Range string `json:"range"`
			} `json:"ipam"`
		}
		if err := json.Unmarshal(raw, &nad); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(nad.Spec.Config), &conf); err != nil {
			t.Fatalf("%s: spec.config: %v", n, err)
		}
		_, subnet, err := net.ParseCIDR(conf.IPAM.Range)
		if err != nil {
			t.Fatalf("%s: ipam range %q: %v", n, conf.IPAM.Range, err)
		}
		out = append(out, snNAD{network: n, typ: conf.Type, subnet: subnet})
	}
	return out
}

// snCounter reads one interface counter of a pod (/sys/class/net/IFACE/statistics/NAME).
func snCounter(ctx context.Context, t *testing.T, kubeconfig, ns, pod, iface, name string) int64 {
	t.Helper()
	kubectl := os.Getenv("CNPERF_E2E_KUBECTL")
	if kubectl == "" {
		kubectl = "kubectl"
	}
	out, err := exec.CommandContext(ctx, kubectl, "--kubeconfig", kubeconfig, "-n", ns, "exec", pod, "--",
		"cat", "/sys/class/net/"+iface+"/statistics/"+name).CombinedOutput()
	if err != nil {
		t.Fatalf("read %s of %s in pod %s: %v: %s", name, iface, pod, err, out)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		t.Fatalf("%s of %s in pod %s: %q", name, iface, pod, out)
	}
	return n
}

// TestSecondaryNetworks: TCP_STREAM, TCP_RR and TCP_CRR with the native driver, same node and
// cross node, on the bridge NAD (with the default network's figures in the same run) and on the
// macvlan NAD. Every case passes; an attachment case dials the server's address on the
// attachment, both addresses are in the NAD's subnet, the result names the network, its type and
// its MTU; and the server pod's attachment interface received at least half the bytes the
// stream cases report (the traffic really went over it). The pods are kept (--keep) for that
// count, then the test's namespace goes and nothing labelled with the runs is left.
func TestSecondaryNetworks(t *testing.T) {
	cl := kpClusterFromEnv(t)
	ctx := context.Background()
	nads := snNeedMultus(ctx, t, cl)
	for i, nad := range nads {
		t.Run(nad.typ, func(t *testing.T) {
			ns := kpNamespace("cnperf-e2e-multus")
			if _, err := cl.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			runID := uuid.NewString()
			t.Cleanup(func() {
				_ = cl.cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
				if !waitFor(2*time.Minute, func() bool {
					_, err := cl.cs.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{})
					return err != nil
				}) {
					t.Errorf("namespace %s still there 2 min after its deletion", ns)
				}
				if left := kpLeftovers(context.Background(), t, cl.cs, runID); len(left) > 0 {
					t.Errorf("left behind: %v", left)
				}
			})
			// the default network beside the first network, in one run
			defaultGroup := ""
			if i == 0 {
				defaultGroup = "- name: default\n  profiles: [TCP_STREAM, TCP_RR, TCP_CRR]\n  paths: [pod-pod-same-node, pod-pod-cross-node]\n"
			}
			planFile := filepath.Join(t.TempDir(), "plan.yaml")
			planYAML := fmt.Sprintf(`apiVersion: cnperf.dev/v1alpha1
kind: Plan
metadata: {name: secondary-%s}
defaults: {drivers: [native], duration: 2s, samples: 2, timeout: 30s}
tests:
%s- name: %s
  profiles: [TCP_STREAM, TCP_RR, TCP_CRR]
  paths: [pod-pod-same-node, pod-pod-cross-node]
  network: %s
`, nad.typ, defaultGroup, nad.typ, nad.network)
			if err := os.WriteFile(planFile, []byte(planYAML), 0o644); err != nil {
				t.Fatal(err)
			}
			results := filepath.Join(t.TempDir(), "run.jsonl")
			start := time.Now()
			out, stderr, code := kpRunCLI(ctx, "run", "--platform", "kube", "--kubeconfig", cl.kubeconfig, "-n", ns, "--uuid", runID,
				"-c", planFile, "--keep", "--results", results, "-o", "table")
			t.Logf("cnperf exit %d in %.0fs, stderr:\n%s\nstdout:\n%s", code, time.Since(start).Seconds(), stderr, out)
			if code != exit.OK {
				t.Fatalf("cnperf exited %d", code)
			}
			runs, _, err := runfile.ReadWarnings(results)
			if err != nil || len(runs) != 1 {
				t.Fatalf("results file: %v (%d runs)", err, len(runs))
			}
			want := 6
			if i == 0 {
				want = 12
			}
			if got := len(runs[0].Results); got != want {
				t.Fatalf("%d results, want %d", got, want)
			}
			var streamBytes float64
			var serverPod, iface string
			for _, r := range runs[0].Results {
				r := r
				label := fmt.Sprintf("%s %s %s", r.Profile, r.Path, r.Params.Network)
				if r.Failed() || r.Summary.SamplesFailed > 0 {
					t.Errorf("%s: failed (%q, %d samples failed)", label, r.Error, r.Summary.SamplesFailed)
					continue
				}
				a := r.Placement.Attachment
				if r.Params.Network == "" {
					if a != nil {
						t.Errorf("%s: default-network case with an attachment %+v", label, a)
					}
					continue
				}
				if a == nil {
					t.Errorf("%s: no attachment in the result", label)
					continue
				}
				if a.Network != nad.network || a.Type != nad.typ || a.MTUBytes != 1500 || a.Interface == "" {
					t.Errorf("%s: attachment %+v, want %s, type %s, MTU 1500", label, a, nad.network, nad.typ)
				}
				for _, ip := range []string{a.ServerIP, a.ClientIP} {
					if !nad.subnet.Contains(net.ParseIP(ip)) {
						t.Errorf("%s: address %q is not in %s's subnet %s", label, ip, nad.network, nad.subnet)
					}
				}
				if r.Placement.Target != a.ServerIP || r.Placement.Server.Address != a.ServerIP {
					t.Errorf("%s: dialled %s, not the server's attachment address %s", label, r.Placement.Target, a.ServerIP)
				}
				if same := r.Placement.Client.Node == r.Placement.Server.Node; same != (r.Path == api.PathPodPodSameNode) {
					t.Errorf("%s: client on %s, server on %s", label, r.Placement.Client.Node, r.Placement.Server.Node)
				}
				if r.Profile == api.TCPStream && r.Summary.ThroughputBitsPerSecond != nil {
					streamBytes += r.Summary.ThroughputBitsPerSecond.Mean * r.Params.DurationSeconds * float64(r.Summary.SamplesTotal-r.Summary.SamplesFailed) / 8
				}
				serverPod, iface = r.Placement.Server.Pod, a.Interface
			}
			if serverPod == "" {
				t.Fatal("no attachment case to check the interface counters of")
			}
			rx := snCounter(ctx, t, cl.kubeconfig, ns, serverPod, iface, "rx_bytes")
			t.Logf("%s: server pod %s received %d bytes on %s; the stream cases report %.0f", nad.network, serverPod, rx, iface, streamBytes)
			if float64(rx) < streamBytes/2 {
				t.Errorf("%s received %d bytes on %s, less than half of the %.0f the stream cases measured: the traffic did not go over the attachment",
					serverPod, rx, iface, streamBytes)
			}
		})
	}
}
