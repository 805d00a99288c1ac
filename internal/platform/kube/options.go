package kube

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/netip"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/cnperf/cnperf/internal/agenttoken"
	"github.com/cnperf/cnperf/internal/clusterinfo"
	"github.com/cnperf/cnperf/internal/keyval"
	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/platform"
	"github.com/cnperf/cnperf/internal/version"
)

// Options are the Kubernetes platform's settings (internal/cli/flags binds them to flags).
type Options struct {
	// NoPreflight skips the SelfSubjectAccessReview permission check before anything is
	// created (tests on a fake API server, which allows nothing it is not told to).
	NoPreflight bool
	// AgentToken is the run's token for the built-in agent, handed to every endpoint
	// container in its environment (the pod spec, never a command line); empty:
	// agenttoken.ForRun().
	AgentToken string
	// Kubeconfig is the kubeconfig file; empty means $KUBECONFIG, then ~/.kube/config, then
	// the in-cluster service account.
	Kubeconfig string
	// Context is the kubeconfig context; empty means the current one.
	Context string
	// Namespace is where every object goes. It is created when absent and then removed at the
	// end (unless Keep); a namespace cnperf did not create is never deleted.
	Namespace string
	// ClientNamespace and ServerNamespace put the client pods, and the server pods with their
	// Services, in namespaces of their own (k8s-netperf #130: traffic between namespaces);
	// empty means Namespace. Each is created and removed as Namespace is.
	ClientNamespace string
	ServerNamespace string
	// Keep leaves the namespace and every object in place at the end.
	Keep bool

	// ServerNode and ClientNode pin the endpoints; empty means automatic choice.
	ServerNode string
	ClientNode string
	// NodeSelector restricts the nodes considered (KEY=VALUE,...).
	NodeSelector []string
	// Tolerations let endpoints run on tainted nodes: KEY[=VALUE][:EFFECT], or "*" for all.
	Tolerations []string

	// Image is the agent image (cnperf plus every tool); ImagePullPolicy its pull policy.
	Image           string
	ImagePullPolicy string
	// Resources are requests/limits for every endpoint container:
	// NAME=QTY (request and limit), requests.NAME=QTY, limits.NAME=QTY.
	Resources []string
	// Guaranteed gives endpoints Guaranteed QoS (limits = requests; cpu and memory required).
	Guaranteed bool
	// Privileged runs endpoint containers privileged (CPU pinning, tuning). Off unless asked.
	Privileged bool
	// PodLabels and PodAnnotations are added to every pod cnperf creates, KEY=VALUE each
	// (kube.ParsePodMetadata: cnperf's own label keys are refused).
	PodLabels      []string
	PodAnnotations []string

	// External is the target of external-service cases, "HOST" or "HOST:PORT[,PORT...]" (the
	// same value as the local platform's --external, which the run command registers): the
	// ports replace, in order, the ports of the driver's servers. cnperf still deploys the
	// server pods (labelled cnperf.dev/role=server) so that whatever exposes them (a
	// LoadBalancer, a NodePort, an ingress) has something to reach, as tiger-bench's external
	// test expects.
	External string
	// ExternalClient is where external-service clients run: "pod" (a client pod) or "local"
	// (this machine, as tiger-bench does; the tools must be installed here).
	ExternalClient string

	// IdleFootprint, when not 0, is how long to sample the CNI's and the proxy's agents' CPU
	// and memory on the endpoints' nodes after set-up, before the measurement (kubelet
	// summaries through the node proxy: get nodes/proxy). At least
	// clusterinfo.MinFootprintWindow.
	IdleFootprint time.Duration
	// Hardware, when set (--prometheus), reads the nodes' hardware from their node-exporters
	// before the agent is asked (clusterinfo.Input.Hardware). Not a flag: the run command sets it.
	Hardware clusterinfo.HardwareReader

	// CreateNetwork, when set, is a NetworkAttachmentDefinition the run creates in Namespace
	// after the namespace and before the pods, measures on (the cases' network must be
	// Namespace/CreateNetwork.Name) and deletes at the end; one of that name that exists already
	// stops the run. k8s-netperf's --macvlan MASTER (MacvlanDefinition).
	CreateNetwork *kube.NetworkDefinition
	// NetworkMode, when set, is a k8s-netperf network mode that OVN-Kubernetes or the SR-IOV
	// Network Operator must provide (--udnl2, --udnl3, --cudn, --localnet, --sriov): the run
	// checks what the cluster lacks for it after choosing the nodes, before anything is created,
	// and stops when something is (exit status 2; kube.CheckNetworkMode); else it creates the
	// mode's objects after its namespace, waits for the definition they make and measures on it
	// (the cases' network must be ModeNetwork(NetworkMode)), and deletes them at the end.
	NetworkMode *kube.NetworkMode
	// ModeNetworkTimeout bounds the wait for the NetworkAttachmentDefinition NetworkMode's objects
	// make (0: kube.DefaultModeNetworkTimeout).
	ModeNetworkTimeout time.Duration

	// VM makes endpoints KubeVirt VirtualMachineInstances instead of pods (k8s-netperf's --vm):
	// "server", "client" or "both"; "" none. The guest is VMImage, booted with kernelBoot (a
	// kernel and an initramfs whose /init runs the cnperf agent); its interface joins the pod
	// network with VMBinding; VMSockets, VMCores and VMThreads are its CPU topology (0: 1),
	// VMMemory its memory (default DefaultVMMemory). VMs run the drivers of VMGuestTools, on
	// the pod-to-pod paths.
	VM             string
	VMImage        string
	VMBinding      string
	VMSockets      int
	VMCores        int
	VMThreads      int
	VMMemory       string
	VMStartTimeout time.Duration
	// VMUseVirtctl is k8s-netperf's --use-virtctl (virtctl ssh into its guests instead of ssh):
	// accepted with VM for k8s-netperf's command lines, and it changes nothing, which the run
	// says: cnperf reaches its guests' agent through the relay pod, with no SSH at all.
	VMUseVirtctl bool
	// VMNetworkServer and VMNetworkClient are the VMs' static addresses (CIDR) on the run's
	// secondary network when its definition has no IPAM (k8s-netperf's --bridgeNetwork JSON,
	// bridgeServerNetwork and bridgeClientNetwork): KubeVirt's bridge binding then serves the
	// guest no address, and the guest's /init sets this one. A second VM client takes the
	// address after the client's, and so on. "": k8s-netperf's defaults
	// (DefaultVMNetworkServer, DefaultVMNetworkClient).
	VMNetworkServer, VMNetworkClient string
	// VMGuestTools are the drivers the cnperf guest can run, with the tools it carries for each
	// (internal/driver/all.GuestTools); nil: the native driver only (its agent is cnperf).
	VMGuestTools map[string][]string

	// PodStartTimeout bounds how long endpoints may take to become ready.
	PodStartTimeout time.Duration
	// ExecTimeout bounds one command when the driver and the runner set none.
	ExecTimeout time.Duration
	// MaxOutputBytes bounds what one exec may print on each stream.
	MaxOutputBytes int
}

