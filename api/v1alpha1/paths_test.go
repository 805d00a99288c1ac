package v1alpha1

import (
	"slices"
	"testing"
)

func TestPathTable(t *testing.T) {
	seen := map[Path]bool{}
	for _, p := range Paths {
		row, ok := p.Row()
		if !ok || row.Path != p || seen[p] {
			t.Errorf("%s: row %+v ok %v (duplicate %v)", p, row, ok, seen[p])
		}
		seen[p] = true
		if row.Nodes == "" || row.Access == "" || (row.ClientNetwork == "") != (row.Nodes == NodesLocal) {
			t.Errorf("%s: incomplete row %+v", p, row)
		}
	}
	if _, ok := Path("pod-pod-nowhere").Row(); ok || Path("pod-pod-nowhere").Valid() {
		t.Error("an unknown path has a row")
	}
}

func TestAddPath(t *testing.T) {
	before := slices.Clone(Paths)
	remove := AddPath(PathRow{Path: "vm-vm-cross-node", ClientNetwork: "vm", ServerNetwork: "vm", Nodes: NodesCross, Access: AccessDirect})
	if !Path("vm-vm-cross-node").Valid() || Paths[len(Paths)-1] != "vm-vm-cross-node" {
		t.Errorf("after AddPath: Paths %v", Paths)
	}
	remove()
	if Path("vm-vm-cross-node").Valid() || !slices.Equal(Paths, before) {
		t.Errorf("after remove: Paths %v, want %v", Paths, before)
	}
}

func TestEffective(t *testing.T) {
	for _, tc := range []struct {
		path           Path
		params         Params
		client, server Network
		access         Access
	}{
		{PathPodPodCrossNode, Params{}, NetworkPod, NetworkPod, AccessDirect},
		{PathPodPodCrossNode, Params{HostNetwork: true}, NetworkHost, NetworkHost, AccessDirect},
		{PathPodPodSameNode, Params{Service: true}, NetworkPod, NetworkPod, AccessClusterIP},
		{PathPodClusterIP, Params{HostNetwork: true}, NetworkHost, NetworkHost, AccessClusterIP},
		{PathPodHost, Params{HostNetwork: true}, NetworkPod, NetworkHost, AccessDirect}, // does not apply
		{PathPodNodePort, Params{HostNetwork: true, Service: true}, NetworkPod, NetworkPod, AccessNodePort},
		{PathExternalService, Params{Service: true}, NetworkPod, NetworkPod, AccessExternal},
	} {
		row, _ := tc.path.Row()
		got := row.Effective(tc.params)
		if got.ClientNetwork != tc.client || got.ServerNetwork != tc.server || got.Access != tc.access {
			t.Errorf("%s %+v: %s/%s %s, want %s/%s %s", tc.path, tc.params, got.ClientNetwork, got.ServerNetwork, got.Access,
				tc.client, tc.server, tc.access)
		}
	}
}
