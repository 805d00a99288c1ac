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
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/runfile"
	"github.com/cnperf/cnperf/internal/text"
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
			runID := uuid.NewString()
			ns := snNamespace(ctx, t, cl, "cnperf-e2e-multus", runID, true)
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

// snIPAMState lists what whereabouts still holds in subnet: the allocations of its IPPools on that
// range and its OverlappingRangeIPReservations (one per address in use, named by the address).
func snIPAMState(ctx context.Context, t *testing.T, cl kpCluster, subnet *net.IPNet) []string {
	t.Helper()
	get := func(resource string) []byte {
		raw, err := cl.cs.CoreV1().RESTClient().Get().AbsPath("/apis/whereabouts.cni.cncf.io/v1alpha1", resource).DoRaw(ctx)
		if err != nil {
			t.Fatalf("list %s.whereabouts.cni.cncf.io: %v", resource, err)
		}
		return raw
	}
	var pools struct {
		Items []struct {
			Metadata struct{ Name, Namespace string } `json:"metadata"`
			Spec     struct {
				Range       string                    `json:"range"`
				Allocations map[string]map[string]any `json:"allocations"`
			} `json:"spec"`
		} `json:"items"`
	}
	var reservations struct {
		Items []struct {
			Metadata struct{ Name, Namespace string } `json:"metadata"`
			Spec     struct {
				PodRef string `json:"podref"`
			} `json:"spec"`
		} `json:"items"`
	}
	if err := json.Unmarshal(get("ippools"), &pools); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(get("overlappingrangeipreservations"), &reservations); err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, p := range pools.Items {
		if _, n, err := net.ParseCIDR(p.Spec.Range); err == nil && n.String() == subnet.String() && len(p.Spec.Allocations) > 0 {
			left = append(left, fmt.Sprintf("IPPool %s/%s: %d allocations %v", p.Metadata.Namespace, p.Metadata.Name, len(p.Spec.Allocations), p.Spec.Allocations))
		}
	}
	for _, r := range reservations.Items {
		// named by the address (an IPv6 address's ':' as '-')
		ip := net.ParseIP(r.Metadata.Name)
		if ip == nil {
			ip = net.ParseIP(strings.ReplaceAll(r.Metadata.Name, "-", ":"))
		}
		if ip != nil && subnet.Contains(ip) {
			left = append(left, fmt.Sprintf("OverlappingRangeIPReservation %s/%s (%s)", r.Metadata.Namespace, r.Metadata.Name, r.Spec.PodRef))
		}
	}
	return left
}

