// Package local is the local platform: endpoints are processes on this host. The loopback
// path runs client and server in the root network namespace and needs no privileges; the
// other paths are network-namespace topologies built by internal/lab.
//
// LOOPBACK-READY
package local

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/agenttoken"
	"github.com/cnperf/cnperf/internal/capbuf"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/hostport"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/platform"
	"github.com/cnperf/cnperf/internal/procexec"
)

// Options configure the local platform.
type Options struct {
	// AgentBinary is the cnperf binary run for "cnperf" commands (default: this executable).
	AgentBinary string
	// ServerStartTimeout bounds how long a server may take to accept connections.
	ServerStartTimeout time.Duration
	// External is the target of the external-service path: "HOST" or "HOST:PORT[,PORT...]",
	// the ports replacing, in order, the ports of the driver's servers (no server is started).
	External string
	// Lab configures the network-namespace lab paths (nil: lab.DefaultOptions()).
	Lab *lab.Options
	// RunID names the lab's namespaces (cnp-<first six hex digits>-…); empty: a new uuid.
	RunID string
	// AgentToken is the run's token for the built-in agent; empty: agenttoken.ForRun().
	AgentToken string
}

// Platform is the local platform.
type Platform struct {
	opts     Options
	resolver Resolver
	log      io.Writer
	hostname string

	mu      sync.Mutex
	servers []*serverProc
	closed  bool
	// portMap maps, per driver, a default server port to the port its server really uses
	// when the default was taken and the driver could be moved (driver.PortMover).
	portMap map[string]map[int]int
	// drivers are the drivers Prepare was given, by name (an external target's ports are
	// those of the driver's servers).
	drivers map[string]driver.Driver

	labSide labSide // the network-namespace paths (lab.go)
}

var _ platform.Platform = (*Platform)(nil)
var _ platform.PathChecker = (*Platform)(nil)
var _ platform.LeftoverDescriber = (*Platform)(nil)

// New returns a local platform. log receives progress lines.
func New(opts Options, log io.Writer) *Platform {
	if opts.ServerStartTimeout == 0 {
		opts.ServerStartTimeout = 10 * time.Second
	}
	if log == nil {
		log = io.Discard
	}
	if opts.AgentToken == "" {
		// crypto/rand does not fail on Linux; an empty token would make every agent refuse to start
		opts.AgentToken, _ = agenttoken.ForRun()
	}
	host, _ := os.Hostname()
	return &Platform{opts: opts, resolver: Resolver{AgentBinary: opts.AgentBinary, Env: []string{agenttoken.Env + "=" + opts.AgentToken}},
		log: log, hostname: host}
}

// Name implements platform.Platform.
func (p *Platform) Name() string { return "local" }

// Traits implements platform.TraitDescriber: processes on this host, loopback by default,
// and the lab's relative view after the table.
func (p *Platform) Traits() platform.Traits {
	return platform.Traits{DefaultPaths: []api.Path{api.PathLoopback}, HostOnly: true}
}

// CheckPath implements platform.PathChecker.
func (p *Platform) CheckPath(c plan.Case) error {
	if c.Params.Network != "" {
		// it was accepted and ignored before: the case ran on the default path and its row
		// said "+net: on secondary network …"
		return fmt.Errorf("network %s: secondary networks (Multus) exist only on the kube platform; the local platform has none",
			c.Params.Network)
	}
	if labPath(c.Path) {
		return p.checkLabPath(c)
	}
	switch row, _ := c.Path.Row(); {
	case row.Nodes == api.NodesLocal:
		if c.Params.IPFamily == "ipv6" {
			return fmt.Errorf("path %q is measured on 127.0.0.1 only (its servers listen there); IPv6 is measured on the lab's paths (%s)",
				c.Path, plan.Join(lab.Paths))
		}
		return nil
	case row.Access == api.AccessExternal:
		if p.opts.External == "" {
			return fmt.Errorf("path %q needs --external HOST[:PORT[,PORT...]]", c.Path)
		}
		_, _, err := platform.ParseExternal(p.opts.External)
		return err
	}
	available := []api.Path{api.PathLoopback}
	if p.LabAvailable() == nil {
		available = p.Paths()
	}
	available = append(available, api.PathExternalService)
	// the list on a line of its own: with the lab's paths it is ~100 columns, and the whole
	// message on one line was ~190 (output a person reads fits 120)
	return fmt.Errorf("path %q is not available on the local platform; available:\n  %s", c.Path, plan.Join(available))
}

// external says whether path p goes to what --external names (no server of cnperf's).
func external(p api.Path) bool {
	row, _ := p.Row()
	return row.Access == api.AccessExternal
}

// serverProc is one running server.
type serverProc struct {
	spec   driver.Server
	driver string
	cmd    *exec.Cmd
	done   chan struct{}
	output *capbuf.Buffer
}

