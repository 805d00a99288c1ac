package kube

import (
	"fmt"
	"strings"
)

// NetworkMode is one of k8s-netperf's network modes whose network OVN-Kubernetes or the SR-IOV
// Network Operator must provide (--udnl2, --udnl3, --cudn, --localnet, --sriov). cnperf builds the
// objects k8s-netperf creates for it (Objects) and checks, before anything is created, that the
// cluster has what they need (CheckNetworkMode, the kube platform's preflight).
type NetworkMode struct {
	// Flag is the mode as the user gave it, e.g. "--udnl2", "--cudn layer3", "--sriov ens1f0".
	Flag string
	// Kind is ModeUDN, ModeCUDN, ModeLocalnet or ModeSRIOV.
	Kind string
	// Topology is the OVN topology of ModeUDN and ModeCUDN: "Layer2" or "Layer3".
	Topology string
	// PhysicalNetwork is ModeLocalnet's OVS bridge-mapping network name (k8s-netperf's --localnet).
	PhysicalNetwork string
	// PF is ModeSRIOV's physical function (k8s-netperf's --sriov), NodeRole its nodes' role
	// (k8s-netperf's --sriov-node-selector: node-role.kubernetes.io/NodeRole).
	PF, NodeRole string
}

// The kinds of NetworkMode.
const (
	ModeUDN      = "udn"
	ModeCUDN     = "cudn"
	ModeLocalnet = "localnet"
	ModeSRIOV    = "sriov"
)

// k8s-netperf's names for what these modes create (pkg/k8s/kubernetes.go: UdnName, CudnName,
// LocalnetCudnName, SriovNadName, SriovPolicyName, sriovOperatorNamespace), and the namespace
// label OVN-Kubernetes requires, from the namespace's creation on, of a namespace whose primary
// network is a UserDefinedNetwork (go-controller/pkg/types: RequiredUDNNamespaceLabel).
const (
	UDNName                = "udn-primary-netperf"
	CUDNName               = "cudn-secondary-netperf"
	LocalnetCUDNName       = "cudn-localnet-netperf"
	SRIOVNetworkName       = "sriov-netperf"
	SRIOVPolicyName        = "sriov-netperf-policy"
	SRIOVOperatorNamespace = "openshift-sriov-network-operator"
	PrimaryUDNLabel        = "k8s.ovn.org/primary-user-defined-network"
	DefaultSRIOVNodeRole   = "worker"
)

// API groups of the objects.
const (
	ovnGroup   = "k8s.ovn.org"
	sriovGroup = "sriovnetwork.openshift.io"
)

// NetworkObject is one object a NetworkMode creates: its API resource and its body.
type NetworkObject struct {
	Group, Version, Resource string
	// Namespace is where it lives; "" for a cluster-scoped object.
	Namespace string
	// Object is the body as the API takes it (apiVersion, kind, metadata, spec).
	Object map[string]any
}

// Name is the object's metadata.name.
func (o NetworkObject) Name() string {
	m, _ := o.Object["metadata"].(map[string]any)
	s, _ := m["name"].(string)
	return s
}

// Kind is the object's kind.
func (o NetworkObject) Kind() string { s, _ := o.Object["kind"].(string); return s }

// Path is the object's collection in the API (where it is POSTed).
func (o NetworkObject) Path() string {
	p := "/apis/" + o.Group + "/" + o.Version
	if o.Namespace != "" {
		p += "/namespaces/" + o.Namespace
	}
	return p + "/" + o.Resource
}

// String is KIND NAMESPACE/NAME (or KIND NAME when cluster-scoped).
func (o NetworkObject) String() string {
	if o.Namespace == "" {
		return o.Kind() + " " + o.Name()
	}
	return o.Kind() + " " + o.Namespace + "/" + o.Name()
}

// ParseTopology turns k8s-netperf's --cudn value into the topology it creates ("layer2" is
// "Layer2"), as k8s-netperf does (lower-cased, first letter upper).
func ParseTopology(v string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "layer2":
		return "Layer2", nil
	case "layer3":
		return "Layer3", nil
	}
	return "", fmt.Errorf("%q is not a topology: expected layer2 or layer3", v)
}

