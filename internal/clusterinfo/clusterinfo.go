// Package clusterinfo describes the cluster a run measured: Kubernetes version, node count,
// the nodes the endpoints ran on (OS, kernel, arch, runtime, zone, instance type), the CNI
// (detected from what runs in the cluster), kube-proxy's mode, the pod MTU measured inside
// a pod, and the cloud (from the nodes' providerID).
package clusterinfo

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/nodehw"
	"github.com/cnperf/cnperf/internal/text"
)

// ExecFunc runs argv in a pod and returns its stdout.
type ExecFunc func(ctx context.Context, argv []string) (string, error)

// Input is what Collect works from.
type Input struct {
	Client kubernetes.Interface
	// Nodes are the nodes the endpoints ran on; their details are recorded. Empty: none.
	Nodes []string
	// PodExec runs a command in a pod-network pod (pod MTU); nil skips it.
	PodExec ExecFunc
	// HostExec runs a command in a hostNetwork pod (node interfaces, kube-proxy's local
	// metrics endpoint); nil skips it.
	HostExec ExecFunc
	// NodeExec runs a command in an endpoint pod on each node (by node name), on the node's
	// host network when the node has such a pod (NodeHostNetwork): the node's hardware is read
	// there with `cnperf agent node-hardware`. Nil or a node missing: not read.
	NodeExec        map[string]ExecFunc
	NodeHostNetwork map[string]bool
	// Hardware, when set (--prometheus), reads the nodes' hardware from their node-exporters
	// first; the agent (NodeExec) reads it only for the nodes Hardware has none of.
	Hardware HardwareReader
	// IPFamily is the pods' family as the platform saw it ("ipv4", "ipv6", DualStack: ClusterFamily).
	IPFamily string
	// Log receives warnings about details that could not be found.
	Log io.Writer
	// IdleFootprint, when not 0, is how long to sample the CNI's and proxy's agents on Nodes
	// with no load (kubelet summaries, read with Summary; nil: KubeletSummary(Client)).
	IdleFootprint time.Duration
	Summary       SummaryFunc
	// NoFootprint, when not "", is why the footprint cannot be read (a missing permission,
	// found by the preflight): it is recorded as the footprint's note instead.
	NoFootprint string
}

// HardwareReader reads nodes' hardware without the agent: Prometheus's node-exporters
// (internal/sink/prometheus.Collector).
type HardwareReader interface {
	// NodeHardware returns the hardware of the nodes it knows of nodes (name → InternalIP), by
	// name; an error means none could be read.
	NodeHardware(ctx context.Context, nodes map[string]string) (map[string]*api.NodeHardware, error)
}

