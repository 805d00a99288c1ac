package lab

import (
	"fmt"
	"strings"
)

// RulesPerPolicyChain is how many rules each per-policy chain holds in the "chains" style.
const RulesPerPolicyChain = 10

// policyRuleset is the nftables ruleset that puts s.PolicyRules filter rules in the
// forwarding path of node n, for every packet to one of its pods.
//
// chains (iptables-mode CNIs such as Calico in iptables mode): the forward hook sends traffic
// for the node's pods to a per-pod chain, which jumps to one chain per policy in turn (10
// rules each); rules that do not match the packet fall through to the next; the last rule
// allows the lab's own ranges and anything else is dropped. Every packet walks all N rules.
//
// sets (nftables-native CNIs): the same N (source, protocol, port) tuples in one hashed set,
// looked up once per packet.
//
// -ct variants accept established and related flows first, as Calico does, so the rules cost
// only the first packet of each connection.
//
// The rules match sources from a subnet nothing in the lab uses, so none of them matches the
// benchmark's packets: each is evaluated and passed, as the unrelated policies of a busy
// cluster are.
func policyRuleset(tag string, a addrPlan, node int, s Spec) string {
	var b strings.Builder
	table := Prefix + tag + "-policy"
	style := strings.TrimSuffix(s.PolicyStyle, "-ct")
	ct := strings.HasSuffix(s.PolicyStyle, "-ct")
	fmt.Fprintf(&b, "table inet %s {\n", table)
	b.WriteString("\tchain forward {\n\t\ttype filter hook forward priority filter; policy accept;\n")
	if ct {
		b.WriteString("\t\tct state established,related accept\n")
	}
	fmt.Fprintf(&b, "\t\tip daddr %s jump to-pods\n\t}\n", a.podCIDR(node))
	b.WriteString("\tchain to-pods {\n")
	for p := 1; p <= s.podsOn(node); p++ {
		fmt.Fprintf(&b, "\t\tip daddr %s jump tw-%s\n", a.podIP(node, p), podRole(node, p))
	}
	b.WriteString("\t}\n")
	allow := fmt.Sprintf("\t\tip saddr { %s, %s, %s } counter accept\n\t\tdrop\n", a.underlay(), a.podCIDR(1), a.podCIDR(2))
	switch style {
	case PolicySets:
		b.WriteString("\tset policy-allow {\n\t\ttype ipv4_addr . inet_proto . inet_service\n\t\telements = {")
		for i := 0; i < s.PolicyRules; i++ {
			if i > 0 {
				b.WriteString(",")
			}
			if i%8 == 0 {
				b.WriteString("\n\t\t\t")
			} else {
				b.WriteString(" ")
			}
			fmt.Fprintf(&b, "%s . tcp . %d", a.policySource(i), a.policyPort(i))
		}
		b.WriteString("\n\t\t}\n\t}\n")
		for p := 1; p <= s.podsOn(node); p++ {
			fmt.Fprintf(&b, "\tchain tw-%s {\n\t\tip saddr . meta l4proto . th dport @policy-allow accept\n%s\t}\n", podRole(node, p), allow)
		}
	default: // PolicyChains
		nChains := (s.PolicyRules + RulesPerPolicyChain - 1) / RulesPerPolicyChain
		for p := 1; p <= s.podsOn(node); p++ {
			fmt.Fprintf(&b, "\tchain tw-%s {\n", podRole(node, p))
			for c := 0; c < nChains; c++ {
				fmt.Fprintf(&b, "\t\tjump pi-%05d\n", c)
			}
			b.WriteString(allow)
			b.WriteString("\t}\n")
		}
		for c := 0; c < nChains; c++ {
			fmt.Fprintf(&b, "\tchain pi-%05d {\n", c)
			for i := c * RulesPerPolicyChain; i < (c+1)*RulesPerPolicyChain && i < s.PolicyRules; i++ {
				fmt.Fprintf(&b, "\t\tip saddr %s tcp dport %d accept\n", a.policySource(i), a.policyPort(i))
			}
			b.WriteString("\t}\n")
		}
	}
	b.WriteString("}\n")
	return b.String()
}

