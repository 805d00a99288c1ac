package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

// Spec is one two-node "cluster" built from namespaces. Paths that need the same spec share
// one cluster.
type Spec struct {
	Underlay    string
	MTUBytes    int // underlay MTU
	Overlay     string
	PolicyRules int
	PolicyStyle string // set when PolicyRules > 0
	Proxy       string // "" = no service
	Backends    int    // with Proxy
	Affinity    bool   // with Proxy
	// Masquerade SNATs pod traffic leaving the pod network to the node's address, as flannel
	// (ipMasq) and Calico (natOutgoing) do; pod-host runs on such a cluster.
	Masquerade bool
	// PodMTUOverride, when not 0, is the pods' MTU (Options.PodMTUBytes).
	PodMTUOverride int
	// DropFragNeeded: the nodes drop ICMP "fragmentation needed" (Options.DropFragNeeded).
	DropFragNeeded bool
}

// Name is the spec's short name, used in namespace names: "routed", "vxlan-p1000-chains",
// "routed-svc-nftables".
func (s Spec) Name() string {
	n := s.Overlay
	if s.PolicyRules > 0 {
		n += "-p" + strconv.Itoa(s.PolicyRules) + "-" + s.PolicyStyle
	}
	if s.Proxy != "" {
		n += "-svc-" + s.Proxy
	}
	if s.Masquerade {
		n += "-masq"
	}
	if s.PodMTUOverride > 0 {
		n += "-pmtu" + strconv.Itoa(s.PodMTUOverride)
	}
	if s.DropFragNeeded {
		n += "-noicmp"
	}
	return n
}

// MinIPv6MTUBytes is IPv6's minimum link MTU (RFC 8200): below it a link has no IPv6.
const MinIPv6MTUBytes = 1280

// IPv6 reports whether the spec's cluster is built dual-stack. Every cluster is, except one
// whose links are below IPv6's minimum MTU, and one with policy rules, a masquerade rule, a
// Service or the ICMP drop: those rules are IPv4's only, and an IPv6 case on them would
// measure a path without them.
func (s Spec) IPv6() bool { return s.IPv6Unsupported() == "" }

// IPv6Unsupported says why the spec's cluster has no IPv6 ("" when it has).
func (s Spec) IPv6Unsupported() string {
	switch {
	case min(s.MTUBytes, s.PodMTUBytes()) < MinIPv6MTUBytes:
		return fmt.Sprintf("its MTU %d is below IPv6's minimum %d", min(s.MTUBytes, s.PodMTUBytes()), MinIPv6MTUBytes)
	case s.PolicyRules > 0:
		return "its policy rules are IPv4 only"
	case s.DropFragNeeded:
		return "its ICMP drop rule is IPv4 only"
	}
	return ""
}

// PodMTUBytes is the MTU of the pods' interfaces.
func (s Spec) PodMTUBytes() int {
	if s.PodMTUOverride > 0 {
		return s.PodMTUOverride
	}
	return podMTU(s.MTUBytes, s.Overlay)
}

// Roles of a cluster's namespaces.
const (
	RoleFabric = "fabric"
	RoleNode1  = "node1"
	RoleNode2  = "node2"
)

// podRole names pod p (from 1) on node n (1 or 2): "n1p1".
func podRole(node, pod int) string { return fmt.Sprintf("n%dp%d", node, pod) }

// podsOn is how many pods a node of the spec carries: node1 has the client pod and a
// same-node server; node2 has the cross-node server, which is also the first backend.
func (s Spec) podsOn(node int) int {
	if node == 1 {
		return 2
	}
	if s.Proxy != "" && s.Backends > 1 {
		return s.Backends
	}
	return 1
}

// Cluster is a built spec.
type Cluster struct {
	Spec  Spec
	tag   string
	addrs addrPlan
	// Namespaces holds the cluster's namespaces in creation order.
	Namespaces []NetNS
	// Seconds it took to build.
	BuildSeconds float64
}

// NS returns the namespace of a role.
func (c *Cluster) NS(role string) NetNS { return NetNS{Name: nsName(c.tag, c.Spec.Name(), role)} }