// Prepare starts every server the cases need, on loopback.
func (p *Platform) Prepare(ctx context.Context, cases []plan.Case, drivers map[string]driver.Driver) error {
	p.mu.Lock()
	p.drivers = drivers
	p.mu.Unlock()
	cases, err := p.prepareLab(ctx, cases, drivers)
	if err != nil {
		return err
	}
	for _, name := range driverOrder(cases) {
		d, ok := drivers[name]
		if !ok {
			return fmt.Errorf("driver %q is not loaded", name)
		}
		var mine []plan.Case
		for _, c := range cases {
			if c.Driver == name && !external(c.Path) {
				mine = append(mine, c)
			}
		}
		if len(mine) == 0 {
			continue
		}
		if b, ok := d.(driver.Binder); ok {
			// loopback servers listen on 127.0.0.1 only: nothing off this host reaches them
			bind := b.BindOptions("127.0.0.1")
			warned := false
			for i, c := range mine {
				for k, v := range bind {
					if got, set := c.Params.Options[k]; set && got != v && !warned {
						// the user asked for something else: say it is overridden, never silently
						fmt.Fprintf(p.log, "warning: option %s=%s of %s is overridden: its servers on this host listen on %s only\n", k, got, name, v)
						warned = true
					}
				}
				c.Params.Options = plan.MergeOptions(c.Params.Options, bind)
				mine[i] = c
			}
		} else {
			// qperf and uperf have no listen-address option (checked with their --help and man
			// pages): say so rather than pretend
			fmt.Fprintf(p.log, "warning: %s's server cannot be told an address to listen on: while the run lasts it listens on every address of this host\n", name)
		}
		if err := p.placeAndStart(ctx, name, d, mine); err != nil {
			return err
		}
	}
	return nil
}

// placeAndStart places the servers of driver d for cases (moved off taken default ports) and
// starts them, holding the host's port lock from the check until they listen.
func (p *Platform) placeAndStart(ctx context.Context, name string, d driver.Driver, cases []plan.Case) error {
	unlock, err := lockHostPorts(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	servers, moved, err := p.placeServers(d, cases)
	if err != nil {
		return err
	}
	if moved != nil {
		p.mu.Lock()
		if p.portMap == nil {
			p.portMap = map[string]map[int]int{}
		}
		p.portMap[name] = moved
		p.mu.Unlock()
	}
	for _, s := range servers {
		if err := p.startServer(ctx, name, s); err != nil {
			return err
		}
	}
	return nil
}

// driverOrder lists the drivers of the cases in first-use order.
func driverOrder(cases []plan.Case) []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range cases {
		if !seen[c.Driver] {
			seen[c.Driver] = true
			out = append(out, c.Driver)
		}
	}
	return out
}

