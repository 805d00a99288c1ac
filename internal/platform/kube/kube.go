// Package kube is the Kubernetes platform: it places server and client pods on chosen
// nodes (pod network or hostNetwork), exposes servers through ClusterIP and NodePort
// Services, runs the drivers' argv lines in the client pods through the exec API, records
// where every endpoint really ran, and removes everything it created.
//
// Set-up happens once for the whole plan: every endpoint pod of every driver is created in
// parallel, waited for with watches (failures are reported as soon as Kubernetes reports
// them), and reused by every case.
package kube

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/agenttoken"
	"github.com/cnperf/cnperf/internal/clusterinfo"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/platform"
	"github.com/cnperf/cnperf/internal/text"
)

// Platform is the Kubernetes platform.
type Platform struct {
	s      *settings
	runID  string
	log    io.Writer
	cs     kubernetes.Interface
	server string // the API server's URL ("" without a REST config)
	stream kube.Streamer

	mu sync.Mutex
	// sites are the run's namespaces (one, or the servers' and the clients'), in the order of
	// settings.namespaces: what was created in each.
	sites            []*site
	prepared, closed bool
	touched          bool // a create was sent to the cluster: Close has something to remove
	cleanedUp        bool // Close finished: nothing of the run is left
	placement        *nodePlacement
	nodes            map[string]*corev1.Node
	servers          map[serverKey]*endpoint
	clients          map[clientKey]*endpoint
	services         map[serviceKey]*corev1.Service
	drivers          map[string]driver.Driver // Prepare's: which servers a case needs
	setup, teardown  time.Duration
	// attachment is the run's secondary network as its NetworkAttachmentDefinition says (nil
	// without one); nads reaches definitions (nil: through the clientset's REST client).
	attachment    *api.Attachment
	attachmentMTU int // its interface's MTU in a client pod, once read (0: not yet; -1: unknown)
	// vmStatic: the VMs on the secondary network set static addresses (its definition has no
	// IPAM; vmNetwork)
	vmStatic bool
	nads     kube.NADStore
	// definitionCreated: the run created Options.CreateNetwork's definition (Close deletes it).
	definitionCreated bool
	// objects reaches a network mode's objects (nil: through the clientset's REST client);
	// modeCreated are those the run created (Close deletes them).
	objects     kube.ObjectStore
	modeCreated []kube.NetworkObject
	// noFootprint is why --idle-footprint cannot be read (the preflight's answer), or "".
	noFootprint string
	// vmis reaches VirtualMachineInstances (--vm); relay is the pod that reaches the guests'
	// agents (nil without VMs); vmEmulated: KubeVirt runs them in software emulation.
	vmis       kube.VMIStore
	checkKV    func(context.Context, kubernetes.Interface) kube.VMSupport // kube.CheckKubeVirt; a test's
	relay      *endpoint
	vmEmulated bool
	kubevirt   *api.KubeVirt // for the cluster details (nil without VMs)
}

var (
	_ platform.Platform          = (*Platform)(nil)
	_ platform.PathChecker       = (*Platform)(nil)
	_ platform.ClusterDescriber  = (*Platform)(nil)
	_ platform.LeftoverDescriber = (*Platform)(nil)
	_ platform.FamilyDefaulter   = (*Platform)(nil)
)

// site is what the run made in one of its namespaces.
type site struct {
	ns string
	// attempted: a create of the namespace was sent; created: it succeeded.
	attempted, created bool
	lease              *kube.Lease // the proof that this run is alive (one per namespace: the Secret's owner)
	tokenSecret        bool        // the agent token's Secret was created
}

type serverKey struct {
	driver string
	net    api.Network
}

type clientKey struct {
	net  api.Network
	node nodeRole
}

type serviceKey struct {
	server serverKey
	kind   corev1.ServiceType
}

// endpoint is a created pod (or VM) and where it really runs.
type endpoint struct {
	spec endpointSpec
	role nodeRole
	pod  *corev1.Pod // a VM's: its virt-launcher pod
	vmi  *kube.VMIStatus
	// guestServers: a VM server whose driver servers run in its guest (startVMServers)
	guestServers bool
}

// New returns the Kubernetes platform for one run. It validates the options and builds a
// client, but contacts the cluster only in Prepare. log receives progress lines.
func New(o Options, runID string, log io.Writer) (*Platform, error) {
	s, err := o.parse()
	if err != nil {
		return nil, err
	}
	cs, cfg, err := kube.NewClientset(s.Kubeconfig, s.Context)
	if err != nil {
		return nil, err
	}
	return newPlatform(s, runID, log, cs, cfg), nil
}

// NewWithClient returns the platform on an existing clientset (tests, embedding). cfg is
// needed for exec; nil leaves exec unavailable.
func NewWithClient(o Options, runID string, log io.Writer, cs kubernetes.Interface, cfg *rest.Config) (*Platform, error) {
	s, err := o.parse()
	if err != nil {
		return nil, err
	}
	return newPlatform(s, runID, log, cs, cfg), nil
}

func newPlatform(s *settings, runID string, log io.Writer, cs kubernetes.Interface, cfg *rest.Config) *Platform {
	if log == nil {
		log = io.Discard
	}
	p := &Platform{s: s, runID: runID, log: log, cs: cs, vmis: kube.RESTVMIs{CS: cs}, checkKV: kube.CheckKubeVirt}
	for _, ns := range s.namespaces() {
		p.sites = append(p.sites, &site{ns: ns})
	}
	if cfg != nil {
		p.server = cfg.Host
		p.stream = kube.RemoteStreamer(cs, cfg)
	} else {
		p.stream = func(context.Context, string, string, string, []string, io.Writer, io.Writer) error {
			return errors.New("exec is not available: no REST config")
		}
	}
	return p
}

// Name implements platform.Platform.
func (p *Platform) Name() string { return "kube" }

// Traits implements platform.TraitDescriber: pods of a cluster, pod-pod-cross-node by default.
func (p *Platform) Traits() platform.Traits {
	return platform.Traits{DefaultPaths: []api.Path{api.PathPodPodCrossNode}, Cluster: true}
}

// Namespace is where the platform puts its objects (its servers', with
// --server-namespace/--client-namespace).
func (p *Platform) Namespace() string { return p.s.serverNamespace() }