// Objects are the objects k8s-netperf creates for m, with k8s-netperf's names and fields, for a
// run in namespace ns (k8s-netperf's is always "netperf"; cnperf's is -n) and labelled with the
// run runID (cnperf's labels, so that what a run created is told apart from what it found).
// Where cnperf departs from k8s-netperf it says why:
//
//   - the ClusterUserDefinedNetwork selects the run's namespace by its name
//     (kubernetes.io/metadata.name) where k8s-netperf labels its namespace netperf=k8s-netperf
//     and selects that label: the same one namespace, and no label on a namespace cnperf may
//     not own; k8s-netperf's metadata.namespace on the cluster-scoped object is left out (the
//     API server drops it);
//   - --sriov: k8s-netperf also edits the operator's SriovOperatorConfig "default" (disableDrain,
//     configDaemonNodeSelector) and never restores it; cnperf does not change the operator's
//     configuration, it only requires that object to exist.
//
// A primary UserDefinedNetwork also needs its namespace created with the label PrimaryUDNLabel
// (OVN-Kubernetes refuses a UDN in a namespace labelled later); that is the namespace's, not
// an object here.
func (m NetworkMode) Objects(ns, runID string) ([]NetworkObject, error) {
	meta := func(name, namespace string) map[string]any {
		md := map[string]any{"name": name, "labels": stringsToAny(RunLabels(runID))}
		if namespace != "" {
			md["namespace"] = namespace
		}
		return md
	}
	selector := map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": ns}}
	switch m.Kind {
	case ModeUDN:
		var layer map[string]any
		switch m.Topology {
		case "Layer2": // k8s-netperf's DeployL2Udn
			layer = map[string]any{"role": "Primary", "subnets": []any{"10.0.0.0/24"}, "ipam": map[string]any{"lifecycle": "Persistent"}}
		case "Layer3": // DeployL3Udn
			layer = map[string]any{"role": "Primary", "subnets": []any{map[string]any{"cidr": "10.0.0.0/16"}}}
		default:
			return nil, fmt.Errorf("%s: topology %q: expected Layer2 or Layer3", m.Flag, m.Topology)
		}
		return []NetworkObject{{Group: ovnGroup, Version: "v1", Resource: "userdefinednetworks", Namespace: ns, Object: map[string]any{
			"apiVersion": ovnGroup + "/v1", "kind": "UserDefinedNetwork", "metadata": meta(UDNName, ns),
			"spec": map[string]any{"topology": m.Topology, strings.ToLower(m.Topology): layer},
		}}}, nil
	case ModeCUDN: // DeployCUDN
		var layer map[string]any
		switch m.Topology {
		case "Layer2":
			layer = map[string]any{"role": "Secondary", "ipam": map[string]any{"lifecycle": "Persistent"}, "subnets": []any{"20.0.0.0/16"}}
		case "Layer3":
			layer = map[string]any{"role": "Secondary", "subnets": []any{map[string]any{"cidr": "20.0.0.0/16"}}}
		default:
			return nil, fmt.Errorf("%s: topology %q: expected Layer2 or Layer3", m.Flag, m.Topology)
		}
		return []NetworkObject{{Group: ovnGroup, Version: "v1", Resource: "clusteruserdefinednetworks", Object: map[string]any{
			"apiVersion": ovnGroup + "/v1", "kind": "ClusterUserDefinedNetwork", "metadata": meta(CUDNName, ""),
			"spec": map[string]any{"namespaceSelector": selector,
				"network": map[string]any{"topology": m.Topology, strings.ToLower(m.Topology): layer}},
		}}}, nil
	case ModeLocalnet: // DeployLocalnetCUDN
		if m.PhysicalNetwork == "" {
			return nil, fmt.Errorf("%s: the physical network name is empty", m.Flag)
		}
		return []NetworkObject{{Group: ovnGroup, Version: "v1", Resource: "clusteruserdefinednetworks", Object: map[string]any{
			"apiVersion": ovnGroup + "/v1", "kind": "ClusterUserDefinedNetwork", "metadata": meta(LocalnetCUDNName, ""),
			"spec": map[string]any{"namespaceSelector": selector, "network": map[string]any{"topology": "Localnet",
				"localnet": map[string]any{"role": "Secondary", "physicalNetworkName": m.PhysicalNetwork, "ipam": map[string]any{"mode": "Disabled"}}}},
		}}}, nil
	case ModeSRIOV: // DeploySriovPolicy (pods: deviceType netdevice), DeploySriovNetwork
		if m.PF == "" {
			return nil, fmt.Errorf("%s: the physical function name is empty", m.Flag)
		}
		role := m.NodeRole
		if role == "" {
			role = DefaultSRIOVNodeRole
		}
		return []NetworkObject{
			{Group: sriovGroup, Version: "v1", Resource: "sriovnetworknodepolicies", Namespace: SRIOVOperatorNamespace, Object: map[string]any{
				"apiVersion": sriovGroup + "/v1", "kind": "SriovNetworkNodePolicy", "metadata": meta(SRIOVPolicyName, SRIOVOperatorNamespace),
				"spec": map[string]any{"resourceName": m.PF, "deviceType": "netdevice", "numVfs": int64(2),
					"nicSelector":  map[string]any{"pfNames": []any{m.PF}},
					"nodeSelector": map[string]any{"node-role.kubernetes.io/" + role: ""}},
			}},
			{Group: sriovGroup, Version: "v1", Resource: "sriovnetworks", Namespace: SRIOVOperatorNamespace, Object: map[string]any{
				"apiVersion": sriovGroup + "/v1", "kind": "SriovNetwork", "metadata": meta(SRIOVNetworkName, SRIOVOperatorNamespace),
				"spec": map[string]any{"networkNamespace": ns, "resourceName": m.PF,
					"ipam": `{"type": "whereabouts", "range": "192.168.100.0/24"}`},
			}},
		}, nil
	}
	return nil, fmt.Errorf("unknown network mode %q", m.Kind)
}

func stringsToAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
