package clusterinfo

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/version"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes/fake"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

func ds(ns, name string, images ...string) Workload {
	return Workload{Kind: "DaemonSet", Namespace: ns, Name: name, Images: images}
}

func TestDetectCNI(t *testing.T) {
	tests := []struct {
		name      string
		workloads []Workload
		ifaces    []string
		want      CNI
	}{
		{"calico", []Workload{ds("kube-system", "kube-proxy", "registry.k8s.io/kube-proxy:v1.34.4"), ds("calico-system", "calico-node", "docker.io/calico/node:v3.28.1")}, nil,
			CNI{Name: "Calico", Version: "v3.28.1", Evidence: "DaemonSet calico-system/calico-node"}},
		{"canal is not calico or flannel", []Workload{ds("kube-system", "canal", "docker.io/calico/node:v3.27.0", "docker.io/flannel/flannel:v0.24.0")}, nil,
			CNI{Name: "Canal", Version: "v3.27.0", Evidence: "DaemonSet kube-system/canal"}},
		{"cilium", []Workload{ds("kube-system", "cilium", "quay.io/cilium/cilium:v1.16.3@sha256:abcd"), ds("kube-system", "cilium-envoy", "quay.io/cilium/cilium-envoy:v1.29")}, nil,
			CNI{Name: "Cilium", Version: "v1.16.3", Evidence: "DaemonSet kube-system/cilium"}},
		{"flannel", []Workload{ds("kube-flannel", "kube-flannel-ds", "docker.io/flannel/flannel:v0.25.1")}, nil,
			CNI{Name: "Flannel", Version: "v0.25.1", Evidence: "DaemonSet kube-flannel/kube-flannel-ds"}},
		{"ovn-kubernetes", []Workload{ds("openshift-ovn-kubernetes", "ovnkube-node", "quay.io/openshift/ovn-kubernetes:4.16")}, nil,
			CNI{Name: "OVN-Kubernetes", Version: "4.16", Evidence: "DaemonSet openshift-ovn-kubernetes/ovnkube-node"}},
		{"kindnet", []Workload{ds("kube-system", "kindnet", "docker.io/kindest/kindnetd:v20240813-c6f155d6")}, nil,
			CNI{Name: "kindnet", Version: "v20240813-c6f155d6", Evidence: "DaemonSet kube-system/kindnet"}},
		{"weave", []Workload{ds("kube-system", "weave-net", "weaveworks/weave-kube:2.8.1", "weaveworks/weave-npc:2.8.1")}, nil,
			CNI{Name: "Weave", Version: "2.8.1", Evidence: "DaemonSet kube-system/weave-net"}},
		{"antrea", []Workload{ds("kube-system", "antrea-agent", "antrea/antrea-agent-ubuntu:v2.1.0")}, nil,
			CNI{Name: "Antrea", Version: "v2.1.0", Evidence: "DaemonSet kube-system/antrea-agent"}},
		{"kube-router", []Workload{ds("kube-system", "kube-router", "docker.io/cloudnativelabs/kube-router:v2.2.1")}, nil,
			CNI{Name: "kube-router", Version: "v2.2.1", Evidence: "DaemonSet kube-system/kube-router"}},
		{"a registry port is not a tag", []Workload{ds("kube-system", "calico-node", "registry.local:5000/calico/node")}, nil,
			CNI{Name: "Calico", Version: "", Evidence: "DaemonSet kube-system/calico-node"}},
		{"plain bridge from node interfaces", nil, []string{"cnpe2e-v1", "cni0", "eth0", "lo", "veth12ab"},
			CNI{Name: "bridge", Evidence: "node interface cni0"}},
		{"flannel from node interfaces", nil, []string{"cni0", "eth0", "flannel.1"},
			CNI{Name: "Flannel", Evidence: "node interface flannel.1"}},
		{"nothing known", []Workload{ds("kube-system", "kube-proxy", "registry.k8s.io/kube-proxy:v1.34.4")}, []string{"eth0", "lo"},
			CNI{Name: "unknown"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DetectCNI(tt.workloads, tt.ifaces); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestModeFromConfig(t *testing.T) {
	tests := []struct {
		conf string
		mode string
		ok   bool
	}{
		{"apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: ipvs\n", "ipvs", true},
		{"apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: \"\"\n", "iptables", true},
		{"kind: KubeProxyConfiguration\nipvs:\n  mode: rr\nmode: nftables\n", "nftables", true},
		{"kind: KubeProxyConfiguration\nclusterCIDR: 10.244.0.0/16\n", "iptables", true},
		{"something else", "", false},
	}
	for _, tt := range tests {
		mode, ok := ModeFromConfig(tt.conf)
		if mode != tt.mode || ok != tt.ok {
			t.Errorf("%q: got %q %v, want %q %v", tt.conf, mode, ok, tt.mode, tt.ok)
		}
	}
}

func TestCloudOf(t *testing.T) {
	mk := func(ids ...string) []corev1.Node {
		var out []corev1.Node
		for _, id := range ids {
			out = append(out, corev1.Node{Spec: corev1.NodeSpec{ProviderID: id}})
		}
		return out
	}
	tests := map[string][]corev1.Node{
		"aws":     mk("aws:///us-west-2a/i-0abc"),
		"gcp":     mk("", "gce://proj/us-central1-a/node-1"),
		"azure":   mk("azure:///subscriptions/x/resourceGroups/y"),
		"kind":    mk("kind://docker/kind/kind-worker"),
		"none":    mk("", ""),
		"unknown": mk("i-123"),
		"acme":    mk("acme://rack-1/n1"),
	}
	for want, nodes := range tests {
		if got := cloudOf(nodes); got != want {
			t.Errorf("%v: got %q, want %q", nodes, got, want)
		}
	}
}

func TestCollect(t *testing.T) {
	node := func(name, zone string) *corev1.Node {
		return &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"topology.kubernetes.io/zone": zone, "node.kubernetes.io/instance-type": "m5.large"}},
			Spec:       corev1.NodeSpec{ProviderID: "aws:///" + zone + "/i-" + name},
			Status: corev1.NodeStatus{
				Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}},
				NodeInfo: corev1.NodeSystemInfo{OSImage: "Debian GNU/Linux 12 (bookworm)", KernelVersion: "6.1.0-26-cloud-amd64",
					Architecture: "amd64", ContainerRuntimeVersion: "containerd://1.7.22", KubeletVersion: "v1.34.4"},
			},
		}
	}
	objs := []runtime.Object{
		node("node1", "us-west-2a"), node("node2", "us-west-2b"), node("node3", "us-west-2a"),
		&appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "cilium", Namespace: "kube-system"},
			Spec: appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Image: "quay.io/cilium/cilium:v1.16.3"}}}}}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kube-proxy", Namespace: "kube-system"},
			Data: map[string]string{"config.conf": "kind: KubeProxyConfiguration\nmode: ipvs\n"}},
	}
	cs := fake.NewClientset(objs...)
	cs.Discovery().(*fakediscovery.FakeDiscovery).FakedServerVersion = &version.Info{GitVersion: "v1.34.4"}
	// The exec API needs a kubelet; the pod's answer stands in for `cat` run in a real pod.
	podExec := func(_ context.Context, argv []string) (string, error) {
		if strings.Join(argv, " ") != "cat /sys/class/net/eth0/mtu" {
			return "", errors.New("unexpected command")
		}
		return "8951\n", nil
	}
	cd, err := Collect(context.Background(), Input{Client: cs, Nodes: []string{"node2", "node1"}, PodExec: podExec, IPFamily: "ipv4"})
	if err != nil {
		t.Fatal(err)
	}
	if cd.KubernetesVersion != "v1.34.4" || cd.NodeCount != 3 || cd.CNI != "Cilium" || cd.CNIVersion != "v1.16.3" ||
		cd.KubeProxyMode != "ipvs" || cd.PodMTUBytes != 8951 || cd.Cloud != "aws" || cd.IPFamily != "ipv4" {
		t.Errorf("details = %+v", cd)
	}
	if len(cd.Nodes) != 2 || cd.Nodes[0].Name != "node2" || cd.Nodes[0].Zone != "us-west-2b" || cd.Nodes[0].InstanceType != "m5.large" ||
		cd.Nodes[0].Kernel != "6.1.0-26-cloud-amd64" || cd.Nodes[0].ContainerRuntime != "containerd://1.7.22" || cd.Nodes[0].Arch != "amd64" {
		t.Errorf("nodes = %+v", cd.Nodes)
	}
}