// Defaults.
const (
	DefaultNamespace       = "cnperf"
	DefaultPodStartTimeout = 3 * time.Minute
	DefaultExecTimeout     = 5 * time.Minute
	// DefaultVMMemory is a VM endpoint's memory; DefaultVMStartTimeout how long it may take to
	// run and answer (a guest in software emulation boots in about a minute under load).
	DefaultVMMemory = "512Mi"
	// DefaultVMNetworkServer and DefaultVMNetworkClient are k8s-netperf's bridgeNetwork.json.
	DefaultVMNetworkServer = "10.10.10.12/24"
	DefaultVMNetworkClient = "10.10.10.14/24"
	DefaultVMStartTimeout  = 10 * time.Minute
)

// withDefaults fills zero values.
func (o Options) withDefaults() Options {
	if o.AgentToken == "" {
		o.AgentToken, _ = agenttoken.ForRun() // crypto/rand does not fail on Linux
	}
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if o.Image == "" {
		o.Image = version.DefaultImage()
	}
	if o.ImagePullPolicy == "" {
		o.ImagePullPolicy = string(corev1.PullIfNotPresent)
	}
	if o.ExternalClient == "" {
		o.ExternalClient = "pod"
	}
	if o.PodStartTimeout <= 0 {
		o.PodStartTimeout = DefaultPodStartTimeout
	}
	if o.ExecTimeout <= 0 {
		o.ExecTimeout = DefaultExecTimeout
	}
	if o.MaxOutputBytes <= 0 {
		o.MaxOutputBytes = kube.DefaultMaxOutputBytes
	}
	return o
}