// Collect gathers the cluster details. Only a failure to reach the API is an error; a detail
// that cannot be found is left empty and said on Log.
func Collect(ctx context.Context, in Input) (*api.ClusterDetails, error) {
	log := in.Log
	if log == nil {
		log = io.Discard
	}
	// wrapped to fit 120 columns: an API server's refusal (forbidden: User "system:serviceaccount:…"
	// cannot list …) alone is longer
	warn := func(format string, a ...any) {
		text.Logf(log, "clusterinfo: ", format, a...)
	}
	cd := &api.ClusterDetails{IPFamily: in.IPFamily}
	if v, err := in.Client.Discovery().ServerVersion(); err == nil {
		cd.KubernetesVersion = v.GitVersion
	} else {
		warn("server version: %v", err)
	}
	nodes, err := in.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	cd.NodeCount = len(nodes.Items)
	byName := map[string]*corev1.Node{}
	for i := range nodes.Items {
		byName[nodes.Items[i].Name] = &nodes.Items[i]
	}
	fromReader := readHardware(ctx, in, byName, warn)
	for _, name := range in.Nodes {
		if n := byName[name]; n != nil {
			ni := NodeInfo(n)
			if hw := fromReader[name]; hw != nil {
				ni.Hardware = hw
			} else if exec := in.NodeExec[name]; exec != nil {
				ni.Hardware = nodeHardware(ctx, exec, ni.InternalIP, in.NodeHostNetwork[name])
			}
			if hw := ni.Hardware; hw != nil && hw.Note != "" {
				from := ""
				if hw.Source != nodehw.Source {
					from = " from " + hw.Source
				}
				warn("node %s hardware%s: %s", name, from, hw.Note)
			}
			cd.Nodes = append(cd.Nodes, ni)
		}
	}
	cd.Cloud = cloudOf(nodes.Items)

	workloads, err := listWorkloads(ctx, in.Client)
	if err != nil {
		warn("list workloads for CNI detection: %v", err)
	}
	var ifaces []string
	if in.HostExec != nil {
		if out, err := in.HostExec(ctx, []string{"ls", "/sys/class/net"}); err == nil {
			ifaces = strings.Fields(out)
		} else {
			warn("list node interfaces: %v", err)
		}
	}
	cni := DetectCNI(workloads, ifaces)
	if fromNodes, ok := CNIFromNodes(nodes.Items); ok {
		cni = mergeNodeCNI(cni, fromNodes)
	}
	if cni.Name == "Cilium" || cni.Name == "unknown" || cni.Name == "bridge" {
		if fromConfig, ok := ciliumConfig(ctx, in.Client, cni, warn); ok {
			cni = mergeCiliumCNI(cni, fromConfig)
		}
	}
	if cni.Name == "Calico" || cni.Name == "Canal" {
		cd.Calico = calicoDetails(ctx, in.Client, cni)
		if cni.Version == "" {
			cni.Version = cd.Calico.Version
		}
		cni.Encryption, cni.NodeEncryption = CalicoEncryption(cd.Calico)
		if cni.Name == "Calico" {
			cni.Mode = CalicoMode(cd.Calico)
		}
	}
	cd.CNI, cd.CNIVersion, cd.CNIMode = cni.Name, cni.Version, cni.Mode
	cd.Encryption, cd.NodeEncryption = cni.Encryption, cni.NodeEncryption

	cd.KubeProxyMode = kubeProxyMode(ctx, in, workloads, cni, warn)

	switch {
	case in.IdleFootprint > 0 && in.NoFootprint != "":
		cd.IdleFootprint = &api.IdleFootprint{Source: FootprintSource, Note: in.NoFootprint}
	case in.IdleFootprint > 0:
		summary := in.Summary
		if summary == nil {
			summary = KubeletSummary(in.Client)
		}
		cd.IdleFootprint = IdleFootprint(ctx, in.Client, summary, in.Nodes, in.IdleFootprint)
		if cd.IdleFootprint.Note != "" {
			warn("idle footprint: %s", cd.IdleFootprint.Note)
		}
	}
	if in.PodExec != nil {
		if out, err := in.PodExec(ctx, []string{"cat", "/sys/class/net/eth0/mtu"}); err == nil {
			if mtu, perr := strconv.Atoi(strings.TrimSpace(out)); perr == nil {
				cd.PodMTUBytes = mtu
			} else {
				warn("pod MTU: %q is not a number", strings.TrimSpace(out))
			}
		} else {
			warn("pod MTU: %v", err)
		}
	}
	return cd, nil
}

// readHardware asks in.Hardware for the hardware of in.Nodes; a failure is a warning, and the
// agent reads them instead.
func readHardware(ctx context.Context, in Input, byName map[string]*corev1.Node, warn func(string, ...any)) map[string]*api.NodeHardware {
	if in.Hardware == nil {
		return nil
	}
	ips := map[string]string{}
	for _, name := range in.Nodes {
		if n := byName[name]; n != nil {
			ips[name] = NodeInfo(n).InternalIP
		}
	}
	hw, err := in.Hardware.NodeHardware(ctx, ips)
	if err != nil {
		warn("node hardware from Prometheus: %v; the agent reads it instead", err)
		return nil
	}
	for _, name := range in.Nodes {
		if _, ok := ips[name]; ok && hw[name] == nil {
			warn("node %s hardware: no node-exporter of it in Prometheus; the agent reads it instead", name)
		}
	}
	return hw
}

