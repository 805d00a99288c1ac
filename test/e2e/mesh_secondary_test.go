//go:build e2e

// `cnperf mesh` on a secondary network (issue 30): on a cluster with Multus (make e2e MULTUS=1:
// multus-e2e/e2e-bridge and multus-e2e/e2e-macvlan, test/e2e/harness/multus.sh) the mesh and
// all-to-one measure TCP_RR between the agents' addresses on the attachment, cross node and
// (all-to-one) same node, with the pod network's matrix beside it in the same run; k8s-netperf's
// --macvlan creates its definition in the mesh's namespace and deletes it afterwards.
package e2e

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/google/uuid"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

// msCheckMatrices checks a mesh run on the pod network and nad: one matrix each, every cell
// measured; the pod cells have no attachment, nad's dial the server's address on it (both
// addresses in its subnet), name it, its CNI plugin and MTU, and are pod-to-pod paths with the
// network set. It returns the paths nad's cells took.
func msCheckMatrices(t *testing.T, run *api.Run, nad snNAD, wantMatrices int) map[api.Path]int {
	t.Helper()
	if run.Mesh == nil || len(run.Mesh.Matrices) != wantMatrices {
		t.Fatalf("mesh section %+v: want %d matrices (pod and %s)", run.Mesh, wantMatrices, nad.network)
	}
	paths := map[api.Path]int{}
	for _, mat := range run.Mesh.Matrices {
		onNAD := mat.Network == nad.network
		if !onNAD && mat.Network != "pod" {
			t.Errorf("a matrix on network %q", mat.Network)
			continue
		}
		if a := mat.Attachment; onNAD != (a != nil) || onNAD && (a.Network != nad.network || a.Type != nad.typ || a.MTUBytes != 1500) {
			t.Errorf("%s matrix: attachment %+v, want %s (%s, MTU 1500) on the secondary network only", mat.Network, a, nad.network, nad.typ)
		}
		for _, c := range mat.Cells {
			r := run.Results[c.Result]
			label := mat.Network + " " + c.Client + "→" + c.Server
			if c.Error != "" || c.Value == nil {
				t.Errorf("%s: %q", label, c.Error)
				continue
			}
			a := r.Placement.Attachment
			if !onNAD {
				if a != nil || r.Params.Network != "" {
					t.Errorf("%s: a pod-network cell with attachment %+v, network %q", label, a, r.Params.Network)
				}
				continue
			}
			paths[r.Path]++
			if a == nil || r.Params.Network != nad.network || a.Network != nad.network || a.Interface == "" {
				t.Errorf("%s: network %q, attachment %+v", label, r.Params.Network, a)
				continue
			}
			for _, ip := range []string{a.ServerIP, a.ClientIP} {
				if !nad.subnet.Contains(net.ParseIP(ip)) {
					t.Errorf("%s: address %q is not in %s's subnet %s", label, ip, nad.network, nad.subnet)
				}
			}
			if r.Placement.Target != a.ServerIP || a.ServerIP == a.ClientIP && c.Client != c.Server {
				t.Errorf("%s: dialled %s, not the server's address on %s (%s; client %s)", label, r.Placement.Target, nad.network, a.ServerIP, a.ClientIP)
			}
			if want := api.PathPodPodCrossNode; c.Client == c.Server {
				if r.Path != api.PathPodPodSameNode {
					t.Errorf("%s: path %s, want %s", label, r.Path, api.PathPodPodSameNode)
				}
			} else if r.Path != want {
				t.Errorf("%s: path %s, want %s", label, r.Path, want)
			}
		}
	}
	return paths
}

// TestMeshSecondaryNetworks: on each of the harness's definitions, the mesh of the first two
// nodes (cross node) and all-to-one on the first (same node and cross node), TCP_RR, each run
// with the pod network's matrix beside the attachment's.
func TestMeshSecondaryNetworks(t *testing.T) {
	cl := kpClusterFromEnv(t)
	ctx := context.Background()
	nads := snNeedMultus(ctx, t, cl)
	kc, nodes := meshCluster(t)
	two := nodes[0] + "," + nodes[1]
	for _, nad := range nads {
		t.Run(nad.typ, func(t *testing.T) {
			run, err := runMesh(t, kc, "--nodes", two, "--network", "pod,"+nad.network, "--profile", "TCP_RR", "--duration", "2s")
			if err != nil {
				t.Fatalf("cnperf mesh: %v", err)
			}
			if paths := msCheckMatrices(t, run, nad, 2); paths[api.PathPodPodCrossNode] != 2 {
				t.Errorf("mesh on %s: paths %v, want 2 cross-node cells", nad.network, paths)
			}
			run, err = runMesh(t, kc, "--nodes", two, "--all-to-one", nodes[0], "--network", "pod,"+nad.network, "--profile", "TCP_RR", "--duration", "2s")
			if err != nil {
				t.Fatalf("cnperf mesh --all-to-one: %v", err)
			}
			if paths := msCheckMatrices(t, run, nad, 2); paths[api.PathPodPodSameNode] != 1 || paths[api.PathPodPodCrossNode] != 1 {
				t.Errorf("all-to-one on %s: paths %v, want one same-node and one cross-node cell", nad.network, paths)
			}
		})
	}
}

// TestMeshMacvlanFlag: k8s-netperf's --macvlan MASTER on the mesh: the definition it creates
// (macvlan-netperf) in the mesh's namespace (an existing one, so the definition must be deleted
// by name), the mesh measured on it, the definition deleted and whereabouts' addresses released
// afterwards. The range and configuration_path are TestMacvlanFlag's (--macvlan-ipam).
func TestMeshMacvlanFlag(t *testing.T) {
	cl := kpClusterFromEnv(t)
	ctx := context.Background()
	snNeedMultus(ctx, t, cl)
	kc, nodes := meshCluster(t)
	ipamJSON, subnet := snMacvlanIPAM(ctx, t, cl)
	ns := snNamespace(ctx, t, cl, "multus-mesh-macvlan", uuid.NewString(), false)
	run, err := runMesh(t, kc, "--namespace", ns, "--nodes", nodes[0]+","+nodes[1], "--macvlan", "eth0", "--macvlan-ipam", string(ipamJSON),
		"--profile", "TCP_RR", "--duration", "2s")
	if err != nil {
		t.Fatalf("cnperf mesh --macvlan: %v", err)
	}
	network := ns + "/macvlan-netperf"
	if paths := msCheckMatrices(t, run, snNAD{network: network, typ: "macvlan", subnet: subnet}, 1); paths[api.PathPodPodCrossNode] != 2 {
		t.Errorf("paths %v, want 2 cross-node cells", paths)
	}
	if m := run.Mesh.Matrices[0]; m.Attachment == nil || m.Attachment.Master != "eth0" {
		t.Errorf("matrix attachment %+v: want master eth0", m.Attachment)
	}
	if _, err := cl.cs.CoreV1().RESTClient().Get().AbsPath("/apis/k8s.cni.cncf.io/v1/namespaces", ns, "network-attachment-definitions", "macvlan-netperf").DoRaw(ctx); err == nil {
		t.Errorf("NetworkAttachmentDefinition %s is left after the mesh", network)
	}
	if left := snIPAMState(ctx, t, cl, subnet); len(left) > 0 {
		t.Errorf("whereabouts still holds addresses of %s: %v", subnet, strings.Join(left, "; "))
	}
}
