package kube

import (
	"net"

	corev1 "k8s.io/api/core/v1"
)

// AddrFamily is "ipv4" or "ipv6" for an address, "" when it does not parse.
func AddrFamily(addr string) string { return ipFamily(net.ParseIP(addr)) }

// CIDRFamily is "ipv4" or "ipv6" for a CIDR, "" when it does not parse.
func CIDRFamily(cidr string) string {
	ip, _, err := net.ParseCIDR(cidr)
	if err != nil {
		return ""
	}
	return ipFamily(ip)
}

func ipFamily(ip net.IP) string {
	switch {
	case ip == nil:
		return ""
	case ip.To4() != nil:
		return "ipv4"
	}
	return "ipv6"
}

// NodeIP is n's address of the family ("ipv4", "ipv6"; "" = its first): its InternalIP, else
// its ExternalIP; "" when it has none.
func NodeIP(n *corev1.Node, family string) string {
	if n == nil {
		return ""
	}
	var internal, external []string
	for _, a := range n.Status.Addresses {
		switch a.Type {
		case corev1.NodeInternalIP:
			internal = append(internal, a.Address)
		case corev1.NodeExternalIP:
			external = append(external, a.Address)
		}
	}
	if ip := PickIP(internal, family); ip != "" {
		return ip
	}
	return PickIP(external, family)
}

// NodeFamily is the IP family n puts first: its first pod CIDR's or, without pod CIDRs, its
// first address's (NodeIP); "" when it says neither.
func NodeFamily(n *corev1.Node) string {
	if len(n.Spec.PodCIDRs) > 0 {
		return CIDRFamily(n.Spec.PodCIDRs[0])
	}
	return AddrFamily(NodeIP(n, ""))
}

// DefaultFamily is THE decision of the IP family a case that names none is measured on, from
// the families the nodes put first (NodeFamily): "ipv6" when every node that says one puts
// IPv6 first (an IPv6-only cluster, or a dual-stack one that lists IPv6 first), so that every
// driver starts its server on the family its client dials and the result says so; ""
// otherwise (IPv4, every driver's default). cnperf run (the kube platform's DefaultIPFamily),
// mesh, programming and tiger-bench all decide through it.
func DefaultFamily(nodeFamilies []string) string {
	seen := false
	for _, f := range nodeFamilies {
		switch f {
		case "":
			continue
		case "ipv6":
			seen = true
		default:
			return ""
		}
	}
	if !seen {
		return ""
	}
	return "ipv6"
}

// PrimaryFamily is DefaultFamily of the nodes.
func PrimaryFamily(nodes []corev1.Node) string {
	fams := make([]string, len(nodes))
	for i := range nodes {
		fams[i] = NodeFamily(&nodes[i])
	}
	return DefaultFamily(fams)
}

// ServiceFamily is the IP family of svc's ClusterIP as the API server set it: its first
// spec.ipFamilies entry (the family of spec.clusterIP), else the ClusterIP's own; "" for a
// headless Service or one not yet given an address.
func ServiceFamily(svc *corev1.Service) string {
	if svc == nil || svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == corev1.ClusterIPNone {
		return ""
	}
	if len(svc.Spec.IPFamilies) > 0 {
		switch svc.Spec.IPFamilies[0] {
		case corev1.IPv4Protocol:
			return "ipv4"
		case corev1.IPv6Protocol:
			return "ipv6"
		}
	}
	return AddrFamily(svc.Spec.ClusterIP)
}
