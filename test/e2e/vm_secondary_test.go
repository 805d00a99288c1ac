//go:build e2e

package e2e

import (
	"cmp"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/runfile"
)

// TestKubeVirtVMsSecondaryNetwork: VMs on a secondary network, k8s-netperf's `--vm --bridge
// BRIDGE` with BRIDGE the Linux bridge under the harness's NAD multus-e2e/e2e-bridge (mbr0, one
// L2 segment across the nodes): the run creates br-netperf (no IPAM) in its namespace, the VMs
// set bridgeNetwork.json's static addresses, and TCP_STREAM and TCP_RR (native, 2 s, one sample)
// VM ↔ VM across nodes pass, the client dialling the server VM's address on the network, the
// result naming the network, both addresses and the launcher pod's interface; afterwards no VMI,
// launcher pod or br-netperf is left. pod → VM on e2e-bridge itself (whereabouts IPAM: the
// guest gets the launcher pod's address by DHCP) needs the kernel's dummy link type and skips
// where it is missing. It skips without KubeVirt or Multus.
func TestKubeVirtVMsSecondaryNetwork(t *testing.T) {
	cl := kpClusterFromEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	if kv := kube.CheckKubeVirt(ctx, cl.cs); kv.Missing != "" {
		t.Skipf("%s; make e2e KUBEVIRT=1 MULTUS=1 installs it (CI's cluster has neither)", kv.Missing)
	}
	nads := snNeedMultus(ctx, t, cl)
	bridge := vmBridgeOf(ctx, t, cl, nads[0].network)
	image := cmp.Or(os.Getenv("CNPERF_E2E_VM_IMAGE"), vmGuestImage)
	for _, tc := range []struct {
		name, vm string
		network  []string // the network flags
		static   bool     // the VMs set bridgeNetwork.json's addresses
	}{
		{"VM-VM/bridge " + bridge, "both", []string{"--bridge", bridge}, true},
		{"pod-VM/" + nads[0].network, "server", []string{"--network", nads[0].network}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.static {
				vmNeedDummy(t) // a definition with IPAM: virt-handler moves the pod's address to a dummy link
			}
			runID := uuid.NewString()
			ns := kpNamespace("cnperf-e2e-vm-net")
			results := filepath.Join(t.TempDir(), "run.jsonl")
			start := time.Now()
			args := append([]string{"run", "--platform", "kube", "--kubeconfig", cl.kubeconfig, "-n", ns, "--uuid", runID,
				"--image", agentImage(), "--vm=" + tc.vm, "--vm-image", image, "--vm-start-timeout", "8m",
				"--driver", "native", "--profile", "TCP_STREAM,TCP_RR", "--path", string(api.PathPodPodCrossNode),
				"--duration", "2s", "--samples", "1", "--results", results, "-o", "table"}, tc.network...)
			out, stderr, code := kpRunCLI(ctx, args...)
			t.Logf("cnperf --vm=%s %s: exit %d in %.0fs, stderr:\n%s\nstdout:\n%s", tc.vm, strings.Join(tc.network, " "), code,
				time.Since(start).Seconds(), stderr, out)
			if code != exit.OK {
				t.Fatalf("cnperf exited %d", code)
			}
			runs, _, err := runfile.ReadWarnings(results)
			if err != nil || len(runs) != 1 || len(runs[0].Results) != 2 {
				t.Fatalf("results file: %v (%d runs)", err, len(runs))
			}
			network := tc.network[1]
			if tc.static {
				network = ns + "/" + kube.BridgeDefinitionName
			}
			for _, r := range runs[0].Results {
				vmCheckSecondary(t, r, tc.vm, network, tc.static)
			}
			vmNetNothingLeft(ctx, t, cl, runID, ns)
		})
	}
}