// nftService is kube-proxy's nftables mode for one ClusterIP with s.Backends endpoints:
// a verdict map from (service IP, protocol) to the service chain, which picks an endpoint
// with numgen (after the affinity sets, with sessionAffinity: ClientIP), and endpoint chains
// that DNAT. Every port of the service IP is forwarded, so any driver's ports work. New
// connections also pass kube-proxy's endpoints check in the forward hook.
func nftService(tag string, a addrPlan, s Spec) string { return nftServiceF(tag, a, s, "") }

// nftServiceF is nftService on a family: IPv4 (table ip), or with f ipv6 the same Service on
// its IPv6 cluster IP and endpoints (table ip6, "-kube-proxy6"), as kube-proxy's nftables mode
// makes one table per family.
func nftServiceF(tag string, a addrPlan, s Spec, f family) string {
	var b strings.Builder
	n := s.podsOn(2)
	svc := a.serviceIPF(f)
	table, addrType, ip, suffix := "ip", "ipv4_addr", "ip", ""
	if f.v6() {
		table, addrType, ip, suffix = "ip6", "ipv6_addr", "ip6", "6"
	}
	fmt.Fprintf(&b, "table %s %s-kube-proxy%s {\n", table, Prefix+tag, suffix)
	fmt.Fprintf(&b, "\tmap no-endpoint-services {\n\t\ttype %s . inet_proto . inet_service : verdict\n\t}\n", addrType)
	fmt.Fprintf(&b, "\tmap service-ips {\n\t\ttype %s . inet_proto : verdict\n\t\telements = { %s . tcp : goto svc-cnperf, %s . udp : goto svc-cnperf }\n\t}\n", addrType, svc, svc)
	b.WriteString("\tchain filter-forward {\n\t\ttype filter hook forward priority -110; policy accept;\n\t\tct state new jump service-endpoints-check\n\t}\n")
	fmt.Fprintf(&b, "\tchain service-endpoints-check {\n\t\t%s daddr . meta l4proto . th dport vmap @no-endpoint-services\n\t}\n", ip)
	b.WriteString("\tchain nat-prerouting {\n\t\ttype nat hook prerouting priority dstnat; policy accept;\n\t\tjump services\n\t}\n")
	b.WriteString("\tchain nat-output {\n\t\ttype nat hook output priority -100; policy accept;\n\t\tjump services\n\t}\n")
	fmt.Fprintf(&b, "\tchain services {\n\t\t%s daddr . meta l4proto vmap @service-ips\n\t}\n", ip)
	if s.Affinity {
		for k := 1; k <= n; k++ {
			fmt.Fprintf(&b, "\tset affinity-ep-%d {\n\t\ttype %s\n\t\tflags dynamic,timeout\n\t\ttimeout 3h\n\t}\n", k, addrType)
		}
	}
	b.WriteString("\tchain svc-cnperf {\n")
	if s.Affinity {
		for k := 1; k <= n; k++ {
			fmt.Fprintf(&b, "\t\t%s saddr @affinity-ep-%d goto ep-%d\n", ip, k, k)
		}
	}
	fmt.Fprintf(&b, "\t\tnumgen random mod %d vmap {", n)
	for k := 1; k <= n; k++ {
		if k > 1 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, " %d : goto ep-%d", k-1, k)
	}
	b.WriteString(" }\n\t}\n")
	for k := 1; k <= n; k++ {
		fmt.Fprintf(&b, "\tchain ep-%d {\n", k)
		if s.Affinity {
			fmt.Fprintf(&b, "\t\tupdate @affinity-ep-%d { %s saddr }\n", k, ip)
		}
		fmt.Fprintf(&b, "\t\tdnat to %s\n\t}\n", a.podIPF(f, 2, k))
	}
	b.WriteString("}\n")
	return b.String()
}

// iptablesService is kube-proxy's iptables mode for the same service, for iptables-nft-restore:
// KUBE-SERVICES → KUBE-SVC (recent matches for affinity, then statistic matches with
// probabilities 1/n, 1/(n-1), …) → KUBE-SEP (DNAT), with cnperf's prefix on every chain.
func iptablesService(tag string, a addrPlan, s Spec) string { return iptablesServiceF(tag, a, s, "") }