// nsOf is the namespace of an endpoint's pod.
func (p *Platform) nsOf(ep *endpoint) string { return p.s.namespaceOf(ep.spec.Role) }

// Timing returns the time Prepare and Close took (zero until they ran).
func (p *Platform) Timing() (setup, teardown time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.setup, p.teardown
}

// CheckPath implements platform.PathChecker: what can be known without the cluster.
func (p *Platform) CheckPath(c plan.Case) error {
	r, err := routeFor(c, p.s.ExternalClient)
	if err != nil {
		return err
	}
	if err := p.s.checkVMPath(c, r); err != nil {
		return err
	}
	if r.access == api.AccessExternal && p.s.externalHost == "" {
		return fmt.Errorf("path %s needs --external HOST[:PORT[,PORT...]] (what exposes the server pods labelled %s=server)", c.Path, kube.LabelRole)
	}
	switch c.Params.IPFamily {
	case "", "ipv4", "ipv6":
	default:
		return fmt.Errorf("ipFamily %q is not ipv4 or ipv6", c.Params.IPFamily)
	}
	return nil
}

func (p *Platform) logf(format string, a ...any) { fmt.Fprintf(p.log, "kube: "+format+"\n", a...) }

// logWrapped is logf for a line that may be longer than 120 columns: wrapped, the rest indented.
func (p *Platform) logWrapped(format string, a ...any) {
	fmt.Fprintln(p.log, strings.Join(text.Wrap(fmt.Sprintf(format, a...), text.DefaultWidth, "kube: ", "  "), "\n"))
}

// Prepare implements platform.Platform: choose nodes, create the namespace, the service
// account, every endpoint pod (in parallel) and the Services, and wait until all are ready.
func (p *Platform) Prepare(ctx context.Context, cases []plan.Case, drivers map[string]driver.Driver) (err error) {
	start := time.Now()
	defer func() {
		p.mu.Lock()
		p.setup = time.Since(start)
		p.mu.Unlock()
	}()
	if err := p.markPrepared(); err != nil {
		return err
	}
	routes := make([]route, len(cases))
	for i, c := range cases {
		if err := p.CheckPath(c); err != nil {
			return fmt.Errorf("case %d (%s): %w", i+1, c, err)
		}
		routes[i], _ = routeFor(c, p.s.ExternalClient)
	}
	network, create, err := p.runNetwork(cases)
	if err != nil {
		return err
	}
	if err := p.placeNodes(ctx, cases, needsOf(routes, cases)); err != nil {
		return err
	}
	p.drivers = drivers
	specs, svcs, err := p.endpointSpecs(cases, routes, drivers)
	if err != nil {
		return err
	}
	needPriv := p.s.Privileged
	for _, e := range specs {
		// host network; a VM's virt-launcher pod needs more than Pod Security's baseline (e.g. SYS_NICE)
		needPriv = needPriv || e.Net == api.NetworkHost || e.VM
	}
	if !p.s.NoPreflight {
		if err := p.preflightRun(ctx, len(svcs) > 0, network, create); err != nil {
			return err
		}
	}
	if p.relay != nil {
		if err := p.preflightVMs(ctx); err != nil {
			return err
		}
	}
	mode := p.s.NetworkMode != nil && network != ""
	if network != "" && !create && !mode {
		if err := p.useAttachment(ctx, network); err != nil {
			return err
		}
	}
	if err := p.vmNetwork(ctx, network, create, specs); err != nil {
		return err
	}
	p.mu.Lock()
	p.touched = true // from here on something of the run may exist in the cluster
	p.mu.Unlock()
	for _, st := range p.sites {
		if err := p.prepareSite(ctx, st, needPriv); err != nil {
			return err
		}
	}
	if create { // the run's own definition, in the servers' namespace, before the pods that attach to it
		if err := p.createDefinition(ctx, p.s.CreateNetwork); err != nil {
			return err
		}
		if err := p.useAttachment(ctx, network); err != nil {
			return err
		}
	}
	if mode { // the mode's objects, then the definition OVN-Kubernetes or the SR-IOV operator makes
		if err := p.createModeNetwork(ctx); err != nil {
			return err
		}
		if err := p.useAttachment(ctx, network); err != nil {
			return err
		}
	}
	if err := p.createEndpoints(ctx, specs, svcs); err != nil {
		return err
	}
	return p.waitEndpoints(ctx, specs)
}

// markPrepared refuses a platform that is closed or prepared already, and marks it prepared.
func (p *Platform) markPrepared() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return errors.New("kube platform already closed")
	}
	if p.prepared {
		return errors.New("kube platform already prepared")
	}
	p.prepared = true
	return nil
}

// runNetwork is the secondary network the run's cases attach to ("" for none) and whether the
// run creates its definition; the networks --pod-annotations asks for must merge with it.
func (p *Platform) runNetwork(cases []plan.Case) (network string, create bool, err error) {
	network, err = runAttachment(cases)
	if err != nil {
		return "", false, err
	}
	create, err = p.createsNetwork(network)
	if err != nil {
		return "", false, err
	}
	if err := p.checkModeNetwork(network); err != nil {
		return "", false, err
	}
	if network != "" {
		// the networks --pod-annotations asks for, and the run's after them
		if _, err := kube.MergeNetworks(p.s.podMeta.Annotations[kube.AnnotationNetworks], network); err != nil {
			return "", false, err
		}
	}
	return network, create, nil
}

// listNodes lists the cluster's nodes, after the preflight of that permission (unless
// --no-preflight), within apiAnswerTimeout: an API server that does not answer is said so.
func (p *Platform) listNodes(ctx context.Context) (*corev1.NodeList, error) {
	actx, cancel := context.WithTimeout(ctx, apiAnswerTimeout)
	defer cancel()
	if !p.s.NoPreflight {
		if err := kube.Preflight(actx, p.cs, kube.RunManifest, kube.Verbs("", "", "nodes", "", "get", "list")); err != nil {
			return nil, p.unanswered(ctx, err)
		}
	}
	nodeList, err := p.cs.CoreV1().Nodes().List(actx, metav1.ListOptions{})
	if err != nil {
		return nil, p.unanswered(ctx, fmt.Errorf("list nodes: %w", err))
	}
	return nodeList, nil
}

