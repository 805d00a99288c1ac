package runcmd

import (
	"errors"
	"strings"

	"github.com/spf13/pflag"

	"github.com/cnperf/cnperf/internal/config"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/plan"
	kubeplatform "github.com/cnperf/cnperf/internal/platform/kube"
)

// k8sNetperfNetworks are k8s-netperf's flags for networks other than the default pod network,
// accepted under k8s-netperf's names. --bridge names an existing NetworkAttachmentDefinition,
// as in k8s-netperf, and becomes --network; --macvlan MASTER makes the run create k8s-netperf's
// macvlan definition in its namespace, measure on it and delete it; the others make k8s-netperf
// create networks that need OVN-Kubernetes or SR-IOV hardware: they are refused, before anything
// is deployed, with what they need.
type k8sNetperfNetworks struct {
	bridge, bridgeNamespace   string
	macvlan, cudn, sriov      string
	localnet                  string
	macvlanRange, macvlanIPAM string
	udnl2, udnl3              bool
}

func (n *k8sNetperfNetworks) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&n.bridge, "bridge", "", "k8s-netperf's --bridge: measure on this NetworkAttachmentDefinition (in --bridgeNamespace); the same as --network NAMESPACE/NAME")
	fs.StringVar(&n.bridgeNamespace, "bridgeNamespace", "default", "k8s-netperf's --bridgeNamespace: the namespace of --bridge's NetworkAttachmentDefinition")
	fs.StringVar(&n.macvlan, "macvlan", "", "k8s-netperf's --macvlan MASTER: create NetworkAttachmentDefinition "+kubeplatform.MacvlanDefinitionName+
		" (macvlan, bridge mode, on each node's MASTER; whereabouts IPAM) in the run's namespace, measure on it, delete it")
	fs.StringVar(&n.macvlanRange, "macvlan-range", kubeplatform.DefaultMacvlanRange, "with --macvlan: the whereabouts range of its addresses (CIDR; the default is k8s-netperf's)")
	fs.StringVar(&n.macvlanIPAM, "macvlan-ipam", "", `with --macvlan: its whole IPAM configuration as JSON instead of whereabouts on --macvlan-range, e.g. '{"type": "whereabouts", "range": "10.9.0.0/24", "configuration_path": "/etc/whereabouts.conf"}'`)
	fs.BoolVar(&n.udnl2, "udnl2", false, "k8s-netperf's --udnl2: refused (a primary layer2 UserDefinedNetwork needs OVN-Kubernetes)")
	fs.BoolVar(&n.udnl3, "udnl3", false, "k8s-netperf's --udnl3: refused (a primary layer3 UserDefinedNetwork needs OVN-Kubernetes)")
	fs.StringVar(&n.cudn, "cudn", "", "k8s-netperf's --cudn layer2|layer3: refused (a ClusterUserDefinedNetwork needs OVN-Kubernetes; with its NetworkAttachmentDefinition use --network)")
	fs.StringVar(&n.sriov, "sriov", "", "k8s-netperf's --sriov PF: refused (needs the SR-IOV Network Operator and SR-IOV NICs; with an SriovNetwork's NetworkAttachmentDefinition use --network)")
	fs.StringVar(&n.localnet, "localnet", "", "k8s-netperf's --localnet NAME (an OVN localnet physical network; VM-only there): refused (needs OVN-Kubernetes)")
}

