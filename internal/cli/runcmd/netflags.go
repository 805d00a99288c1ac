package runcmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/cnperf/cnperf/internal/cli/flags"
	"github.com/cnperf/cnperf/internal/config"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/kube"
	kubeplatform "github.com/cnperf/cnperf/internal/platform/kube"
)

// k8sNetperfNetworks are k8s-netperf's network flags (flags.K8sNetperfNetworks) as `cnperf run`
// takes them.
type k8sNetperfNetworks struct {
	flags.K8sNetperfNetworks
	bridgeNetwork string // k8s-netperf's --bridgeNetwork FILE
}

func (n *k8sNetperfNetworks) addFlags(fs *pflag.FlagSet) {
	n.AddFlags(fs)
	fs.StringVar(&n.bridgeNetwork, bridgeNetworkFlag, "", "k8s-netperf's --bridgeNetwork FILE: with --vm on a secondary network without IPAM "+
		`(--vm --bridge BRIDGE, --network), the VMs' static addresses, k8s-netperf's JSON: {"bridgeServerNetwork": "`+
		kubeplatform.DefaultVMNetworkServer+`", "bridgeClientNetwork": "`+kubeplatform.DefaultVMNetworkClient+`"} (its defaults)`)
}

// apply maps --bridge onto --network, --macvlan onto --network and the definition the kube
// platform creates (k.CreateNetwork) in the servers' namespace, and the modes OVN-Kubernetes or
// SR-IOV must provide onto k.NetworkMode, whose preflight checks the cluster, and --network onto
// the definition the mode's objects make there (flags.K8sNetperfNetworks.Resolve). It runs before the plan is built, so nothing is deployed.
func (n *k8sNetperfNetworks) apply(fs *pflag.FlagSet, f *config.FlagValues, k *kubeplatform.Options) error {
	fl := fs.Lookup(config.FlagNetwork)
	network, create, mode, err := n.Resolve(fs, fl != nil && fl.Changed)
	if err != nil {
		return err
	}
	k.NetworkMode = mode
	switch {
	case create != nil:
		network = k.NetworkOf(create)
	case mode != nil && mode.Kind != kube.ModeLocalnet:
		// the definition the mode's objects make; --localnet stops in the preflight (pods cannot be
		// on it: k8s-netperf's is for VMs, with addresses set inside them)
		network = k.ModeNetwork(mode)
	}
	if network == "" {
		return nil
	}
	if err := fs.Set(config.FlagNetwork, network); err != nil {
		return exit.Usage("--network: %v", err)
	}
	f.Network, k.CreateNetwork = network, create
	return nil
}

// secondaryNetworkFlags are the flags that put the endpoints on a network other than the default
// pod network, k8s-netperf's first.
var secondaryNetworkFlags = []string{"bridge", "macvlan", "udnl2", "udnl3", "cudn", "localnet", "sriov", config.FlagNetwork}

// secondaryNetworkGiven is the first secondary network flag given, as given ("--bridge br0",
// "--udnl2"); "" when none is. It reads the flags before apply sets --network from the others.
func secondaryNetworkGiven(fs *pflag.FlagSet) string {
	for _, name := range secondaryNetworkFlags {
		fl := fs.Lookup(name)
		if fl == nil || !fl.Changed {
			continue
		}
		switch v := strings.TrimSpace(fl.Value.String()); {
		case fl.Value.Type() == "bool" && v == "true":
			return "--" + name
		case fl.Value.Type() != "bool" && v != "":
			return "--" + name + " " + v
		}
	}
	return ""
}

