package kube

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/guestexec"
	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/plan"
)

// A VM endpoint (--vm) is a KubeVirt VirtualMachineInstance in place of the endpoint's pod: the
// cnperf guest (kernelBoot from --vm-image), whose /init runs `cnperf agent serve` on the
// native driver's default ports with the run's token (the run's Secret, a disk of the VMI) and
// an exec port (guestexec) for the commands the platform runs in it: a driver's client argv, a
// driver's server argv left running in the background (netserver), cnperf's own commands. The platform reaches that exec port
// from the run's relay pod (a pod-network pod on the server node): the agent in the guest is
// reached with the run's token, as in the pods, and cnperf keeps no SSH keys.

// VM roles (Options.VM).
const (
	vmServer = "server"
	vmClient = "client"
	vmBoth   = "both"
)

// The guest's agent listens on the native driver's default ports (guest-init): a VM server
// runs a native case on those; another driver's servers run beside it on their own ports,
// started through the exec port (startVMServers).
const (
	guestControlPort = 7100
	guestDataPort    = 7101
	guestDriver      = "native"
)

// guestPorts are the ports the guest's agent listens on: control and data (TCP; the data port
// also UDP) and the exec port, which the platform reaches from the relay pod.
var guestPorts = []kube.VMPort{{Port: guestControlPort, Protocol: "TCP"}, {Port: guestDataPort, Protocol: "TCP"},
	{Port: guestDataPort, Protocol: "UDP"}, {Port: guestexec.DefaultPort, Protocol: "TCP"}}

// VMSettingError is a bad VM setting (Options.VM...). Its message names the flag; Setting is
// the setting's name in a plan's vm block (api.PlanVM's field, e.g. "binding" for vm.binding),
// so that a value the plan gave is reported at its line instead.
type VMSettingError struct {
	Setting string // e.g. "binding"
	Flag    string // e.g. "--vm-binding"
	// Problem is what is wrong, after the name: `"x" is not masquerade, bridge or passt`.
	Problem string
	// Text, when set, is the whole message for the flag; else it is "Flag: Problem".
	Text string
}

func (e *VMSettingError) Error() string {
	if e.Text != "" {
		return e.Text
	}
	return e.Flag + ": " + e.Problem
}

func vmSettingErr(setting, flag, format string, a ...any) *VMSettingError {
	return &VMSettingError{Setting: setting, Flag: flag, Problem: fmt.Sprintf(format, a...)}
}