// settings is Options parsed and validated.
type settings struct {
	Options
	pullPolicy    corev1.PullPolicy
	nodeSelector  map[string]string
	tolerations   []corev1.Toleration
	resources     corev1.ResourceRequirements
	externalHost  string
	externalPorts []int
	podMeta       kube.PodMetadata
	// vmServer and vmClient: which endpoints are VMs (Options.VM); vmMemory is VMMemory parsed
	vmServer, vmClient bool
	vmMemory           resource.Quantity
	// vmNetServer and vmNetClient are VMNetworkServer and VMNetworkClient parsed
	vmNetServer, vmNetClient netip.Prefix
}

// parse validates every option and returns the parsed form. Errors name the flag.
func (o Options) parse() (*settings, error) {
	o = o.withDefaults()
	s := &settings{Options: o}
	var err error
	if s.pullPolicy, err = kube.ParsePullPolicy(o.ImagePullPolicy); err != nil {
		return nil, err
	}
	if s.podMeta, err = kube.ParsePodMetadata(o.PodLabels, o.PodAnnotations); err != nil {
		return nil, err
	}
	if s.nodeSelector, err = keyval.Parse("--node-selector", o.NodeSelector); err != nil {
		return nil, err
	}
	if s.tolerations, err = kube.ParseTolerations(o.Tolerations); err != nil {
		return nil, err
	}
	if s.resources, err = parseResources(o.Resources, o.Guaranteed); err != nil {
		return nil, err
	}
	if o.External != "" {
		if s.externalHost, s.externalPorts, err = platform.ParseExternal(o.External); err != nil {
			return nil, err
		}
	}
	if o.IdleFootprint != 0 && o.IdleFootprint < clusterinfo.MinFootprintWindow {
		return nil, fmt.Errorf("--idle-footprint: %s is shorter than %s (the kubelet refreshes its readings every 10-15 s; 0 is off)",
			o.IdleFootprint, clusterinfo.MinFootprintWindow)
	}
	if o.ExternalClient != "pod" && o.ExternalClient != "local" {
		return nil, fmt.Errorf("--external-client: %q is not pod or local", o.ExternalClient)
	}
	if errs := validateDNSLabel(o.Namespace); errs != "" {
		return nil, fmt.Errorf("--namespace: %q %s", o.Namespace, errs)
	}
	for _, f := range []struct{ flag, ns string }{{"--client-namespace", o.ClientNamespace}, {"--server-namespace", o.ServerNamespace}} {
		if f.ns == "" {
			continue
		}
		if errs := validateDNSLabel(f.ns); errs != "" {
			return nil, fmt.Errorf("%s: %q %s", f.flag, f.ns, errs)
		}
	}
	if m := o.NetworkMode; m != nil && o.ClientNamespace != "" && o.ClientNamespace != o.serverNamespaceOf() {
		return nil, fmt.Errorf("%s: the network is made in one namespace (k8s-netperf's): --client-namespace %s and the servers' %s must be the same",
			m.Flag, o.ClientNamespace, o.serverNamespaceOf())
	}
	if err := s.parseVM(); err != nil {
		return nil, err
	}
	if d := o.CreateNetwork; d != nil {
		if errs := validateDNSLabel(d.Name); errs != "" {
			return nil, fmt.Errorf("the NetworkAttachmentDefinition to create: name %q %s", d.Name, errs)
		}
		if !json.Valid([]byte(d.Config)) {
			return nil, fmt.Errorf("the NetworkAttachmentDefinition to create, %s: its configuration is not JSON: %s", d.Name, d.Config)
		}
	}
	return s, nil
}

