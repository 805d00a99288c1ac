package kube

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/plan"
)

// node builds a Ready Linux node; opts adjust it.
func node(name, zone string, opts ...func(*corev1.Node)) corev1.Node {
	n := corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{kube.LabelOS: "linux", "kubernetes.io/hostname": name}},
		Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			Addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0." + name[len(name)-1:]}},
			NodeInfo: corev1.NodeSystemInfo{OSImage: "Debian GNU/Linux 12", KernelVersion: "6.1.0", Architecture: "amd64",
				ContainerRuntimeVersion: "containerd://1.6.20", KubeletVersion: "v1.34.4"},
		},
	}
	if zone != "" {
		n.Labels[kube.LabelZone] = zone
	}
	for _, o := range opts {
		o(&n)
	}
	return n
}

func tainted(key, value string, effect corev1.TaintEffect) func(*corev1.Node) {
	return func(n *corev1.Node) {
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: key, Value: value, Effect: effect})
	}
}

func labelled(k, v string) func(*corev1.Node) { return func(n *corev1.Node) { n.Labels[k] = v } }

func notReady(n *corev1.Node) { n.Status.Conditions[0].Status = corev1.ConditionFalse }

func cordoned(n *corev1.Node) { n.Spec.Unschedulable = true }

func casesFor(paths ...api.Path) []plan.Case {
	var out []plan.Case
	for i, p := range paths {
		out = append(out, plan.Case{Index: i, Profile: api.TCPStream, Path: p, Driver: "iperf3",
			Params: api.Params{DurationSeconds: 1, Samples: 1, MessageSizeBytes: 1024, Parallel: 1}})
	}
	return out
}

func needsFor(t *testing.T, cases []plan.Case) needs {
	t.Helper()
	routes := make([]route, len(cases))
	for i, c := range cases {
		r, err := routeFor(c, "pod")
		if err != nil {
			t.Fatalf("routeFor(%s): %v", c.Path, err)
		}
		routes[i] = r
	}
	return needsOf(routes, cases)
}

