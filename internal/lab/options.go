package lab

import (
	"fmt"
	"net/netip"
	"strings"
)

// Underlays: how the two node namespaces are joined.
const (
	UnderlayBridge = "bridge" // each node has a veth into a bridge in a "fabric" namespace (a switch)
	UnderlayVeth   = "veth"   // one veth pair straight from node1 to node2 (a cable)
)

// Overlays: how pods on different nodes reach each other.
const (
	OverlayRouted = "routed" // each node routes the other's pod CIDR via its underlay address (host-gw, BGP)
	OverlayVXLAN  = "vxlan"  // flannel-style VXLAN device with static FDB/neighbour entries
)

// Policy styles: how N policy rules are laid out in the forwarding path.
const (
	PolicyChains   = "chains"    // per-policy chains of 10 rules jumped to from per-pod chains (iptables-mode CNIs)
	PolicySets     = "sets"      // one set lookup per pod (nftables-native CNIs)
	PolicyChainsCT = "chains-ct" // chains, but established flows accepted first by conntrack (Calico-like)
	PolicySetsCT   = "sets-ct"   // sets, with the conntrack shortcut
)

// Service proxies: what DNATs the ClusterIP.
const (
	ProxyNftables = "nftables" // kube-proxy nftables mode: a verdict map and numgen
	ProxyIptables = "iptables" // kube-proxy iptables mode through iptables-nft: statistic and recent matches
)

// DefaultCIDR is the benchmark range (RFC 2544) the lab takes its addresses from.
const DefaultCIDR = "198.18.0.0/15"

// Options configure the lab. The zero value is not valid; start from DefaultOptions.
type Options struct {
	// CIDR is where every lab address comes from; it must hold at least eight /24s.
	CIDR string
	// MTUBytes is the underlay MTU (node interfaces); pods get it minus the overlay header.
	MTUBytes int
	// Underlay is UnderlayBridge or UnderlayVeth.
	Underlay string
	// Overlays are the cross-node flavours to measure, in order.
	Overlays []string
	// PolicyRules are the rule counts for the pod-pod paths, in order (0 = no policy).
	PolicyRules []int
	// PolicyStyles are the layouts measured for every non-zero rule count, in order.
	PolicyStyles []string
	// ServiceProxies are the ClusterIP implementations measured, in order.
	ServiceProxies []string
	// ServiceBackends is the number of backend pods behind the ClusterIP.
	ServiceBackends int
	// ServiceAffinity pins a client to one backend (sessionAffinity: ClientIP), which drivers
	// that open a control connection and separate data connections (iperf3, netperf) need
	// when there is more than one backend.
	ServiceAffinity bool
	// PodMTUBytes, when not 0, is the pods' interface MTU instead of the underlay's minus the
	// overlay header: above it, the path is broken on purpose (what `cnperf run --check-mtu`
	// must find).
	PodMTUBytes int
	// DropFragNeeded makes the nodes drop the ICMP "fragmentation needed" errors they send or
	// forward, which path-MTU discovery needs: with PodMTUBytes above the path, a black hole.
	DropFragNeeded bool
}

// DefaultOptions are the defaults of the lab flags.
func DefaultOptions() Options {
	return Options{
		CIDR:            DefaultCIDR,
		MTUBytes:        1500,
		Underlay:        UnderlayBridge,
		Overlays:        []string{OverlayRouted, OverlayVXLAN},
		PolicyRules:     []int{0},
		PolicyStyles:    []string{PolicyChains, PolicySets},
		ServiceProxies:  []string{ProxyNftables},
		ServiceBackends: 2,
		ServiceAffinity: true,
	}
}

// Validate checks the options and returns every problem found.
func (o Options) Validate() error {
	var errs []string
	add := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	if _, err := newAddrPlan(o.CIDR); err != nil {
		add("--lab-cidr: %v", err)
	}
	if o.MTUBytes < 1280 || o.MTUBytes > 65535 {
		add("--mtu %d: must be between 1280 and 65535 (VXLAN pods need room for a 50-byte header above IPv4's 576)", o.MTUBytes)
	}
	if o.Underlay != UnderlayBridge && o.Underlay != UnderlayVeth {
		add("--underlay %q: must be %s or %s", o.Underlay, UnderlayBridge, UnderlayVeth)
	}
	if len(o.Overlays) == 0 {
		add("--overlay: give at least one of %s, %s", OverlayRouted, OverlayVXLAN)
	}
	checkList(&errs, "--overlay", o.Overlays, OverlayRouted, OverlayVXLAN)
	if len(o.PolicyRules) == 0 {
		add("--policy-rules: give at least one count (0 = no policy)")
	}
	seenRules := map[int]bool{}
	for _, n := range o.PolicyRules {
		if n < 0 || n > 100000 {
			add("--policy-rules %d: must be between 0 and 100000", n)
		}
		if seenRules[n] {
			add("--policy-rules %d: listed twice", n)
		}
		seenRules[n] = true
	}
	checkList(&errs, "--policy-style", o.PolicyStyles, PolicyChains, PolicySets, PolicyChainsCT, PolicySetsCT)
	if hasNonZero(o.PolicyRules) && len(o.PolicyStyles) == 0 {
		add("--policy-style: give at least one style for the non-zero rule counts")
	}
	checkList(&errs, "--service-proxy", o.ServiceProxies, ProxyNftables, ProxyIptables)
	if len(o.ServiceProxies) == 0 {
		add("--service-proxy: give at least one of %s, %s", ProxyNftables, ProxyIptables)
	}
	if o.PodMTUBytes != 0 && (o.PodMTUBytes < 576 || o.PodMTUBytes > 65535) {
		add("--lab-pod-mtu %d: must be 0 (the underlay's minus the overlay header) or between 576 and 65535", o.PodMTUBytes)
	}
	if o.ServiceBackends < 1 || o.ServiceBackends > 50 {
		add("--service-backends %d: must be between 1 and 50", o.ServiceBackends)
	}
	if len(errs) > 0 {
		return fmt.Errorf("lab options: %s", strings.Join(errs, "; "))
	}
	return nil
}

func checkList(errs *[]string, flag string, got []string, allowed ...string) {
	seen := map[string]bool{}
	for _, g := range got {
		ok := false
		for _, a := range allowed {
			if g == a {
				ok = true
			}
		}
		if !ok {
			*errs = append(*errs, fmt.Sprintf("%s %q: must be one of %s", flag, g, strings.Join(allowed, ", ")))
		}
		if seen[g] {
			*errs = append(*errs, fmt.Sprintf("%s %q: listed twice", flag, g))
		}
		seen[g] = true
	}
}

func hasNonZero(xs []int) bool {
	for _, x := range xs {
		if x != 0 {
			return true
		}
	}
	return false
}

// podMTU is the pod interface MTU for an overlay: the underlay MTU minus the VXLAN
// encapsulation (outer IPv4 20 + UDP 8 + VXLAN 8 + inner Ethernet 14 = 50 bytes).
func podMTU(underlayMTU int, overlay string) int {
	if overlay == OverlayVXLAN {
		return underlayMTU - VXLANOverheadBytes
	}
	return underlayMTU
}

// VXLANOverheadBytes is what VXLAN over IPv4 adds to every packet.
const VXLANOverheadBytes = 50

// prefixOf parses an IPv4 CIDR.
func prefixOf(s string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(strings.TrimSpace(s))
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q is not a CIDR: %w", s, err)
	}
	return p.Masked(), nil
}