// TestMacvlanFlag: k8s-netperf's --macvlan MASTER as cnperf runs it: the run creates the
// definition k8s-netperf creates (macvlan-netperf, macvlan in bridge mode on each node's eth0,
// whereabouts IPAM), in its namespace, measures TCP_STREAM and TCP_RR same node and cross node on
// it, and deletes it at the end (the namespace is the test's, so it must delete it by name);
// whereabouts holds no address of the range afterwards, and the k8s-netperf CSV names the network
// in Macvlan Info. The range is 10.127.0.0/24 (not k8s-netperf's 192.168.200.0/24, to stay apart
// from anything else on the machine) and the IPAM carries the harness's whereabouts
// configuration_path (whereabouts v0.9 finds no configuration in its default places here: the
// nodes share the host's /etc, where the harness writes nothing), hence --macvlan-ipam.
func TestMacvlanFlag(t *testing.T) {
	cl := kpClusterFromEnv(t)
	ctx := context.Background()
	snNeedMultus(ctx, t, cl)
	ipamJSON, subnet := snMacvlanIPAM(ctx, t, cl)

	runID := uuid.NewString()
	ns := snNamespace(ctx, t, cl, "multus-macvlan", runID, false)
	results := filepath.Join(t.TempDir(), "run.jsonl")
	start := time.Now()
	out, stderr, code := kpRunCLI(ctx, "run", "--platform", "kube", "--kubeconfig", cl.kubeconfig, "-n", ns, "--uuid", runID,
		"--macvlan", "eth0", "--macvlan-ipam", string(ipamJSON), "--driver", "native", "--profile", "TCP_STREAM,TCP_RR",
		"--path", "pod-pod-same-node,pod-pod-cross-node", "--duration", "2s", "--samples", "2", "--results", results, "-o", "table")
	t.Logf("cnperf exit %d in %.0fs, stderr:\n%s\nstdout:\n%s", code, time.Since(start).Seconds(), stderr, out)
	if code != exit.OK {
		t.Fatalf("cnperf exited %d", code)
	}
	network := ns + "/macvlan-netperf"
	if !text.ContainsFolded(stderr, "created NetworkAttachmentDefinition "+network+
		` (deleted at the end of the run): {"cniVersion": "0.3.1", "type": "macvlan", "master": "eth0", "mode": "bridge"`) {
		t.Errorf("stderr does not say the definition was created")
	}
	runs, _, err := runfile.ReadWarnings(results)
	if err != nil || len(runs) != 1 || len(runs[0].Results) != 4 {
		t.Fatalf("results file: %v (%d runs)", err, len(runs))
	}
	for _, r := range runs[0].Results {
		label := fmt.Sprintf("%s %s", r.Profile, r.Path)
		if r.Failed() || r.Summary.SamplesFailed > 0 {
			t.Errorf("%s: failed (%q, %d samples failed)", label, r.Error, r.Summary.SamplesFailed)
			continue
		}
		a := r.Placement.Attachment
		if a == nil || a.Network != network || a.Type != "macvlan" || !subnet.Contains(net.ParseIP(a.ServerIP)) ||
			!subnet.Contains(net.ParseIP(a.ClientIP)) || r.Placement.Target != a.ServerIP {
			t.Errorf("%s: attachment %+v, target %s: want %s (macvlan) between addresses of %s", label, a, r.Placement.Target, network, subnet)
		}
	}
	// the definition is gone (the namespace, the test's, is still there)
	if _, err := cl.cs.CoreV1().RESTClient().Get().AbsPath("/apis/k8s.cni.cncf.io/v1/namespaces", ns, "network-attachment-definitions", "macvlan-netperf").DoRaw(ctx); err == nil {
		t.Errorf("NetworkAttachmentDefinition %s is left after the run", network)
	}
	if left := kpLeftovers(ctx, t, cl.cs, runID); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
	if left := snIPAMState(ctx, t, cl, subnet); len(left) > 0 {
		t.Errorf("whereabouts still holds addresses of %s: %v", subnet, left)
	}
	csv, stderr2, code := kpRunCLI(ctx, "report", "-o", "k8s-netperf-csv", results)
	if code != exit.OK || !strings.Contains(csv, ",macvlan/eth0,") {
		t.Errorf("k8s-netperf CSV (exit %d, %s) does not say macvlan/eth0 (Macvlan Info, as k8s-netperf):\n%s", code, stderr2, csv)
	}
}