// parseVM reads the VM options into s. Errors are *VMSettingError.
func (s *settings) parseVM() error {
	o := s.Options
	if o.VM == "" {
		for _, f := range []struct {
			setting, flag string
			set           bool
		}{{"image", "--vm-image", o.VMImage != ""}, {"binding", "--vm-binding", o.VMBinding != ""}, {"sockets", "--sockets", o.VMSockets != 0},
			{"cores", "--cores", o.VMCores != 0}, {"threads", "--threads", o.VMThreads != 0}, {"memory", "--vm-memory", o.VMMemory != ""},
			{"useVirtctl", "--use-virtctl", o.VMUseVirtctl}} {
			if f.set {
				return vmSettingErr(f.setting, f.flag, "only with --vm (server, client or both)")
			}
		}
		return nil
	}
	switch o.VM {
	case vmServer:
		s.vmServer = true
	case vmClient:
		s.vmClient = true
	case vmBoth:
		s.vmServer, s.vmClient = true, true
	default:
		e := vmSettingErr("endpoints", "--vm", "%q is not server, client or both", o.VM)
		e.Text = e.Error() + " (--vm alone is both, as k8s-netperf's)"
		return e
	}
	if o.VMImage == "" {
		const what = "the cnperf guest image (/boot/vmlinuz and /boot/initramfs.img whose /init runs " +
			"the cnperf agent; test/e2e/harness/kubevirt.sh build makes one): cnperf cannot install its agent into another guest"
		return &VMSettingError{Setting: "image", Flag: "--vm-image", Text: "--vm needs --vm-image IMAGE: " + what,
			Problem: "missing: the cnperf guest image, whose /init runs the cnperf agent (docs/vm.md)"}
	}
	if o.VMBinding == "" {
		s.VMBinding = kube.BindingMasquerade
	} else if !slices.Contains(kube.Bindings, o.VMBinding) {
		last := len(kube.Bindings) - 1
		return vmSettingErr("binding", "--vm-binding", "%q is not %s or %s", o.VMBinding, strings.Join(kube.Bindings[:last], ", "), kube.Bindings[last])
	}
	for _, f := range []struct {
		setting, flag string
		v             *int
	}{{"sockets", "--sockets", &s.VMSockets}, {"cores", "--cores", &s.VMCores}, {"threads", "--threads", &s.VMThreads}} {
		if *f.v == 0 {
			*f.v = 1
		}
		if *f.v < 1 || *f.v > 64 {
			return vmSettingErr(f.setting, f.flag, "%d is not in 1..64", *f.v)
		}
	}
	mem := o.VMMemory
	if mem == "" {
		mem = DefaultVMMemory
	}
	q, err := resource.ParseQuantity(mem)
	if err != nil || q.Cmp(resource.MustParse("128Mi")) < 0 {
		return vmSettingErr("memory", "--vm-memory", "%q is not a quantity of at least 128Mi, e.g. 512Mi", mem)
	}
	s.vmMemory = q
	if s.VMStartTimeout < 0 {
		return vmSettingErr("startTimeout", "--vm-start-timeout", "%s is negative (0 is the default, %s)", s.VMStartTimeout, DefaultVMStartTimeout)
	}
	if s.VMStartTimeout == 0 {
		s.VMStartTimeout = DefaultVMStartTimeout
	}
	var err2 error
	if s.vmNetServer, s.vmNetClient, err2 = ParseVMNetwork(cmp.Or(o.VMNetworkServer, DefaultVMNetworkServer),
		cmp.Or(o.VMNetworkClient, DefaultVMNetworkClient)); err2 != nil {
		return err2
	}
	return nil
}

// ParseVMNetwork reads the VMs' static addresses on a secondary network (k8s-netperf's
// bridgeServerNetwork and bridgeClientNetwork): two addresses in CIDR notation, different, on
// the same network (the guests reach each other without a router).
func ParseVMNetwork(server, client string) (srv, cli netip.Prefix, err error) {
	for _, a := range []struct {
		name, v string
		p       *netip.Prefix
	}{{"bridgeServerNetwork", server, &srv}, {"bridgeClientNetwork", client, &cli}} {
		if *a.p, err = netip.ParsePrefix(strings.TrimSpace(a.v)); err != nil {
			return srv, cli, fmt.Errorf("%s: %q is not an address in CIDR notation (e.g. %s)", a.name, a.v, DefaultVMNetworkServer)
		}
		if a.p.Addr() == a.p.Masked().Addr() && a.p.Bits() < a.p.Addr().BitLen()-1 {
			return srv, cli, fmt.Errorf("%s: %s is the network's own address, not a host's", a.name, a.v)
		}
		if broadcast(*a.p) {
			return srv, cli, fmt.Errorf("%s: %s is the network's broadcast address, not a host's", a.name, a.v)
		}
	}
	if srv.Addr() == cli.Addr() {
		return srv, cli, fmt.Errorf("bridgeServerNetwork and bridgeClientNetwork: both are %s; the server and the client need their own", srv.Addr())
	}
	if srv.Masked() != cli.Masked() {
		return srv, cli, fmt.Errorf("bridgeServerNetwork %s and bridgeClientNetwork %s are not on the same network (the VMs reach each other without a router)", srv, cli)
	}
	return srv, cli, nil
}

// broadcast says whether p's address is its IPv4 network's last, the broadcast address (on a
// network of more than two addresses).
func broadcast(p netip.Prefix) bool {
	if !p.Addr().Is4() || p.Bits() >= 31 {
		return false
	}
	last := p.Addr().As4()
	host := uint32(1)<<(32-p.Bits()) - 1
	v := uint32(last[0])<<24 | uint32(last[1])<<16 | uint32(last[2])<<8 | uint32(last[3])
	return v&host == host
}

