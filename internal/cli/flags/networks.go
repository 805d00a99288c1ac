package flags

import (
	"errors"
	"strings"

	"github.com/spf13/pflag"

	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/plan"
)

// K8sNetperfNetworks are k8s-netperf's flags (`cnperf run` and `cnperf mesh` take them) for networks other than the default pod network,
// accepted under k8s-netperf's names. --bridge names an existing NetworkAttachmentDefinition,
// as in k8s-netperf, and becomes --network; --macvlan MASTER makes the run create k8s-netperf's
// macvlan definition in its namespace, measure on it and delete it; the others make k8s-netperf
// create networks that need OVN-Kubernetes or SR-IOV hardware: they are refused, before anything
// is deployed, with what they need.
type K8sNetperfNetworks struct {
	bridge, bridgeNamespace   string
	macvlan, cudn, sriov      string
	localnet                  string
	macvlanRange, macvlanIPAM string
	udnl2, udnl3              bool
}

// AddFlags binds the flags to fs.
func (n *K8sNetperfNetworks) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&n.bridge, "bridge", "", "k8s-netperf's --bridge: measure on this NetworkAttachmentDefinition (in --bridgeNamespace); the same as --network NAMESPACE/NAME")
	fs.StringVar(&n.bridgeNamespace, "bridgeNamespace", "default", "k8s-netperf's --bridgeNamespace: the namespace of --bridge's NetworkAttachmentDefinition")
	fs.StringVar(&n.macvlan, "macvlan", "", "k8s-netperf's --macvlan MASTER: create NetworkAttachmentDefinition "+kube.MacvlanDefinitionName+
		" (macvlan, bridge mode, on each node's MASTER; whereabouts IPAM) in the run's namespace, measure on it, delete it")
	fs.StringVar(&n.macvlanRange, "macvlan-range", kube.DefaultMacvlanRange, "with --macvlan: the whereabouts range of its addresses (CIDR; the default is k8s-netperf's)")
	fs.StringVar(&n.macvlanIPAM, "macvlan-ipam", "", `with --macvlan: its whole IPAM configuration as JSON instead of whereabouts on --macvlan-range, e.g. '{"type": "whereabouts", "range": "10.9.0.0/24", "configuration_path": "/etc/whereabouts.conf"}'`)
	fs.BoolVar(&n.udnl2, "udnl2", false, "k8s-netperf's --udnl2: refused (a primary layer2 UserDefinedNetwork needs OVN-Kubernetes)")
	fs.BoolVar(&n.udnl3, "udnl3", false, "k8s-netperf's --udnl3: refused (a primary layer3 UserDefinedNetwork needs OVN-Kubernetes)")
	fs.StringVar(&n.cudn, "cudn", "", "k8s-netperf's --cudn layer2|layer3: refused (a ClusterUserDefinedNetwork needs OVN-Kubernetes; with its NetworkAttachmentDefinition use --network)")
	fs.StringVar(&n.sriov, "sriov", "", "k8s-netperf's --sriov PF: refused (needs the SR-IOV Network Operator and SR-IOV NICs; with an SriovNetwork's NetworkAttachmentDefinition use --network)")
	fs.StringVar(&n.localnet, "localnet", "", "k8s-netperf's --localnet NAME (an OVN localnet physical network; VM-only there): refused (needs OVN-Kubernetes)")
}