func TestChoosePlacement(t *testing.T) {
	tests := []struct {
		name    string
		nodes   []corev1.Node
		opts    Options
		paths   []api.Path
		server  string
		client  string
		zone    string
		wantErr string
	}{
		{
			name:   "one zone, same node only",
			nodes:  []corev1.Node{node("node1", "zone-a"), node("node2", "zone-a")},
			paths:  []api.Path{api.PathPodPodSameNode},
			server: "node1",
		},
		{
			name:   "one zone, cross node",
			nodes:  []corev1.Node{node("node2", "zone-a"), node("node1", "zone-a")},
			paths:  []api.Path{api.PathPodPodSameNode, api.PathPodPodCrossNode},
			server: "node1", client: "node2",
		},
		{
			name:    "one zone, cross zone is a clear error",
			nodes:   []corev1.Node{node("node1", "zone-a"), node("node2", "zone-a")},
			paths:   []api.Path{api.PathPodPodCrossZone},
			wantErr: `needs nodes in two zones (topology.kubernetes.io/zone), but every usable node is in zone "zone-a"`,
		},
		{
			name:    "no zone labels, cross zone",
			nodes:   []corev1.Node{node("node1", ""), node("node2", "")},
			paths:   []api.Path{api.PathPodPodCrossZone},
			wantErr: "has no topology.kubernetes.io/zone label",
		},
		{
			name:   "two zones: cross-node client stays in the server's zone, cross-zone client in the other",
			nodes:  []corev1.Node{node("node1", "zone-a"), node("node2", "zone-b"), node("node3", "zone-a")},
			paths:  []api.Path{api.PathPodPodCrossNode, api.PathPodPodCrossZone},
			server: "node1", client: "node3", zone: "node2",
		},
		{
			name:   "two zones, only cross zone",
			nodes:  []corev1.Node{node("node1", "zone-a"), node("node2", "zone-b")},
			paths:  []api.Path{api.PathPodPodCrossZone},
			server: "node1", zone: "node2",
		},
		{
			name:   "two zones, the only other node is in the other zone: it serves both",
			nodes:  []corev1.Node{node("node1", "zone-a"), node("node2", "zone-b")},
			paths:  []api.Path{api.PathPodPodCrossNode, api.PathPodPodCrossZone},
			server: "node1", client: "node2", zone: "node2",
		},
		{
			name: "tainted control plane is skipped",
			nodes: []corev1.Node{
				node("cp1", "", labelled(kube.LabelControlPlane, ""), tainted(kube.LabelControlPlane, "", corev1.TaintEffectNoSchedule)),
				node("node1", ""), node("node2", ""),
			},
			paths:  []api.Path{api.PathHostHost},
			server: "node1", client: "node2",
		},
		{
			name:    "tainted second node: cross-node impossible without a toleration",
			nodes:   []corev1.Node{node("node1", ""), node("node2", "", tainted("dedicated", "perf", corev1.TaintEffectNoSchedule))},
			paths:   []api.Path{api.PathPodPodCrossNode},
			wantErr: "need two nodes, but only node1 can run endpoints; not usable: node2: tainted dedicated=perf:NoSchedule (add --tolerations dedicated=perf:NoSchedule)",
		},
		{
			name:   "tainted second node tolerated",
			nodes:  []corev1.Node{node("node1", ""), node("node2", "", tainted("dedicated", "perf", corev1.TaintEffectNoSchedule))},
			opts:   Options{Tolerations: []string{"dedicated=perf:NoSchedule"}},
			paths:  []api.Path{api.PathPodPodCrossNode},
			server: "node1", client: "node2",
		},
		{
			name:   "PreferNoSchedule taints do not exclude",
			nodes:  []corev1.Node{node("node1", ""), node("node2", "", tainted("soft", "", corev1.TaintEffectPreferNoSchedule))},
			paths:  []api.Path{api.PathPodPodCrossNode},
			server: "node1", client: "node2",
		},
		{
			name:   "tolerate everything",
			nodes:  []corev1.Node{node("node1", "", tainted("a", "", corev1.TaintEffectNoExecute)), node("node2", "", tainted("b", "x", corev1.TaintEffectNoSchedule))},
			opts:   Options{Tolerations: []string{"*"}},
			paths:  []api.Path{api.PathPodPodCrossNode},
			server: "node1", client: "node2",
		},
		{
			name:    "not ready and cordoned nodes are not used",
			nodes:   []corev1.Node{node("node1", "", notReady), node("node2", "", cordoned), node("node3", "")},
			paths:   []api.Path{api.PathPodHost},
			wantErr: "only node3 can run endpoints; not usable: node1: not Ready; node2: cordoned (unschedulable)",
		},
		{
			name:    "windows nodes are not used",
			nodes:   []corev1.Node{node("win1", "", labelled(kube.LabelOS, "windows"))},
			paths:   []api.Path{api.PathPodPodSameNode},
			wantErr: "no node can run endpoints",
		},
		{
			name:   "k8s-netperf hints netperf=server|client",
			nodes:  []corev1.Node{node("node1", ""), node("node2", "", labelled("netperf", "client")), node("node3", "", labelled("netperf", "server"))},
			paths:  []api.Path{api.PathPodPodCrossNode},
			server: "node3", client: "node2",
		},
		{
			name:   "netperf=client node is not taken as server",
			nodes:  []corev1.Node{node("node1", "", labelled("netperf", "client")), node("node2", "")},
			paths:  []api.Path{api.PathHostPod},
			server: "node2", client: "node1",
		},
		{
			name:   "pinned nodes win over hints",
			nodes:  []corev1.Node{node("node1", "", labelled("netperf", "server")), node("node2", ""), node("node3", "")},
			opts:   Options{ServerNode: "node3", ClientNode: "node2"},
			paths:  []api.Path{api.PathPodClusterIP},
			server: "node3", client: "node2",
		},
		{
			name:    "pinned node that does not exist",
			nodes:   []corev1.Node{node("node1", ""), node("node2", "")},
			opts:    Options{ServerNode: "nodeX"},
			paths:   []api.Path{api.PathPodPodSameNode},
			wantErr: `--server-node: no node named "nodeX" (nodes: node1, node2)`,
		},
		{
			name:    "pinned tainted node",
			nodes:   []corev1.Node{node("node1", ""), node("node2", "", tainted("k", "", corev1.TaintEffectNoSchedule))},
			opts:    Options{ClientNode: "node2"},
			paths:   []api.Path{api.PathPodPodCrossNode},
			wantErr: `--client-node: node "node2" cannot run endpoints: tainted k:NoSchedule`,
		},
		{
			name:    "pinned client equal to server",
			nodes:   []corev1.Node{node("node1", ""), node("node2", "")},
			opts:    Options{ServerNode: "node1", ClientNode: "node1"},
			paths:   []api.Path{api.PathHostHost},
			wantErr: `--client-node "node1" is also the server node: paths host-host need the client on another node`,
		},
		{
			name:   "node selector",
			nodes:  []corev1.Node{node("node1", ""), node("node2", "", labelled("perf", "yes")), node("node3", "", labelled("perf", "yes"))},
			opts:   Options{NodeSelector: []string{"perf=yes"}},
			paths:  []api.Path{api.PathPodNodePort},
			server: "node2", client: "node3",
		},
		{
			name:   "hostNetwork paths need two nodes",
			nodes:  []corev1.Node{node("node1", ""), node("node2", "")},
			paths:  []api.Path{api.PathHostHost, api.PathPodHost, api.PathHostPod},
			server: "node1", client: "node2",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := tt.opts.parse()
			if err != nil {
				t.Fatal(err)
			}
			np, err := choosePlacement(tt.nodes, s, needsFor(t, casesFor(tt.paths...)))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if np.Server != tt.server || np.Client != tt.client || np.Zone != tt.zone {
				t.Errorf("placement = server %q client %q zone %q, want %q %q %q", np.Server, np.Client, np.Zone, tt.server, tt.client, tt.zone)
			}
		})
	}
}

