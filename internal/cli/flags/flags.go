// Package flags binds the library packages' options structs to command-line flags. Library
// packages take options structs and never see pflag; every flag a command offers is bound
// here or in the command's own package under internal/cli.
package flags

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"

	"github.com/cnperf/cnperf/internal/driver/all"
	"github.com/cnperf/cnperf/internal/exit"
	kubeapi "github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/platform/kube"
	"github.com/cnperf/cnperf/internal/sink"
	"github.com/cnperf/cnperf/internal/sink/opensearch"
	"github.com/cnperf/cnperf/internal/sink/prometheus"
	"github.com/cnperf/cnperf/internal/sink/pushgateway"
	"github.com/cnperf/cnperf/internal/tigerbench"
	"github.com/cnperf/cnperf/internal/version"
)

// Kube binds every Kubernetes platform flag to fs.
func Kube(fs *pflag.FlagSet, o *kube.Options) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "kube: kubeconfig file (default $KUBECONFIG, ~/.kube/config, then in-cluster)")
	fs.StringVar(&o.Context, "context", "", "kube: kubeconfig context (default: the current context)")
	fs.StringVarP(&o.Namespace, "namespace", "n", kube.DefaultNamespace, "kube: namespace for every object; created if absent and then removed unless --keep (a namespace cnperf did not create is never deleted)")
	fs.StringVar(&o.ServerNamespace, "server-namespace", "", "kube: namespace for the server pods and their Services (default --namespace); created and removed as --namespace is")
	fs.StringVar(&o.ClientNamespace, "client-namespace", "", "kube: namespace for the client pods (default --namespace); created and removed as --namespace is")
	fs.DurationVar(&o.IdleFootprint, "idle-footprint", 0, "kube: after set-up, before the measurement, sample the CNI's and proxy's agents' CPU and memory on the endpoints' nodes for this long, e.g. 20s (kubelet summary; needs get nodes/proxy); 0: off")
	fs.BoolVar(&o.Keep, "keep", false, "kube: leave the namespace, pods and services in place at the end")
	fs.StringVar(&o.ServerNode, "server-node", "", "kube: node for the servers (default: a node labelled netperf=server, else automatic)")
	fs.StringVar(&o.ClientNode, "client-node", "", "kube: node for the clients (default: a node labelled netperf=client, else automatic)")
	fs.StringSliceVar(&o.NodeSelector, "node-selector", nil, "kube: only use nodes with these labels, KEY=VALUE[,KEY=VALUE...]")
	fs.StringSliceVar(&o.Tolerations, "tolerations", nil, `kube: tolerate taints, KEY[=VALUE][:EFFECT][,...] or "*" for every taint`)
	fs.StringVar(&o.Image, "image", version.DefaultImage(), "kube: agent image (cnperf with the tools of the drivers "+all.Joined()+"); the default is the image of this cnperf version (cnperf version --image)")
	fs.StringVar(&o.ImagePullPolicy, "image-pull-policy", string(corev1.PullIfNotPresent), "kube: image pull policy: IfNotPresent, Always or Never")
	fs.StringSliceVar(&o.Resources, "resources", nil, "kube: endpoint resources, NAME=QTY (request and limit), requests.NAME=QTY or limits.NAME=QTY, e.g. cpu=2,memory=1Gi")
	fs.BoolVar(&o.Guaranteed, "guaranteed", false, "kube: Guaranteed QoS endpoints (limits = requests; needs cpu and memory in --resources)")
	fs.BoolVar(&o.Privileged, "privileged", false, "kube: run endpoint containers privileged (only for CPU pinning or tuning)")
	fs.StringSliceVar(&o.PodLabels, "pod-labels", nil, "kube: labels for every pod cnperf creates, KEY=VALUE[,KEY=VALUE...] (cnperf's own keys are refused)")
	fs.StringSliceVar(&o.PodAnnotations, "pod-annotations", nil, "kube: annotations for every pod cnperf creates, KEY=VALUE[,KEY=VALUE...], e.g. sidecar.istio.io/inject=false")
	fs.StringVar(&o.ExternalClient, "external-client", "pod", "kube: where external-service clients run: pod or local (this machine)")
	fs.DurationVar(&o.PodStartTimeout, "pod-start-timeout", kube.DefaultPodStartTimeout, "kube: how long endpoints may take to start (failures such as image pull or scheduling errors are reported at once)")
	fs.DurationVar(&o.ModeNetworkTimeout, "network-ready-timeout", kubeapi.DefaultModeNetworkTimeout, "kube: with --udnl2, --udnl3, --cudn or --sriov, "+
		"how long to wait for the NetworkAttachmentDefinition OVN-Kubernetes or the SR-IOV operator makes from the run's objects")
	kubeVM(fs, o)
}