func (c *Cluster) link(suffix string) string { return linkName(c.tag, suffix) }

// roles lists the cluster's namespace roles in creation order.
func (c *Cluster) roles() []string {
	var r []string
	if c.Spec.Underlay == UnderlayBridge {
		r = append(r, RoleFabric)
	}
	r = append(r, RoleNode1, RoleNode2)
	for node := 1; node <= 2; node++ {
		for p := 1; p <= c.Spec.podsOn(node); p++ {
			r = append(r, podRole(node, p))
		}
	}
	return r
}

// build creates the cluster. On error the caller destroys what was made.
func (c *Cluster) build(ctx context.Context, marker ownerMarker, log io.Writer) error {
	start := time.Now()
	if err := c.createNamespaces(ctx, marker); err != nil {
		return err
	}
	for _, step := range []func() ([][]string, error){c.underlay, c.podNetworks, c.overlay} {
		cmds, err := step()
		if err != nil {
			return err
		}
		if err := runAll(ctx, cmds); err != nil {
			return err
		}
	}
	for n := 1; n <= 2; n++ {
		if err := c.loadRules(ctx, n); err != nil {
			return err
		}
	}
	c.BuildSeconds = time.Since(start).Seconds()
	fmt.Fprintf(log, "lab: built cluster %s (%d namespaces) in %.2fs\n", c.Spec.Name(), len(c.Namespaces), c.BuildSeconds)
	return nil
}

// createNamespaces creates the namespace of every role, marked as the lab's, with the
// sysctls every namespace gets.
func (c *Cluster) createNamespaces(ctx context.Context, marker ownerMarker) error {
	for _, role := range c.roles() {
		// Recorded before it exists: an `ip netns add` killed half-way (interrupt) can leave
		// the namespace file behind, and destroy must still remove it.
		c.Namespaces = append(c.Namespaces, c.NS(role))
		ns, err := createNetNS(ctx, c.NS(role).Name)
		if err != nil {
			return err
		}
		if _, err := run(ctx, nil, "ip", "-n", ns.Name, "link", "set", "lo", "alias", marker.String()); err != nil {
			return err
		}
		// Dual-stack: IPv6 on, but no duplicate address detection (the lab assigns every
		// address once) and no router solicitations (there is no router to answer).
		// TIME_WAIT reuse for outgoing connections, which loopback traffic gets by default
		// (tcp_tw_reuse=2): without it a sustained TCP_CRR exhausts the ephemeral ports within
		// seconds and then measures the kernel's port search instead of the datapath.
		for _, kv := range [][2]string{{"net.ipv6.conf.all.accept_dad", "0"}, {"net.ipv6.conf.default.accept_dad", "0"},
			{"net.ipv6.conf.all.router_solicitations", "0"}, {"net.ipv6.conf.default.router_solicitations", "0"},
			{"net.ipv4.tcp_tw_reuse", "1"}} {
			if err := ns.WriteSysctl(kv[0], kv[1]); err != nil {
				return err
			}
		}
	}
	return nil
}

// nodeNS is the namespace name of node n (1 or 2).
func (c *Cluster) nodeNS(n int) string { return c.NS("node" + strconv.Itoa(n)).Name }

// addr6 is the command that adds an IPv6 address (without duplicate address detection).
func addr6(ns string, addr netip.Addr, p netip.Prefix, dev string) []string {
	return []string{"ip", "-n", ns, "-6", "addr", "add", cidr(addr, p), "dev", dev, "nodad"}
}