func TestRouteFor(t *testing.T) {
	tests := []struct {
		path    api.Path
		params  api.Params
		ext     string
		want    route
		wantErr string
	}{
		{path: api.PathPodPodSameNode, want: route{api.NetworkPod, api.NetworkPod, roleServerNode, api.AccessDirect, ""}},
		{path: api.PathPodPodCrossNode, want: route{api.NetworkPod, api.NetworkPod, roleClientNode, api.AccessDirect, ""}},
		{path: api.PathPodPodCrossZone, want: route{api.NetworkPod, api.NetworkPod, roleZoneNode, api.AccessDirect, ""}},
		{path: api.PathHostHost, want: route{api.NetworkHost, api.NetworkHost, roleClientNode, api.AccessDirect, ""}},
		{path: api.PathPodHost, want: route{api.NetworkHost, api.NetworkPod, roleClientNode, api.AccessDirect, ""}},
		{path: api.PathHostPod, want: route{api.NetworkPod, api.NetworkHost, roleClientNode, api.AccessDirect, ""}},
		{path: api.PathPodClusterIP, want: route{api.NetworkPod, api.NetworkPod, roleClientNode, api.AccessClusterIP, ""}},
		{path: api.PathPodHairpin, want: route{api.NetworkPod, api.NetworkPod, roleSelf, api.AccessClusterIP, ""}},
		{path: api.PathPodNodePort, want: route{api.NetworkPod, api.NetworkPod, roleClientNode, api.AccessNodePort, ""}},
		{path: api.PathExternalService, want: route{api.NetworkPod, api.NetworkPod, roleClientNode, api.AccessExternal, ""}},
		{path: api.PathExternalService, ext: "local", want: route{api.NetworkPod, api.NetworkPod, roleLocal, api.AccessExternal, ""}},
		// k8s-netperf's switches on a pod path
		{path: api.PathPodPodCrossNode, params: api.Params{HostNetwork: true}, want: route{api.NetworkHost, api.NetworkHost, roleClientNode, api.AccessDirect, ""}},
		{path: api.PathPodPodSameNode, params: api.Params{HostNetwork: true}, want: route{api.NetworkHost, api.NetworkHost, roleServerNode, api.AccessDirect, ""}},
		{path: api.PathPodPodCrossNode, params: api.Params{Service: true}, want: route{api.NetworkPod, api.NetworkPod, roleClientNode, api.AccessClusterIP, ""}},
		{path: api.PathPodNodePort, params: api.Params{HostNetwork: true}, wantErr: `hostNetwork: true does not apply to path "pod-nodeport" (use host-host, pod-host or host-pod)`},
		{path: api.PathLoopback, wantErr: "--platform local"},
		// a secondary network on the pod-to-pod paths
		{path: api.PathPodPodSameNode, params: api.Params{Network: "multus-e2e/e2e-bridge"},
			want: route{api.NetworkAttachment, api.NetworkAttachment, roleServerNode, api.AccessDirect, "multus-e2e/e2e-bridge"}},
		{path: api.PathPodPodCrossNode, params: api.Params{Network: "multus-e2e/e2e-bridge"},
			want: route{api.NetworkAttachment, api.NetworkAttachment, roleClientNode, api.AccessDirect, "multus-e2e/e2e-bridge"}},
		{path: api.PathPodPodCrossZone, params: api.Params{Network: "ns/mv"},
			want: route{api.NetworkAttachment, api.NetworkAttachment, roleZoneNode, api.AccessDirect, "ns/mv"}},
		{path: api.PathPodClusterIP, params: api.Params{Network: "ns/mv"},
			wantErr: `network ns/mv: path "pod-clusterip" has no secondary network (use pod-pod-same-node, pod-pod-cross-node, pod-pod-cross-zone)`},
		{path: api.PathHostHost, params: api.Params{Network: "ns/mv"}, wantErr: `network ns/mv: path "host-host" has no secondary network`},
		{path: api.PathPodPodCrossNode, params: api.Params{Network: "ns/mv", Service: true}, wantErr: `network ns/mv and service: true exclude each other`},
		{path: api.PathPodPodCrossNode, params: api.Params{Network: "ns/mv", HostNetwork: true}, wantErr: `network ns/mv and hostNetwork: true exclude each other`},
	}
	for _, tt := range tests {
		t.Run(string(tt.path), func(t *testing.T) {
			ext := tt.ext
			if ext == "" {
				ext = "pod"
			}
			got, err := routeFor(plan.Case{Path: tt.path, Params: tt.params}, ext)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("route = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestSchedulable: the one node check of the platform and tiger-bench (which passes no
// tolerations), in its order: Ready, cordon, OS, taints.
func TestSchedulable(t *testing.T) {
	perf := []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "perf", Effect: corev1.TaintEffectNoSchedule}}
	for _, tt := range []struct {
		name  string
		n     corev1.Node
		tols  []corev1.Toleration
		want  kube.NodeBlock
		taint string
	}{
		{"usable", node("n1", ""), nil, kube.NodeUsable, ""},
		{"not ready before cordoned", node("n1", "", notReady, cordoned), nil, kube.NodeNotReady, ""},
		{"cordoned", node("n1", "", cordoned), nil, kube.NodeCordoned, ""},
		{"windows", node("n1", "", labelled(kube.LabelOS, "windows")), nil, kube.NodeNotLinux, ""},
		{"no os label", node("n1", "", func(n *corev1.Node) { delete(n.Labels, kube.LabelOS) }), nil, kube.NodeUsable, ""},
		{"PreferNoSchedule is no bar", node("n1", "", tainted("soft", "", corev1.TaintEffectPreferNoSchedule)), nil, kube.NodeUsable, ""},
		{"NoExecute", node("n1", "", tainted("gone", "", corev1.TaintEffectNoExecute)), nil, kube.NodeTainted, "gone"},
		{"NoSchedule", node("n1", "", tainted("dedicated", "perf", corev1.TaintEffectNoSchedule)), nil, kube.NodeTainted, "dedicated"},
		{"NoSchedule tolerated", node("n1", "", tainted("dedicated", "perf", corev1.TaintEffectNoSchedule)), perf, kube.NodeUsable, ""},
	} {
		got, taint := kube.Schedulable(&tt.n, tt.tols)
		if got != tt.want || (taint == nil) != (tt.taint == "") || (taint != nil && taint.Key != tt.taint) {
			t.Errorf("%s: %v %v, want %v %q", tt.name, got, taint, tt.want, tt.taint)
		}
	}
}