// placeNodes lists the nodes and picks those the endpoints run on (choosePlacement), says
// which, and checks that they have the cases' IP families. The first requests show whether
// the API server answers at all: bounded, and said first.
func (p *Platform) placeNodes(ctx context.Context, cases []plan.Case, nd needs) error {
	nodeList, err := p.listNodes(ctx)
	if err != nil {
		return err
	}
	np, err := choosePlacement(nodeList.Items, p.s, nd)
	if err != nil {
		return err
	}
	p.placement = np
	p.nodes = map[string]*corev1.Node{}
	for i := range nodeList.Items {
		p.nodes[nodeList.Items[i].Name] = &nodeList.Items[i]
	}
	msg := fmt.Sprintf("servers on node %s%s", np.Server, zoneNote(np.zones[np.Server]))
	if np.Client != "" {
		msg += fmt.Sprintf(", cross-node clients on %s%s", np.Client, zoneNote(np.zones[np.Client]))
	}
	if np.Zone != "" {
		msg += fmt.Sprintf(", cross-zone clients on %s%s", np.Zone, zoneNote(np.zones[np.Zone]))
	}
	p.logf("%s", msg)
	if err := checkNodeFamilies(p.nodes, []string{np.Server, np.Client, np.Zone}, caseFamilies(cases)); err != nil {
		return err
	}
	return p.checkNetworkMode(ctx)
}

// checkNetworkMode checks, when the run asks for one of k8s-netperf's network modes, that
// the placed nodes and the cluster have what it needs (kube.CheckNetworkMode).
func (p *Platform) checkNetworkMode(ctx context.Context) error {
	if p.s.NetworkMode == nil {
		return nil
	}
	np := p.placement
	var nodes []*corev1.Node
	for _, n := range []string{np.Server, np.Client, np.Zone} {
		if n != "" && !slices.Contains(nodes, p.nodes[n]) {
			nodes = append(nodes, p.nodes[n])
		}
	}
	return kube.CheckNetworkMode(ctx, p.cs, p.objectStore(), *p.s.NetworkMode, nodes, p.s.serverNamespace(), p.runID)
}

// preflightRun asks for every permission the run needs, in each of its namespaces, before
// anything is created (Services only where the servers are, the secondary network's
// definition read or created); the idle footprint's are optional: without them it is left out,
// with a warning naming the verb.
func (p *Platform) preflightRun(ctx context.Context, services bool, network string, create bool) error {
	var needs []kube.Access
	for _, ns := range p.s.namespaces() {
		_, nsErr := p.cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		needs = append(needs, kube.RunAccess(ns, !apierrors.IsNotFound(nsErr), services && ns == p.s.serverNamespace())...)
	}
	if err := kube.Preflight(ctx, p.cs, kube.RunManifest, needs); err != nil {
		return err
	}
	if p.s.IdleFootprint > 0 {
		if err := kube.Preflight(ctx, p.cs, kube.FootprintManifest, kube.FootprintAccess()); err != nil {
			p.noFootprint = err.Error()
			p.logf("warning: --idle-footprint is left out: %v", err)
		}
	}
	if m := p.s.NetworkMode; m != nil && network != "" {
		if err := kube.Preflight(ctx, p.cs, kube.NetworkModesManifest, kube.ModeAccess(*m, p.s.serverNamespace())); err != nil {
			return err
		}
	}
	switch {
	case create:
		return kube.Preflight(ctx, p.cs, kube.NetworksManifest, kube.NetworkCreateAccess(p.s.serverNamespace()))
	case network != "":
		return kube.Preflight(ctx, p.cs, kube.NetworksManifest, kube.NetworkAccess(network))
	}
	return nil
}

// useAttachment reads the secondary network's definition, keeps it and says what it is.
func (p *Platform) useAttachment(ctx context.Context, network string) error {
	a, err := p.readAttachment(ctx, network)
	if err != nil {
		return err
	}
	if m := p.s.NetworkMode; m != nil {
		p.mu.Lock()
		a.Mode = m.Info(p.modeCreated)
		p.mu.Unlock()
	}
	p.attachment = a
	which := "secondary"
	if a.Mode != nil && a.Mode.Primary {
		which = "primary"
	}
	p.logf("%s network %s: %s", which, network, kube.DescribeAttachment(a))
	return nil
}

// createEndpoints creates every pod and Service at once, and keeps the Services as the API
// server returned them.
func (p *Platform) createEndpoints(ctx context.Context, specs []endpointSpec, svcs []*corev1.Service) error {
	var wg sync.WaitGroup
	var emu sync.Mutex
	var errs []error
	addErr := func(e error) {
		emu.Lock()
		errs = append(errs, e)
		emu.Unlock()
	}
	for _, e := range specs {
		wg.Add(1)
		go func(e endpointSpec) {
			defer wg.Done()
			if e.VM {
				if err := p.createVMI(ctx, e); err != nil {
					addErr(err)
				}
				return
			}
			pod := buildPod(p.s, p.runID, e)
			if _, err := p.cs.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
				addErr(fmt.Errorf("create pod %s/%s: %w", pod.Namespace, pod.Name, err))
			}
		}(e)
	}
	createdSvcs := make([]*corev1.Service, len(svcs))
	for i, sv := range svcs {
		wg.Add(1)
		go func(i int, sv *corev1.Service) {
			defer wg.Done()
			got, err := p.cs.CoreV1().Services(sv.Namespace).Create(ctx, sv, metav1.CreateOptions{})
			if err != nil {
				addErr(fmt.Errorf("create service %s/%s: %w", sv.Namespace, sv.Name, err))
				return
			}
			createdSvcs[i] = got
		}(i, sv)
	}
	wg.Wait()
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	for _, sv := range createdSvcs {
		k := p.serviceKeyOf(sv)
		p.services[k] = sv
	}
	return nil
}

