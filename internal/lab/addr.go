package lab

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// addrPlan carves the lab's range into /24 subnets:
//
//	subnet 0  underlay: node1 .1, node2 .2
//	subnet 1  node1's pod CIDR: VTEP .0, bridge .1, pods from .10
//	subnet 2  node2's pod CIDR: the same layout
//	subnet 3  services: the ClusterIP is .10
//	subnet 4  policy rule sources (never assigned to anything, so rules never match)
//
// Every cluster of a run uses the same addresses: they live in separate namespaces.
type addrPlan struct {
	base netip.Prefix
}

func newAddrPlan(cidr string) (addrPlan, error) {
	p, err := prefixOf(cidr)
	if err != nil {
		return addrPlan{}, err
	}
	if !p.Addr().Is4() {
		return addrPlan{}, fmt.Errorf("%s: the lab is IPv4 only", p)
	}
	if p.Bits() > 21 {
		return addrPlan{}, fmt.Errorf("%s is too small: the lab needs eight /24 subnets (a /21 or larger)", p)
	}
	return addrPlan{base: p}, nil
}

// subnet returns the i-th /24 of the range.
func (a addrPlan) subnet(i int) netip.Prefix {
	b := a.base.Addr().As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	v += uint32(i) << 8
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), 24)
}

// host returns the n-th address of p.
func host(p netip.Prefix, n int) netip.Addr {
	b := p.Addr().As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	v += uint32(n)
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// IPv6: every IPv4 address of the plan has a twin in CIDR6 (RFC 5180's benchmarking range,
// as 198.18.0.0/15 is RFC 2544's): subnet i is CIDR6's i-th /64, host n is its n-th address.
// Every lab cluster is dual-stack: the IPv6 twins are configured next to the IPv4 addresses.

// CIDR6 is the range of the lab's IPv6 addresses.
const CIDR6 = "2001:2::/48"

var base6 = netip.MustParsePrefix(CIDR6)

// subnet6 returns the i-th /64 of CIDR6.
func subnet6(i int) netip.Prefix {
	b := base6.Addr().As16()
	b[6], b[7] = byte(i>>8), byte(i)
	return netip.PrefixFrom(netip.AddrFrom16(b), 64)
}

// host6 returns the n-th address of an IPv6 prefix.
func host6(p netip.Prefix, n int) netip.Addr {
	b := p.Addr().As16()
	b[14], b[15] = byte(n>>8), byte(n)
	return netip.AddrFrom16(b)
}

// family picks an address of the plan in the family ("ipv6", else IPv4).
type family string

const (
	ipv4 family = "ipv4"
	ipv6 family = "ipv6"
)

// v6 reports whether the family is IPv6.
func (f family) v6() bool { return f == ipv6 }

// subnetF is the plan's subnet i in family f; hostIn is the n-th address of p in its family.
func (a addrPlan) subnetF(f family, i int) netip.Prefix {
	if f.v6() {
		return subnet6(i)
	}
	return a.subnet(i)
}

func hostIn(p netip.Prefix, n int) netip.Addr {
	if p.Addr().Is6() {
		return host6(p, n)
	}
	return host(p, n)
}

// The addresses of the plan, in one family (…F) or in IPv4: subnet 0 is the underlay, subnet
// n node n's pods, subnet 3 the Service.
func (a addrPlan) underlayF(f family) netip.Prefix          { return a.subnetF(f, 0) }
func (a addrPlan) nodeIPF(f family, node int) netip.Addr    { return hostIn(a.underlayF(f), node) }
func (a addrPlan) podCIDRF(f family, node int) netip.Prefix { return a.subnetF(f, node) }
func (a addrPlan) gatewayF(f family, node int) netip.Addr   { return hostIn(a.podCIDRF(f, node), 1) }
func (a addrPlan) podIPF(f family, node, pod int) netip.Addr {
	return hostIn(a.podCIDRF(f, node), 9+pod)
}
func (a addrPlan) serviceIPF(f family) netip.Addr { return hostIn(a.subnetF(f, 3), 10) }
func (a addrPlan) underlay() netip.Prefix         { return a.underlayF(ipv4) }
func (a addrPlan) nodeIP(node int) netip.Addr     { return a.nodeIPF(ipv4, node) }
func (a addrPlan) podCIDR(node int) netip.Prefix  { return a.podCIDRF(ipv4, node) }
func (a addrPlan) vtepIP(node int) netip.Addr     { return a.vtepIPF(ipv4, node) }
func (a addrPlan) gateway(node int) netip.Addr    { return a.gatewayF(ipv4, node) }
func (a addrPlan) podIP(node, pod int) netip.Addr { return a.podIPF(ipv4, node, pod) }
func (a addrPlan) serviceIP() netip.Addr          { return a.serviceIPF(ipv4) }

// vtepIPF is node's VXLAN endpoint: the first address of its pod CIDR in IPv4; in IPv6 not
// ::0 of the pod CIDR (that is the subnet-router anycast address).
func (a addrPlan) vtepIPF(f family, node int) netip.Addr {
	if f.v6() {
		return hostIn(a.podCIDRF(f, node), 0xfff0)
	}
	return hostIn(a.podCIDRF(f, node), 0)
}

func (a addrPlan) policySource(i int) netip.Addr    { return host(a.subnet(4), 1+i%250) }
func (a addrPlan) policyPort(i int) int             { return 10000 + i/250 }
func cidr(addr netip.Addr, p netip.Prefix) string   { return fmt.Sprintf("%s/%d", addr, p.Bits()) }
func vtepMAC(node int) string                       { return fmt.Sprintf("0a:58:c6:12:00:%02x", node) }
func (a addrPlan) String() string                   { return a.base.String() }
func (a addrPlan) overlaps(p netip.Prefix) bool     { return a.base.Overlaps(p) }
func (a addrPlan) nodeCIDR(node int) string         { return cidr(a.nodeIP(node), a.underlay()) }
func (a addrPlan) podAddrCIDR(node, pod int) string { return cidr(a.podIP(node, pod), a.podCIDR(node)) }

// checkHost reports the addresses and routes of the root namespace that overlap the lab's
// range: traffic to them would be ambiguous for anyone reading the results, and a later
// change that connects the lab to the host would break the host.
func checkHost(ctx context.Context, a addrPlan) error {
	var conflicts []string
	ifaces, err := net.Interfaces()
	if err != nil {
		return fmt.Errorf("list the host's interfaces: %w", err)
	}
	for _, ifc := range ifaces {
		addrs, err := ifc.Addrs()
		if err != nil {
			return fmt.Errorf("list the addresses of %s: %w", ifc.Name, err)
		}
		for _, ad := range addrs {
			ipn, ok := ad.(*net.IPNet)
			if !ok {
				continue
			}
			ip, ok := netip.AddrFromSlice(ipn.IP)
			if !ok {
				continue
			}
			ip = ip.Unmap()
			ones, _ := ipn.Mask.Size()
			p := netip.PrefixFrom(ip, ones)
			if ip.Is4() && a.overlaps(p.Masked()) {
				conflicts = append(conflicts, fmt.Sprintf("address %s on %s", p, ifc.Name))
			}
		}
	}
	out, err := run(ctx, nil, "ip", "-4", "-j", "route", "show", "table", "all")
	if err != nil {
		return fmt.Errorf("list the host's routes: %w", err)
	}
	routes, err := parseRoutes(out)
	if err != nil {
		return err
	}
	for _, r := range routes {
		if a.overlaps(r) {
			conflicts = append(conflicts, fmt.Sprintf("route %s", r))
		}
	}
	if len(conflicts) > 0 {
		return fmt.Errorf("the lab range %s collides with the host (%s); choose another with --lab-cidr", a, strings.Join(conflicts, ", "))
	}
	return nil
}

// parseRoutes reads `ip -4 -j route show table all` and returns every destination prefix
// except the default route (which covers everything and so is no collision).
func parseRoutes(js []byte) ([]netip.Prefix, error) {
	var rs []struct {
		Dst string `json:"dst"`
	}
	if err := json.Unmarshal(js, &rs); err != nil {
		return nil, fmt.Errorf("parse `ip -4 -j route show table all`: %w", err)
	}
	var out []netip.Prefix
	for _, r := range rs {
		if r.Dst == "" || r.Dst == "default" {
			continue
		}
		d := r.Dst
		if !strings.Contains(d, "/") {
			d += "/32"
		}
		p, err := netip.ParsePrefix(d)
		if err != nil {
			continue // "unreachable", multicast names and the like: not a destination we can compare
		}
		if p.Addr().Is4() && p.Bits() == 0 {
			continue
		}
		out = append(out, p.Masked())
	}
	return out, nil
}