// placeServers returns the servers of d for cases, moved to free ports when one of the
// default ports is taken and the driver can be moved; moved maps default to actual ports.
func (p *Platform) placeServers(d driver.Driver, cases []plan.Case) ([]driver.Server, map[int]int, error) {
	servers := driver.Servers(d, cases)
	busy := false
	for _, s := range servers {
		for _, port := range s.Ports {
			if portFree(port) != nil {
				busy = true
			}
		}
	}
	mover, canMove := d.(driver.PortMover)
	if !busy || !canMove || len(servers) != 1 {
		return servers, nil, nil
	}
	var defaults []int
	for _, port := range servers[0].Ports {
		if !containsInt(defaults, port.Port) {
			defaults = append(defaults, port.Port)
		}
	}
	free, err := movedPorts(defaults)
	if err != nil {
		return nil, nil, fmt.Errorf("find free ports for the %s server: %w", d.Name(), err)
	}
	opts := mover.PortOptions(free)
	if opts == nil {
		return servers, nil, nil
	}
	moved := make([]plan.Case, len(cases))
	for i, c := range cases {
		c.Params.Options = plan.MergeOptions(c.Params.Options, opts)
		moved[i] = c
	}
	servers = driver.Servers(d, moved)
	m := map[int]int{}
	for i, port := range defaults {
		m[port] = free[i]
	}
	fmt.Fprintf(p.log, "%s: default ports %v are taken on this host; using %v\n", d.Name(), defaults, free)
	return servers, m, nil
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// maxMoveSpan is the widest spread of a server's default ports that movedPorts keeps as one
// block (netperf with 64 flows: control and 64 data ports).
const maxMoveSpan = 256

// movedPorts returns ports to use instead of defaults (a server's distinct ports), free for
// TCP and UDP, outside the kernel's ephemeral range (hostport.Block), at the same distances
// from each other as the defaults: the data ports of several flows stay consecutive (netperf's
// and uperf's flow i listens on the data port + i), and a port the server binds only when a
// test begins (the agent's data port) is not an outgoing connection's source port by then, as
// a port picked with listen(":0") soon was on a loaded host. Defaults spread wider than
// maxMoveSpan get a block of one port each.
func movedPorts(defaults []int) ([]int, error) {
	first, last := slices.Min(defaults), slices.Max(defaults)
	out := make([]int, len(defaults))
	if last-first < maxMoveSpan {
		base, err := hostport.Block(last - first + 1)
		if err != nil {
			return nil, err
		}
		for i, port := range defaults {
			out[i] = base + port - first
		}
		return out, nil
	}
	for i := range defaults {
		for {
			port, err := hostport.Block(1)
			if err != nil {
				return nil, err
			}
			if !slices.Contains(out[:i], port) {
				out[i] = port
				break
			}
		}
	}
	return out, nil
}

func (p *Platform) startServer(ctx context.Context, driverName string, s driver.Server) error {
	for _, port := range s.Ports {
		if err := portFree(port); err != nil {
			return fmt.Errorf("%s server %q needs %s port %d on 127.0.0.1: %w", driverName, s.Name, port.Protocol, port.Port, err)
		}
	}
	sp, err := p.spawnServer(driverName, s, (*exec.Cmd).Start, "")
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.servers = append(p.servers, sp)
	p.mu.Unlock()
	fmt.Fprintf(p.log, "started %s server %q (pid %d): %s\n", driverName, s.Name, sp.cmd.Process.Pid, strings.Join(s.Argv, " "))
	return waitReady(ctx, sp, p.opts.ServerStartTimeout, "", (&net.Dialer{}).DialContext)
}

// spawnServer starts server s of driverName with start (cmd.Start, or a namespace's Start)
// and keeps its output; where says where it runs in errors (" in netns x", or "").
func (p *Platform) spawnServer(driverName string, s driver.Server, start func(*exec.Cmd) error, where string) (*serverProc, error) {
	argv, err := p.resolver.Resolve(s.Argv)
	if err != nil {
		return nil, err
	}
	cmd := prepare(argv, p.resolver.EnvFor(s.Argv))
	out := &capbuf.Buffer{Max: 1 << 20}
	cmd.Stdout, cmd.Stderr = out, out
	if err := start(cmd); err != nil {
		return nil, fmt.Errorf("start %s server %q%s (%s): %w", driverName, s.Name, where, strings.Join(s.Argv, " "), err)
	}
	sp := &serverProc{spec: s, driver: driverName, cmd: cmd, done: make(chan struct{}), output: out}
	go func() { _ = cmd.Wait(); close(sp.done) }()
	return sp, nil
}

// portFree checks that nothing listens on the port yet, so a stray server of another tool
// does not silently answer our clients.
func portFree(port driver.Port) error {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port.Port))
	if strings.EqualFold(port.Protocol, "UDP") {
		c, err := net.ListenPacket("udp", addr)
		if err != nil {
			return fmt.Errorf("already in use: %w", err)
		}
		return c.Close()
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("already in use: %w", err)
	}
	return l.Close()
}

// errExitedEarly is in waitReady's error when the server exited (the tool refused its
// arguments or the address), not when it was slow or the run was cancelled.
var errExitedEarly = errors.New("exited before it was ready")