// waitEndpoints waits until every endpoint pod is ready, in each namespace, keeps the pods
// and waits for the servers' ready messages. A server the tool refused (it exited before it
// was ready) does not stop the run: its container idles instead and its cases fail with its
// reason (idleExitedServers); each server at most once, as an idle container does not exit.
func (p *Platform) waitEndpoints(ctx context.Context, specs []endpointSpec) error {
	var vms []*endpoint
	for _, e := range specs {
		if e.VM {
			vms = append(vms, p.endpointNamed(e.Name))
		}
	}
	where := "namespace " + p.s.serverNamespace()
	if nss := p.s.namespaces(); len(nss) > 1 {
		where = "namespaces " + strings.Join(nss, " and ")
	}
	vmCount := 0
	for _, e := range specs {
		if e.VM {
			vmCount++
		}
	}
	p.logf("waiting for %d endpoint pods in %s (image %s)", len(specs)-vmCount, where, p.s.Image)
	wstart := time.Now()
	for try := 0; ; try++ {
		err := p.waitPods(ctx, specs)
		if err == nil {
			err = p.waitServerMessages(ctx, specs)
		}
		if err == nil {
			break
		}
		if ctx.Err() != nil || try >= len(specs) {
			return err
		}
		found, ierr := p.idleExitedServers(ctx, specs)
		if ierr != nil {
			return errors.Join(err, ierr)
		}
		if !found {
			return err
		}
	}
	p.logf("%d endpoint pods ready in %.1fs", len(specs)-len(vms), time.Since(wstart).Seconds())
	return p.waitVMs(ctx, vms)
}

// waitPods waits until every endpoint pod (not the VMs) is Running and Ready and keeps the pods.
func (p *Platform) waitPods(ctx context.Context, specs []endpointSpec) error {
	names := map[string][]string{} // by namespace
	for _, e := range specs {
		if e.VM {
			continue
		}
		ns := p.s.namespaceOf(e.Role)
		names[ns] = append(names[ns], e.Name)
	}
	pods := map[string]*corev1.Pod{}
	for _, ns := range p.s.namespaces() {
		if len(names[ns]) == 0 {
			continue
		}
		got, err := kube.WaitReady(ctx, p.cs, ns, kube.RunSelector(p.runID), names[ns], p.s.PodStartTimeout)
		if err != nil {
			return err
		}
		maps.Copy(pods, got)
	}
	for _, ep := range p.servers {
		ep.pod = pods[ep.spec.Name]
	}
	for _, ep := range p.clients {
		if !ep.spec.VM {
			ep.pod = pods[ep.spec.Name]
		}
	}
	if p.relay != nil {
		p.relay.pod = pods[p.relay.spec.Name]
	}
	return nil
}

// endpointNamed is the server or client endpoint of that name (nil when none).
func (p *Platform) endpointNamed(name string) *endpoint {
	for _, ep := range p.servers {
		if ep.spec.Name == name {
			return ep
		}
	}
	for _, ep := range p.clients {
		if ep.spec.Name == name {
			return ep
		}
	}
	return nil
}

func zoneNote(z string) string {
	if z == "" {
		return ""
	}
	return " (zone " + z + ")"
}

// endpointSpecs lists every pod and Service the cases need.
func (p *Platform) endpointSpecs(cases []plan.Case, routes []route, drivers map[string]driver.Driver) ([]endpointSpec, []*corev1.Service, error) {
	p.servers = map[serverKey]*endpoint{}
	p.clients = map[clientKey]*endpoint{}
	p.services = map[serviceKey]*corev1.Service{}
	// Each server pod runs the servers its own cases need: a hostNetwork server pod never
	// listens on ports only the pod-network cases use, and the other way round.
	slotCases := map[serverKey][]plan.Case{}
	var slotOrder []serverKey
	for i, c := range cases {
		sk := serverKey{c.Driver, routes[i].serverNet}
		if _, ok := slotCases[sk]; !ok {
			slotOrder = append(slotOrder, sk)
		}
		slotCases[sk] = append(slotCases[sk], c)
	}
	var specs []endpointSpec
	for _, sk := range slotOrder {
		d, ok := drivers[sk.driver]
		if !ok {
			return nil, nil, fmt.Errorf("driver %q is not loaded", sk.driver)
		}
		servers := driver.Servers(d, slotCases[sk])
		if len(servers) == 0 {
			return nil, nil, fmt.Errorf("driver %s lists no server, which the Kubernetes platform cannot place", sk.driver)
		}
		e := endpointSpec{Name: serverPodName(p.runID, sk.driver, sk.net), Role: "server", Driver: sk.driver,
			Net: sk.net, Attachment: attachmentOfNet(sk.net, cases), Node: p.placement.Server, Servers: servers, VM: p.s.vmOn("server")}
		if e.VM {
			if err := checkVMServers(e); err != nil {
				return nil, nil, err
			}
			if e.Attachment != "" {
				addr, err := p.s.vmStaticAddress("server", 0)
				if err != nil {
					return nil, nil, err
				}
				e.Address = addr
			}
		}
		p.servers[sk] = &endpoint{spec: e, role: roleServerNode}
		specs = append(specs, e)
	}
	svcFamilies := map[serviceKey][]string{}
	var svcOrder []serviceKey
	vmNetClients := 0 // VM clients on the secondary network: each has its own static address
	for i, c := range cases {
		r := routes[i]
		sk := serverKey{c.Driver, r.serverNet}
		if r.clientNode != roleLocal && r.clientNode != roleSelf {
			ck := clientKey{r.clientNet, r.clientNode}
			if _, ok := p.clients[ck]; !ok {
				e := endpointSpec{Name: clientPodName(p.runID, r.clientNet, r.clientNode), Role: "client", Net: r.clientNet,
					Attachment: r.attachment, Node: p.placement.node(r.clientNode), VM: p.s.vmOn("client")}
				if e.VM && e.Attachment != "" {
					var err error
					if e.Address, err = p.s.vmStaticAddress("client", vmNetClients); err != nil {
						return nil, nil, err
					}
					vmNetClients++
				}
				p.clients[ck] = &endpoint{spec: e, role: r.clientNode}
				specs = append(specs, e)
			}
		}
		var kind corev1.ServiceType
		switch r.access {
		case api.AccessClusterIP:
			kind = corev1.ServiceTypeClusterIP
		case api.AccessNodePort:
			kind = corev1.ServiceTypeNodePort
		default:
			continue
		}
		k := serviceKey{sk, kind}
		if _, ok := svcFamilies[k]; !ok {
			svcOrder = append(svcOrder, k)
			svcFamilies[k] = nil
		}
		if f := c.Params.IPFamily; f != "" && !contains(svcFamilies[k], f) {
			svcFamilies[k] = append(svcFamilies[k], f)
		}
	}
	if err := duplicateHostPorts(specs); err != nil {
		return nil, nil, err
	}
	if p.s.vmServer || p.s.vmClient {
		// the pod through which the platform reaches the guests' agents
		e := endpointSpec{Name: relayName(p.runID), Role: "client", Net: api.NetworkPod, Node: p.placement.Server}
		p.relay = &endpoint{spec: e, role: roleServerNode}
		specs = append(specs, e)
	}
	var svcs []*corev1.Service
	for _, k := range svcOrder {
		fams := svcFamilies[k]
		sort.Strings(fams) // ipv4 before ipv6
		svcs = append(svcs, buildService(p.s, p.runID, p.servers[k.server].spec, k.kind, fams))
	}
	return specs, svcs, nil
}