// kubeVM binds the VM endpoint flags (KubeVirt), under k8s-netperf's names where it has them
// (--vm, --vm-image, --sockets, --cores, --threads, --use-virtctl). Each overrides its field of a
// plan's vm block (api.PlanVM; cnperf run's applyPlanVM).
func kubeVM(fs *pflag.FlagSet, o *kube.Options) {
	fs.StringVar(&o.VM, "vm", "", "kube: endpoints as KubeVirt VMs (the drivers native, netperf and iperf3, whose tools the cnperf guest carries, on the pod-to-pod and pod-clusterip paths): --vm=server, --vm=client or --vm=both (--vm alone: both, as k8s-netperf's --vm); overrides a plan's vm.endpoints (--vm=none: pods, whatever the plan says)")
	fs.Lookup("vm").NoOptDefVal = "both"
	fs.StringVar(&o.VMImage, "vm-image", "", "kube: with --vm, the cnperf guest image (/boot/vmlinuz, /boot/initramfs.img whose /init runs the agent; test/e2e/harness/kubevirt.sh build makes one), booted with kernelBoot; overrides a plan's vm.image")
	fs.StringVar(&o.VMBinding, "vm-binding", "", "kube: with --vm, the guest's pod-network binding: masquerade (default), bridge or passt (KubeVirt's feature gate Passt); overrides a plan's vm.binding")
	fs.IntVar(&o.VMSockets, "sockets", 0, "kube: with --vm, the guest's CPU sockets (default 1; k8s-netperf's default is 2); overrides a plan's vm.sockets")
	fs.IntVar(&o.VMCores, "cores", 0, "kube: with --vm, cores per socket (default 1; k8s-netperf's default is 2); overrides a plan's vm.cores")
	fs.IntVar(&o.VMThreads, "threads", 0, "kube: with --vm, threads per core (default 1); overrides a plan's vm.threads")
	fs.StringVar(&o.VMMemory, "vm-memory", "", "kube: with --vm, the guest's memory (default "+kube.DefaultVMMemory+"); overrides a plan's vm.memory")
	fs.DurationVar(&o.VMStartTimeout, "vm-start-timeout", kube.DefaultVMStartTimeout, "kube: with --vm, how long a VM may take to run and answer (its console's last lines if it does not); overrides a plan's vm.startTimeout")
	fs.BoolVar(&o.VMUseVirtctl, "use-virtctl", false, "kube: with --vm, k8s-netperf's --use-virtctl (virtctl ssh instead of ssh into its guests), accepted and said to change nothing: "+
		"cnperf has no SSH in its guests and reaches their agent through a relay pod")
}

// Lab binds the lab flags to fs, writing into o (whose current values are the defaults, usually
// lab.DefaultOptions()).
func Lab(fs *pflag.FlagSet, o *lab.Options) {
	fs.StringVar(&o.CIDR, "lab-cidr", o.CIDR, "IPv4 range the network-namespace lab takes its addresses from (at least a /21; checked against the host's addresses and routes)")
	fs.IntVar(&o.MTUBytes, "mtu", o.MTUBytes, "underlay MTU of the lab's nodes in bytes (pods get it minus 50 with VXLAN)")
	fs.StringVar(&o.Underlay, "underlay", o.Underlay, "how the lab's two nodes are joined: bridge (a switch in a fabric namespace) or veth (a direct cable)")
	fs.StringSliceVar(&o.Overlays, "overlay", o.Overlays, "cross-node pod networking flavours to measure: routed, vxlan")
	fs.IntSliceVar(&o.PolicyRules, "policy-rules", o.PolicyRules, "numbers of network-policy filter rules in the forwarding path of the pod-pod paths, e.g. 0,100,1000,10000")
	fs.StringSliceVar(&o.PolicyStyles, "policy-style", o.PolicyStyles, "layouts of the policy rules: chains (iptables-mode per-policy chains), sets (nftables sets), chains-ct, sets-ct (established flows accepted first by conntrack)")
	fs.StringSliceVar(&o.ServiceProxies, "service-proxy", o.ServiceProxies, "ClusterIP implementations to measure on pod-clusterip: nftables, iptables (iptables-nft)")
	fs.IntVar(&o.ServiceBackends, "service-backends", o.ServiceBackends, "backend pods behind the lab's ClusterIP")
	fs.BoolVar(&o.ServiceAffinity, "service-affinity", o.ServiceAffinity, "pin each client to one backend (sessionAffinity: ClientIP); needed by drivers with separate control and data connections when there are several backends")
	fs.IntVar(&o.PodMTUBytes, "lab-pod-mtu", o.PodMTUBytes, "MTU of the lab pods' interfaces (0: the underlay's minus the overlay header); above the path's, the lab is broken on purpose, as --check-mtu finds")
	fs.BoolVar(&o.DropFragNeeded, "lab-drop-frag-needed", o.DropFragNeeded, "the lab's nodes drop ICMP \"fragmentation needed\", so path-MTU discovery fails (with --lab-pod-mtu above the path: a black hole)")
}

