package local

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/platform"
)

// This file is the local platform's network-namespace side: the paths of internal/lab
// (host-host, pod-pod-same-node, pod-pod-cross-node, pod-host, host-pod, pod-clusterip).
// Clusters are built in Prepare, the drivers' servers started inside their server namespaces,
// clients run inside the client namespace (forked from a thread that entered it with setns),
// and Close stops the servers and deletes every namespace.

// labSide holds the lab of one run.
type labSide struct {
	mu      sync.Mutex
	lab     *lab.Lab
	servers []*labServer
	// leftTag is the tag of a lab whose removal has not finished ("" once it has).
	leftTag string
}

// labServer is a driver server running in a lab namespace.
type labServer struct {
	*serverProc
	ns lab.NetNS
}

// labOptions are the lab options with defaults filled in.
func (p *Platform) labOptions() lab.Options {
	if p.opts.Lab == nil {
		return lab.DefaultOptions()
	}
	return *p.opts.Lab
}

// The local platform is every optional capability runcmd asks for.
var (
	_ platform.CaseExpander = (*Platform)(nil)
	_ platform.PathLister   = (*Platform)(nil)
	_ platform.LabChecker   = (*Platform)(nil)
)

// ExpandCases replaces each case on a lab path by one case per topology the lab measures it
// on (overlays, policy rule counts and styles, service proxies), see lab.Expand. The run
// command calls it after plan expansion; cases without it run on the first topology only.
func (p *Platform) ExpandCases(cases []plan.Case) []plan.Case {
	return lab.Expand(cases, p.labOptions())
}

// LabAvailable reports why the lab paths cannot run here (nil when they can): the run
// command uses it to run only loopback for "--paths all" and say why.
func (p *Platform) LabAvailable() error {
	if err := p.labOptions().Validate(); err != nil {
		return err
	}
	return lab.CheckPrivileges()
}

// Paths lists every path the local platform can run, in order (external-service needs
// --external and is not included).
func (p *Platform) Paths() []api.Path {
	return append([]api.Path{api.PathLoopback}, lab.Paths...)
}

// checkLabPath validates a case on a lab path before anything is built.
func (p *Platform) checkLabPath(c plan.Case) error {
	o := p.labOptions()
	if err := o.Validate(); err != nil {
		return err
	}
	if err := lab.CheckPrivileges(); err != nil {
		return fmt.Errorf("path %q: %w", c.Path, err)
	}
	spec, err := o.SpecFor(c.Path, labTopology(o, c))
	if err != nil {
		return err
	}
	switch c.Params.IPFamily {
	case "", "ipv4":
	case "ipv6":
		if why := spec.IPv6Unsupported(); why != "" {
			return fmt.Errorf("path %q on IPv6: the lab's cluster %s has no IPv6 (%s)", c.Path, spec.Name(), why)
		}
	default:
		return fmt.Errorf("path %q: ip family %q is not ipv4 or ipv6", c.Path, c.Params.IPFamily)
	}
	return nil
}

// labTopology is the case's topology, or the path's first one when the cases were not expanded.
func labTopology(o lab.Options, c plan.Case) *api.Topology {
	if c.Topology != nil {
		t := *c.Topology
		return &t
	}
	ts := o.Topologies(c.Path)
	if len(ts) == 0 {
		return nil
	}
	return &ts[0]
}

// splitLabCases returns the cases that are not on lab paths.
func splitLabCases(cases []plan.Case) (lab, other []plan.Case) {
	for _, c := range cases {
		if labPath(c.Path) {
			lab = append(lab, c)
		} else {
			other = append(other, c)
		}
	}
	return lab, other
}

func labPath(p api.Path) bool { return lab.Supports(p) }