// vmBridgeOf is the Linux bridge of the harness's bridge NAD (its configuration's "bridge").
func vmBridgeOf(ctx context.Context, t *testing.T, cl kpCluster, network string) string {
	t.Helper()
	ns, name, _ := strings.Cut(network, "/")
	raw, err := (kube.RESTNADs{CS: cl.cs}).Get(ctx, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	var nad struct {
		Spec struct{ Config string } `json:"spec"`
	}
	var conf struct {
		Type, Bridge string
	}
	if err := json.Unmarshal(raw, &nad); err != nil || json.Unmarshal([]byte(nad.Spec.Config), &conf) != nil || conf.Type != "bridge" || conf.Bridge == "" {
		t.Skipf("%s is not a bridge definition naming its bridge (%s): no Linux bridge across the nodes to put VMs on", network, nad.Spec.Config)
	}
	return conf.Bridge
}

// vmCheckSecondary checks one result of a --vm run on a secondary network: it passed, each
// endpoint is a VM as --vm says, the client dialled the server's address on network, and the
// result's attachment names the network and both addresses (bridgeNetwork.json's with static).
func vmCheckSecondary(t *testing.T, r api.Result, vm, network string, static bool) {
	t.Helper()
	label := string(r.Path) + " " + string(r.Profile)
	if r.Failed() || r.Summary.SamplesFailed > 0 {
		t.Errorf("%s: failed (%q, %d samples failed)", label, r.Error, r.Summary.SamplesFailed)
		return
	}
	pl := r.Placement
	if pl == nil || pl.Attachment == nil {
		t.Fatalf("%s: no placement or attachment: %+v", label, pl)
	}
	if (pl.Server.VM != nil) != (vm != "client") || (pl.Client.VM != nil) != (vm != "server") {
		t.Errorf("%s: server VM %+v, client VM %+v, want --vm=%s", label, pl.Server.VM, pl.Client.VM, vm)
	}
	if pl.Client.Node == "" || pl.Client.Node == pl.Server.Node {
		t.Errorf("%s: client on %q, server on %q: want two nodes", label, pl.Client.Node, pl.Server.Node)
	}
	a := pl.Attachment
	if a.Network != network || a.Type != "bridge" || a.Interface == "" || pl.Target != a.ServerIP || a.ServerIP == pl.Server.PodIP {
		t.Errorf("%s: attachment %+v, target %s (the server's pod-network address %s), want %s's, dialled at its server address",
			label, *a, pl.Target, pl.Server.PodIP, network)
	}
	if static && (a.ServerIP != "10.10.10.12" || a.ClientIP != "10.10.10.14") {
		t.Errorf("%s: addresses %s (server), %s (client), want bridgeNetwork.json's 10.10.10.12 and 10.10.10.14", label, a.ServerIP, a.ClientIP)
	}
	vmCheckFigure(t, r, label)
}

// vmNetNothingLeft fails when the run left a VMI, a launcher pod in its namespace (not another
// test's: the cluster may be shared), its namespace or its br-netperf definition.
func vmNetNothingLeft(ctx context.Context, t *testing.T, cl kpCluster, runID, ns string) {
	t.Helper()
	var left []string
	vmis, err := kube.RESTVMIs{CS: cl.cs}.List(ctx, "", kube.RunSelector(runID))
	if err != nil {
		t.Fatalf("list VMIs: %v", err)
	}
	for _, m := range vmis {
		left = append(left, "VirtualMachineInstance "+m.Namespace+"/"+m.Name)
	}
	pods, err := cl.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		left = append(left, "pod "+p.Namespace+"/"+p.Name)
	}
	if _, err := (kube.RESTNADs{CS: cl.cs}).Get(ctx, ns, kube.BridgeDefinitionName); err == nil {
		left = append(left, "NetworkAttachmentDefinition "+ns+"/"+kube.BridgeDefinitionName)
	}
	if n, err := cl.cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err == nil && n.DeletionTimestamp == nil {
		left = append(left, "namespace "+ns)
	}
	if len(left) > 0 {
		t.Errorf("left after the run: %s", strings.Join(left, ", "))
	}
}