// attachmentOfNet is the secondary network of the endpoints on net: the run's one (runAttachment)
// for api.NetworkAttachment, else "".
func attachmentOfNet(net api.Network, cases []plan.Case) string {
	if net != api.NetworkAttachment {
		return ""
	}
	a, _ := runAttachment(cases)
	return a
}

func (p *Platform) serviceKeyOf(sv *corev1.Service) serviceKey {
	for k, ep := range p.servers {
		if sv.Spec.Selector[kube.LabelEndpoint] == ep.spec.Name {
			return serviceKey{k, sv.Spec.Type}
		}
	}
	return serviceKey{}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// prepareSite makes what every endpoint pod of a namespace needs: the namespace (when
// absent), the run's Lease, the agent token's Secret (owned by the Lease) and the
// ServiceAccount.
func (p *Platform) prepareSite(ctx context.Context, st *site, privileged bool) error {
	if err := p.ensureNamespace(ctx, st, privileged); err != nil {
		return err
	}
	lease, err := kube.StartLease(ctx, p.cs, st.ns, p.runID, "run", p.log)
	if err != nil {
		return err
	}
	p.mu.Lock()
	st.lease = lease
	p.mu.Unlock()
	if err := kube.CreateTokenSecret(ctx, p.cs, st.ns, p.runID, p.s.AgentToken, lease); err != nil {
		return err
	}
	p.mu.Lock()
	st.tokenSecret = true
	p.mu.Unlock()
	sa := buildServiceAccount(st.ns, p.runID)
	if _, err := p.cs.CoreV1().ServiceAccounts(st.ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create service account %s/%s: %w", st.ns, sa.Name, err)
	}
	return nil
}

// ensureNamespace creates the site's namespace when it is absent; an existing one is used as
// is (and never deleted).
func (p *Platform) ensureNamespace(ctx context.Context, st *site, privileged bool) error {
	ns := st.ns
	nsObj := kube.BuildNamespace(ns, p.runID, privileged)
	if m := p.s.NetworkMode; m != nil && m.Primary() {
		// OVN-Kubernetes gives a namespace a primary UserDefinedNetwork only when it was created
		// with this label (k8s-netperf's BuildInfra sets it too)
		nsObj.Labels[kube.PrimaryUDNLabel] = ""
	}
	state, err := kube.CreateNamespace(ctx, p.cs, nsObj, func() {
		p.mu.Lock()
		st.attempted = true
		p.mu.Unlock()
	})
	switch {
	case err != nil:
		return err
	case state == kube.NamespaceTerminating:
		return fmt.Errorf("namespace %s is being deleted (a previous run's cleanup?); wait for it to go or use another -n", ns)
	case state == kube.NamespaceExisting:
		if err := p.checkPrimaryLabel(ctx, ns); err != nil {
			return err
		}
		p.logf("using existing namespace %s (it will not be deleted)", ns)
		return nil
	case state == kube.NamespaceAppeared:
		p.logf("namespace %s appeared meanwhile; using it (it will not be deleted)", ns)
		p.mu.Lock()
		st.attempted = false
		p.mu.Unlock()
		return nil
	}
	p.mu.Lock()
	st.created = true
	p.mu.Unlock()
	p.logf("created namespace %s", ns)
	return nil
}

// waitServerMessages waits for servers whose readiness is a log message.
func (p *Platform) waitServerMessages(ctx context.Context, specs []endpointSpec) error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for _, e := range specs {
		if e.VM {
			continue // the guest's agent: waited for by waitVMs
		}
		for _, srv := range e.Servers {
			if srv.Ready == "" || e.Exited[srv.Name] != "" {
				continue
			}
			wg.Add(1)
			go func(pod string, srv driver.Server) {
				defer wg.Done()
				if err := kube.WaitLogLine(ctx, p.cs, p.s.serverNamespace(), pod, dnsLabel(srv.Name), srv.Ready, p.s.PodStartTimeout); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}(e.Name, srv)
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Pair implements platform.Platform.
func (p *Platform) Pair(ctx context.Context, c plan.Case) (*platform.Pair, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errors.New("kube platform closed")
	}
	if p.placement == nil {
		return nil, errors.New("kube platform not prepared")
	}
	r, err := routeFor(c, p.s.ExternalClient)
	if err != nil {
		return nil, err
	}
	srv := p.servers[serverKey{c.Driver, r.serverNet}]
	if srv == nil || srv.pod == nil {
		return nil, fmt.Errorf("no %s-network server for driver %s (was the case in the plan given to Prepare?)", r.serverNet, c.Driver)
	}
	if why := p.exitedCause(c, srv); why != "" {
		return nil, errors.New(why)
	}
	family := c.Params.IPFamily
	pl := &api.Placement{Server: p.describe(srv, "server", family)}
	timeout := c.SampleTimeout()
	if timeout <= 0 {
		timeout = p.s.ExecTimeout
	}
	exe, err := p.clientExecutor(r, srv, family, timeout, pl)
	if err != nil {
		return nil, err
	}
	t, err := p.target(ctx, c, r, srv, pl)
	if err != nil {
		return nil, err
	}
	pl.Target = t.Host
	if r.access == api.AccessExternal {
		pl.Target = p.s.External
	}
	pl.Server.Address = t.Host
	var serverExe platform.Executor
	if r.access != api.AccessExternal {
		serverExe = p.serverExecutor(srv, p.s.ExecTimeout)
	}
	return &platform.Pair{Client: exe, Server: serverExe, Target: t, Placement: pl, Explain: p.explainer(pl)}, nil
}

// clientExecutor is where a case's client runs: in the server pod (hairpin), on this host
// (an external client) or in the client pod of its network and node; it sets pl.Client.
func (p *Platform) clientExecutor(r route, srv *endpoint, family string, timeout time.Duration, pl *api.Placement) (platform.Executor, error) {
	switch r.clientNode {
	case roleSelf:
		// hairpin: the client runs beside the servers, in the server pod
		pl.Client = p.describe(srv, "client", family)
		return p.serverExecutor(srv, timeout), nil
	case roleLocal:
		pl.Client = api.Endpoint{Role: "client", Node: "local"}
		return localExecutor{defaultTimeout: p.s.ExecTimeout, maxOutput: p.s.MaxOutputBytes,
			env: []string{agenttoken.Env + "=" + p.s.AgentToken}}, nil
	}
	cli := p.clients[clientKey{r.clientNet, r.clientNode}]
	if cli == nil || cli.pod == nil {
		return nil, fmt.Errorf("no %s-network client on the %s (was the case in the plan given to Prepare?)", r.clientNet, r.clientNode)
	}
	pl.Client = p.describe(cli, "client", family)
	if cli.spec.VM {
		return p.guestExecutor(cli, timeout), nil
	}
	return &kube.PodExecutor{Stream: p.stream, Namespace: p.nsOf(cli), Pod: cli.spec.Name, Container: kube.ClientContainer,
		DefaultTimeout: timeout, MaxOutput: p.s.MaxOutputBytes}, nil
}

// target is what a case's client dials, by the route's access: the server pod's address on
// its network, the ClusterIP, the server node's NodePorts, or the external address.
func (p *Platform) target(ctx context.Context, c plan.Case, r route, srv *endpoint, pl *api.Placement) (driver.Target, error) {
	family := c.Params.IPFamily
	t := driver.Target{}
	switch r.access {
	case api.AccessDirect:
		addr, err := p.directAddress(ctx, c, r, srv, pl)
		if err != nil {
			return t, err
		}
		t.Host = addr
	case api.AccessClusterIP:
		sv := p.services[serviceKey{serverKey{c.Driver, r.serverNet}, corev1.ServiceTypeClusterIP}]
		if sv == nil {
			return t, fmt.Errorf("no ClusterIP service for driver %s", c.Driver)
		}
		ip := kube.PickIP(sv.Spec.ClusterIPs, family)
		if ip == "" {
			return t, fmt.Errorf("service %s has no %s cluster IP (cluster IPs: %s)", sv.Name, kube.FamilyName(family), strings.Join(sv.Spec.ClusterIPs, ", "))
		}
		t.Host = ip
	case api.AccessNodePort:
		sv := p.services[serviceKey{serverKey{c.Driver, r.serverNet}, corev1.ServiceTypeNodePort}]
		if sv == nil {
			return t, fmt.Errorf("no NodePort service for driver %s", c.Driver)
		}
		ip := kube.NodeIP(p.nodes[p.placement.Server], family)
		if ip == "" {
			return t, fmt.Errorf("node %s has no %s internal address for the NodePort", p.placement.Server, kube.FamilyName(family))
		}
		t.Host = ip
		t.Ports = map[int]int{}
		for _, sp := range sv.Spec.Ports {
			t.Ports[int(sp.Port)] = int(sp.NodePort)
		}
	case api.AccessExternal:
		t.Host, t.Ports = p.s.externalHost, platform.ExternalPorts(srv.spec.Servers, p.s.externalPorts)
	}
	return t, nil
}

// directAddress is the server pod's address on the route's server network: its pod IP, its
// node's IP (hostNetwork), or its address on the secondary network (pl.Attachment, with the
// NetworkPolicies that select the pods but do not apply there, warned about).
func (p *Platform) directAddress(ctx context.Context, c plan.Case, r route, srv *endpoint, pl *api.Placement) (string, error) {
	family := c.Params.IPFamily
	addr := pl.Server.PodIP
	if r.serverNet == api.NetworkHost {
		addr = pl.Server.HostIP
	}
	if r.serverNet == api.NetworkAttachment {
		a, err := p.attachmentPair(ctx, srv, p.clients[clientKey{r.clientNet, r.clientNode}], family)
		if err != nil {
			return "", err
		}
		pl.Attachment, addr = a, a.ServerIP
		if a.Mode != nil && a.Mode.Primary {
			return addr, nil // NetworkPolicy applies on a primary UserDefinedNetwork (OVN-Kubernetes enforces it there)
		}
		a.PoliciesNotApplied = p.policiesNotApplied(ctx, pl)
		if len(a.PoliciesNotApplied) > 0 {
			p.logWrapped("warning: NetworkPolicy %s selects the pods of %s but does not apply on secondary network %s",
				strings.Join(a.PoliciesNotApplied, ", "), c, a.Network)
		}
	}
	if addr == "" {
		return "", fmt.Errorf("server pod %s has no %s address", srv.spec.Name, kube.FamilyName(family))
	}
	return addr, nil
}

// serverExecutor runs commands in srv's pod, in its first server's container (they share the
// pod's network namespace); nil when the pod has no container.
func (p *Platform) serverExecutor(srv *endpoint, timeout time.Duration) platform.Executor {
	if len(srv.spec.Servers) == 0 {
		return nil
	}
	if srv.spec.VM {
		return p.guestExecutor(srv, timeout)
	}
	return &kube.PodExecutor{Stream: p.stream, Namespace: p.nsOf(srv), Pod: srv.spec.Name,
		Container: dnsLabel(srv.spec.Servers[0].Name), DefaultTimeout: timeout, MaxOutput: p.s.MaxOutputBytes}
}

// describe says where an endpoint really runs, from its pod's status.
func (p *Platform) describe(ep *endpoint, role, family string) api.Endpoint {
	out := api.Endpoint{Role: role, Pod: ep.spec.Name, Namespace: p.nsOf(ep), HostNetwork: ep.spec.Net == api.NetworkHost}
	pod := ep.pod
	if pod == nil {
		return out
	}
	out.Node = pod.Spec.NodeName
	if n := p.nodes[out.Node]; n != nil {
		out.Zone = kube.Zone(n)
	}
	var podIPs, hostIPs []string
	for _, ip := range pod.Status.PodIPs {
		podIPs = append(podIPs, ip.IP)
	}
	if len(podIPs) == 0 && pod.Status.PodIP != "" {
		podIPs = []string{pod.Status.PodIP}
	}
	for _, ip := range pod.Status.HostIPs {
		hostIPs = append(hostIPs, ip.IP)
	}
	if len(hostIPs) == 0 && pod.Status.HostIP != "" {
		hostIPs = []string{pod.Status.HostIP}
	}
	out.PodIP = kube.PickIP(podIPs, family)
	out.HostIP = kube.PickIP(hostIPs, family)
	if ep.spec.VM {
		out.VM = p.s.vmInfo(ep.spec.Name, p.vmEmulated)
		if ep.vmi != nil {
			if ip := kube.PickIP(append([]string{ep.vmi.IP}, ep.vmi.IPs...), family); ip != "" {
				out.PodIP = ip // the guest's address
			}
		}
	}
	return out
}

// Close implements platform.Platform: in each of the run's namespaces it deletes the
// namespace cnperf created (waiting until it is gone), or, in a namespace it did not create,
// every object labelled with the run. It is idempotent and meant to get a fresh context (not
// the cancelled run context).
func (p *Platform) Close(ctx context.Context) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	touched := p.touched
	sites := make([]site, len(p.sites))
	for i, st := range p.sites {
		sites[i] = *st
	}
	p.mu.Unlock()
	if !touched {
		// Prepare failed before it created anything (e.g. the API server does not answer):
		// there is nothing to remove, and nothing to wait for.
		p.mu.Lock()
		p.cleanedUp = true
		p.mu.Unlock()
		return nil
	}
	start := time.Now()
	defer func() {
		p.mu.Lock()
		p.teardown = time.Since(start)
		p.mu.Unlock()
	}()
	if p.s.Keep {
		var errs []error
		for _, st := range sites {
			p.logf("--keep: leaving namespace %s and the run's objects (remove them with: %s)", st.ns, p.cleanupCommand())
			errs = append(errs, st.lease.Keep(ctx))
		}
		return errors.Join(errs...)
	}
	p.stopVMServers(ctx)
	// the clients' namespace first, then the servers' (the reverse of Prepare), at once
	errs := make([]error, len(sites))
	var wg sync.WaitGroup
	for i := range sites {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			errs[i] = p.closeSite(ctx, sites[i])
		}(i)
	}
	wg.Wait()
	err := errors.Join(errs...)
	if !sites[0].created && !sites[0].attempted {
		// the run's own secondary network, in the servers' namespace (sites[0]), once no pod of
		// the run is attached to it; in a namespace cnperf created it went with the namespace
		err = errors.Join(err, p.deleteDefinition(ctx))
	}
	// the mode's objects, once no pod of the run is attached to their network (the namespaces
	// are gone, or emptied of the run's pods): a ClusterUserDefinedNetwork or an SriovNetwork
	// lives outside the run's namespaces
	err = errors.Join(err, p.deleteModeObjects(ctx))
	if err == nil {
		p.mu.Lock()
		p.cleanedUp = true
		p.mu.Unlock()
		p.logf("cleaned up in %.1fs", time.Since(start).Seconds())
	}
	return err
}

