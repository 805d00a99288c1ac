package flags

import (
	"errors"
	"slices"
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
// create networks that need OVN-Kubernetes or SR-IOV hardware: they become a kube.NetworkMode,
// whose preflight (kube.CheckNetworkMode) says what the cluster lacks before anything is created.
type K8sNetperfNetworks struct {
	bridge, bridgeNamespace   string
	macvlan, cudn, sriov      string
	localnet, sriovNodeRole   string
	macvlanRange, macvlanIPAM string
	udnPluginBinding          string
	udnl2, udnl3              bool
}

// UDNPluginBindings are the values of k8s-netperf's --udnPluginBinding: the KubeVirt binding
// plugins of a VM's interface on a primary UserDefinedNetwork.
var UDNPluginBindings = []string{"passt", "l2bridge"}

// AddFlags binds the flags to fs.
func (n *K8sNetperfNetworks) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&n.bridge, "bridge", "", "k8s-netperf's --bridge: measure on this NetworkAttachmentDefinition (in --bridgeNamespace); the same as --network NAMESPACE/NAME")
	fs.StringVar(&n.bridgeNamespace, "bridgeNamespace", "default", "k8s-netperf's --bridgeNamespace: the namespace of --bridge's NetworkAttachmentDefinition")
	fs.StringVar(&n.macvlan, "macvlan", "", "k8s-netperf's --macvlan MASTER: create NetworkAttachmentDefinition "+kube.MacvlanDefinitionName+
		" (macvlan, bridge mode, on each node's MASTER; whereabouts IPAM) in the run's namespace, measure on it, delete it")
	fs.StringVar(&n.macvlanRange, "macvlan-range", kube.DefaultMacvlanRange, "with --macvlan: the whereabouts range of its addresses (CIDR; the default is k8s-netperf's)")
	fs.StringVar(&n.macvlanIPAM, "macvlan-ipam", "", `with --macvlan: its whole IPAM configuration as JSON instead of whereabouts on --macvlan-range, e.g. '{"type": "whereabouts", "range": "10.9.0.0/24", "configuration_path": "/etc/whereabouts.conf"}'`)
	const refused = "; cnperf run creates it, waits for the NetworkAttachmentDefinition made from it and measures on that, " +
		"or first says what the cluster lacks for it and stops (cnperf mesh refuses it)"
	fs.BoolVar(&n.udnl2, "udnl2", false, "k8s-netperf's --udnl2: a primary layer2 UserDefinedNetwork, which needs OVN-Kubernetes"+refused)
	fs.BoolVar(&n.udnl3, "udnl3", false, "k8s-netperf's --udnl3: a primary layer3 UserDefinedNetwork, which needs OVN-Kubernetes"+refused)
	fs.StringVar(&n.cudn, "cudn", "", "k8s-netperf's --cudn layer2|layer3: a secondary ClusterUserDefinedNetwork, which needs OVN-Kubernetes"+refused)
	fs.StringVar(&n.sriov, "sriov", "", "k8s-netperf's --sriov PF: an SriovNetworkNodePolicy and an SriovNetwork, which need the SR-IOV Network Operator and SR-IOV NICs"+refused)
	fs.StringVar(&n.sriovNodeRole, "sriov-node-selector", kube.DefaultSRIOVNodeRole, "with --sriov: k8s-netperf's --sriov-node-selector, the node role (node-role.kubernetes.io/ROLE) of the SriovNetworkNodePolicy")
	fs.StringVar(&n.udnPluginBinding, "udnPluginBinding", "", "k8s-netperf's --udnPluginBinding passt|l2bridge: with --vm and --udnl2 or --udnl3, the binding plugin of the VMs' "+
		"interface on the primary UserDefinedNetwork; cnperf puts VMs on the default pod network (--vm-binding) and on NetworkAttachmentDefinitions only, so a run with it stops before anything is created, saying so")
	fs.StringVar(&n.localnet, "localnet", "", "k8s-netperf's --localnet NAME: a localnet ClusterUserDefinedNetwork (VMs only in k8s-netperf), which needs OVN-Kubernetes and an OVS bridge mapping; "+
		"the run says what the cluster lacks for it, then stops: cnperf measures pods, and pods get no address on it")
}