// apply maps --bridge onto --network, --macvlan onto --network and the definition the kube
// platform creates (k.CreateNetwork), and refuses the modes cnperf cannot measure, each with
// what it needs (exit status 2). It runs before the plan is built, so nothing is deployed.
func (n *k8sNetperfNetworks) apply(fs *pflag.FlagSet, f *config.FlagValues, k *kubeplatform.Options) error {
	set := func(name string) bool { fl := fs.Lookup(name); return fl != nil && fl.Changed }
	if !set("macvlan") {
		for _, name := range []string{"macvlan-range", "macvlan-ipam"} {
			if set(name) {
				return exit.Usage("--%s: only with --macvlan MASTER", name)
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
		return exit.Usage("%s: cnperf cannot measure this mode here: k8s-netperf creates a primary %s UserDefinedNetwork\n"+
			"  (k8s.ovn.org/v1) for its namespace, which needs OVN-Kubernetes as the cluster's network%s;\n"+
			"  on a cluster with one, run cnperf in a namespace whose primary network is a UserDefinedNetwork (-n NAMESPACE)",
			flag, layer, creates)
	case set("cudn"):
		if v := n.cudn; v != "layer2" && v != "layer3" {
			return exit.Usage("--cudn: %q is not a topology: expected layer2 or layer3", v)
		}
		return exit.Usage("--cudn %s: cnperf cannot measure this mode here: k8s-netperf creates a %s ClusterUserDefinedNetwork\n"+
			"  (k8s.ovn.org/v1) as a secondary network, which needs OVN-Kubernetes%s", n.cudn, n.cudn, useNetwork)
	case set("sriov"):
		return exit.Usage("--sriov %s: cnperf cannot measure this mode here: k8s-netperf creates an SriovNetworkNodePolicy and an\n"+
			"  SriovNetwork (sriovnetwork.openshift.io/v1) on that PF, which need the SR-IOV Network Operator and SR-IOV NICs%s",
			n.sriov, useNetwork)
	case set("localnet"):
		return exit.Usage("--localnet %s: cnperf cannot measure this mode here: k8s-netperf creates a localnet\n"+
			"  ClusterUserDefinedNetwork (k8s.ovn.org/v1) on that physical network for its VMs, which needs OVN-Kubernetes\n"+
			"  and an Open vSwitch bridge mapping on the nodes%s", n.localnet, useNetwork)
	case set("macvlan"):
		return n.applyMacvlan(fs, f, k, set)
	case set("bridgeNamespace") && !set("bridge"):
		return exit.Usage("--bridgeNamespace: only with --bridge NAME")
	case !set("bridge"):
		return nil
	}
	if set(config.FlagNetwork) {
		return exit.Usage("--bridge and --network: give one (--bridge %s --bridgeNamespace %s is --network %s/%s)",
			n.bridge, n.bridgeNamespace, n.bridgeNamespace, n.bridge)
	}
	network := strings.TrimSpace(n.bridgeNamespace) + "/" + strings.TrimSpace(n.bridge)
	if err := plan.CheckNetwork(network); err != nil {
		return exit.Usage("--bridge: %v", err)
	}
	if err := fs.Set(config.FlagNetwork, network); err != nil {
		return exit.Usage("--bridge: %v", err)
	}
	f.Network = network
	return nil
}

// applyMacvlan is --macvlan MASTER as k8s-netperf runs it: its definition (macvlan-netperf, in
// the run's namespace) becomes the run's network, which the kube platform creates and deletes.
func (n *k8sNetperfNetworks) applyMacvlan(fs *pflag.FlagSet, f *config.FlagValues, k *kubeplatform.Options, set func(string) bool) error {
	for _, other := range []string{"bridge", config.FlagNetwork} {
		if set(other) {
			return exit.Usage("--macvlan and --%s: give one (--macvlan creates its own network)", other)
		}
	}
	if set("macvlan-range") && set("macvlan-ipam") {
		return exit.Usage("--macvlan-range and --macvlan-ipam: give one (--macvlan-ipam holds the whole IPAM configuration)")
	}
	ipam := n.macvlanIPAM
	if !set("macvlan-ipam") {
		var err error
		if ipam, err = kubeplatform.WhereaboutsIPAM(n.macvlanRange); err != nil {
			return exit.Usage("--macvlan-range: %v", err)
		}
	}
	def, err := kubeplatform.MacvlanDefinition(strings.TrimSpace(n.macvlan), ipam)
	if err != nil {
		flag := "--macvlan"
		var ipamErr *kubeplatform.IPAMError
		if errors.As(err, &ipamErr) {
			flag = "--macvlan-ipam"
		}
		return exit.Usage("%s: %v", flag, err)
	}
	network := k.NetworkOf(def)
	if err := fs.Set(config.FlagNetwork, network); err != nil {
		return exit.Usage("--macvlan: %v", err)
	}
	f.Network, k.CreateNetwork = network, def
	return nil
}
