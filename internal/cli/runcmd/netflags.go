package runcmd

import (
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
