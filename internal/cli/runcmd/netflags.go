package runcmd

import (
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
type k8sNetperfNetworks struct{ flags.K8sNetperfNetworks }

func (n *k8sNetperfNetworks) addFlags(fs *pflag.FlagSet) { n.AddFlags(fs) }

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

// refuseVMsOnSecondaryNetwork is the usage error of VM endpoints with a secondary network flag:
// cnperf's VMs are on the default pod network (their path check would refuse every case, without
// naming the flag). It runs before anything is created.
func refuseVMsOnSecondaryNetwork(vm, given string) error {
	if vm == "" || given == "" {
		return nil
	}
	return exit.Usage("--vm with %s: cnperf's VMs are on the default pod network only (VMs on secondary networks are not "+
		"supported yet); give one", given)
}