// prepareLab builds the clusters the lab cases need, in first-use order, and starts the
// drivers' servers in every server namespace. It returns the other cases.
func (p *Platform) prepareLab(ctx context.Context, cases []plan.Case, drivers map[string]driver.Driver) ([]plan.Case, error) {
	labCases, other := splitLabCases(cases)
	if len(labCases) == 0 {
		return other, nil
	}
	o := p.labOptions()
	l, err := p.ensureLab()
	if err != nil {
		return nil, err
	}
	// Say what is about to happen to the host: a plain --path host-host builds namespaces.
	var paths []string
	for _, c := range labCases {
		if !slices.Contains(paths, string(c.Path)) {
			paths = append(paths, string(c.Path))
		}
	}
	fmt.Fprintf(p.log, "%s: built in network namespaces on this host (the lab %s: namespaces, veths, routes; removed at the end; docs/lab.md)\n",
		strings.Join(paths, ", "), l.Tag())
	// Which cases need servers in which namespace, in first-use order.
	type nsKey struct{ ns, driver string }
	var order []nsKey
	byNS := map[nsKey][]plan.Case{}
	nsOf := map[string]lab.NetNS{}
	for _, c := range labCases {
		spec, err := o.SpecFor(c.Path, labTopology(o, c))
		if err != nil {
			return nil, fmt.Errorf("case %d (%s): %w", c.Index+1, c, err)
		}
		cl, err := l.Cluster(ctx, spec)
		if err != nil {
			return nil, err
		}
		e, err := cl.Endpoints(string(c.Path))
		if err != nil {
			return nil, err
		}
		for _, s := range e.Servers {
			k := nsKey{s.Name, c.Driver}
			if _, ok := byNS[k]; !ok {
				order = append(order, k)
				nsOf[s.Name] = s
			}
			byNS[k] = append(byNS[k], c)
		}
	}
	for _, k := range order {
		d, ok := drivers[k.driver]
		if !ok {
			return nil, fmt.Errorf("driver %q is not loaded", k.driver)
		}
		for _, s := range driver.Servers(d, byNS[k]) {
			err := p.startLabServer(ctx, nsOf[k.ns], k.driver, s)
			if errors.Is(err, errExitedEarly) && ctx.Err() == nil {
				// The tool refused this server (sockperf 3.7 has no IPv6: "'-i' Invalid
				// address: ::"): the cases it serves fail with its reason (labServersAlive),
				// the driver's other servers (the other family's) still measure.
				fmt.Fprintf(p.log, "warning: %s server %q in netns %s exited before it was ready: its cases fail\n",
					k.driver, s.Name, nsOf[k.ns])
				continue
			}
			if err != nil {
				return nil, err
			}
		}
	}
	return other, nil
}

func (p *Platform) ensureLab() (*lab.Lab, error) {
	p.labSide.mu.Lock()
	defer p.labSide.mu.Unlock()
	if p.labSide.lab != nil {
		return p.labSide.lab, nil
	}
	runID := p.opts.RunID
	if runID == "" {
		runID = uuid.NewString()
	}
	l, err := lab.New(runID, p.labOptions(), false, p.log)
	if err != nil {
		return nil, err
	}
	p.labSide.lab = l
	p.labSide.leftTag = l.Tag()
	return l, nil
}

// startLabServer starts one driver server inside ns and waits until it is ready: its Ready
// marker is printed, or its first TCP port accepts a connection made inside ns.
func (p *Platform) startLabServer(ctx context.Context, ns lab.NetNS, driverName string, s driver.Server) error {
	sp, err := p.spawnServer(driverName, s, ns.Start, " in netns "+ns.Name)
	if err != nil {
		return err
	}
	p.labSide.mu.Lock()
	p.labSide.servers = append(p.labSide.servers, &labServer{serverProc: sp, ns: ns})
	p.labSide.mu.Unlock()
	fmt.Fprintf(p.log, "started %s server %q in netns %s (pid %d): %s\n", driverName, s.Name, ns, sp.cmd.Process.Pid, strings.Join(s.Argv, " "))
	return waitReady(ctx, sp, p.opts.ServerStartTimeout, " in netns "+ns.Name, ns.Dial)
}

// nsExecutor runs client commands inside a lab namespace.
type nsExecutor struct {
	ns       lab.NetNS
	resolver Resolver
}

func (e nsExecutor) Exec(ctx context.Context, cmd driver.Command) driver.Output {
	argv, err := e.resolver.Resolve(cmd.Argv)
	if err != nil {
		return driver.Output{Argv: cmd.Argv, Err: err, ExitCode: -1, StartTime: time.Now(), EndTime: time.Now()}
	}
	out := Exec(ctx, argv, e.resolver.EnvFor(cmd.Argv), cmd.Timeout, e.ns.Start)
	out.Argv = cmd.Argv
	return out
}