// underlay links the nodes' eth0: through a bridge in the fabric namespace or one veth pair,
// and addresses them.
func (c *Cluster) underlay() ([][]string, error) {
	s, a := c.Spec, c.addrs
	mtu := strconv.Itoa(s.MTUBytes)
	eth0 := c.link("eth0")
	var cmds [][]string
	switch s.Underlay {
	case UnderlayBridge:
		fab := c.NS(RoleFabric)
		br := c.link("fab")
		// A switch, not a host: no netfilter on bridged frames.
		for _, k := range []string{"net.bridge.bridge-nf-call-iptables", "net.bridge.bridge-nf-call-ip6tables", "net.bridge.bridge-nf-call-arptables"} {
			if err := fab.WriteSysctl(k, "0"); err != nil {
				return nil, err
			}
		}
		cmds = append(cmds,
			[]string{"ip", "-n", fab.Name, "link", "add", br, "mtu", mtu, "type", "bridge"},
			[]string{"ip", "-n", fab.Name, "link", "set", br, "up"})
		for n := 1; n <= 2; n++ {
			port := c.link("f" + strconv.Itoa(n))
			cmds = append(cmds,
				[]string{"ip", "-n", c.nodeNS(n), "link", "add", eth0, "mtu", mtu, "type", "veth", "peer", "name", port, "mtu", mtu, "netns", fab.Name},
				[]string{"ip", "-n", fab.Name, "link", "set", port, "master", br},
				[]string{"ip", "-n", fab.Name, "link", "set", port, "up"})
		}
	case UnderlayVeth:
		cmds = append(cmds,
			[]string{"ip", "-n", c.nodeNS(1), "link", "add", eth0, "mtu", mtu, "type", "veth", "peer", "name", eth0, "mtu", mtu, "netns", c.nodeNS(2)})
	default:
		return nil, fmt.Errorf("unknown underlay %q", s.Underlay)
	}
	for n := 1; n <= 2; n++ {
		cmds = append(cmds,
			[]string{"ip", "-n", c.nodeNS(n), "addr", "add", a.nodeCIDR(n), "dev", eth0},
			[]string{"ip", "-n", c.nodeNS(n), "link", "set", eth0, "up"})
		if s.IPv6() {
			cmds = append(cmds, addr6(c.nodeNS(n), a.nodeIPF(ipv6, n), a.underlayF(ipv6), eth0))
		}
	}
	return cmds, nil
}

// podNetworks makes each node a router with a pod bridge: forwarding on (inside the node
// namespaces only), bridge netfilter on as Kubernetes requires, and each pod on the bridge
// through a veth, its default route via the bridge.
func (c *Cluster) podNetworks() ([][]string, error) {
	s, a := c.Spec, c.addrs
	v6 := s.IPv6()
	pmtu := strconv.Itoa(s.PodMTUBytes())
	eth0, cni0 := c.link("eth0"), c.link("cni0")
	var cmds [][]string
	for n := 1; n <= 2; n++ {
		node := c.nodeNS(n)
		sysctls := [][2]string{{"net.ipv4.ip_forward", "1"}, {"net.bridge.bridge-nf-call-iptables", "1"}}
		if v6 {
			sysctls = append(sysctls, [2]string{"net.ipv6.conf.all.forwarding", "1"})
		}
		for _, kv := range sysctls {
			if err := (NetNS{Name: node}).WriteSysctl(kv[0], kv[1]); err != nil {
				return nil, err
			}
		}
		cmds = append(cmds,
			[]string{"ip", "-n", node, "link", "add", cni0, "mtu", pmtu, "type", "bridge"},
			[]string{"ip", "-n", node, "addr", "add", cidr(a.gateway(n), a.podCIDR(n)), "dev", cni0},
			[]string{"ip", "-n", node, "link", "set", cni0, "up"})
		if v6 {
			cmds = append(cmds, addr6(node, a.gatewayF(ipv6, n), a.podCIDRF(ipv6, n), cni0))
		}
		for p := 1; p <= s.podsOn(n); p++ {
			pod := c.NS(podRole(n, p)).Name
			veth := c.link("v" + strconv.Itoa(p))
			cmds = append(cmds,
				[]string{"ip", "-n", node, "link", "add", veth, "mtu", pmtu, "type", "veth", "peer", "name", eth0, "mtu", pmtu, "netns", pod},
				[]string{"ip", "-n", node, "link", "set", veth, "master", cni0},
				[]string{"ip", "-n", node, "link", "set", veth, "up"},
				[]string{"ip", "-n", pod, "addr", "add", a.podAddrCIDR(n, p), "dev", eth0},
				[]string{"ip", "-n", pod, "link", "set", eth0, "up"},
				[]string{"ip", "-n", pod, "route", "add", "default", "via", a.gateway(n).String(), "dev", eth0})
			if v6 {
				cmds = append(cmds, addr6(pod, a.podIPF(ipv6, n, p), a.podCIDRF(ipv6, n), eth0),
					[]string{"ip", "-n", pod, "-6", "route", "add", "default", "via", a.gatewayF(ipv6, n).String(), "dev", eth0})
			}
		}
	}
	return cmds, nil
}