// closeSite removes what the run made in one namespace.
func (p *Platform) closeSite(ctx context.Context, st site) error {
	st.lease.Stop()
	ns, created := st.ns, st.created
	if st.attempted && !created {
		// The create may have reached the server although the call failed (e.g. Ctrl-C).
		if got, err := p.cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err == nil && got.Labels[kube.LabelRun] == p.runID {
			created = true
		}
	}
	var err error
	// the token first, by name (no right to list Secrets); in a namespace cnperf created it
	// would go with it, and after a kill it goes with the Lease that owns it
	if st.tokenSecret && !created {
		err = kube.DeleteTokenSecret(ctx, p.cs, ns, p.runID)
	}
	if created {
		// Start the pods' termination at once: the namespace controller would first spend
		// seconds discovering every resource type.
		_ = p.cs.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: kube.RunSelector(p.runID)})
		return kube.DeleteNamespaceWith(ctx, p.cs, ns, true, kube.NewUnsticker(p.cs, ns, "", p.log))
	}
	sel := kube.RunSelector(p.runID)
	return errors.Join(err, kube.DeleteRunObjectsWith(ctx, p.cs, ns, sel, true, kube.NewUnsticker(p.cs, ns, sel, p.log)))
}

// apiAnswerTimeout bounds the first requests of Prepare: an API server that does not answer
// them (a closed port, a listener that never responds) fails the run within seconds.
const apiAnswerTimeout = 10 * time.Second

