package clusterinfo

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// readConfigMap reads a ConfigMap captured from a cluster (kubectl get -o json).
func readConfigMap(t *testing.T, file string) *corev1.ConfigMap {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "configmaps", file))
	if err != nil {
		t.Fatal(err)
	}
	var cm corev1.ConfigMap
	if err := json.Unmarshal(raw, &cm); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return &cm
}

func TestCNIFromCiliumConfig(t *testing.T) {
	// the ConfigMap of the e2e cluster (make e2e-up CNI=cilium)
	for _, tt := range []struct {
		file string
		want CNI
	}{
		{"cilium-config-vxlan.json", CNI{Name: "Cilium", Mode: "tunnel vxlan, eBPF, kube-proxy kept", Evidence: "ConfigMap kube-system/cilium-config",
			Encryption: "none"}},
	} {
		t.Run(tt.file, func(t *testing.T) {
			got, ok := CNIFromCiliumConfig(readConfigMap(t, tt.file))
			if !ok || got != tt.want {
				t.Errorf("got %+v %v, want %+v", got, ok, tt.want)
			}
		})
	}
	// the keys other Cilium versions and installs use
	cm := func(data map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cilium-config", Namespace: "cilium"}, Data: data}
	}
	for _, tt := range []struct {
		name string
		cm   *corev1.ConfigMap
		mode string
		ok   bool
	}{
		{"defaults: tunnel vxlan", cm(map[string]string{"ipam": "cluster-pool"}), "tunnel vxlan, eBPF", true},
		{"geneve, kube-proxy replaced", cm(map[string]string{"routing-mode": "tunnel", "tunnel-protocol": "geneve", "kube-proxy-replacement": "true"}), "tunnel geneve, eBPF, kube-proxy replaced", true},
		{"before 1.14: tunnel key", cm(map[string]string{"tunnel": "vxlan", "kube-proxy-replacement": "strict"}), "tunnel vxlan, eBPF, kube-proxy replaced", true},
		{"before 1.14: tunnel disabled", cm(map[string]string{"tunnel": "disabled", "kube-proxy-replacement": "partial"}), "native routing, eBPF, kube-proxy partly replaced", true},
		{"another ConfigMap", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kube-proxy"}, Data: map[string]string{"tunnel": "vxlan"}}, "", false},
		{"empty", cm(nil), "", false},
		{"nil", nil, "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := CNIFromCiliumConfig(tt.cm)
			if ok != tt.ok || got.Mode != tt.mode || (ok && got.Name != "Cilium") {
				t.Errorf("got %+v %v, want mode %q %v", got, ok, tt.mode, tt.ok)
			}
		})
	}
}

// TestCiliumEncryption reads the encryption from cilium-config as the Helm chart of Cilium
// v1.15.19 writes it (helm template, see testdata/configmaps/README.md) and from keys set by hand.
func TestCiliumEncryption(t *testing.T) {
	for _, tt := range []struct {
		file       string
		encryption string
		node       bool
		mode       string
	}{
		{"cilium-config-vxlan.json", "none", false, "tunnel vxlan, eBPF, kube-proxy kept"},
		{"cilium-config-helm-defaults.json", "none", false, "tunnel vxlan, eBPF, kube-proxy kept"},
		{"cilium-config-helm-wireguard.json", "wireguard", false, "tunnel vxlan, eBPF, kube-proxy kept, WireGuard"},
		{"cilium-config-helm-wireguard-node.json", "wireguard", true, "native routing, eBPF, kube-proxy replaced, WireGuard incl. node traffic"},
		{"cilium-config-helm-ipsec.json", "ipsec", false, "native routing, eBPF, kube-proxy kept, IPsec"},
	} {
		t.Run(tt.file, func(t *testing.T) {
			cm := readConfigMap(t, tt.file)
			got, ok := CNIFromCiliumConfig(cm)
			if !ok || got.Encryption != tt.encryption || got.NodeEncryption != tt.node || got.Mode != tt.mode {
				t.Errorf("got %+v %v, want encryption %q node %v mode %q", got, ok, tt.encryption, tt.node, tt.mode)
			}
		})
	}
	for _, tt := range []struct {
		name       string
		data       map[string]string
		encryption string
		node       bool
	}{
		{"nothing set", nil, "none", false},
		{"set by hand as the docs say (enable-wireguard: true)", map[string]string{"enable-wireguard": "true"}, "wireguard", false},
		{"switched off", map[string]string{"enable-wireguard": "false", "encrypt-node": "true"}, "none", false},
		{"booleans as the agent parses them", map[string]string{"enable-wireguard": "True", "encrypt-node": "1"}, "wireguard", true},
		{"not a boolean is off", map[string]string{"enable-ipsec": "yes"}, "none", false},
		{"IPsec wins over WireGuard, as in the agent's status", map[string]string{"enable-ipsec": "true", "enable-wireguard": "true"}, "ipsec", false},
		{"node encryption only with WireGuard", map[string]string{"enable-ipsec": "true", "encrypt-node": "true"}, "ipsec", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			enc, node := CiliumEncryption(tt.data)
			if enc != tt.encryption || node != tt.node {
				t.Errorf("got %q %v, want %q %v", enc, node, tt.encryption, tt.node)
			}
		})
	}
}