// overlay connects the pod networks across nodes: routes via the peer node, or a VXLAN.
func (c *Cluster) overlay() ([][]string, error) {
	s, a := c.Spec, c.addrs
	v6 := s.IPv6()
	eth0 := c.link("eth0")
	var cmds [][]string
	switch s.Overlay {
	case OverlayRouted:
		for n := 1; n <= 2; n++ {
			peer := 3 - n
			cmds = append(cmds, []string{"ip", "-n", c.nodeNS(n), "route", "add", a.podCIDR(peer).String(), "via", a.nodeIP(peer).String(), "dev", eth0})
			if v6 {
				cmds = append(cmds, []string{"ip", "-n", c.nodeNS(n), "-6", "route", "add", a.podCIDRF(ipv6, peer).String(),
					"via", a.nodeIPF(ipv6, peer).String(), "dev", eth0})
			}
		}
	case OverlayVXLAN:
		for n := 1; n <= 2; n++ {
			cmds = append(cmds, c.vxlan(n)...)
		}
	default:
		return nil, fmt.Errorf("unknown overlay %q", s.Overlay)
	}
	return cmds, nil
}

// vxlan is what flannel's vxlan backend sets up on node n: a VTEP addressed with the .0 of
// its pod CIDR, and for the peer a route via its VTEP address (onlink), a permanent
// neighbour entry for it, and an FDB entry sending its MAC to the peer node.
func (c *Cluster) vxlan(n int) [][]string {
	s, a := c.Spec, c.addrs
	node, vx, peer := c.nodeNS(n), c.link("vx1"), 3-n
	cmds := [][]string{
		{"ip", "-n", node, "link", "add", vx, "address", vtepMAC(n), "mtu", strconv.Itoa(s.PodMTUBytes()), "type", "vxlan",
			"id", "1", "local", a.nodeIP(n).String(), "dev", c.link("eth0"), "dstport", "8472", "nolearning"},
		{"ip", "-n", node, "addr", "add", a.vtepIP(n).String() + "/32", "dev", vx},
		{"ip", "-n", node, "link", "set", vx, "up"},
		{"ip", "-n", node, "neigh", "add", a.vtepIP(peer).String(), "lladdr", vtepMAC(peer), "dev", vx, "nud", "permanent"},
		{"bridge", "-n", node, "fdb", "append", vtepMAC(peer), "dev", vx, "dst", a.nodeIP(peer).String(), "self", "permanent"},
		{"ip", "-n", node, "route", "add", a.podCIDR(peer).String(), "via", a.vtepIP(peer).String(), "dev", vx, "onlink"},
	}
	if s.IPv6() { // IPv6 inside the IPv4 VXLAN: the same VTEP MACs and FDB, an IPv6 VTEP address and neighbour
		cmds = append(cmds,
			[]string{"ip", "-n", node, "-6", "addr", "add", a.vtepIPF(ipv6, n).String() + "/128", "dev", vx, "nodad"},
			[]string{"ip", "-n", node, "-6", "neigh", "add", a.vtepIPF(ipv6, peer).String(), "lladdr", vtepMAC(peer), "dev", vx, "nud", "permanent"},
			[]string{"ip", "-n", node, "-6", "route", "add", a.podCIDRF(ipv6, peer).String(), "via", a.vtepIPF(ipv6, peer).String(), "dev", vx, "onlink"})
	}
	return cmds
}