// unanswered says, in front of err, that the API server does not answer, when err is not an
// answer of the API server (a status) and ctx itself is not over.
func (p *Platform) unanswered(ctx context.Context, err error) error {
	var st apierrors.APIStatus
	if errors.As(err, &st) || ctx.Err() != nil {
		return err
	}
	server := p.server
	if server == "" {
		server = "of the cluster"
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("the API server %s does not answer within %s (nothing was created): %w", server, apiAnswerTimeout, err)
	}
	return fmt.Errorf("the API server %s does not answer (nothing was created): %w", server, err)
}

// cleanupCommand is the command that removes this run's objects.
func (p *Platform) cleanupCommand() string {
	return kube.CleanupCommand(p.runID, p.s.Kubeconfig, p.s.Context)
}

// Leftovers implements platform.LeftoverDescriber.
func (p *Platform) Leftovers() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.prepared || !p.touched || p.cleanedUp || p.s.Keep {
		return ""
	}
	var created, used []string
	for _, st := range p.sites {
		if st.attempted {
			created = append(created, st.ns)
		} else {
			used = append(used, st.ns)
		}
	}
	var out []string
	if len(created) > 0 {
		out = append(out, fmt.Sprintf("may be left in the cluster: namespace %s (created by run %s) with its pods and Services; remove them with: %s",
			strings.Join(created, " and "), p.runID, p.cleanupCommand()))
	}
	for _, ns := range used {
		out = append(out, fmt.Sprintf("may be left in the cluster: run %s's pods, Services, ServiceAccount, token Secret and Lease in namespace %s (labelled %s=%s); remove them with: %s --namespace %s",
			p.runID, ns, kube.LabelRun, p.runID, p.cleanupCommand(), ns))
	}
	if p.definitionCreated {
		out = append(out, "its NetworkAttachmentDefinition: "+kube.NetworkDefinitionCleanup(p.s.serverNamespace(), p.s.CreateNetwork.Name))
	}
	if len(p.modeCreated) > 0 {
		out = append(out, "its network's objects: "+kube.ModeObjectsCleanup(p.modeCreated))
	}
	return strings.Join(out, "; ")
}