// waitReady waits until the server prints its Ready marker, or its first TCP port on
// 127.0.0.1 accepts a connection made with dial, or it exits (an error carrying its output).
// where says where the server runs ("" on the host, " in netns NAME" in the lab).
func waitReady(ctx context.Context, sp *serverProc, timeout time.Duration, where string,
	dial func(ctx context.Context, network, addr string) (net.Conn, error)) error {
	deadline := time.Now().Add(timeout)
	tcpPort := 0
	for _, port := range sp.spec.Ports {
		if !strings.EqualFold(port.Protocol, "UDP") {
			tcpPort = port.Port
			break
		}
	}
	for {
		select {
		case <-sp.done:
			return fmt.Errorf("%s server %q%s %w (%s): %s", sp.driver, sp.spec.Name, where, errExitedEarly,
				strings.Join(sp.spec.Argv, " "), lastLines(sp.output.Bytes(), 10))
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		switch {
		case sp.spec.Ready != "":
			if bytes.Contains(sp.output.Bytes(), []byte(sp.spec.Ready)) {
				return nil
			}
		case tcpPort != 0:
			dctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			c, err := dial(dctx, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(tcpPort)))
			cancel()
			if err == nil {
				_ = c.Close()
				return nil
			}
		default:
			// A UDP-only server without a ready marker: give it a moment to bind.
			time.Sleep(300 * time.Millisecond)
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s server %q%s did not become ready within %s: %s", sp.driver, sp.spec.Name, where, timeout,
				lastLines(sp.output.Bytes(), 10))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// lastLines is a server's output for an error: its last n lines joined with " | ", and, when
// there are more, its first line before them, since a tool that refuses its arguments often
// says why first and prints its usage after (sockperf 3.7: "sockperf: '-i' Invalid address:
// ::", then 60 lines of help).
func lastLines(b []byte, n int) string {
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) > n {
		lines = append([]string{lines[0], "…"}, lines[len(lines)-n+1:]...)
	}
	if len(lines) == 0 {
		return "(no output)"
	}
	return strings.Join(lines, " | ")
}

// loopbackExecutor runs client commands as child processes in the root namespace.
type loopbackExecutor struct{ resolver Resolver }

func (e loopbackExecutor) Exec(ctx context.Context, cmd driver.Command) driver.Output {
	argv, err := e.resolver.Resolve(cmd.Argv)
	if err != nil {
		return driver.Output{Argv: cmd.Argv, Err: err, ExitCode: -1, StartTime: time.Now(), EndTime: time.Now()}
	}
	out := Exec(ctx, argv, e.resolver.EnvFor(cmd.Argv), cmd.Timeout, nil)
	out.Argv = cmd.Argv
	return out
}

// Pair implements platform.Platform.
func (p *Platform) Pair(ctx context.Context, c plan.Case) (*platform.Pair, error) {
	if labPath(c.Path) {
		return p.labPair(ctx, c)
	}
	if err := p.CheckPath(c); err != nil {
		return nil, err
	}
	if external(c.Path) {
		return p.externalPair(c)
	}
	if err := p.serversAlive(c.Driver); err != nil {
		return nil, err
	}
	p.mu.Lock()
	ports := p.portMap[c.Driver]
	p.mu.Unlock()
	return &platform.Pair{
		Client: loopbackExecutor{resolver: p.resolver},
		Server: loopbackExecutor{resolver: p.resolver},
		Target: driver.Target{Host: "127.0.0.1", Ports: ports},
		Placement: &api.Placement{
			Client: api.Endpoint{Role: "client", Node: p.hostname, HostNetwork: true, HostIP: "127.0.0.1"},
			Server: api.Endpoint{Role: "server", Node: p.hostname, HostNetwork: true, HostIP: "127.0.0.1", Address: "127.0.0.1"},
			Target: "127.0.0.1",
		},
	}, nil
}

// serversAlive reports a server of the driver that died since Prepare.
func (p *Platform) serversAlive(driverName string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, sp := range p.servers {
		if sp.driver != driverName {
			continue
		}
		select {
		case <-sp.done:
			return fmt.Errorf("%s server %q has exited: %s", sp.driver, sp.spec.Name, lastLines(sp.output.Bytes(), 10))
		default:
		}
	}
	return nil
}

// stopServers ends servers in parallel (TERM to the process group, KILL after 2 s) and waits
// for each to exit or ctx to end; where[i], when given, says where server i runs.
func stopServers(ctx context.Context, servers []*serverProc, where []string) error {
	var (
		errs  []error
		errMu sync.Mutex
		wg    sync.WaitGroup
	)
	for i, sp := range servers {
		wg.Add(1)
		go func(i int, sp *serverProc) {
			defer wg.Done()
			procexec.KillGroup(sp.cmd, sp.done, 2*time.Second)
			select {
			case <-sp.done:
			case <-ctx.Done():
				at := ""
				if i < len(where) {
					at = " " + where[i]
				}
				errMu.Lock()
				defer errMu.Unlock()
				errs = append(errs, fmt.Errorf("server %q (pid %d)%s did not exit: %w", sp.spec.Name, sp.cmd.Process.Pid, at, ctx.Err()))
			}
		}(i, sp)
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Close stops every server. It is idempotent.
func (p *Platform) Close(ctx context.Context) error {
	p.mu.Lock()
	servers := p.servers
	p.servers = nil
	p.closed = true
	p.mu.Unlock()
	errs := []error{stopServers(ctx, servers, nil)}
	errs = append(errs, p.closeLab(ctx))
	return errors.Join(errs...)
}

// externalPair dials the configured external target; nothing of cnperf's serves it.
func (p *Platform) externalPair(c plan.Case) (*platform.Pair, error) {
	host, ports, err := platform.ParseExternal(p.opts.External)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	d, ok := p.drivers[c.Driver]
	p.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("driver %q is not loaded", c.Driver)
	}
	t := driver.Target{Host: host, Ports: platform.ExternalPorts(driver.Servers(d, []plan.Case{c}), ports)}
	return &platform.Pair{
		Client: loopbackExecutor{resolver: p.resolver},
		Target: t,
		Placement: &api.Placement{
			Client: api.Endpoint{Role: "client", Node: p.hostname, HostNetwork: true},
			Server: api.Endpoint{Role: "server", Address: host},
			Target: p.opts.External,
		},
	}, nil
}