// vmStaticAddress is the static address (CIDR) of a VM endpoint on a secondary network
// without IPAM: the server's, or the n-th client's (0: bridgeClientNetwork, then the addresses
// after it, never the server's), which must stay on the network.
func (s *settings) vmStaticAddress(role string, n int) (string, error) {
	if role == "server" {
		return s.vmNetServer.String(), nil
	}
	a := s.vmNetClient.Addr()
	for i := 0; i < n; i++ {
		if a = a.Next(); a == s.vmNetServer.Addr() {
			a = a.Next()
		}
	}
	if !s.vmNetClient.Contains(a) || broadcast(netip.PrefixFrom(a, s.vmNetClient.Bits())) {
		return "", fmt.Errorf("VM client %d: no address left on %s after %s (--bridgeNetwork)", n+1, s.vmNetClient.Masked(), s.vmNetClient.Addr())
	}
	return netip.PrefixFrom(a, s.vmNetClient.Bits()).String(), nil
}

// useVirtctlNote is what the run says of k8s-netperf's --use-virtctl.
const useVirtctlNote = "--use-virtctl changes nothing here: k8s-netperf reaches its guests by ssh or virtctl ssh; " +
	"cnperf has no SSH in its guests and reaches their agent through the relay pod (docs/vm.md)"

// vmOn says whether an endpoint of role is a VM.
func (s *settings) vmOn(role string) bool {
	if role == "client" {
		return s.vmClient
	}
	return s.vmServer
}

// checkVMPath refuses what a VM endpoint cannot be: a driver whose tools are not in the guest,
// or a path other than a pod-network path between two endpoints, reached at the server's
// address or through a ClusterIP Service (a VM on the pod network: the Service selects its
// virt-launcher pod, which KubeVirt labels as the VMI, and the binding forwards to the guest).
func (s *settings) checkVMPath(c plan.Case, r route) error {
	if !s.vmServer && !s.vmClient {
		return nil
	}
	if _, ok := s.guestTools()[c.Driver]; !ok {
		drivers := s.guestDrivers()
		run := "the " + strings.Join(drivers, ", ") + " driver"
		if len(drivers) > 1 {
			run = "the drivers " + strings.Join(drivers, ", ")
		}
		return fmt.Errorf("--vm: driver %s: its tools are not in the cnperf guest, which has %s; VM endpoints run %s",
			c.Driver, s.guestHas(), run)
	}
	onNet := r.serverNet == r.clientNet && (r.serverNet == api.NetworkPod || r.serverNet == api.NetworkAttachment)
	viaService := r.access == api.AccessClusterIP && r.serverNet == api.NetworkPod
	if !onNet || (r.access != api.AccessDirect && !viaService) || (r.clientNode != roleServerNode && r.clientNode != roleClientNode) {
		return fmt.Errorf("--vm: path %s: VM endpoints are on the pod network (or the run's secondary network), reached at their "+
			"address or a ClusterIP (use %s)",
			c.Path, plan.Join(vmPaths()))
	}
	return nil
}

// guestTools are the drivers the guest runs, with their tools (Options.VMGuestTools; the
// native driver alone when none are given).
func (s *settings) guestTools() map[string][]string {
	if s.VMGuestTools == nil {
		return map[string][]string{guestDriver: nil}
	}
	return s.VMGuestTools
}

// guestDrivers lists the drivers the guest runs, sorted.
func (s *settings) guestDrivers() []string { return slices.Sorted(maps.Keys(s.guestTools())) }

// guestHas says what the guest carries: "cnperf, iperf3, netperf, netserver".
func (s *settings) guestHas() string {
	return strings.Join(append([]string{"cnperf"}, driver.DistinctTools(s.guestTools())...), ", ")
}

// vmPaths lists, from the path table, the paths a VM endpoint can be on.
func vmPaths() []api.Path {
	var out []api.Path
	for _, p := range api.Paths {
		row, _ := p.Row()
		if row.ClientNetwork == api.NetworkPod && row.ServerNetwork == api.NetworkPod &&
			(row.Access == api.AccessDirect || row.Access == api.AccessClusterIP) &&
			(row.Nodes == api.NodesSame || row.Nodes == api.NodesCross) {
			out = append(out, p)
		}
	}
	return out
}

