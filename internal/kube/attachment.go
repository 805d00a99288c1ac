package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

// Secondary networks (Multus): what `cnperf run --network` and `cnperf mesh --network` share to
// put pods on a NetworkAttachmentDefinition and measure between their addresses on it.

// Multus's pod annotations (the Kubernetes Network Custom Resource Definition De-facto Standard):
// the networks a pod asks for, and what each attachment became.
const (
	AnnotationNetworks      = "k8s.v1.cni.cncf.io/networks"
	AnnotationNetworkStatus = "k8s.v1.cni.cncf.io/network-status"
	// NADGroup and NADResource are the NetworkAttachmentDefinition's API group and resource.
	NADGroup    = "k8s.cni.cncf.io"
	NADResource = "network-attachment-definitions"
)

// ReadAttachment reads a secondary network (NAMESPACE/NAME): the NetworkAttachmentDefinition must
// exist and be readable, and its configuration name a CNI plugin. Nothing is created before it.
func ReadAttachment(ctx context.Context, nads NADStore, network string) (*api.Attachment, error) {
	ns, name, _ := strings.Cut(network, "/")
	raw, err := nads.Get(ctx, ns, name)
	switch {
	case apierrors.IsNotFound(err):
		return nil, fmt.Errorf("network %s: NetworkAttachmentDefinition %s not found in namespace %s (Multus and the definition must exist first: kubectl get %s.%s -n %s): %w",
			network, name, ns, NADResource, NADGroup, ns, err)
	case apierrors.IsForbidden(err):
		return nil, fmt.Errorf("network %s: may not read it (%s grants get on %s.%s): %w", network, NetworksManifest, NADResource, NADGroup, err)
	case err != nil:
		return nil, fmt.Errorf("network %s: read NetworkAttachmentDefinition: %w", network, err)
	}
	return ParseNAD(network, raw)
}