// TestSecondaryNetworkPolicyAndAnnotation: NetworkPolicy does not apply to a secondary network,
// and the result says so instead of keeping silent; a user's own k8s.v1.cni.cncf.io/networks
// (--pod-annotations) stays on the pods beside the run's network. In the test's namespace a
// deny-all-ingress NetworkPolicy selects every pod (on Calico it drops the default network's
// traffic to them); the pods ask for the macvlan NAD themselves (net1) and the run measures
// TCP_RR cross node on the bridge NAD (net2): the case passes, its attachment is net2 and names
// the policy as not applied, and the table's footnote says so.
func TestSecondaryNetworkPolicyAndAnnotation(t *testing.T) {
	cl := kpClusterFromEnv(t)
	ctx := context.Background()
	snNeedMultus(ctx, t, cl)
	runID := uuid.NewString()
	ns := snNamespace(ctx, t, cl, "multus-policy", runID, true)
	deny := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "deny-ingress"},
		Spec: networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}}}
	if _, err := cl.cs.NetworkingV1().NetworkPolicies(ns).Create(ctx, deny, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(t.TempDir(), "run.jsonl")
	start := time.Now()
	out, stderr, code := kpRunCLI(ctx, "run", "--platform", "kube", "--kubeconfig", cl.kubeconfig, "-n", ns, "--uuid", runID,
		"--network", "multus-e2e/e2e-bridge", "--pod-annotations", "k8s.v1.cni.cncf.io/networks=multus-e2e/e2e-macvlan",
		"--driver", "native", "--profile", "TCP_RR", "--path", "pod-pod-cross-node", "--duration", "2s", "--samples", "2",
		"--results", results, "-o", "table")
	t.Logf("cnperf exit %d in %.0fs, stderr:\n%s\nstdout:\n%s", code, time.Since(start).Seconds(), stderr, out)
	if code != exit.OK {
		t.Fatalf("cnperf exited %d", code)
	}
	runs, _, err := runfile.ReadWarnings(results)
	if err != nil || len(runs) != 1 || len(runs[0].Results) != 1 {
		t.Fatalf("results file: %v (%d runs)", err, len(runs))
	}
	r := runs[0].Results[0]
	if r.Failed() || r.Summary.SamplesFailed > 0 {
		t.Errorf("failed (%q, %d samples failed): the policy was applied on the secondary network?", r.Error, r.Summary.SamplesFailed)
	}
	a := r.Placement.Attachment
	if a == nil || a.Network != "multus-e2e/e2e-bridge" || a.Interface != "net2" {
		t.Fatalf("attachment %+v: want multus-e2e/e2e-bridge on net2 (net1 is the pods' own macvlan network)", a)
	}
	if got := strings.Join(a.PoliciesNotApplied, " "); got != ns+"/deny-ingress" {
		t.Errorf("policies not applied %q, want %s/deny-ingress", got, ns)
	}
	if !text.ContainsFolded(out, "+net: NetworkPolicy "+ns+"/deny-ingress selects the measured pods but does not apply on a secondary network") {
		t.Errorf("the table does not say the policy does not apply")
	}
}

// snNamespace creates the test's namespace (prefix and a random suffix) and, at cleanup,
// deletes it and checks that it is gone within 2 min and, with checkLeftovers, that nothing
// labelled with the run runID is left.
func snNamespace(ctx context.Context, t *testing.T, cl kpCluster, prefix, runID string, checkLeftovers bool) string {
	t.Helper()
	ns := kpNamespace(prefix)
	if _, err := cl.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cl.cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
		if !waitFor(2*time.Minute, func() bool {
			_, err := cl.cs.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{})
			return err != nil
		}) {
			t.Errorf("namespace %s still there 2 min after its deletion", ns)
		}
		if !checkLeftovers {
			return
		}
		if left := kpLeftovers(context.Background(), t, cl.cs, runID); len(left) > 0 {
			t.Errorf("left behind: %v", left)
		}
	})
	return ns
}

// snMacvlanIPAM is the --macvlan-ipam of the macvlan tests: whereabouts on 10.127.0.0/24 (apart
// from the harness's own NADs), with the configuration_path of the harness's e2e-macvlan.
func snMacvlanIPAM(ctx context.Context, t *testing.T, cl kpCluster) (ipamJSON []byte, subnet *net.IPNet) {
	t.Helper()
	raw, err := cl.cs.CoreV1().RESTClient().Get().AbsPath("/apis/k8s.cni.cncf.io/v1/namespaces/multus-e2e/network-attachment-definitions/e2e-macvlan").DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var nad struct {
		Spec struct{ Config string } `json:"spec"`
	}
	var conf struct {
		IPAM map[string]any `json:"ipam"`
	}
	if err := json.Unmarshal(raw, &nad); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(nad.Spec.Config), &conf); err != nil {
		t.Fatal(err)
	}
	const cidr = "10.127.0.0/24"
	_, subnet, _ = net.ParseCIDR(cidr)
	ipam := map[string]any{"type": "whereabouts", "range": cidr}
	if p, ok := conf.IPAM["configuration_path"]; ok {
		ipam["configuration_path"] = p
	}
	ipamJSON, _ = json.Marshal(ipam)
	return ipamJSON, subnet
}