// iptablesServiceF is iptablesService on a family: with f ipv6, the rules for
// ip6tables-nft-restore on the IPv6 cluster IP and endpoints (a /128 service address, the
// recent match's mask all ones).
func iptablesServiceF(tag string, a addrPlan, s Spec, f family) string {
	var b strings.Builder
	svcIP, hostBits, mask := a.serviceIPF(f).String(), "32", "255.255.255.255"
	if f.v6() {
		hostBits, mask = "128", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"
	}
	n := s.podsOn(2)
	pre := strings.ToUpper(Prefix + tag)
	services, svc := pre+"-SERVICES", pre+"-SVC"
	sep := func(k int) string { return fmt.Sprintf("%s-SEP-%d", pre, k) }
	b.WriteString("*nat\n:PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n")
	fmt.Fprintf(&b, ":%s - [0:0]\n:%s - [0:0]\n", services, svc)
	for k := 1; k <= n; k++ {
		fmt.Fprintf(&b, ":%s - [0:0]\n", sep(k))
	}
	fmt.Fprintf(&b, "-A PREROUTING -j %s\n-A OUTPUT -j %s\n", services, services)
	for _, proto := range []string{"tcp", "udp"} {
		fmt.Fprintf(&b, "-A %s -d %s/%s -p %s -j %s\n", services, svcIP, hostBits, proto, svc)
	}
	if s.Affinity {
		for k := 1; k <= n; k++ {
			fmt.Fprintf(&b, "-A %s -m recent --name %s --mask %s --rsource --rcheck --seconds 10800 --reap -j %s\n", svc, sep(k), mask, sep(k))
		}
	}
	for k := 1; k <= n; k++ {
		if k < n {
			fmt.Fprintf(&b, "-A %s -m statistic --mode random --probability %0.10f -j %s\n", svc, 1.0/float64(n-k+1), sep(k))
		} else {
			fmt.Fprintf(&b, "-A %s -j %s\n", svc, sep(k))
		}
	}
	for k := 1; k <= n; k++ {
		if s.Affinity {
			fmt.Fprintf(&b, "-A %s -m recent --set --name %s --mask %s --rsource -j DNAT --to-destination %s\n", sep(k), sep(k), mask, a.podIPF(f, 2, k))
		} else {
			fmt.Fprintf(&b, "-A %s -j DNAT --to-destination %s\n", sep(k), a.podIPF(f, 2, k))
		}
	}
	b.WriteString("COMMIT\n")
	return b.String()
}

// masqueradeRuleset SNATs traffic from node n's pods to anything outside the pod network
// (the other node's address, in the lab) to the node's own address, as flannel's ipMasq
// rules do (-s podnet ! -d podnet -j MASQUERADE --random-fully).
func masqueradeRuleset(tag string, a addrPlan, node int) string {
	return fmt.Sprintf("table ip %s-masq {\n\tchain postrouting {\n\t\ttype nat hook postrouting priority srcnat; policy accept;\n"+
		"\t\tip saddr %s ip daddr != { %s, %s } masquerade fully-random\n\t}\n}\n",
		Prefix+tag, a.podCIDR(node), a.podCIDR(1), a.podCIDR(2))
}

// masqueradeRuleset6 is masqueradeRuleset for the IPv6 pod network (dual-stack clusters).
func masqueradeRuleset6(tag string, a addrPlan, node int) string {
	return fmt.Sprintf("table ip6 %s-masq6 {\n\tchain postrouting {\n\t\ttype nat hook postrouting priority srcnat; policy accept;\n"+
		"\t\tip6 saddr %s ip6 daddr != { %s, %s } masquerade fully-random\n\t}\n}\n",
		Prefix+tag, a.podCIDRF(ipv6, node), a.podCIDRF(ipv6, 1), a.podCIDRF(ipv6, 2))
}

// dropFragNeededRuleset drops the ICMP "fragmentation needed" errors a node sends (output) or
// forwards: path-MTU discovery then fails and packets above the path MTU vanish (a black
// hole, Options.DropFragNeeded).
func dropFragNeededRuleset(tag string) string {
	rule := "\t\ticmp type destination-unreachable icmp code frag-needed counter drop\n"
	return fmt.Sprintf("table ip %s-noicmp {\n"+
		"\tchain output {\n\t\ttype filter hook output priority filter; policy accept;\n%s\t}\n"+
		"\tchain forward {\n\t\ttype filter hook forward priority filter; policy accept;\n%s\t}\n}\n",
		Prefix+tag, rule, rule)
}