// checkVMServers refuses a VM server whose servers the guest cannot run: the agent's (cnperf)
// on other ports than its own, another driver's on the agent's ports.
func checkVMServers(e endpointSpec) error {
	for _, srv := range e.Servers {
		agent := len(srv.Argv) > 0 && srv.Argv[0] == "cnperf"
		for _, p := range srv.Ports {
			own := p.Port == guestControlPort || p.Port == guestDataPort
			if agent && !own {
				return fmt.Errorf("--vm: server %s needs port %d; the agent in the cnperf guest listens on %d (control) and %d (data) only",
					srv.Name, p.Port, guestControlPort, guestDataPort)
			}
			if !agent && slices.ContainsFunc(guestPorts, func(g kube.VMPort) bool { return g.Port == p.Port }) {
				return fmt.Errorf("--vm: server %s needs port %d, which the cnperf guest's agent listens on (%d, %d, %d)",
					srv.Name, p.Port, guestControlPort, guestDataPort, guestexec.DefaultPort)
			}
		}
	}
	return nil
}

// vmPorts are the ports a VM endpoint's guest listens on: its agent's and its servers'.
func vmPorts(e endpointSpec) []kube.VMPort {
	ports := slices.Clone(guestPorts)
	for _, srv := range e.Servers {
		for _, p := range srv.Ports {
			vp := kube.VMPort{Port: p.Port, Protocol: p.Protocol}
			if !slices.Contains(ports, vp) {
				ports = append(ports, vp)
			}
		}
	}
	return ports
}

// guestServers are the servers of a VM endpoint that run beside the guest's agent (another
// driver's: started through the exec port).
func guestServers(e endpointSpec) []driver.Server {
	var out []driver.Server
	for _, srv := range e.Servers {
		if len(srv.Argv) > 0 && srv.Argv[0] != "cnperf" {
			out = append(out, srv)
		}
	}
	return out
}

// startVMServers starts a VM server's driver servers in its guest (the agent already runs).
func (p *Platform) startVMServers(ctx context.Context, ep *endpoint) error {
	srvs := guestServers(ep.spec)
	if len(srvs) == 0 {
		return nil
	}
	g := p.guestExecutor(ep, p.s.VMStartTimeout)
	for _, srv := range srvs {
		start := time.Now()
		if err := g.Start(ctx, srv, 2*time.Minute); err != nil {
			return fmt.Errorf("VM %s/%s: %w", p.nsOf(ep), ep.spec.Name, err)
		}
		p.logf("VM %s: %s started in the guest in %.1fs", ep.spec.Name, strings.Join(srv.Argv, " "), time.Since(start).Seconds())
	}
	p.mu.Lock()
	ep.guestServers = true
	p.mu.Unlock()
	return nil
}

// stopVMServers ends the driver servers startVMServers started, before the VMs are deleted
// (which would end them too): a failure is a warning.
func (p *Platform) stopVMServers(ctx context.Context) {
	var eps []*endpoint
	p.mu.Lock()
	for _, ep := range p.servers {
		if ep.guestServers && p.relay != nil && p.relay.pod != nil {
			eps = append(eps, ep)
		}
	}
	p.mu.Unlock()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 40*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for _, ep := range eps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := p.guestExecutor(ep, time.Minute).Stop(sctx); err != nil {
				p.logWrapped("warning: VM %s: %v (they end with the VM)", ep.spec.Name, err)
			}
		}()
	}
	wg.Wait()
}

// relayName is the relay pod's name: a pod-network pod through which the platform reaches the
// guests' exec ports.
func relayName(runID string) string { return "cnperf-relay-" + kube.ShortID(runID) }