// loadRules loads node n's filter rules: the policy rules, the masquerade, the rule that
// drops ICMP fragmentation-needed and the ClusterIP service, as the spec asks.
func (c *Cluster) loadRules(ctx context.Context, n int) error {
	s, a := c.Spec, c.addrs
	ns := NetNS{Name: c.nodeNS(n)}
	if s.PolicyRules > 0 {
		if _, err := ns.Run(ctx, []byte(policyRuleset(c.tag, a, n, s)), "nft", "-f", "-"); err != nil {
			return fmt.Errorf("load %d policy rules (%s): %w", s.PolicyRules, s.PolicyStyle, err)
		}
	}
	if s.Masquerade {
		if _, err := ns.Run(ctx, []byte(masqueradeRuleset(c.tag, a, n)), "nft", "-f", "-"); err != nil {
			return fmt.Errorf("load the masquerade rule: %w", err)
		}
		if s.IPv6() {
			if _, err := ns.Run(ctx, []byte(masqueradeRuleset6(c.tag, a, n)), "nft", "-f", "-"); err != nil {
				return fmt.Errorf("load the IPv6 masquerade rule: %w", err)
			}
		}
	}
	if s.DropFragNeeded {
		if _, err := ns.Run(ctx, []byte(dropFragNeededRuleset(c.tag)), "nft", "-f", "-"); err != nil {
			return fmt.Errorf("load the rule that drops ICMP fragmentation-needed: %w", err)
		}
	}
	return c.loadService(ctx, ns)
}

// loadService loads the ClusterIP service of the spec's proxy into a node namespace.
func (c *Cluster) loadService(ctx context.Context, ns NetNS) error {
	s, a := c.Spec, c.addrs
	switch s.Proxy {
	case "":
	case ProxyNftables:
		if _, err := ns.Run(ctx, []byte(nftService(c.tag, a, s)), "nft", "-f", "-"); err != nil {
			return fmt.Errorf("load the ClusterIP service (nftables): %w", err)
		}
		if s.IPv6() {
			if _, err := ns.Run(ctx, []byte(nftServiceF(c.tag, a, s, ipv6)), "nft", "-f", "-"); err != nil {
				return fmt.Errorf("load the IPv6 ClusterIP service (nftables): %w", err)
			}
		}
	case ProxyIptables:
		if _, err := ns.Run(ctx, []byte(iptablesService(c.tag, a, s)), "iptables-nft-restore", "--noflush"); err != nil {
			return fmt.Errorf("load the ClusterIP service (iptables-nft): %w", err)
		}
		if s.IPv6() {
			if _, err := ns.Run(ctx, []byte(iptablesServiceF(c.tag, a, s, ipv6)), "ip6tables-nft-restore", "--noflush"); err != nil {
				return fmt.Errorf("load the IPv6 ClusterIP service (ip6tables-nft): %w", err)
			}
		}
	default:
		return fmt.Errorf("unknown service proxy %q", s.Proxy)
	}
	return nil
}

// destroy deletes the cluster's namespaces (in reverse order), trying all of them.
func (c *Cluster) destroy(ctx context.Context) error {
	var errs []error
	for i := len(c.Namespaces) - 1; i >= 0; i-- {
		if err := deleteNetNS(ctx, c.Namespaces[i].Name); err != nil {
			errs = append(errs, err)
		}
	}
	c.Namespaces = nil
	return errors.Join(errs...)
}

func runAll(ctx context.Context, cmds [][]string) error {
	for _, argv := range cmds {
		if _, err := run(ctx, nil, argv...); err != nil {
			return err
		}
	}
	return nil
}

// Endpoints are where the two sides of a path live in a cluster.
type Endpoints struct {
	Client NetNS
	// Servers are the namespaces that must run the drivers' servers: one, or every backend
	// of the ClusterIP.
	Servers []NetNS
	// Target is what the client dials.
	Target             netip.Addr
	ClientIP, ServerIP netip.Addr
	ClientNode         string
	ServerNode         string
	ClientPod          string // "" for a host-network client
	ServerPod          string // "" for a host-network server
	// MTUBytes is the smallest MTU on the path.
	MTUBytes int
}