// TigerBench binds the tiger-bench flags of `cnperf run` to fs.
func TigerBench(fs *pflag.FlagSet, o *tigerbench.Options) {
	fs.BoolVar(&o.AllowClusterChanges, "allow-cluster-changes", false, "tiger-bench: allow tests to reconfigure Calico (encap, dataplane, calicoNodeCPULimit); the previous settings are restored at the end")
	fs.StringVar(&o.TestNodeSelector, "test-node-selector", "", "tiger-bench: label selector of the test nodes (default "+tigerbench.DefaultTestNodeSelector+", else every schedulable node)")
	fs.IntVar(&o.Parallelism, "standing-parallelism", tigerbench.DefaultParallelism, "tiger-bench: standing config API writes in flight")
	fs.DurationVar(&o.StandingTimeout, "standing-timeout", tigerbench.DefaultStandingTimeout, "tiger-bench: how long standing pods may take to be ready")
	fs.DurationVar(&o.TTFRResponseTimeout, "ttfr-response-timeout", tigerbench.DefaultTTFRResponseTimeout, "tiger-bench: how long a TTFR client pod tries to reach its server before it counts as a failure")
}

// Sinks binds --opensearch, --index, --opensearch-username, --opensearch-password-file,
// --prometheus, --prometheus-token-file, --push-gateway, --push-job, --insecure-skip-tls-verify,
// --ca-file and --allow-plain-http-credentials to fs.
func Sinks(fs *pflag.FlagSet, f *sink.Options) {
	fs.StringVar(&f.OpenSearchURL, "opensearch", "", "OpenSearch/Elasticsearch URL to index results into, one document per result (credentials in the URL are used and never printed, but every local user sees them in the process list: prefer --opensearch-password-file or $"+opensearch.EnvPassword+")")
	fs.StringVar(&f.Index, "index", opensearch.DefaultIndex, "index for --opensearch")
	fs.StringVar(&f.OpenSearchUsername, "opensearch-username", "", "username for --opensearch (default: from the URL or $"+opensearch.EnvUsername+")")
	fs.StringVar(&f.OpenSearchPasswordFile, "opensearch-password-file", "", "file holding the password for --opensearch (default: from the URL or $"+opensearch.EnvPassword+")")
	fs.StringVar(&f.PrometheusURL, "prometheus", "", "Prometheus URL to query node CPU, CNI/proxy agent pods and interface drops for each case's window, and (kube) the nodes' hardware from their node-exporters")
	fs.StringVar(&f.PrometheusTokenFile, "prometheus-token-file", "", "file holding a bearer token for --prometheus (default: $"+prometheus.EnvToken+")")
	fs.StringVar(&f.PushGatewayURL, "push-gateway", "", "Prometheus Pushgateway URL to push each run's metrics to (the -o prometheus families; each run replaces its group: --push-job, the plan's name and the run's labels)")
	fs.StringVar(&f.PushJob, "push-job", pushgateway.DefaultJob, "job label of the groups --push-gateway pushes")
	fs.BoolVar(&f.InsecureSkipTLSVerify, "insecure-skip-tls-verify", false, "do not verify the TLS certificates of --opensearch, --prometheus and --push-gateway")
	fs.StringVar(&f.CAFile, "ca-file", "", "PEM file of extra certificate authorities to trust for --opensearch, --prometheus and --push-gateway")
	fs.BoolVar(&f.AllowPlainHTTP, "allow-plain-http-credentials", false, "send the --opensearch/--prometheus/--push-gateway credentials to an http:// URL (refused otherwise: anyone on the way can read them)")
}