// nodeHardware reads a node's hardware with the agent in one of its pods: the uplink (the
// interface holding address) only from a pod on the host network.
func nodeHardware(ctx context.Context, exec ExecFunc, address string, hostNetwork bool) *api.NodeHardware {
	argv := []string{"cnperf", "agent", "node-hardware"}
	if hostNetwork && address != "" {
		argv = append(argv, "--address", address)
	}
	out, err := exec(ctx, argv)
	if err != nil {
		return &api.NodeHardware{Source: nodehw.Source, Note: fmt.Sprintf("the agent could not read it (an agent image older than this cnperf?): %v", err)}
	}
	var hw api.NodeHardware
	if err := json.Unmarshal([]byte(out), &hw); err != nil {
		// an agent older than `cnperf agent node-hardware` prints its help instead
		return &api.NodeHardware{Source: nodehw.Source, Note: fmt.Sprintf("the agent image's cnperf did not answer with JSON (older than `cnperf agent node-hardware`?): %v", err)}
	}
	if !hostNetwork {
		note := "uplink not read: no endpoint on the node's host network (a host path, e.g. host-host, has one)"
		hw.Note = strings.TrimPrefix(hw.Note+"; "+note, "; ")
	}
	return &hw
}

// NodeInfo describes one node from its object.
func NodeInfo(n *corev1.Node) api.NodeInfo {
	ni := api.NodeInfo{
		Name:             n.Name,
		Zone:             firstLabel(n.Labels, "topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone"),
		Region:           firstLabel(n.Labels, "topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region"),
		InstanceType:     firstLabel(n.Labels, "node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type"),
		OSImage:          n.Status.NodeInfo.OSImage,
		Kernel:           n.Status.NodeInfo.KernelVersion,
		Arch:             n.Status.NodeInfo.Architecture,
		ContainerRuntime: n.Status.NodeInfo.ContainerRuntimeVersion,
		KubeletVersion:   n.Status.NodeInfo.KubeletVersion,
		ProviderID:       n.Spec.ProviderID,
	}
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP && ni.InternalIP == "" {
			ni.InternalIP = a.Address
		}
	}
	return ni
}

func firstLabel(l map[string]string, keys ...string) string {
	for _, k := range keys {
		if v := l[k]; v != "" {
			return v
		}
	}
	return ""
}

// providerClouds maps providerID schemes to cloud names.
var providerClouds = map[string]string{
	"aws": "aws", "gce": "gcp", "azure": "azure", "openstack": "openstack", "vsphere": "vsphere",
	"digitalocean": "digitalocean", "ibm": "ibm", "alicloud": "alibaba", "oci": "oracle", "hcloud": "hetzner",
	"linode": "linode", "equinixmetal": "equinix-metal", "packet": "equinix-metal", "kind": "kind",
	"k3s": "k3s", "vultr": "vultr", "scaleway": "scaleway", "exoscale": "exoscale", "ovhcloud": "ovh",
	"kubevirt": "kubevirt", "cloudstack": "cloudstack", "huaweicloud": "huawei", "tencentcloud": "tencent",
}

// cloudOf names the cloud from the nodes' providerID ("none" when no node has one).
func cloudOf(nodes []corev1.Node) string {
	for _, n := range nodes {
		id := n.Spec.ProviderID
		if id == "" {
			continue
		}
		scheme, _, ok := strings.Cut(id, "://")
		if !ok {
			return "unknown"
		}
		if c, known := providerClouds[strings.ToLower(scheme)]; known {
			return c
		}
		return strings.ToLower(scheme)
	}
	return "none"
}

// Workload is a DaemonSet, Deployment or pod found in the cluster, with its images.
type Workload struct {
	Kind, Namespace, Name string
	Images                []string
}