// createsNetwork says whether the run creates its secondary network (Options.CreateNetwork):
// then the cases' network must be that definition in the run's namespace. A definition to
// create that no case is on is not created.
func (p *Platform) createsNetwork(network string) (bool, error) {
	d := p.s.CreateNetwork
	if d == nil || network == "" {
		if d != nil {
			p.logf("no case is on a pod-to-pod path: NetworkAttachmentDefinition %s is not created", d.Name)
		}
		return false, nil
	}
	if want := p.s.serverNamespace() + "/" + d.Name; network != want {
		return false, fmt.Errorf("the cases are on network %s, not on %s, the NetworkAttachmentDefinition the run creates", network, want)
	}
	return true, nil
}

// Describe implements platform.ClusterDescriber: versions, nodes of the endpoints, CNI,
// kube-proxy mode, pod MTU (measured in a client pod) and cloud.
func (p *Platform) Describe(ctx context.Context) (*api.ClusterDetails, error) {
	p.mu.Lock()
	var nodes []string
	seen := map[string]bool{}
	var onNodes []*endpoint
	addNode := func(ep *endpoint) {
		if ep.pod != nil && ep.pod.Spec.NodeName != "" && !ep.spec.VM && (len(ep.spec.Servers) > 0 || ep.spec.Role == "client") {
			onNodes = append(onNodes, ep)
		}
		if ep.pod != nil && ep.pod.Spec.NodeName != "" && !seen[ep.pod.Spec.NodeName] {
			seen[ep.pod.Spec.NodeName] = true
			nodes = append(nodes, ep.pod.Spec.NodeName)
		}
	}
	var podClient, hostClient *endpoint
	for _, k := range slices.SortedFunc(maps.Keys(p.servers), serverKey.compare) {
		addNode(p.servers[k])
	}
	for _, k := range slices.SortedFunc(maps.Keys(p.clients), clientKey.compare) {
		ep := p.clients[k]
		addNode(ep)
		if ep.pod != nil && ep.spec.Net == api.NetworkPod && !ep.spec.VM && podClient == nil {
			podClient = ep
		}
		if ep.pod != nil && ep.spec.Net == api.NetworkHost && hostClient == nil {
			hostClient = ep
		}
	}
	if p.relay != nil {
		// a pod-network pod on the server node when the endpoints there are VMs
		addNode(p.relay)
		if podClient == nil && p.relay.pod != nil {
			podClient = p.relay
		}
	}
	family := ""
	p.mu.Unlock()

	in := clusterinfo.Input{Client: p.cs, Nodes: nodes, Log: p.log, IdleFootprint: p.s.IdleFootprint, NoFootprint: p.noFootprint,
		Hardware: p.s.Hardware}
	execIn := func(ep *endpoint) clusterinfo.ExecFunc {
		return func(ctx context.Context, argv []string) (string, error) {
			container := kube.ClientContainer
			if ep.spec.Role != "client" {
				container = dnsLabel(ep.spec.Servers[0].Name)
			}
			e := &kube.PodExecutor{Stream: p.stream, Namespace: p.nsOf(ep), Pod: ep.spec.Name, Container: container,
				DefaultTimeout: 20 * time.Second, MaxOutput: 1 << 20}
			out := e.Exec(ctx, driver.Command{Argv: argv})
			if out.Err != nil {
				return "", out.Err
			}
			if out.ExitCode != 0 {
				return "", fmt.Errorf("%s exited %d: %s", kube.ShellJoin(argv), out.ExitCode, kube.Tail(out.Stderr, 200))
			}
			return string(out.Stdout), nil
		}
	}
	// the nodes' hardware, read in an endpoint pod on each, one on the host network if any
	in.NodeExec, in.NodeHostNetwork = map[string]clusterinfo.ExecFunc{}, map[string]bool{}
	for _, ep := range onNodes {
		node := ep.pod.Spec.NodeName
		host := ep.spec.Net == api.NetworkHost
		if in.NodeExec[node] == nil || (host && !in.NodeHostNetwork[node]) {
			in.NodeExec[node] = execIn(ep)
			in.NodeHostNetwork[node] = host
		}
	}
	if podClient != nil {
		in.PodExec = execIn(podClient)
		family = ipFamilyOf(podClient.pod)
	}
	if hostClient != nil {
		in.HostExec = execIn(hostClient)
	}
	in.IPFamily = family
	d, err := clusterinfo.Collect(ctx, in)
	if d != nil && p.kubevirt != nil {
		d.KubeVirt = p.kubevirt
	}
	return d, err
}

// ipFamilyOf is the family of the pod's addresses, as ClusterDetails.IPFamily spells it.
func ipFamilyOf(pod *corev1.Pod) string {
	v4, v6 := false, false
	for _, ip := range pod.Status.PodIPs {
		if parsed := net.ParseIP(ip.IP); parsed != nil {
			if parsed.To4() != nil {
				v4 = true
			} else {
				v6 = true
			}
		}
	}
	return clusterinfo.ClusterFamily(clusterinfo.IPFamily(v4, v6))
}

// compare orders servers by driver, then network (nothing visible may depend on map order).
func (k serverKey) compare(o serverKey) int {
	return cmp.Or(cmp.Compare(k.driver, o.driver), cmp.Compare(k.net, o.net))
}

// compare orders clients by network, then node.
func (k clientKey) compare(o clientKey) int {
	return cmp.Or(cmp.Compare(k.net, o.net), cmp.Compare(k.node, o.node))
}
