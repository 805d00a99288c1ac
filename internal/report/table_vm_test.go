package report

import (
	"strings"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

// TestVMNotes: a case with VM endpoints is marked "+vm" in its path cell and its footnote says
// which endpoints, the binding and vCPUs, and that emulated VMs measure the mechanics only.
func TestVMNotes(t *testing.T) {
	vm := &api.VM{Name: "v", Binding: "masquerade", VCPUs: 1, Emulated: true}
	results := []api.Result{
		{Path: api.PathPodPodCrossNode, Placement: &api.Placement{Client: api.Endpoint{Role: "client"}, Server: api.Endpoint{Role: "server", VM: vm}}},
		{Path: api.PathPodPodCrossNode, Placement: &api.Placement{Client: api.Endpoint{Role: "client", VM: vm}, Server: api.Endpoint{Role: "server", VM: vm}}},
		{Path: api.PathPodPodSameNode, Placement: &api.Placement{}},
	}
	if got := pathCell(&results[0], false); got != "pod-pod-cross-node+vm" {
		t.Errorf("path cell %q", got)
	}
	if got := pathCell(&results[2], false); got != "pod-pod-same-node" {
		t.Errorf("path cell of a pod case %q", got)
	}
	got := strings.Join(vmNotes(results), "\n")
	want := "+vm: the server is a KubeVirt VM (masquerade binding, 1 vCPU)\n" +
		"+vm: the client and server are KubeVirt VMs (masquerade binding, 1 vCPU)\n" +
		"+vm: the VMs ran in QEMU's software emulation (TCG, no KVM): the figures measure the mechanics, not VM performance on hardware"
	if got != want {
		t.Errorf("notes:\n%s\nwant:\n%s", got, want)
	}
	if n := vmNotes(results[2:]); len(n) != 0 {
		t.Errorf("notes without VMs: %q", n)
	}
}