// listWorkloads lists DaemonSets in every namespace and the pods of kube-system (static pods
// and CNIs not run as DaemonSets show there).
func listWorkloads(ctx context.Context, cs kubernetes.Interface) ([]Workload, error) {
	var out []Workload
	dss, err := cs.AppsV1().DaemonSets("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list daemonsets: %w", err)
	}
	for _, d := range dss.Items {
		out = append(out, Workload{Kind: "DaemonSet", Namespace: d.Namespace, Name: d.Name, Images: images(d.Spec.Template.Spec)})
	}
	pods, err := cs.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{})
	if err != nil {
		return out, fmt.Errorf("list kube-system pods: %w", err)
	}
	for _, p := range pods.Items {
		out = append(out, Workload{Kind: "Pod", Namespace: p.Namespace, Name: p.Name, Images: images(p.Spec)})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

func images(s corev1.PodSpec) []string {
	var out []string
	for _, c := range s.InitContainers {
		out = append(out, c.Image)
	}
	for _, c := range s.Containers {
		out = append(out, c.Image)
	}
	return out
}

// CNI is a detected CNI.
type CNI struct {
	Name    string // e.g. "Calico", "bridge", "unknown"
	Version string // from the image tag when known
	// Mode is the CNI's own name for how it carries pod traffic (Flannel's backend type:
	// "vxlan", "host-gw", ...), when the cluster shows it.
	Mode string
	// Evidence is what gave it away, e.g. "DaemonSet kube-system/calico-node".
	Evidence string
	// Encryption and NodeEncryption are as in api.ClusterDetails, when the CNI's
	// configuration shows them.
	Encryption     string
	NodeEncryption bool
}

// cniRule recognises one CNI by workload name fragments, image fragments, or node interfaces.
type cniRule struct {
	name   string
	names  []string // workload name contains
	images []string // image contains
	ifaces []string // node interface name has this prefix
}

// cniRules are checked in order: Canal before Calico and Flannel (it is both), Calico before
// Flannel; a plain bridge comes last.
var cniRules = []cniRule{
	{name: "Canal", names: []string{"canal"}},
	{name: "Cilium", names: []string{"cilium"}, images: []string{"cilium/cilium"}, ifaces: []string{"cilium_host"}},
	{name: "OVN-Kubernetes", names: []string{"ovnkube-node", "ovnkube-master", "ovnkube-controller"}, images: []string{"ovn-kubernetes", "ovn-daemonset"}, ifaces: []string{"ovn-k8s-mp"}},
	{name: "Antrea", names: []string{"antrea-agent"}, images: []string{"antrea/antrea"}, ifaces: []string{"antrea-gw"}},
	{name: "Calico", names: []string{"calico-node"}, images: []string{"calico/node"}, ifaces: []string{"vxlan.calico", "cali"}},
	{name: "Weave", names: []string{"weave-net"}, images: []string{"weaveworks/weave-kube", "weave-kube"}, ifaces: []string{"weave"}},
	{name: "kube-router", names: []string{"kube-router"}, images: []string{"kube-router"}, ifaces: []string{"kube-bridge"}},
	{name: "kindnet", names: []string{"kindnet"}, images: []string{"kindnetd"}},
	{name: "Flannel", names: []string{"kube-flannel", "flannel"}, images: []string{"flannel"}, ifaces: []string{"flannel."}},
	{name: "bridge", ifaces: []string{"cni0", "cbr0"}},
}

// DetectCNI names the CNI from the workloads running in the cluster, then (for CNIs that do
// not run as pods) from the node's interfaces.
func DetectCNI(workloads []Workload, nodeIfaces []string) CNI {
	for _, r := range cniRules {
		for _, w := range workloads {
			name := strings.ToLower(w.Name)
			hit := false
			for _, f := range r.names {
				if strings.Contains(name, f) {
					hit = true
				}
			}
			var matched string
			for _, img := range w.Images {
				for _, f := range r.images {
					if strings.Contains(strings.ToLower(img), f) {
						hit, matched = true, img
					}
				}
			}
			if !hit {
				continue
			}
			if matched == "" && len(w.Images) > 0 {
				matched = w.Images[0]
				for _, img := range w.Images {
					for _, f := range append(r.names, r.images...) {
						if strings.Contains(strings.ToLower(img), f) {
							matched = img
						}
					}
				}
			}
			return CNI{Name: r.name, Version: imageTag(matched), Evidence: fmt.Sprintf("%s %s/%s", w.Kind, w.Namespace, w.Name)}
		}
	}
	for _, r := range cniRules {
		for _, ifc := range nodeIfaces {
			for _, pre := range r.ifaces {
				if strings.HasPrefix(ifc, pre) {
					return CNI{Name: r.name, Evidence: "node interface " + ifc}
				}
			}
		}
	}
	return CNI{Name: "unknown"}
}

// flannelBackendType is the suffix of the node annotation where flanneld (kube subnet manager)
// publishes its backend; the prefix is flanneld's --kube-annotation-prefix, by default
// flannel.alpha.coreos.com.
const flannelBackendType = "/backend-type"

// calicoNodeAnnotations are what calico-node writes on its node object (the Kubernetes
// datastore keeps Calico's node resource there): its address (-startup) and its tunnel
// addresses (-allocate-tunnel-addrs), in the order looked for.
var calicoNodeAnnotations = []string{
	"projectcalico.org/IPv4VXLANTunnelAddr", "projectcalico.org/IPv4IPIPTunnelAddr", "projectcalico.org/IPv4Address",
}

// CNIFromNodes names the CNI from what it wrote on the node objects: flanneld's annotations
// (flannel.alpha.coreos.com/backend-type and friends) or calico-node's (projectcalico.org/...),
// which exist however the CNI runs (a DaemonSet or a process on the node). Flannel's come first
// (Canal's nodes carry both). ok is false when no node carries them.
func CNIFromNodes(nodes []corev1.Node) (cni CNI, ok bool) {
	if cni, ok := flannelFromNodes(nodes); ok {
		return cni, true
	}
	for _, n := range nodes {
		for _, k := range calicoNodeAnnotations {
			if n.Annotations[k] != "" {
				return CNI{Name: "Calico", Evidence: "node " + n.Name + " annotation " + k}, true
			}
		}
	}
	return CNI{}, false
}

func flannelFromNodes(nodes []corev1.Node) (cni CNI, ok bool) {
	for _, n := range nodes {
		keys := make([]string, 0, len(n.Annotations))
		for k := range n.Annotations {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			prefix, found := strings.CutSuffix(k, flannelBackendType)
			if !found || !strings.Contains(prefix, "flannel") || n.Annotations[k] == "" {
				continue
			}
			return CNI{Name: "Flannel", Mode: n.Annotations[k], Evidence: "node " + n.Name + " annotation " + k}, true
		}
	}
	return CNI{}, false
}

// mergeNodeCNI combines what the workloads and interfaces showed with what the nodes show:
// the same CNI (or Canal, whose networking is Flannel's) keeps its version and evidence and
// gains the mode; a guess from interfaces alone (a plain "bridge": Flannel's host-gw backend
// has a cni0 and no flannel.1) or nothing gives way to the nodes' annotations.
func mergeNodeCNI(detected, fromNodes CNI) CNI {
	switch detected.Name {
	case fromNodes.Name, "Canal":
		detected.Mode = fromNodes.Mode
		return detected
	case "unknown", "bridge":
		return fromNodes
	}
	return detected
}

// imageTag returns an image's tag ("" when it has none), without any digest.
func imageTag(img string) string {
	img, _, _ = strings.Cut(img, "@")
	slash := strings.LastIndex(img, "/")
	colon := strings.LastIndex(img, ":")
	if colon <= slash {
		return ""
	}
	return img[colon+1:]
}

// kubeProxyMode finds kube-proxy's mode: its ConfigMap (kubeadm), then its metrics endpoint
// /proxyMode from a hostNetwork pod, then through the API server's node proxy.
func kubeProxyMode(ctx context.Context, in Input, workloads []Workload, cni CNI, warn func(string, ...any)) string {
	cm, err := in.Client.CoreV1().ConfigMaps("kube-system").Get(ctx, "kube-proxy", metav1.GetOptions{})
	if err == nil {
		if mode, ok := ModeFromConfig(cm.Data["config.conf"]); ok {
			return mode
		}
	} else if !apierrors.IsNotFound(err) {
		warn("kube-proxy configmap: %v", err)
	}
	if in.HostExec != nil {
		if out, err := in.HostExec(ctx, []string{"sh", "-c", proxyModeProbe}); err == nil {
			if m := lastLine(out); validMode(m) {
				return m
			}
		}
	}
	rc := in.Client.CoreV1().RESTClient()
	if r, ok := rc.(*rest.RESTClient); rc == nil || (ok && r == nil) {
		rc = nil // a fake clientset has no REST client
	}
	for _, name := range in.Nodes {
		if rc == nil {
			break
		}
		raw, err := rc.Get().AbsPath("/api/v1/nodes/" + name + ":10249/proxy/proxyMode").DoRaw(ctx)
		if err == nil {
			if m := strings.TrimSpace(string(raw)); validMode(m) {
				return m
			}
		}
	}
	kp := false
	for _, w := range workloads {
		if strings.Contains(w.Name, "kube-proxy") {
			kp = true
		}
	}
	if !kp && cni.Name == "Cilium" {
		return "none (kube-proxy replacement?)"
	}
	warn("kube-proxy mode: no kube-proxy ConfigMap and no /proxyMode answer")
	return ""
}

// proxyModeProbe asks kube-proxy's metrics endpoint (127.0.0.1:10249 in the node's network
// namespace, its default) for its mode; the caller takes the last line.
var proxyModeProbe = LocalHTTPGet(KubeProxyMetricsPort, "/proxyMode")

// KubeProxyMetricsPort is kube-proxy's default metrics port (metricsBindAddress
// 127.0.0.1:10249): /metrics and /proxyMode.
const KubeProxyMetricsPort = 10249

// LocalHTTPGet is a shell command that GETs http://127.0.0.1:PORT/PATH from a hostNetwork pod
// with whatever client the image has; nc is the last resort (a static busybox's wget can crash
// on name-service lookups) and prints the response's headers too.
func LocalHTTPGet(port int, path string) string {
	u := fmt.Sprintf("http://127.0.0.1:%d%s", port, path)
	return fmt.Sprintf(`wget -q -T 3 -O - %s 2>/dev/null || `+
		`curl -s -m 3 %s 2>/dev/null || `+
		`printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' | nc -w 3 127.0.0.1 %d`, u, u, path, port)
}

func lastLine(s string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r", ""), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			return l
		}
	}
	return ""
}

