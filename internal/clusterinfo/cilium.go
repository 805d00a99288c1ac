package clusterinfo

import (
	"context"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

// ciliumConfigName is the ConfigMap the Cilium agent reads its configuration from (Helm
// chart and cilium CLI installs alike), in Cilium's namespace.
const ciliumConfigName = "cilium-config"

// CNIFromCiliumConfig reads how Cilium carries pod traffic from its cilium-config ConfigMap:
// the routing mode (tunnel with its protocol, or native routing), the eBPF dataplane,
// whether kube-proxy was kept or Cilium replaces it, and the encryption when it is on (see
// CiliumEncryption), e.g. "tunnel vxlan, eBPF, kube-proxy kept" or "native routing, eBPF,
// WireGuard". ok is false when cm is not Cilium's configuration.
func CNIFromCiliumConfig(cm *corev1.ConfigMap) (cni CNI, ok bool) {
	if cm == nil || cm.Name != ciliumConfigName || len(cm.Data) == 0 {
		return CNI{}, false
	}
	d := cm.Data
	var routing string
	switch mode, tunnel := d["routing-mode"], d["tunnel"]; {
	case mode == "native" || tunnel == "disabled":
		routing = "native routing"
	case tunnel != "": // before 1.14: tunnel: vxlan|geneve
		routing = "tunnel " + tunnel
	default: // 1.14 and later: routing-mode tunnel (the default) with tunnel-protocol vxlan (the default)
		proto := d["tunnel-protocol"]
		if proto == "" {
			proto = "vxlan"
		}
		routing = "tunnel " + proto
	}
	parts := []string{routing, "eBPF"}
	switch d["kube-proxy-replacement"] {
	case "true", "strict":
		parts = append(parts, "kube-proxy replaced")
	case "partial", "probe":
		parts = append(parts, "kube-proxy partly replaced")
	case "false", "disabled":
		parts = append(parts, "kube-proxy kept")
	}
	enc, node := CiliumEncryption(d)
	return CNI{Name: "Cilium", Mode: withEncryption(strings.Join(parts, ", "), enc, node),
		Evidence: "ConfigMap " + cm.Namespace + "/" + cm.Name, Encryption: enc, NodeEncryption: node}, true
}

// CiliumEncryption reads Cilium's transparent encryption from cilium-config's keys as the
// agent reads them (pkg/option/config.go: enable-ipsec, enable-wireguard, encrypt-node;
// booleans as strconv.ParseBool takes them, unset is false): api.EncryptionIPsec when
// enable-ipsec is on (it wins over WireGuard, as in the agent's own status), else
// api.EncryptionWireGuard when enable-wireguard is on, else api.EncryptionNone. node is
// encrypt-node with WireGuard: the agent supports node encryption only with WireGuard.
func CiliumEncryption(data map[string]string) (encryption string, node bool) {
	on := func(key string) bool {
		b, err := strconv.ParseBool(strings.TrimSpace(data[key]))
		return err == nil && b
	}
	switch {
	case on("enable-ipsec"):
		return api.EncryptionIPsec, false
	case on("enable-wireguard"):
		return api.EncryptionWireGuard, on("encrypt-node")
	}
	return api.EncryptionNone, false
}

// ciliumConfig reads cilium-config from the namespace of the Cilium workload that was found
// (its DaemonSet's), else kube-system. A missing ConfigMap is not worth a warning.
func ciliumConfig(ctx context.Context, cs kubernetes.Interface, detected CNI, warn func(string, ...any)) (CNI, bool) {
	ns := "kube-system"
	if detected.Name == "Cilium" {
		if _, ref, found := strings.Cut(detected.Evidence, " "); found {
			if n, _, found := strings.Cut(ref, "/"); found && n != "" {
				ns = n
			}
		}
	}
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, ciliumConfigName, metav1.GetOptions{})
	if err != nil {
		if !apierrors.IsNotFound(err) {
			warn("cilium-config: %v", err)
		}
		return CNI{}, false
	}
	return CNIFromCiliumConfig(cm)
}

// mergeCiliumCNI combines what the workloads and interfaces showed with what cilium-config
// says: a Cilium DaemonSet keeps its version and evidence and gains the mode; an interface
// guess or nothing gives way to the ConfigMap. Another CNI's workload wins over a stale one.
func mergeCiliumCNI(detected, fromConfig CNI) CNI {
	switch detected.Name {
	case "Cilium":
		detected.Mode = fromConfig.Mode
		detected.Encryption, detected.NodeEncryption = fromConfig.Encryption, fromConfig.NodeEncryption
		if detected.Version == "" {
			detected.Evidence = fromConfig.Evidence
		}
		return detected
	case "unknown", "bridge":
		return fromConfig
	}
	return detected
}