// vmNetworks applies the secondary network flags to VM endpoints (k.VM, after the plan's vm
// block; given is the first secondary network flag as given, secondaryNetworkGiven), before
// anything is created. --bridge BRIDGE with --vm is k8s-netperf's: BRIDGE is the nodes' Linux
// bridge, on which the run creates k8s-netperf's definition br-netperf (kube.BridgeDefinition:
// no IPAM) in its namespace, and the VMs set static addresses on it (--bridgeNetwork, in
// k8s-netperf's JSON); --network (and a plan's network:) is measured on as it is. --macvlan and
// the networks OVN-Kubernetes or SR-IOV make are refused, with why.
func (n *k8sNetperfNetworks) vmNetworks(fs *pflag.FlagSet, f *config.FlagValues, k *kubeplatform.Options, given string) error {
	set := func(name string) bool { fl := fs.Lookup(name); return fl != nil && fl.Changed }
	if k.VM == "" {
		if set(bridgeNetworkFlag) {
			return exit.Usage("--bridgeNetwork: only with --vm (the VMs' static addresses on a secondary network without IPAM)")
		}
		return nil
	}
	switch {
	case set("macvlan"):
		return exit.Usage("--vm with %s: a VM joins a secondary network by KubeVirt's bridge binding, which gives the guest "+
			"a MAC address of its own, and a macvlan interface receives the frames for its own MAC only; use --vm --bridge BRIDGE "+
			"(a Linux bridge on the nodes) or --network NAMESPACE/NAME", given)
	case k.NetworkMode != nil:
		return exit.Usage("--vm with %s: cnperf puts VMs on a NetworkAttachmentDefinition with KubeVirt's bridge binding only "+
			"(--vm --bridge BRIDGE, or --network); %s needs OVN-Kubernetes's or the SR-IOV operator's own binding for VMs", given, k.NetworkMode.Flag)
	case set("bridge"):
		if set("bridgeNamespace") {
			return exit.Usage("--bridgeNamespace with --vm --bridge: with --vm, --bridge names the nodes' Linux bridge, and the run " +
				"creates the definition (" + kube.BridgeDefinitionName + ") in its own namespace, as k8s-netperf does")
		}
		bridge := strings.TrimSpace(fs.Lookup("bridge").Value.String())
		def, err := kube.BridgeDefinition(bridge)
		if err != nil {
			return exit.Usage("--bridge with --vm names the nodes' Linux bridge: %v", err)
		}
		if k.VM != "both" {
			return exit.Usage("--vm=%s with --bridge %s: the %s pod would have no address on %s (it has no IPAM, as k8s-netperf's; "+
				"the VMs set static ones, --bridgeNetwork): use --vm=both, or --network with a definition that has IPAM",
				k.VM, bridge, map[string]string{"server": "client", "client": "server"}[k.VM], kube.BridgeDefinitionName)
		}
		network := k.NetworkOf(def)
		if err := fs.Set(config.FlagNetwork, network); err != nil {
			return exit.Usage("--network: %v", err)
		}
		f.Network, k.CreateNetwork = network, def
	}
	if set(bridgeNetworkFlag) {
		srv, cli, err := readBridgeNetwork(n.bridgeNetwork)
		if err != nil {
			return exit.Usage("--bridgeNetwork %s: %v", n.bridgeNetwork, err)
		}
		k.VMNetworkServer, k.VMNetworkClient = srv, cli
	}
	return nil
}

// bridgeNetworkFlag is k8s-netperf's --bridgeNetwork FILE.
const bridgeNetworkFlag = "bridgeNetwork"

// readBridgeNetwork reads k8s-netperf's bridgeNetwork.json: the VMs' static addresses, server and
// client, in CIDR notation ({"bridgeServerNetwork": "10.10.10.12/24", "bridgeClientNetwork":
// "10.10.10.14/24"}, its defaults), checked as the platform takes them.
func readBridgeNetwork(file string) (server, client string, err error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return "", "", err
	}
	var c struct {
		Server string `json:"bridgeServerNetwork"`
		Client string `json:"bridgeClientNetwork"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return "", "", fmt.Errorf("not k8s-netperf's bridgeNetwork JSON ({\"bridgeServerNetwork\": %q, \"bridgeClientNetwork\": %q}): %w",
			kubeplatform.DefaultVMNetworkServer, kubeplatform.DefaultVMNetworkClient, err)
	}
	if _, _, err := kubeplatform.ParseVMNetwork(c.Server, c.Client); err != nil {
		return "", "", err
	}
	return c.Server, c.Client, nil
}