func TestMergeCiliumCNI(t *testing.T) {
	fromConfig := CNI{Name: "Cilium", Mode: "native routing, eBPF, kube-proxy kept, WireGuard incl. node traffic",
		Evidence: "ConfigMap kube-system/cilium-config", Encryption: "wireguard", NodeEncryption: true}
	for _, tt := range []struct {
		name     string
		detected CNI
		want     CNI
	}{
		{"the DaemonSet keeps its version and gains the mode",
			CNI{Name: "Cilium", Version: "v1.15.19", Evidence: "DaemonSet kube-system/cilium"},
			CNI{Name: "Cilium", Version: "v1.15.19", Mode: fromConfig.Mode, Evidence: "DaemonSet kube-system/cilium",
				Encryption: "wireguard", NodeEncryption: true}},
		{"an interface gives way to the ConfigMap", CNI{Name: "Cilium", Evidence: "node interface cilium_host"}, fromConfig},
		{"nothing else found", CNI{Name: "unknown"}, fromConfig},
		{"another CNI's workload wins over a stale ConfigMap",
			CNI{Name: "Calico", Version: "v3.28.4", Evidence: "DaemonSet kube-system/calico-node"},
			CNI{Name: "Calico", Version: "v3.28.4", Evidence: "DaemonSet kube-system/calico-node"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := mergeCiliumCNI(tt.detected, fromConfig); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestCollectCiliumProcess is the e2e cluster with CNI=cilium: the agent runs as a process on
// each node (no DaemonSet, no image, so no version to read), the nodes' interfaces show
// cilium_host, and kube-system/cilium-config (captured from that cluster) says how it routes.
func TestCollectCiliumProcess(t *testing.T) {
	n1 := readNode(t, "cilium-vxlan-node1.json")
	cs := fake.NewClientset(&n1, readConfigMap(t, "cilium-config-vxlan.json"))
	hostExec := func(_ context.Context, argv []string) (string, error) {
		if strings.Join(argv, " ") == "ls /sys/class/net" {
			return nodeIfacesCiliumVXLAN, nil
		}
		return "", errors.New("no kube-proxy answer here")
	}
	cd, err := Collect(context.Background(), Input{Client: cs, Nodes: []string{"node1"}, HostExec: hostExec})
	if err != nil {
		t.Fatal(err)
	}
	if cd.CNI != "Cilium" || cd.CNIMode != "tunnel vxlan, eBPF, kube-proxy kept" || cd.CNIVersion != "" {
		t.Errorf("CNI = %q %q mode %q, want Cilium, no version, tunnel vxlan, eBPF, kube-proxy kept", cd.CNI, cd.CNIVersion, cd.CNIMode)
	}
	if cd.Encryption != "none" || cd.NodeEncryption {
		t.Errorf("encryption = %q node %v, want none, false", cd.Encryption, cd.NodeEncryption)
	}
}

// nodeIfacesCiliumVXLAN is `ls /sys/class/net` on node1 of that cluster (make e2e-up
// CNI=cilium), without the lxc* devices of the pods it ran then.
const nodeIfacesCiliumVXLAN = "cilium_host\ncilium_net\ncilium_vxlan\neth0\nlo\n"
