package runcmd

import (
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/cnperf/cnperf/internal/cli/flags"
	"github.com/cnperf/cnperf/internal/config"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/kube"
	kubeplatform "github.com/cnperf/cnperf/internal/platform/kube"
)

// k8s-netperf's network flags: --bridge becomes --network; --macvlan the definition the run
// creates; the modes OVN-Kubernetes or SR-IOV must provide the kube platform's NetworkMode, whose
// preflight checks the cluster; bad values and flags given together are usage errors (exit
// status 2), before a plan is built.
func TestK8sNetperfNetworkFlags(t *testing.T) {
	for _, tc := range []struct {
		args        []string
		wantNetwork string
		wantConfig  string // the definition --macvlan creates
		wantErr     string
		wantMode    *kube.NetworkMode
	}{
		{args: nil},
		{args: []string{"--bridge", "br-netperf"}, wantNetwork: "default/br-netperf"},
		{args: []string{"--bridge", "e2e-bridge", "--bridgeNamespace", "multus-e2e"}, wantNetwork: "multus-e2e/e2e-bridge"},
		{args: []string{"--network", "multus-e2e/e2e-macvlan"}, wantNetwork: "multus-e2e/e2e-macvlan"},
		{args: []string{"--bridge", "a", "--network", "ns/b"}, wantErr: "--bridge and --network: give one (--bridge a --bridgeNamespace default is --network default/a)"},
		{args: []string{"--bridge", "Bad_Name"}, wantErr: `--bridge: network "default/Bad_Name": name "Bad_Name" is not a DNS subdomain (a-z, 0-9, '-' and '.')`},
		{args: []string{"--bridgeNamespace", "x"}, wantErr: "--bridgeNamespace: only with --bridge NAME"},
		// the OVN-Kubernetes and SR-IOV modes become the kube platform's NetworkMode and --network the
		// definition their objects make in the run's namespace; --localnet stops in the preflight (no network)
		{args: []string{"--udnl2"}, wantNetwork: "cnperf/udn-primary-netperf", wantMode: &kube.NetworkMode{Flag: "--udnl2", Kind: "udn", Topology: "Layer2"}},
		{args: []string{"--udnl3"}, wantNetwork: "cnperf/udn-primary-netperf", wantMode: &kube.NetworkMode{Flag: "--udnl3", Kind: "udn", Topology: "Layer3"}},
		{args: []string{"--cudn", "layer2"}, wantNetwork: "cnperf/cudn-secondary-netperf", wantMode: &kube.NetworkMode{Flag: "--cudn layer2", Kind: "cudn", Topology: "Layer2"}},
		{args: []string{"--cudn", "Layer3", "-n", "perf"}, wantNetwork: "perf/cudn-secondary-netperf", wantMode: &kube.NetworkMode{Flag: "--cudn Layer3", Kind: "cudn", Topology: "Layer3"}},
		{args: []string{"--sriov", "ens2f0np0"}, wantNetwork: "cnperf/sriov-netperf", wantMode: &kube.NetworkMode{Flag: "--sriov ens2f0np0", Kind: "sriov", PF: "ens2f0np0", NodeRole: "worker"}},
		{args: []string{"--sriov", "ens1f0", "--sriov-node-selector", "sriov"}, wantNetwork: "cnperf/sriov-netperf", wantMode: &kube.NetworkMode{Flag: "--sriov ens1f0", Kind: "sriov", PF: "ens1f0", NodeRole: "sriov"}},
		{args: []string{"--localnet", "physnet"}, wantMode: &kube.NetworkMode{Flag: "--localnet physnet", Kind: "localnet", PhysicalNetwork: "physnet"}},
		{args: []string{"--cudn", "layer4"}, wantErr: `--cudn: "layer4" is not a topology: expected layer2 or layer3`},
		{args: []string{"--udnl2", "--udnl3"}, wantErr: "--udnl2 and --udnl3: give one"},
		{args: []string{"--udnl2", "--cudn", "layer2"}, wantErr: "--udnl2 and --cudn layer2: give one"},
		{args: []string{"--sriov", "ens1f0", "--localnet", "physnet"}, wantErr: "--localnet physnet and --sriov ens1f0: give one"},
		{args: []string{"--cudn", "layer3", "--network", "a/b"}, wantErr: "--cudn layer3 and --network: give one"},
		{args: []string{"--sriov", "ens1f0", "--macvlan", "eth0"}, wantErr: "--sriov ens1f0 and --macvlan: give one"},
		{args: []string{"--sriov", "ens1f0", "--bridge", "br"}, wantErr: "--sriov ens1f0 and --bridge: give one"},
		{args: []string{"--localnet", "phys:net"}, wantErr: `--localnet: "phys:net" is not an OVN physical network name`},
		{args: []string{"--sriov", "a/b"}, wantErr: `--sriov: "a/b" is not an interface name`},
		{args: []string{"--sriov-node-selector", "x"}, wantErr: "--sriov-node-selector: only with --sriov PF"},
		{args: []string{"--sriov", "ens1f0", "--sriov-node-selector", "a=b"}, wantErr: `--sriov-node-selector: "a=b" is not a node role`},
		// --macvlan: k8s-netperf's definition, created by the run in its namespace
		{args: []string{"--macvlan", "eth0"}, wantNetwork: "cnperf/macvlan-netperf",
			wantConfig: `{"cniVersion": "0.3.1", "type": "macvlan", "master": "eth0", "mode": "bridge", "ipam": {"type": "whereabouts", "range": "192.168.200.0/24"}}`},
		{args: []string{"--macvlan", "eth0", "-n", "perf", "--macvlan-range", "10.127.0.0/24"}, wantNetwork: "perf/macvlan-netperf",
			wantConfig: `{"cniVersion": "0.3.1", "type": "macvlan", "master": "eth0", "mode": "bridge", "ipam": {"type": "whereabouts", "range": "10.127.0.0/24"}}`},
		{args: []string{"--macvlan", "eth0", "-n", "perf", "--server-namespace", "srv"}, wantNetwork: "srv/macvlan-netperf",
			wantConfig: `{"cniVersion": "0.3.1", "type": "macvlan", "master": "eth0", "mode": "bridge", "ipam": {"type": "whereabouts", "range": "192.168.200.0/24"}}`},
		{args: []string{"--macvlan", "eth1", "--macvlan-ipam", `{"type": "whereabouts", "range": "10.127.0.0/24", "configuration_path": "/w.conf"}`},
			wantNetwork: "cnperf/macvlan-netperf",
			wantConfig:  `{"cniVersion": "0.3.1", "type": "macvlan", "master": "eth1", "mode": "bridge", "ipam": {"type": "whereabouts", "range": "10.127.0.0/24", "configuration_path": "/w.conf"}}`},
		{args: []string{"--macvlan", "eth0", "--macvlan-range", "10.127.0.1/24"}, wantErr: `--macvlan-range: "10.127.0.1/24" has host bits set: the network is 10.127.0.0/24`},
		{args: []string{"--macvlan", "eth0", "--macvlan-ipam", "{}"}, wantErr: `--macvlan-ipam: the IPAM configuration {} names no IPAM plugin (no "type")`},
		{args: []string{"--macvlan", "eth0", "--macvlan-ipam", "{}", "--macvlan-range", "10.0.0.0/8"}, wantErr: "--macvlan-range and --macvlan-ipam: give one"},
		{args: []string{"--macvlan", "my/eth0"}, wantErr: `--macvlan: "my/eth0" is not an interface name`},
		{args: []string{"--macvlan", "IPAM/0"}, wantErr: `--macvlan: "IPAM/0" is not an interface name`},
		{args: []string{"--macvlan", "eth0", "--bridge", "br"}, wantErr: "--macvlan and --bridge: give one (--macvlan creates its own network)"},
		{args: []string{"--macvlan", "eth0", "--network", "a/b"}, wantErr: "--macvlan and --network: give one"},
		{args: []string{"--macvlan-range", "10.0.0.0/8"}, wantErr: "--macvlan-range: only with --macvlan MASTER"},
		// k8s-netperf's --udnPluginBinding: its values, only with a primary UserDefinedNetwork, and then
		// refused: cnperf's VMs are on the default pod network
		{args: []string{"--udnPluginBinding", "passt"}, wantErr: "--udnPluginBinding: only with --udnl2 or --udnl3 and --vm"},
		{args: []string{"--udnPluginBinding", "l2brige", "--udnl2"}, wantErr: `--udnPluginBinding: "l2brige" is not passt or l2bridge (k8s-netperf's values) (did you mean "l2bridge"?)`},
		{args: []string{"--udnPluginBinding", "l2bridge", "--udnl3", "--vm"},
			wantErr: "--udnPluginBinding l2bridge with --udnl3: cnperf does not put VMs on a UserDefinedNetwork\n" +
				"  (its VMs are on the default pod network, with --vm-binding, and on NetworkAttachmentDefinitions),\n" +
				"  so it stops here, before anything is created;\n" +
				"  --udnl3 without it and --vm measures pods on the network (it needs OVN-Kubernetes)"},
		{args: []string{"--udnPluginBinding", "passt", "--udnl2", "--cudn", "layer2"}, wantErr: "--udnPluginBinding passt with --udnl2: cnperf does not put VMs on a UserDefinedNetwork"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
			var f config.FlagValues
			var n k8sNetperfNetworks
			var k kubeplatform.Options
			addPlanFlags(fs, &f)
			n.addFlags(fs)
			flags.Kube(fs, &k)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			err := n.apply(fs, &f, &k)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tc.wantErr)
				}
				for _, line := range strings.Split("cnperf: "+err.Error(), "\n") {
					if len(line) > 120 {
						t.Errorf("a line of %d columns (at most 120): %s", len(line), line)
					}
				}
				if exit.Code(err) != exit.BadInput {
					t.Errorf("exit status %d, want %d (usage)", exit.Code(err), exit.BadInput)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(k.NetworkMode, tc.wantMode) {
				t.Errorf("network mode %+v, want %+v", k.NetworkMode, tc.wantMode)
			}
			if f.Network != tc.wantNetwork {
				t.Errorf("network %q, want %q", f.Network, tc.wantNetwork)
			}
			var created string
			if k.CreateNetwork != nil {
				created = k.CreateNetwork.Config
			}
			if created != tc.wantConfig {
				t.Errorf("definition to create %q, want %q", created, tc.wantConfig)
			}
			if fl := fs.Lookup(config.FlagNetwork); (tc.wantNetwork != "") != fl.Changed {
				t.Errorf("--network changed = %v with network %q", fl.Changed, tc.wantNetwork)
			}
		})
	}
}