// Resolve reads the flags: the existing network --bridge names (NAMESPACE/NAME), or the
// definition --macvlan MASTER creates (k8s-netperf's; the caller puts it in its namespace), or
// a refusal of the modes cnperf cannot measure, each with what they need (exit status 2). It
// runs before anything is deployed. networkSet says --network names a secondary network
// already: beside --bridge or --macvlan that is refused.
func (n *K8sNetperfNetworks) Resolve(fs *pflag.FlagSet, networkSet bool) (bridge string, create *kube.NetworkDefinition, err error) {
	set := func(name string) bool { fl := fs.Lookup(name); return fl != nil && fl.Changed }
	if !set("macvlan") {
		for _, name := range []string{"macvlan-range", "macvlan-ipam"} {
			if set(name) {
				return "", nil, exit.Usage("--%s: only with --macvlan MASTER", name)
			}
		}
	}
	const creates = "\n  cnperf does not create that network"
	const useNetwork = creates + ";\n  with one, pass its NetworkAttachmentDefinition as --network NAMESPACE/NAME"
	switch {
	case set("udnl2"), set("udnl3"):
		flag, layer := "--udnl2", "layer2"
		if set("udnl3") {
			flag, layer = "--udnl3", "layer3"
		}
		return "", nil, exit.Usage("%s: cnperf cannot measure this mode here: k8s-netperf creates a primary %s UserDefinedNetwork\n"+
			"  (k8s.ovn.org/v1) for its namespace, which needs OVN-Kubernetes as the cluster's network%s;\n"+
			"  on a cluster with one, run cnperf in a namespace whose primary network is a UserDefinedNetwork (-n NAMESPACE)",
			flag, layer, creates)
	case set("cudn"):
		if v := n.cudn; v != "layer2" && v != "layer3" {
			return "", nil, exit.Usage("--cudn: %q is not a topology: expected layer2 or layer3", v)
		}
		return "", nil, exit.Usage("--cudn %s: cnperf cannot measure this mode here: k8s-netperf creates a %s ClusterUserDefinedNetwork\n"+
			"  (k8s.ovn.org/v1) as a secondary network, which needs OVN-Kubernetes%s", n.cudn, n.cudn, useNetwork)
	case set("sriov"):
		return "", nil, exit.Usage("--sriov %s: cnperf cannot measure this mode here: k8s-netperf creates an SriovNetworkNodePolicy and an\n"+
			"  SriovNetwork (sriovnetwork.openshift.io/v1) on that PF, which need the SR-IOV Network Operator and SR-IOV NICs%s",
			n.sriov, useNetwork)
	case set("localnet"):
		return "", nil, exit.Usage("--localnet %s: cnperf cannot measure this mode here: k8s-netperf creates a localnet\n"+
			"  ClusterUserDefinedNetwork (k8s.ovn.org/v1) on that physical network for its VMs, which needs OVN-Kubernetes\n"+
			"  and an Open vSwitch bridge mapping on the nodes%s", n.localnet, useNetwork)
	case set("macvlan"):
		create, err := n.macvlanDefinition(set, networkSet)
		return "", create, err
	case set("bridgeNamespace") && !set("bridge"):
		return "", nil, exit.Usage("--bridgeNamespace: only with --bridge NAME")
	case !set("bridge"):
		return "", nil, nil
	}
	if networkSet {
		return "", nil, exit.Usage("--bridge and --network: give one (--bridge %s --bridgeNamespace %s is --network %s/%s)",
			n.bridge, n.bridgeNamespace, n.bridgeNamespace, n.bridge)
	}
	network := strings.TrimSpace(n.bridgeNamespace) + "/" + strings.TrimSpace(n.bridge)
	if err := plan.CheckNetwork(network); err != nil {
		return "", nil, exit.Usage("--bridge: %v", err)
	}
	return network, nil, nil
}

// macvlanDefinition is --macvlan MASTER as k8s-netperf runs it: its definition (macvlan-netperf),
// which becomes the run's network, created and deleted by the run.
func (n *K8sNetperfNetworks) macvlanDefinition(set func(string) bool, networkSet bool) (*kube.NetworkDefinition, error) {
	if set("bridge") {
		return nil, exit.Usage("--macvlan and --bridge: give one (--macvlan creates its own network)")
	}
	if networkSet {
		return nil, exit.Usage("--macvlan and --network: give one (--macvlan creates its own network)")
	}
	if set("macvlan-range") && set("macvlan-ipam") {
		return nil, exit.Usage("--macvlan-range and --macvlan-ipam: give one (--macvlan-ipam holds the whole IPAM configuration)")
	}
	ipam := n.macvlanIPAM
	if !set("macvlan-ipam") {
		var err error
		if ipam, err = kube.WhereaboutsIPAM(n.macvlanRange); err != nil {
			return nil, exit.Usage("--macvlan-range: %v", err)
		}
	}
	def, err := kube.MacvlanDefinition(strings.TrimSpace(n.macvlan), ipam)
	if err != nil {
		flag := "--macvlan"
		var ipamErr *kube.IPAMError
		if errors.As(err, &ipamErr) {
			flag = "--macvlan-ipam"
		}
		return nil, exit.Usage("%s: %v", flag, err)
	}
	return def, nil
}