// OpenSearchSource binds the flags of an OpenSearch index read as a source (cnperf trend):
// --opensearch, --index, --opensearch-username, --opensearch-password-file,
// --insecure-skip-tls-verify, --ca-file and --allow-plain-http-credentials, the same names and
// settings as Sinks' for writing.
func OpenSearchSource(fs *pflag.FlagSet, f *sink.Options) {
	fs.StringVar(&f.OpenSearchURL, "opensearch", "", "OpenSearch/Elasticsearch URL to read runs from, the documents cnperf run --opensearch indexed (credentials as for cnperf run: prefer --opensearch-password-file or $"+opensearch.EnvPassword+")")
	fs.StringVar(&f.Index, "index", opensearch.DefaultIndex, "index for --opensearch")
	fs.StringVar(&f.OpenSearchUsername, "opensearch-username", "", "username for --opensearch (default: from the URL or $"+opensearch.EnvUsername+")")
	fs.StringVar(&f.OpenSearchPasswordFile, "opensearch-password-file", "", "file holding the password for --opensearch (default: from the URL or $"+opensearch.EnvPassword+")")
	fs.BoolVar(&f.InsecureSkipTLSVerify, "insecure-skip-tls-verify", false, "do not verify the TLS certificates of --opensearch")
	fs.StringVar(&f.CAFile, "ca-file", "", "PEM file of extra certificate authorities to trust for --opensearch")
	fs.BoolVar(&f.AllowPlainHTTP, "allow-plain-http-credentials", false, "send the --opensearch credentials to an http:// URL (refused otherwise: anyone on the way can read them)")
}

// DryRun binds kubectl's --dry-run to fs: none (the default), client (what the bare flag
// means: validate and print what would be done, contacting nothing), or server (refused: no
// cnperf command has a server side that could check without doing).
func DryRun(fs *pflag.FlagSet, dryRun *bool, usage string) {
	fs.Var(&dryRunValue{on: dryRun}, "dry-run", usage+" (--dry-run is --dry-run=client; none: off)")
	fs.Lookup("dry-run").NoOptDefVal = "client"
}

type dryRunValue struct{ on *bool }

func (v *dryRunValue) String() string {
	if v.on != nil && *v.on {
		return "client"
	}
	return "none"
}

func (v *dryRunValue) Set(s string) error {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "none", "false":
		*v.on = false
	case "client", "true":
		*v.on = true
	case "server":
		return errors.New(`"server" is not supported: cnperf validates and plans on the client (use --dry-run or --dry-run=client)`)
	default:
		return fmt.Errorf("%q: want none, client or server%s", s, Suggest(s, []string{"none", "client", "server"}))
	}
	return nil
}

func (v *dryRunValue) Type() string { return "string" }

// Suggest returns ` (did you mean "X"?)` for the known value closest to an unknown one, or "".
func Suggest(value string, known []string) string {
	if c := plan.Closest(value, known); c != "" && !strings.EqualFold(c, value) {
		return fmt.Sprintf(" (did you mean %q?)", c)
	}
	return ""
}

// Files is cobra's MinimumNArgs(least) for commands that read files, with a message that says
// what is missing and how the command is used instead of cobra's "requires at least N arg(s)".
func Files(least int, what string) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) >= least {
			return nil
		}
		return exit.Usage("%s: %s (usage: %s; see %s --help)", cmd.CommandPath(), what, cmd.UseLine(), cmd.CommandPath())
	}
}

// CompleteValues makes shell completion offer values for flag name of c (cobra's
// RegisterFlagCompletionFunc). With list, the flag takes comma-separated values and completion
// continues after the last comma. values is called at completion time, so it reads the
// registries as they are.
func CompleteValues(c *cobra.Command, name string, list bool, values func() []string) {
	_ = c.RegisterFlagCompletionFunc(name, func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		done := ""
		if list {
			if i := strings.LastIndex(toComplete, ","); i >= 0 {
				done = toComplete[:i+1]
			}
		}
		var out []cobra.Completion
		for _, v := range values() {
			out = append(out, done+v)
		}
		dir := cobra.ShellCompDirectiveNoFileComp
		if list { // after TCP_RR, the user may type a comma and another value
			dir |= cobra.ShellCompDirectiveNoSpace
		}
		return out, dir
	})
}