func validMode(m string) bool {
	switch m {
	case "iptables", "ipvs", "nftables", "kernelspace", "userspace":
		return true
	}
	return false
}

// ModeFromConfig reads `mode:` from a KubeProxyConfiguration; an empty mode is iptables on
// Linux. ok is false when the text is not a kube-proxy configuration.
func ModeFromConfig(conf string) (mode string, ok bool) {
	if !strings.Contains(conf, "KubeProxyConfiguration") {
		return "", false
	}
	for _, line := range strings.Split(conf, "\n") {
		if strings.HasPrefix(line, "mode:") {
			m := strings.Trim(strings.TrimSpace(strings.TrimPrefix(line, "mode:")), `"'`)
			if m == "" {
				return "iptables", true
			}
			return m, true
		}
	}
	return "iptables", true
}

// CalicoMode is Calico's mode as cnperf shows it: encapsulation, dataplane and WireGuard when
// it is on, e.g. "VXLAN, iptables", "None, bpf, WireGuard"; what is not known is left out.
func CalicoMode(d *api.CalicoDetails) string {
	if d == nil {
		return ""
	}
	var parts []string
	for _, p := range []string{d.Encapsulation, d.Dataplane} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	enc, node := CalicoEncryption(d)
	return withEncryption(strings.Join(parts, ", "), enc, node)
}