// readNode reads a node object captured with `kubectl get node NAME -o json` from the e2e
// cluster (docs/e2e.md) running the CNI the file is named after.
func readNode(t *testing.T, file string) corev1.Node {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "nodes", file))
	if err != nil {
		t.Fatal(err)
	}
	var n corev1.Node
	if err := json.Unmarshal(raw, &n); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return n
}

func TestCNIFromNodes(t *testing.T) {
	tests := []struct {
		files []string
		want  CNI
		ok    bool
	}{
		{[]string{"flannel-vxlan-node1.json", "flannel-vxlan-node2.json"},
			CNI{Name: "Flannel", Mode: "vxlan", Evidence: "node node1 annotation flannel.alpha.coreos.com/backend-type"}, true},
		{[]string{"flannel-host-gw-node2.json"},
			CNI{Name: "Flannel", Mode: "host-gw", Evidence: "node node2 annotation flannel.alpha.coreos.com/backend-type"}, true},
		{[]string{"calico-vxlan-node1.json"},
			CNI{Name: "Calico", Evidence: "node node1 annotation projectcalico.org/IPv4VXLANTunnelAddr"}, true},
		{[]string{"bridge-node1.json"}, CNI{}, false},
		{nil, CNI{}, false},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.files, ","), func(t *testing.T) {
			var nodes []corev1.Node
			for _, f := range tt.files {
				nodes = append(nodes, readNode(t, f))
			}
			got, ok := CNIFromNodes(nodes)
			if got != tt.want || ok != tt.ok {
				t.Errorf("got %+v %v, want %+v %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestMergeNodeCNI(t *testing.T) {
	flannel := CNI{Name: "Flannel", Mode: "host-gw", Evidence: "node node1 annotation flannel.alpha.coreos.com/backend-type"}
	tests := []struct {
		name     string
		detected CNI
		want     CNI
	}{
		{"flannel DaemonSet keeps its version and gains the mode",
			CNI{Name: "Flannel", Version: "v0.28.10", Evidence: "DaemonSet kube-flannel/kube-flannel-ds"},
			CNI{Name: "Flannel", Version: "v0.28.10", Mode: "host-gw", Evidence: "DaemonSet kube-flannel/kube-flannel-ds"}},
		{"canal carries flannel's mode",
			CNI{Name: "Canal", Version: "v3.27.0", Evidence: "DaemonSet kube-system/canal"},
			CNI{Name: "Canal", Version: "v3.27.0", Mode: "host-gw", Evidence: "DaemonSet kube-system/canal"}},
		{"host-gw's cni0 is not a plain bridge", CNI{Name: "bridge", Evidence: "node interface cni0"}, flannel},
		{"nothing else found", CNI{Name: "unknown"}, flannel},
		{"another CNI's workload wins over stale annotations",
			CNI{Name: "Cilium", Version: "v1.15.19", Evidence: "DaemonSet kube-system/cilium"},
			CNI{Name: "Cilium", Version: "v1.15.19", Evidence: "DaemonSet kube-system/cilium"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mergeNodeCNI(tt.detected, flannel); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestCollectFlannelProcess is the e2e cluster with CNI=flannel CNI_MODE=host-gw: flanneld runs
// as a process on each node (no DaemonSet, no image), the node interfaces show only cni0, and
// the nodes (captured from that cluster) carry flanneld's annotations.
func TestCollectFlannelProcess(t *testing.T) {
	n1, n2 := readNode(t, "flannel-host-gw-node1.json"), readNode(t, "flannel-host-gw-node2.json")
	cs := fake.NewClientset(&n1, &n2)
	hostExec := func(_ context.Context, argv []string) (string, error) {
		if strings.Join(argv, " ") == "ls /sys/class/net" {
			// node1's sysfs at bring-up listed eth0 and lo; flannel's bridge cni0 comes with the
			// first pod, and alone it looks like the plain bridge plugin
			return "cni0\neth0\nlo\n", nil
		}
		return "", errors.New("no kube-proxy answer here")
	}
	cd, err := Collect(context.Background(), Input{Client: cs, Nodes: []string{"node1"}, HostExec: hostExec})
	if err != nil {
		t.Fatal(err)
	}
	if cd.CNI != "Flannel" || cd.CNIMode != "host-gw" || cd.CNIVersion != "" {
		t.Errorf("CNI = %q %q mode %q, want Flannel, no version, host-gw", cd.CNI, cd.CNIVersion, cd.CNIMode)
	}
}

// readCalico reads an object of the e2e cluster with CNI=calico as the API server returned it
// (`kubectl get ippools.crd.projectcalico.org -o json` and friends, docs/e2e.md).
func readCalico(t *testing.T, file string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "calico", file))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func TestCalicoFromObjects(t *testing.T) {
	pools, felix, ci := readCalico(t, "ippools.json"), readCalico(t, "felixconfigurations.json"), readCalico(t, "clusterinformation-default.json")
	bpf := []byte(`{"items":[{"metadata":{"name":"node.node1"},"spec":{"bpfEnabled":false}},{"metadata":{"name":"default"},"spec":{"bpfEnabled":true,"wireguardEnabled":true}}]}`)
	nft := []byte(`{"items":[{"metadata":{"name":"default"},"spec":{"iptablesBackend":"NFT"}}]}`)
	// the FelixConfiguration fields of projectcalico/api (wireguardEnabledV6,
	// wireguardHostEncryptionEnabled), as `kubectl patch felixconfiguration default` sets them
	wgV6 := []byte(`{"items":[{"metadata":{"name":"default"},"spec":{"wireguardEnabledV6":true}}]}`)
	wgHost := []byte(`{"items":[{"metadata":{"name":"default"},"spec":{"wireguardEnabled":true,"wireguardHostEncryptionEnabled":true}}]}`)
	hostOnly := []byte(`{"items":[{"metadata":{"name":"default"},"spec":{"wireguardHostEncryptionEnabled":true}}]}`)
	tests := []struct {
		name                      string
		version                   string
		pools, felix, clusterInfo []byte
		want                      api.CalicoDetails
		mode, encryption          string
		node                      bool
	}{
		// calico-node run as a process (no image): the version is ClusterInformation's
		{"e2e cluster, CNI=calico", "", pools, felix, ci,
			api.CalicoDetails{Product: "calico", Version: "v3.28.4-11-ga0db560f0520", Encapsulation: "VXLAN", Dataplane: "iptables",
				IPFamily: "ipv4", ClusterType: "k8s,kdd"}, "VXLAN, iptables", "none", false},
		{"an image's tag wins over ClusterInformation", "v3.28.5", pools, felix, ci,
			api.CalicoDetails{Product: "calico", Version: "v3.28.5", Encapsulation: "VXLAN", Dataplane: "iptables",
				IPFamily: "ipv4", ClusterType: "k8s,kdd"}, "VXLAN, iptables", "none", false},
		{"default FelixConfiguration in BPF mode", "", nil, bpf, nil,
			api.CalicoDetails{Product: "calico", Dataplane: "bpf", WireguardEnabled: true}, "bpf, WireGuard", "wireguard", false},
		{"WireGuard for IPv6 only", "", nil, wgV6, nil,
			api.CalicoDetails{Product: "calico", Dataplane: "iptables", WireguardEnabledV6: true}, "iptables, WireGuard", "wireguard", false},
		{"WireGuard with host encryption", "", nil, wgHost, nil,
			api.CalicoDetails{Product: "calico", Dataplane: "iptables", WireguardEnabled: true, WireguardHostEncryptionEnabled: true},
			"iptables, WireGuard incl. node traffic", "wireguard", true},
		{"host encryption without WireGuard", "", nil, hostOnly, nil,
			api.CalicoDetails{Product: "calico", Dataplane: "iptables", WireguardHostEncryptionEnabled: true}, "iptables", "none", false},
		{"iptables backend set", "", nil, nft, nil, api.CalicoDetails{Product: "calico", Dataplane: "iptables-nft"}, "iptables-nft", "none", false},
		{"nothing readable", "", nil, nil, nil, api.CalicoDetails{Product: "calico"}, "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CalicoFromObjects(tt.version, tt.pools, tt.felix, tt.clusterInfo)
			if *got != tt.want {
				t.Errorf("got  %+v\nwant %+v", *got, tt.want)
			}
			if m := CalicoMode(got); m != tt.mode {
				t.Errorf("mode %q, want %q", m, tt.mode)
			}
			if e, node := CalicoEncryption(got); e != tt.encryption || node != tt.node {
				t.Errorf("encryption %q node %v, want %q %v", e, node, tt.encryption, tt.node)
			}
		})
	}
}

// TestIPFamilySpellings: IPFamily names the families as Calico's pools and --ip-family do
// ("dual"), ClusterFamily as ClusterDetails.IPFamily does ("dual-stack"); the others are the same.
func TestIPFamilySpellings(t *testing.T) {
	for _, tt := range []struct {
		v4, v6          bool
		family, cluster string
	}{
		{true, true, "dual", "dual-stack"},
		{false, true, "ipv6", "ipv6"},
		{true, false, "ipv4", "ipv4"},
		{false, false, "", ""},
	} {
		f := IPFamily(tt.v4, tt.v6)
		if c := ClusterFamily(f); f != tt.family || c != tt.cluster {
			t.Errorf("v4 %v, v6 %v: IPFamily %q, ClusterFamily %q; want %q, %q", tt.v4, tt.v6, f, c, tt.family, tt.cluster)
		}
	}
}