// Resolve reads the flags: the existing network --bridge names (NAMESPACE/NAME), or the
// definition --macvlan MASTER creates (k8s-netperf's; the caller puts it in its namespace), or
// the mode of --udnl2, --udnl3, --cudn, --localnet or --sriov (whose objects OVN-Kubernetes or
// the SR-IOV operator must serve: the caller checks the cluster for it before creating
// anything). Bad values and flags given together are usage errors (exit status 2). It runs
// before anything is deployed. networkSet says --network names a secondary network already:
// beside --bridge, --macvlan or a mode that is refused.
func (n *K8sNetperfNetworks) Resolve(fs *pflag.FlagSet, networkSet bool) (bridge string, create *kube.NetworkDefinition, mode *kube.NetworkMode, err error) {
	set := func(name string) bool { fl := fs.Lookup(name); return fl != nil && fl.Changed }
	if !set("macvlan") {
		for _, name := range []string{"macvlan-range", "macvlan-ipam"} {
			if set(name) {
				return "", nil, nil, exit.Usage("--%s: only with --macvlan MASTER", name)
			}
		}
	}
	if !set("sriov") && set("sriov-node-selector") {
		return "", nil, nil, exit.Usage("--sriov-node-selector: only with --sriov PF")
	}
	if set("udnPluginBinding") {
		return "", nil, nil, n.refuseUDNPluginBinding(set)
	}
	if mode, err = n.mode(set); err != nil || mode != nil {
		if mode != nil {
			for _, other := range []string{"bridge", "macvlan"} {
				if set(other) {
					return "", nil, nil, exit.Usage("%s and --%s: give one (k8s-netperf refuses them together too)", mode.Flag, other)
				}
			}
			if networkSet {
				return "", nil, nil, exit.Usage("%s and --network: give one (%s makes its own network)", mode.Flag, mode.Flag)
			}
		}
		return "", nil, mode, err
	}
	switch {
	case set("macvlan"):
		create, err := n.macvlanDefinition(set, networkSet)
		return "", create, nil, err
	case set("bridgeNamespace") && !set("bridge"):
		return "", nil, nil, exit.Usage("--bridgeNamespace: only with --bridge NAME")
	case !set("bridge"):
		return "", nil, nil, nil
	}
	if networkSet {
		return "", nil, nil, exit.Usage("--bridge and --network: give one (--bridge %s --bridgeNamespace %s is --network %s/%s)",
			n.bridge, n.bridgeNamespace, n.bridgeNamespace, n.bridge)
	}
	network := strings.TrimSpace(n.bridgeNamespace) + "/" + strings.TrimSpace(n.bridge)
	if err := plan.CheckNetwork(network); err != nil {
		return "", nil, nil, exit.Usage("--bridge: %v", err)
	}
	return network, nil, nil, nil
}

// mode is the k8s-netperf network mode that OVN-Kubernetes or SR-IOV must provide, from its flag
// (nil when none is set): at most one, as k8s-netperf allows.
func (n *K8sNetperfNetworks) mode(set func(string) bool) (*kube.NetworkMode, error) {
	var modes []*kube.NetworkMode
	if set("udnl2") && n.udnl2 {
		modes = append(modes, &kube.NetworkMode{Flag: "--udnl2", Kind: kube.ModeUDN, Topology: "Layer2"})
	}
	if set("udnl3") && n.udnl3 {
		modes = append(modes, &kube.NetworkMode{Flag: "--udnl3", Kind: kube.ModeUDN, Topology: "Layer3"})
	}
	if set("cudn") {
		topology, err := kube.ParseTopology(n.cudn)
		if err != nil {
			return nil, exit.Usage("--cudn: %v", err)
		}
		modes = append(modes, &kube.NetworkMode{Flag: "--cudn " + n.cudn, Kind: kube.ModeCUDN, Topology: topology})
	}
	if set("localnet") {
		v := strings.TrimSpace(n.localnet)
		if v == "" || strings.ContainsAny(v, ",:") {
			return nil, exit.Usage("--localnet: %q is not an OVN physical network name (not empty, no ',' or ':')", n.localnet)
		}
		modes = append(modes, &kube.NetworkMode{Flag: "--localnet " + v, Kind: kube.ModeLocalnet, PhysicalNetwork: v})
	}
	if set("sriov") {
		pf := strings.TrimSpace(n.sriov)
		if err := kube.CheckInterfaceName(pf); err != nil {
			return nil, exit.Usage("--sriov: %v", err)
		}
		role := strings.TrimSpace(n.sriovNodeRole)
		if role == "" || strings.ContainsAny(role, "/= ,") {
			return nil, exit.Usage("--sriov-node-selector: %q is not a node role (the NAME of node-role.kubernetes.io/NAME)", n.sriovNodeRole)
		}
		modes = append(modes, &kube.NetworkMode{Flag: "--sriov " + pf, Kind: kube.ModeSRIOV, PF: pf, NodeRole: role})
	}
	switch len(modes) {
	case 0:
		return nil, nil
	case 1:
		return modes[0], nil
	}
	return nil, exit.Usage("%s and %s: give one (k8s-netperf refuses them together too)", modes[0].Flag, modes[1].Flag)
}

// refuseUDNPluginBinding is the usage error of k8s-netperf's --udnPluginBinding: a value it does
// not take, the flag without the UserDefinedNetwork mode and the VMs it is for, or, with them,
// what cnperf does not build: VMs on a UserDefinedNetwork (its VMs are on the default pod
// network and NetworkAttachmentDefinitions). It stops the run before anything is created.
func (n *K8sNetperfNetworks) refuseUDNPluginBinding(set func(string) bool) error {
	v := strings.TrimSpace(n.udnPluginBinding)
	if !slices.Contains(UDNPluginBindings, v) {
		return exit.Usage("--udnPluginBinding: %q is not %s (k8s-netperf's values)%s", n.udnPluginBinding,
			strings.Join(UDNPluginBindings, " or "), Suggest(v, UDNPluginBindings))
	}
	var udn string
	switch {
	case set("udnl2") && n.udnl2:
		udn = "--udnl2"
	case set("udnl3") && n.udnl3:
		udn = "--udnl3"
	default:
		return exit.Usage("--udnPluginBinding: only with --udnl2 or --udnl3 and --vm\n  (k8s-netperf's: the binding of the VMs' interface on a primary UserDefinedNetwork)")
	}
	return exit.Usage("--udnPluginBinding %s with %s: cnperf does not put VMs on a UserDefinedNetwork\n"+
		"  (its VMs are on the default pod network, with --vm-binding, and on NetworkAttachmentDefinitions),\n"+
		"  so it stops here, before anything is created;\n"+
		"  %s without it and --vm measures pods on the network (it needs OVN-Kubernetes)", v, udn, udn)
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