// CalicoEncryption is Calico's encryption from its default FelixConfiguration:
// api.EncryptionWireGuard when wireguardEnabled or wireguardEnabledV6 is true, else
// api.EncryptionNone; "" when the FelixConfigurations were not readable (no dataplane known
// either). node is wireguardHostEncryptionEnabled with WireGuard on.
func CalicoEncryption(d *api.CalicoDetails) (encryption string, node bool) {
	switch {
	case d == nil:
		return "", false
	case d.WireguardEnabled || d.WireguardEnabledV6:
		return api.EncryptionWireGuard, d.WireguardHostEncryptionEnabled
	case d.Dataplane != "":
		return api.EncryptionNone, false
	}
	return "", false
}

// withEncryption appends the encryption, when there is one, to a CNI's mode as
// api.ClusterDetails.EncryptionText names it: "tunnel vxlan, eBPF, WireGuard".
func withEncryption(mode, encryption string, node bool) string {
	if encryption == "" || encryption == api.EncryptionNone {
		return mode
	}
	text := (&api.ClusterDetails{Encryption: encryption, NodeEncryption: node}).EncryptionText()
	if mode == "" {
		return text
	}
	return mode + ", " + text
}

// calicoDetails reads Calico's IP pools (encapsulation), FelixConfiguration (dataplane,
// WireGuard) and ClusterInformation (version, cluster type) from the CRDs, when readable.
func calicoDetails(ctx context.Context, cs kubernetes.Interface, cni CNI) *api.CalicoDetails {
	rc := cs.Discovery().RESTClient()
	if rc == nil {
		return &api.CalicoDetails{Product: "calico", Version: cni.Version}
	}
	get := func(path string) []byte {
		raw, err := rc.Get().AbsPath("/apis/crd.projectcalico.org/v1/" + path).DoRaw(ctx)
		if err != nil {
			return nil
		}
		return raw
	}
	return CalicoFromObjects(cni.Version, get("ippools"), get("felixconfigurations"), get("clusterinformations/default"))
}