// buildVMI builds a VM endpoint's VirtualMachineInstance. A VM on the run's secondary network
// has a second interface there; static says its definition has no IPAM, so the guest sets
// the endpoint's static address (endpointSpec.Address).
func buildVMI(s *settings, runID string, e endpointSpec, static bool) map[string]any {
	labels := endpointLabels(runID, e)
	for k, v := range s.podMeta.Labels {
		labels[k] = v
	}
	o := kube.VMOptions{Name: e.Name, Namespace: s.namespaceOf(e.Role), Labels: labels, Annotations: s.podMeta.Annotations,
		Tolerations: s.tolerations, Image: s.VMImage, PullPolicy: s.pullPolicy, Binding: s.VMBinding,
		Sockets: s.VMSockets, Cores: s.VMCores, Threads: s.VMThreads, Memory: s.vmMemory, TokenSecret: kube.TokenSecretName(runID),
		DataPort: guestDataPort, Ports: vmPorts(e)}
	if e.Node != "" {
		o.Nodes = []string{e.Node}
	}
	if e.Attachment != "" {
		o.Secondary = &kube.VMSecondary{Network: e.Attachment, MAC: kube.SecondaryMAC(e.Name)}
		if static {
			o.Secondary.Address = e.Address
		}
	}
	return o.VMI()
}

// vmSummary is what a VM endpoint is: "image IMAGE, masquerade binding, 2 vCPUs, 512Mi"; with
// topology, "2 vCPUs (sockets 1, cores 2, threads 1)".
func (s *settings) vmSummary(topology bool) string {
	cpus := plural(s.VMSockets*s.VMCores*s.VMThreads, "vCPU")
	if topology {
		cpus += fmt.Sprintf(" (sockets %d, cores %d, threads %d)", s.VMSockets, s.VMCores, s.VMThreads)
	}
	return fmt.Sprintf("image %s, %s binding, %s, %s", s.VMImage, s.VMBinding, cpus, s.vmMemory.String())
}

// DescribeVMs says which endpoints are KubeVirt VMs (--vm) and what they are, as --dry-run
// prints it; "" when none is.
func (p *Platform) DescribeVMs() string {
	var who string
	switch s := p.s; {
	case s.vmServer && s.vmClient:
		who = "the server and the client are VMs"
	case s.vmServer:
		who = "the server is a VM"
	case s.vmClient:
		who = "the client is a VM"
	default:
		return ""
	}
	d := fmt.Sprintf("%s (KubeVirt): %s memory", who, p.s.vmSummary(true))
	if p.s.VMUseVirtctl {
		d += "; " + useVirtctlNote
	}
	return d
}

// vmInfo is what the result says of a VM endpoint.
func (s *settings) vmInfo(name string, emulated bool) *api.VM {
	return &api.VM{Name: name, Binding: s.VMBinding, VCPUs: s.VMSockets * s.VMCores * s.VMThreads,
		Sockets: s.VMSockets, Cores: s.VMCores, Threads: s.VMThreads, Emulated: emulated}
}

// preflightVMs checks, before anything is created, that KubeVirt serves VirtualMachineInstances
// and that the run may create them (exit status 2 otherwise), and learns whether it emulates.
func (p *Platform) preflightVMs(ctx context.Context) error {
	kv := p.checkKV(ctx, p.cs)
	if kv.Missing != "" {
		return &exit.UsageError{Err: fmt.Errorf("--vm: stopped before anything was created: %s", kv.Missing)}
	}
	if err := passtGate(p.s.VMBinding, kv); err != nil {
		return &exit.UsageError{Err: err}
	}
	if p.s.VMBinding == kube.BindingPasst && !kv.Read {
		p.logWrapped("--vm-binding passt: KubeVirt's feature gate %s could not be checked (its KubeVirt resource could not be read); "+
			"without it KubeVirt refuses the VMIs", kube.FeatureGatePasst)
	}
	emulated := kv.Emulated
	p.vmEmulated, p.kubevirt = emulated, &api.KubeVirt{Version: kv.Version, Emulated: emulated}
	if !p.s.NoPreflight {
		var needs []kube.Access
		for _, ns := range p.s.namespaces() {
			needs = append(needs, kube.VMAccess(ns)...)
		}
		if err := kube.Preflight(ctx, p.cs, kube.VMsManifest, needs); err != nil {
			return err
		}
	}
	if p.s.VMUseVirtctl {
		p.logWrapped(useVirtctlNote)
	}
	if emulated {
		p.logWrapped("VMs run in QEMU's software emulation (KubeVirt useEmulation, TCG): their figures measure the mechanics, " +
			"not VM performance on hardware")
	}
	return nil
}