// clientNamespace is where the client pods go; serverNamespace where the server pods and
// their Services go.
func (s *settings) clientNamespace() string { return cmp.Or(s.ClientNamespace, s.Namespace) }
func (s *settings) serverNamespace() string { return cmp.Or(s.ServerNamespace, s.Namespace) }

// namespaceOf is the namespace of an endpoint of role ("client" or "server").
func (s *settings) namespaceOf(role string) string {
	if role == "client" {
		return s.clientNamespace()
	}
	return s.serverNamespace()
}

// namespaces are the run's namespaces, the servers' first, each once.
func (s *settings) namespaces() []string {
	if s.serverNamespace() == s.clientNamespace() {
		return []string{s.serverNamespace()}
	}
	return []string{s.serverNamespace(), s.clientNamespace()}
}

// parseResources reads NAME=QTY (request and limit), requests.NAME=QTY, limits.NAME=QTY.
func parseResources(in []string, guaranteed bool) (corev1.ResourceRequirements, error) {
	var rr corev1.ResourceRequirements
	set := func(m *corev1.ResourceList, name string, q resource.Quantity) {
		if *m == nil {
			*m = corev1.ResourceList{}
		}
		(*m)[corev1.ResourceName(name)] = q
	}
	for _, item := range in {
		k, v, ok := strings.Cut(item, "=")
		if !ok || k == "" || v == "" {
			return rr, fmt.Errorf("--resources: %q is not NAME=QTY, requests.NAME=QTY or limits.NAME=QTY", item)
		}
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return rr, fmt.Errorf("--resources: %q: %w", item, err)
		}
		switch {
		case strings.HasPrefix(k, "requests."):
			set(&rr.Requests, strings.TrimPrefix(k, "requests."), q)
		case strings.HasPrefix(k, "limits."):
			set(&rr.Limits, strings.TrimPrefix(k, "limits."), q)
		default:
			set(&rr.Requests, k, q)
			set(&rr.Limits, k, q)
		}
	}
	for name, lim := range rr.Limits {
		if req, ok := rr.Requests[name]; ok && req.Cmp(lim) > 0 {
			return rr, fmt.Errorf("--resources: request %s=%s is above its limit %s", name, req.String(), lim.String())
		}
	}
	if guaranteed {
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			req, hasReq := rr.Requests[name]
			lim, hasLim := rr.Limits[name]
			switch {
			case hasReq && hasLim && req.Cmp(lim) != 0:
				return rr, fmt.Errorf("--guaranteed: %s request %s differs from its limit %s", name, req.String(), lim.String())
			case hasReq:
				set(&rr.Limits, string(name), req)
			case hasLim:
				set(&rr.Requests, string(name), lim)
			default:
				return rr, fmt.Errorf("--guaranteed needs a %s amount in --resources (e.g. --resources cpu=2,memory=1Gi)", name)
			}
		}
		for name := range rr.Requests {
			if _, ok := rr.Limits[name]; !ok {
				set(&rr.Limits, string(name), rr.Requests[name])
			}
		}
	}
	return rr, nil
}

// validateDNSLabel returns why s is not an RFC 1123 label, or "".
func validateDNSLabel(s string) string {
	if len(s) == 0 || len(s) > 63 {
		return "must be 1-63 characters"
	}
	for i, r := range s {
		alnum := (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9')
		if !alnum && (r != '-' || i == 0 || i == len(s)-1) {
			return "must be lower-case letters, digits and '-', starting and ending with a letter or digit"
		}
	}
	return ""
}

// sortedKeys returns m's keys in order (nothing visible may depend on map order).
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