// CalicoFromObjects reads Calico's details from its objects as the API returns them (JSON):
// the IPPool list (encapsulation of the first pool, IP family of all), the FelixConfiguration
// list ("default": BPF or iptables and its backend, WireGuard for IPv4, IPv6 and hosts) and
// ClusterInformation "default" (calicoVersion, unless version is already known from an image;
// clusterType).
// A nil or unreadable object leaves its details empty.
func CalicoFromObjects(version string, pools, felixConfigs, clusterInfo []byte) *api.CalicoDetails {
	d := &api.CalicoDetails{Product: "calico", Version: version}
	var pl struct {
		Items []struct {
			Spec struct {
				CIDR      string `json:"cidr"`
				IPIPMode  string `json:"ipipMode"`
				VXLANMode string `json:"vxlanMode"`
			} `json:"spec"`
		} `json:"items"`
	}
	if pools != nil && json.Unmarshal(pools, &pl) == nil && len(pl.Items) > 0 {
		s := pl.Items[0].Spec
		d.Encapsulation = PoolEncapsulation(s.VXLANMode, s.IPIPMode)
		var v4, v6 bool
		for _, p := range pl.Items {
			if strings.Contains(p.Spec.CIDR, ":") {
				v6 = true
			} else if p.Spec.CIDR != "" {
				v4 = true
			}
		}
		if f := IPFamily(v4, v6); f != "" {
			d.IPFamily = f
		}
	}
	var felix struct {
		Items []struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Spec struct {
				BPFEnabled      *bool  `json:"bpfEnabled"`
				IptablesBackend string `json:"iptablesBackend"`
				FelixWireGuard
			} `json:"spec"`
		} `json:"items"`
	}
	if felixConfigs != nil && json.Unmarshal(felixConfigs, &felix) == nil {
		d.Dataplane = "iptables"
		for _, f := range felix.Items {
			if f.Metadata.Name != "default" {
				continue
			}
			switch b := strings.ToLower(f.Spec.IptablesBackend); b {
			case "nft", "legacy":
				d.Dataplane = "iptables-" + b
			}
			if f.Spec.BPFEnabled != nil && *f.Spec.BPFEnabled {
				d.Dataplane = "bpf"
			}
			f.Spec.Set(d)
		}
	}
	var ci struct {
		Spec struct {
			CalicoVersion string `json:"calicoVersion"`
			ClusterType   string `json:"clusterType"`
		} `json:"spec"`
	}
	if clusterInfo != nil && json.Unmarshal(clusterInfo, &ci) == nil {
		if d.Version == "" {
			d.Version = ci.Spec.CalicoVersion
		}
		d.ClusterType = ci.Spec.ClusterType
	}
	return d
}

// IPFamily names the families of a set of pools or addresses: "dual", "ipv6", "ipv4", or ""
// when there is neither (CalicoDetails.IPFamily's spelling, and --ip-family's).
func IPFamily(v4, v6 bool) string {
	switch {
	case v4 && v6:
		return "dual"
	case v6:
		return "ipv6"
	case v4:
		return "ipv4"
	}
	return ""
}

// DualStack is how ClusterDetails.IPFamily names a cluster whose pods have both families
// (docs/kubernetes.md); CalicoDetails.IPFamily and --ip-family say "dual".
const DualStack = "dual-stack"

// ClusterFamily is family, as IPFamily names it, in ClusterDetails.IPFamily's spelling: "dual"
// is DualStack, the others are the same.
func ClusterFamily(family string) string {
	if family == "dual" {
		return DualStack
	}
	return family
}