// labPair places a lab case: the client in its namespace, the target the path's server
// address (a pod, a node, or the ClusterIP).
func (p *Platform) labPair(ctx context.Context, c plan.Case) (*platform.Pair, error) {
	if err := p.checkLabPath(c); err != nil {
		return nil, err
	}
	o := p.labOptions()
	topo := labTopology(o, c)
	spec, err := o.SpecFor(c.Path, topo)
	if err != nil {
		return nil, err
	}
	l, err := p.ensureLab()
	if err != nil {
		return nil, err
	}
	cl, err := l.Cluster(ctx, spec) // built in Prepare; built now if Prepare did not see the case
	if err != nil {
		return nil, err
	}
	e, err := cl.EndpointsOn(string(c.Path), c.Params.IPFamily)
	if err != nil {
		return nil, err
	}
	if err := p.labServersAlive(c, e.Servers); err != nil {
		return nil, err
	}
	endpoint := func(role, node, pod string, ns lab.NetNS, ip string) api.Endpoint {
		ep := api.Endpoint{Role: role, Node: node, Pod: pod, NetNS: ns.Name}
		if pod == "" {
			ep.HostNetwork, ep.HostIP = true, ip
		} else {
			ep.PodIP = ip
		}
		return ep
	}
	server := e.Servers[0]
	serverEP := endpoint("server", e.ServerNode, e.ServerPod, server, e.ServerIP.String())
	if len(e.Servers) > 1 {
		// A ClusterIP: the backend is chosen per connection by DNAT.
		serverEP = api.Endpoint{Role: "server", Node: e.ServerNode, Pod: fmt.Sprintf("%d backends", len(e.Servers))}
	}
	serverEP.Address = e.Target.String()
	var serverExec platform.Executor
	if len(e.Servers) == 1 {
		serverExec = nsExecutor{ns: server, resolver: p.resolver}
	}
	return &platform.Pair{
		Client: nsExecutor{ns: e.Client, resolver: p.resolver},
		Server: serverExec,
		Target: driver.Target{Host: e.Target.String()},
		Placement: &api.Placement{
			Client: endpoint("client", e.ClientNode, e.ClientPod, e.Client, e.ClientIP.String()),
			Server: serverEP,
			Target: e.Target.String(),
		},
		Topology: topo,
	}, nil
}

// labServersAlive reports a server of c in one of the namespaces that has exited: one of
// the servers c's job needs (driver.Servers), or, before Prepare has seen the drivers, any
// of its driver's there.
func (p *Platform) labServersAlive(c plan.Case, nss []lab.NetNS) error {
	driverName := c.Driver
	p.mu.Lock()
	d := p.drivers[driverName]
	p.mu.Unlock()
	var names map[string]bool
	if d != nil {
		names = map[string]bool{}
		for _, s := range driver.Servers(d, []plan.Case{c}) {
			names[s.Name] = true
		}
	}
	p.labSide.mu.Lock()
	defer p.labSide.mu.Unlock()
	want := map[string]bool{}
	for _, n := range nss {
		want[n.Name] = true
	}
	found := false
	for _, s := range p.labSide.servers {
		if s.driver != driverName || !want[s.ns.Name] || names != nil && !names[s.spec.Name] {
			continue
		}
		found = true
		select {
		case <-s.done:
			return fmt.Errorf("%s server %q in netns %s has exited: %s", s.driver, s.spec.Name, s.ns, lastLines(s.output.Bytes(), 10))
		default:
		}
	}
	if !found {
		return fmt.Errorf("no %s server runs in netns %s (Prepare did not see this case)", driverName, nss[0])
	}
	return nil
}

// closeLab stops the lab's servers and deletes its namespaces. Idempotent.
func (p *Platform) closeLab(ctx context.Context) error {
	p.labSide.mu.Lock()
	servers := p.labSide.servers
	l := p.labSide.lab
	p.labSide.servers, p.labSide.lab = nil, nil
	p.labSide.mu.Unlock()
	procs := make([]*serverProc, len(servers))
	where := make([]string, len(servers))
	for i, s := range servers {
		procs[i], where[i] = s.serverProc, "in netns "+s.ns.Name
	}
	errs := []error{stopServers(ctx, procs, where)}
	if l != nil {
		if err := l.Close(ctx); err != nil {
			errs = append(errs, err)
		} else {
			p.labSide.mu.Lock()
			p.labSide.leftTag = ""
			p.labSide.mu.Unlock()
		}
	}
	return errors.Join(errs...)
}

// Leftovers implements platform.LeftoverDescriber: the lab's network namespaces until they
// are removed (server processes die with cnperf).
func (p *Platform) Leftovers() string {
	p.labSide.mu.Lock()
	defer p.labSide.mu.Unlock()
	if p.labSide.leftTag == "" {
		return ""
	}
	return fmt.Sprintf("may be left on this host: the lab's network namespaces %s%s-… with their interfaces and processes; remove them with: cnperf lab cleanup --tag %s",
		lab.Prefix, p.labSide.leftTag, p.labSide.leftTag)
}