// Endpoints returns the two sides of path in the cluster, on IPv4.
func (c *Cluster) Endpoints(path string) (Endpoints, error) { return c.EndpointsOn(path, "") }

// EndpointsOn returns the two sides of path in the cluster on an IP family ("ipv6", else
// IPv4); IPv6 on a cluster without it is an error saying why.
func (c *Cluster) EndpointsOn(path, ipFamily string) (Endpoints, error) {
	a := c.addrs
	s := c.Spec
	f := family(ipFamily)
	if f.v6() && !s.IPv6() {
		return Endpoints{}, fmt.Errorf("path %s on IPv6: the lab's cluster %s has no IPv6 (%s)", path, s.Name(), s.IPv6Unsupported())
	}
	pod := func(node, p int) (NetNS, netip.Addr, string) {
		return c.NS(podRole(node, p)), a.podIPF(f, node, p), podRole(node, p)
	}
	var e Endpoints
	switch path {
	case pathHostHost:
		e = Endpoints{Client: c.NS(RoleNode1), Servers: []NetNS{c.NS(RoleNode2)},
			ClientIP: a.nodeIPF(f, 1), ServerIP: a.nodeIPF(f, 2), MTUBytes: s.MTUBytes}
	case pathPodPodSameNode:
		cns, cip, cp := pod(1, 1)
		sns, sip, sp := pod(1, 2)
		e = Endpoints{Client: cns, Servers: []NetNS{sns}, ClientIP: cip, ServerIP: sip, ClientPod: cp, ServerPod: sp,
			MTUBytes: s.PodMTUBytes()}
	case pathPodPodCrossNode:
		cns, cip, cp := pod(1, 1)
		sns, sip, sp := pod(2, 1)
		e = Endpoints{Client: cns, Servers: []NetNS{sns}, ClientIP: cip, ServerIP: sip, ClientPod: cp, ServerPod: sp,
			MTUBytes: s.PodMTUBytes()}
	case pathPodHost:
		cns, cip, cp := pod(1, 1)
		e = Endpoints{Client: cns, Servers: []NetNS{c.NS(RoleNode2)}, ClientIP: cip, ServerIP: a.nodeIPF(f, 2), ClientPod: cp,
			MTUBytes: s.PodMTUBytes()}
	case pathHostPod:
		sns, sip, sp := pod(2, 1)
		e = Endpoints{Client: c.NS(RoleNode1), Servers: []NetNS{sns}, ClientIP: a.nodeIPF(f, 1), ServerIP: sip, ServerPod: sp,
			MTUBytes: s.PodMTUBytes()}
	case pathPodClusterIP:
		if s.Proxy == "" {
			return Endpoints{}, fmt.Errorf("cluster %s has no service", s.Name())
		}
		cns, cip, cp := pod(1, 1)
		e = Endpoints{Client: cns, ClientIP: cip, ServerIP: a.serviceIPF(f), ClientPod: cp, ServerPod: "backends",
			MTUBytes: s.PodMTUBytes()}
		for p := 1; p <= s.podsOn(2); p++ {
			e.Servers = append(e.Servers, c.NS(podRole(2, p)))
		}
	default:
		return Endpoints{}, fmt.Errorf("path %q is not built by the lab", path)
	}
	if e.Target == (netip.Addr{}) {
		e.Target = e.ServerIP
	}
	e.ClientNode = RoleNode1
	e.ServerNode = RoleNode2
	if path == pathPodPodSameNode {
		e.ServerNode = RoleNode1
	}
	return e, nil
}

// Path names as the lab knows them (strings: Endpoints takes the name).
const (
	pathHostHost        = string(api.PathHostHost)
	pathPodPodSameNode  = string(api.PathPodPodSameNode)
	pathPodPodCrossNode = string(api.PathPodPodCrossNode)
	pathPodHost         = string(api.PathPodHost)
	pathHostPod         = string(api.PathHostPod)
	pathPodClusterIP    = string(api.PathPodClusterIP)
)