// passtGate refuses the passt binding when the KubeVirt resource, read, lacks the feature gate
// Passt (KubeVirt's webhook would refuse the VMIs after the run created its other objects).
func passtGate(binding string, kv kube.VMSupport) error {
	if binding != kube.BindingPasst || !kv.Read || slices.Contains(kv.FeatureGates, kube.FeatureGatePasst) {
		return nil
	}
	gates, _ := json.Marshal(append(slices.Clone(kv.FeatureGates), kube.FeatureGatePasst))
	have := "none"
	if len(kv.FeatureGates) > 0 {
		have = strings.Join(kv.FeatureGates, ", ")
	}
	return fmt.Errorf("--vm-binding passt: stopped before anything was created: KubeVirt's feature gate %s is not enabled "+
		"(KubeVirt %s/%s, developerConfiguration.featureGates: %s); turn it on with `kubectl -n %s patch kubevirt %s --type=merge "+
		`-p '{"spec":{"configuration":{"developerConfiguration":{"featureGates":%s}}}}'`+"`, or use --vm-binding masquerade or bridge",
		kube.FeatureGatePasst, kv.Namespace, kv.Name, have, kv.Namespace, kv.Name, gates)
}

// createVMI creates a VM endpoint's VirtualMachineInstance.
func (p *Platform) createVMI(ctx context.Context, e endpointSpec) error {
	body, err := json.Marshal(buildVMI(p.s, p.runID, e, p.vmStatic))
	if err != nil {
		return err
	}
	if err := p.vmis.Create(ctx, p.s.namespaceOf(e.Role), body, false); err != nil {
		return fmt.Errorf("create VirtualMachineInstance %s/%s: %w", p.s.namespaceOf(e.Role), e.Name, err)
	}
	return nil
}