// ParseNAD reads the CNI plugin type and MTU of a NetworkAttachmentDefinition's configuration
// (spec.config, a JSON string: one plugin, or a list whose first plugin is the interface's).
func ParseNAD(network string, raw []byte) (*api.Attachment, error) {
	var nad struct {
		Kind string `json:"kind"`
		Spec struct {
			Config string `json:"config"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(raw, &nad); err != nil {
		return nil, fmt.Errorf("network %s: the NetworkAttachmentDefinition is not JSON: %w", network, err)
	}
	if nad.Kind != "" && nad.Kind != "NetworkAttachmentDefinition" {
		return nil, fmt.Errorf("network %s: the API answered a %s, not a NetworkAttachmentDefinition (is Multus's CRD installed?)", network, nad.Kind)
	}
	a := &api.Attachment{Network: network}
	if strings.TrimSpace(nad.Spec.Config) == "" {
		// a definition without config names a CNI configuration file on the nodes (Multus reads it there)
		return a, nil
	}
	type plugin struct {
		Type   string `json:"type"`
		MTU    int    `json:"mtu"`
		Master string `json:"master"`
	}
	var conf struct {
		plugin
		Plugins []plugin `json:"plugins"`
	}
	if err := json.Unmarshal([]byte(nad.Spec.Config), &conf); err != nil {
		return nil, fmt.Errorf("network %s: spec.config is not a CNI configuration (JSON): %w", network, err)
	}
	if conf.Type == "" && len(conf.Plugins) > 0 {
		conf.plugin = conf.Plugins[0]
	}
	if conf.Type == "" {
		return nil, fmt.Errorf("network %s: spec.config names no CNI plugin (no \"type\")", network)
	}
	a.Type, a.MTUBytes, a.Master = conf.Type, conf.MTU, conf.Master
	return a, nil
}

// DescribeAttachment says what a NetworkAttachmentDefinition's configuration is, for the log.
func DescribeAttachment(a *api.Attachment) string {
	switch {
	case a.Type == "":
		return "configuration on the nodes (the definition has no spec.config)"
	case a.MTUBytes > 0:
		return fmt.Sprintf("CNI plugin %s, MTU %d", a.Type, a.MTUBytes)
	}
	return fmt.Sprintf("CNI plugin %s, MTU not set in its configuration", a.Type)
}

// NetworkStatus is one entry of a pod's k8s.v1.cni.cncf.io/network-status annotation.
type NetworkStatus struct {
	Name      string   `json:"name"`
	Interface string   `json:"interface"`
	IPs       []string `json:"ips"`
	MTU       int      `json:"mtu,omitempty"`
	Default   bool     `json:"default,omitempty"`
}

// AttachmentOf is a pod's interface on network (NAMESPACE/NAME), from the network status
// Multus wrote: its name, its address of the family ("" = the first), and its MTU (0 when not
// reported).
func AttachmentOf(pod *corev1.Pod, network, family string) (iface, ip string, mtu int, err error) {
	s, err := AttachmentStatus(pod, network)
	if err != nil {
		return "", "", 0, err
	}
	if ip = PickIP(s.IPs, family); ip == "" {
		return "", "", 0, fmt.Errorf("pod %s has no %s address on %s (interface %s, addresses %s)",
			pod.Name, FamilyName(family), network, s.Interface, strings.Join(s.IPs, ", "))
	}
	return s.Interface, ip, s.MTU, nil
}

// AttachmentStatus is a pod's entry for network (NAMESPACE/NAME) in the network status Multus
// wrote, with or without addresses (a definition without IPAM gives none).
func AttachmentStatus(pod *corev1.Pod, network string) (NetworkStatus, error) {
	raw, ok := pod.Annotations[AnnotationNetworkStatus]
	if !ok {
		return NetworkStatus{}, fmt.Errorf("pod %s has no %s annotation: Multus did not attach it to %s (is Multus the cluster's first CNI configuration?)",
			pod.Name, AnnotationNetworkStatus, network)
	}
	var st []NetworkStatus
	if err := json.Unmarshal([]byte(raw), &st); err != nil {
		return NetworkStatus{}, fmt.Errorf("pod %s: %s is not JSON: %w", pod.Name, AnnotationNetworkStatus, err)
	}
	var names []string
	for _, s := range st {
		if s.Name != network || s.Default {
			names = append(names, s.Name)
			continue
		}
		return s, nil
	}
	return NetworkStatus{}, fmt.Errorf("pod %s is not attached to %s (its network status names %s)", pod.Name, network, strings.Join(names, ", "))
}

// PickIP returns the first address of the family ("ipv4", "ipv6"; "" = the first address).
func PickIP(ips []string, family string) string {
	for _, s := range ips {
		ip := net.ParseIP(s)
		if ip == nil {
			continue
		}
		switch family {
		case "":
			return s
		case "ipv4":
			if ip.To4() != nil {
				return s
			}
		case "ipv6":
			if ip.To4() == nil {
				return s
			}
		}
	}
	return ""
}

// FamilyName is an IP family as a sentence names it ("IP" for the default).
func FamilyName(f string) string {
	if f == "" {
		return "IP"
	}
	return f
}

// MergeNetworks is the k8s.v1.cni.cncf.io/networks annotation of an attachment pod whose
// --pod-annotations already ask for networks (user): theirs, then the run's network (NAMESPACE/
// NAME), in the form they used: a comma-separated list, or a JSON list of network selection
// elements. A list that names the network already is kept as it is.
func MergeNetworks(user, network string) (string, error) {
	user = strings.TrimSpace(user)
	if user == "" {
		return network, nil
	}
	ns, name, _ := strings.Cut(network, "/")
	if strings.HasPrefix(user, "[") {
		var sel []map[string]any
		if err := json.Unmarshal([]byte(user), &sel); err != nil {
			return "", fmt.Errorf("--pod-annotations %s: %q is not a JSON list of network selection elements: %w", AnnotationNetworks, user, err)
		}
		for _, e := range sel {
			if e["name"] == name && e["namespace"] == ns {
				return user, nil
			}
		}
		sel = append(sel, map[string]any{"name": name, "namespace": ns})
		b, err := json.Marshal(sel)
		if err != nil {
			return "", err
		}
		return string(b), nil
	}
	for _, e := range strings.Split(user, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			return "", fmt.Errorf("--pod-annotations %s: %q has an empty element: want NAMESPACE/NAME[@INTERFACE] elements separated by commas", AnnotationNetworks, user)
		}
		if base, _, _ := strings.Cut(e, "@"); base == network {
			return user, nil
		}
	}
	return user + "," + network, nil
}

// AttachNetwork asks Multus for network (NAMESPACE/NAME) on a pod (its metadata, or a pod
// template's), after the networks its annotations ask for already (MergeNetworks; callers check
// beforehand that they merge: a list that cannot be read is replaced by network).
func AttachNetwork(meta *metav1.ObjectMeta, network string) {
	ann := make(map[string]string, len(meta.Annotations)+1) // never the caller's own map
	maps.Copy(ann, meta.Annotations)
	merged, err := MergeNetworks(ann[AnnotationNetworks], network)
	if err != nil {
		merged = network
	}
	ann[AnnotationNetworks] = merged
	meta.Annotations = ann
}

// SelectingPolicies are the names of the NetworkPolicies of a pod's namespace that select it for
// traffic of type t (none for a hostNetwork pod, or when the API cannot tell).
func SelectingPolicies(ctx context.Context, cs kubernetes.Interface, pod *corev1.Pod, t networkingv1.PolicyType) []string {
	if pod == nil || pod.Spec.HostNetwork {
		return nil
	}
	pols, err := cs.NetworkingV1().NetworkPolicies(pod.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil || len(pols.Items) == 0 {
		return nil
	}
	var names []string
	for i := range pols.Items {
		np := &pols.Items[i]
		sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
		if err != nil || !sel.Matches(labels.Set(pod.Labels)) || !policyHasType(np, t) {
			continue
		}
		names = append(names, np.Name)
	}
	return names
}

// policyHasType says whether a NetworkPolicy applies to traffic of type t: its policyTypes,
// or when it has none, ingress always and egress when it has egress rules (the API's default).
func policyHasType(np *networkingv1.NetworkPolicy, t networkingv1.PolicyType) bool {
	if len(np.Spec.PolicyTypes) == 0 {
		return t == networkingv1.PolicyTypeIngress || len(np.Spec.Egress) > 0
	}
	for _, pt := range np.Spec.PolicyTypes {
		if pt == t {
			return true
		}
	}
	return false
}