// waitVMs waits until every VM endpoint runs and its agent answers through the relay, and
// keeps each VM's launcher pod and status. A VM that does not answer in time fails the run
// with its phase, its conditions and its console's last lines.
func (p *Platform) waitVMs(ctx context.Context, eps []*endpoint) error {
	if len(eps) == 0 {
		return nil
	}
	start := time.Now()
	p.logf("waiting for %s (%s)", plural(len(eps), "VM"), p.s.vmSummary(false))
	errs := make([]error, len(eps))
	done := make(chan struct{})
	for i, ep := range eps {
		go func() {
			defer func() { done <- struct{}{} }()
			if errs[i] = p.waitVM(ctx, ep); errs[i] == nil {
				errs[i] = p.startVMServers(ctx, ep)
			}
		}()
	}
	for range eps {
		<-done
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	p.logf("%s answering in %.1fs", plural(len(eps), "VM"), time.Since(start).Seconds())
	return nil
}

// plural is "1 VM", "2 VMs".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// waitVM polls one VM until it runs with an address and its agent answers.
func (p *Platform) waitVM(ctx context.Context, ep *endpoint) error {
	ns := p.nsOf(ep)
	wctx, cancel := context.WithTimeout(ctx, p.s.VMStartTimeout)
	defer cancel()
	var st kube.VMIStatus
	var last string
	for {
		raw, err := p.vmis.Get(wctx, ns, ep.spec.Name)
		if err == nil {
			if st, err = kube.ParseVMIStatus(raw); err != nil {
				return err
			}
		}
		switch {
		case err != nil && wctx.Err() == nil:
			last = err.Error()
		case st.Phase == "Failed" || st.Phase == "Succeeded":
			return p.vmFailed(ctx, ep, st, fmt.Sprintf("its phase is %s", st.Phase))
		case st.Phase == "Running":
			if err := p.setVMEndpoint(wctx, ep, &st); err != nil {
				last = err.Error()
				break
			}
			out := p.guestExecutor(ep, 30*time.Second).Exec(wctx, driver.Command{Argv: []string{"cnperf", "version"}, Timeout: 20 * time.Second})
			if out.Err == nil && out.ExitCode == 0 {
				return nil
			}
			last = fmt.Sprintf("running at %s, its agent does not answer yet: %v", st.IP, cmpErr(out))
		default:
			last = "phase " + st.Phase
			if why := st.Why(); why != "" {
				last += " (" + why + ")"
			}
		}
		select {
		case <-wctx.Done():
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return p.vmFailed(ctx, ep, st, fmt.Sprintf("it did not answer within %s (--vm-start-timeout): %s", p.s.VMStartTimeout, last))
		case <-time.After(2 * time.Second):
		}
	}
}

func cmpErr(out driver.Output) string {
	if out.Err != nil {
		return out.Err.Error()
	}
	return fmt.Sprintf("exit %d: %s", out.ExitCode, kube.Tail(out.Stderr, 200))
}

// setVMEndpoint keeps a running VM's status and its launcher pod. A VMI that reports no
// address yet has the launcher pod's (what both bindings give the guest by DHCP: masquerade
// forwards it, bridge hands it over).
func (p *Platform) setVMEndpoint(ctx context.Context, ep *endpoint, st *kube.VMIStatus) error {
	pod, err := p.launcherPod(ctx, ep)
	if err != nil {
		return err
	}
	if st.IP == "" {
		st.IP = pod.Status.PodIP
		for _, ip := range pod.Status.PodIPs {
			st.IPs = append(st.IPs, ip.IP)
		}
	}
	if st.IP == "" {
		return fmt.Errorf("VM %s runs but has no address yet", ep.spec.Name)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	ep.vmi, ep.pod = st, pod
	return nil
}

// launcherPod is a VM's virt-launcher pod: KubeVirt gives it the VMI's labels.
func (p *Platform) launcherPod(ctx context.Context, ep *endpoint) (*corev1.Pod, error) {
	l, err := p.cs.CoreV1().Pods(p.nsOf(ep)).List(ctx, metav1.ListOptions{
		LabelSelector: kube.RunSelector(p.runID) + "," + kube.LabelEndpoint + "=" + ep.spec.Name})
	if err != nil {
		return nil, fmt.Errorf("list the launcher pod of VM %s: %w", ep.spec.Name, err)
	}
	for i := range l.Items {
		if l.Items[i].Status.Phase == corev1.PodRunning {
			return &l.Items[i], nil
		}
	}
	return nil, fmt.Errorf("VM %s has no running launcher pod", ep.spec.Name)
}

// vmFailed is the error of a VM that did not come up: why, its conditions and the last lines
// of its console (the launcher's guest-console-log container), else of virt-launcher's log.
func (p *Platform) vmFailed(ctx context.Context, ep *endpoint, st kube.VMIStatus, why string) error {
	msg := fmt.Sprintf("VM %s/%s (VirtualMachineInstance, image %s): %s", p.nsOf(ep), ep.spec.Name, p.s.VMImage, why)
	if w := st.Why(); w != "" {
		msg += "; conditions: " + w
	}
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	// KubeVirt says why a VMI failed in its Warning events (e.g. virt-handler's "failed to
	// configure vmi network: ...")
	if evs, err := p.cs.CoreV1().Events(p.nsOf(ep)).List(lctx, metav1.ListOptions{
		FieldSelector: "involvedObject.kind=VirtualMachineInstance,involvedObject.name=" + ep.spec.Name}); err == nil {
		var warns []string
		for _, e := range evs.Items {
			if w := e.Reason + ": " + e.Message; e.Type == corev1.EventTypeWarning && !slices.Contains(warns, w) {
				warns = append(warns, w)
			}
		}
		if len(warns) > 0 {
			msg += "; its events: " + strings.Join(warns, "; ")
		}
	}
	l, err := p.cs.CoreV1().Pods(p.nsOf(ep)).List(lctx, metav1.ListOptions{
		LabelSelector: kube.RunSelector(p.runID) + "," + kube.LabelEndpoint + "=" + ep.spec.Name})
	if err != nil || len(l.Items) == 0 {
		return errors.New(msg + "; no launcher pod")
	}
	pod := l.Items[0].Name
	for _, c := range []string{kube.LauncherConsoleContainer, kube.LauncherComputeContainer} {
		lines := int64(15)
		raw, err := p.cs.CoreV1().Pods(p.nsOf(ep)).GetLogs(pod, &corev1.PodLogOptions{Container: c, TailLines: &lines}).DoRaw(lctx)
		if err != nil || len(strings.TrimSpace(string(raw))) == 0 {
			continue
		}
		what := "its console's last lines"
		if c == kube.LauncherComputeContainer {
			what = "virt-launcher's last lines (pod " + pod + ")"
		}
		return fmt.Errorf("%s; %s:\n  %s", msg, what, strings.Join(strings.Split(strings.TrimRight(strings.ReplaceAll(string(raw), "\r", ""), "\n"), "\n"), "\n  "))
	}
	return fmt.Errorf("%s; launcher pod %s has no log", msg, pod)
}

// guestExecutor runs commands in a VM endpoint's guest through the relay pod.
func (p *Platform) guestExecutor(ep *endpoint, timeout time.Duration) *kube.GuestExecutor {
	relay := &kube.PodExecutor{Stream: p.stream, Namespace: p.nsOf(p.relay), Pod: p.relay.spec.Name, Container: kube.ClientContainer,
		DefaultTimeout: timeout, MaxOutput: p.s.MaxOutputBytes}
	host := ""
	if ep.vmi != nil {
		host = ep.vmi.IP
	}
	return &kube.GuestExecutor{Relay: relay, Host: host}
}

// vmNetwork is how the VMs on the run's secondary network get their address, decided before
// anything is created: by DHCP from KubeVirt's bridge binding when the definition has IPAM (the
// launcher pod's address on it, which the result then gives), else the static addresses the
// guests set (endpointSpec.Address; Platform.vmStatic). Pods on a definition without IPAM
// would have no address: a run that puts one there beside VMs stops here.
func (p *Platform) vmNetwork(ctx context.Context, network string, create bool, specs []endpointSpec) error {
	var vms, pods []string
	for _, e := range specs {
		switch {
		case e.Attachment == "":
		case e.VM:
			vms = append(vms, e.Name)
		default:
			pods = append(pods, e.Role+" "+e.Name)
		}
	}
	if len(vms) == 0 {
		return nil
	}
	if p.s.NetworkMode != nil {
		return &exit.UsageError{Err: fmt.Errorf("--vm with %s: cnperf puts VMs on a NetworkAttachmentDefinition with KubeVirt's bridge binding only", p.s.NetworkMode.Flag)}
	}
	var ipam string
	var err error
	if create {
		ipam, err = kube.IPAMOf(p.s.CreateNetwork.Config)
	} else {
		ipam, err = kube.ReadIPAM(ctx, p.nadStore(), network)
	}
	if err != nil {
		return err
	}
	if ipam != "" {
		if p.s.VMNetworkServer != "" || p.s.VMNetworkClient != "" {
			return &exit.UsageError{Err: fmt.Errorf("--bridgeNetwork with secondary network %s: its definition has IPAM (%s), whose "+
				"addresses KubeVirt's bridge binding gives the guests by DHCP, so the static addresses would not be used; drop "+
				"--bridgeNetwork, or use a definition without IPAM", network, ipam)}
		}
		p.logWrapped("VMs on secondary network %s: their address is its IPAM's (%s), which KubeVirt's bridge binding serves the guest by DHCP",
			network, ipam)
		return nil
	}
	if len(pods) > 0 {
		return &exit.UsageError{Err: fmt.Errorf("--vm=%s on secondary network %s: its definition has no IPAM, so the %s would have no address on it "+
			"(the VMs set static ones, --bridgeNetwork); stopped before anything was created: use --vm=both, or a definition with IPAM",
			p.s.VM, network, strings.Join(pods, ", "))}
	}
	p.vmStatic = true
	var addrs []string
	for _, e := range specs {
		if e.VM && e.Attachment != "" {
			addrs = append(addrs, e.Role+" "+e.Address)
		}
	}
	p.logWrapped("VMs on secondary network %s: its definition has no IPAM, so the guests set static addresses (%s; --bridgeNetwork)",
		network, strings.Join(addrs, ", "))
	return nil
}
