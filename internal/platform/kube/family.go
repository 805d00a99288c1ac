package kube

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/plan"
)

// caseFamilies are the IP families the cases ask for by name, sorted ("" — the cluster's
// default — is not one).
func caseFamilies(cases []plan.Case) []string {
	var fams []string
	for _, c := range cases {
		if f := c.Params.IPFamily; f != "" && !slices.Contains(fams, f) {
			fams = append(fams, f)
		}
	}
	slices.Sort(fams)
	return fams
}

// DefaultIPFamily implements platform.FamilyDefaulter: "ipv6" when every node's pods and
// addresses are IPv6 first (its first pod CIDR, or without pod CIDRs its first InternalIP, is
// IPv6: an IPv6-only cluster, or a dual-stack one that lists IPv6 first), so that the cases that
// name no family are measured on IPv6 and say so; "" otherwise (IPv4, the default).
func (p *Platform) DefaultIPFamily(ctx context.Context) (string, error) {
	nodeList, err := p.listNodes(ctx)
	if err != nil {
		return "", err
	}
	return primaryFamily(nodeList.Items), nil
}

// primaryFamily is "ipv6" when every node with an address or pod CIDR has IPv6 first, else "".
func primaryFamily(nodes []corev1.Node) string {
	seen := false
	for i := range nodes {
		n := &nodes[i]
		first := ""
		if len(n.Spec.PodCIDRs) > 0 {
			first = cidrFamily(n.Spec.PodCIDRs[0])
		} else if ip := nodeIP(n, ""); ip != "" {
			first = addrFamily(ip)
		}
		if first == "" {
			continue
		}
		if first != "ipv6" {
			return ""
		}
		seen = true
	}
	if !seen {
		return ""
	}
	return "ipv6"
}

// addrFamily is "ipv4" or "ipv6" for an address, "" when it does not parse.
func addrFamily(addr string) string { return ipFamily(net.ParseIP(addr)) }

func ipFamily(ip net.IP) string {
	switch {
	case ip == nil:
		return ""
	case ip.To4() != nil:
		return "ipv4"
	}
	return "ipv6"
}

// checkNodeFamilies is the preflight of --ip-family: every node the run places pods on must
// have an InternalIP of each family asked for and, when its spec lists pod CIDRs, one of that
// family too. A family the cluster lacks is an error before anything is created.
func checkNodeFamilies(nodes map[string]*corev1.Node, names []string, families []string) error {
	for _, fam := range families {
		for _, name := range names {
			n := nodes[name]
			if n == nil {
				continue
			}
			var internal []string
			for _, a := range n.Status.Addresses {
				if a.Type == corev1.NodeInternalIP {
					internal = append(internal, a.Address)
				}
			}
			if kube.PickIP(internal, fam) == "" {
				return fmt.Errorf("--ip-family %s: node %s has no %s InternalIP (InternalIPs: %s); the cluster is not %s "+
					"(a dual-stack cluster gives every node an address of each family)", fam, name, fam,
					orNone(internal), fam)
			}
			if cidrs := n.Spec.PodCIDRs; len(cidrs) > 0 && !slices.ContainsFunc(cidrs, func(c string) bool { return cidrFamily(c) == fam }) {
				return fmt.Errorf("--ip-family %s: node %s has no %s pod CIDR (podCIDRs: %s); the pod network is not %s",
					fam, name, fam, strings.Join(cidrs, ", "), fam)
			}
		}
	}
	return nil
}

// cidrFamily is "ipv4" or "ipv6" for a CIDR, "" when it does not parse.
func cidrFamily(cidr string) string {
	ip, _, err := net.ParseCIDR(cidr)
	if err != nil {
		return ""
	}
	return ipFamily(ip)
}

func orNone(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, ", ")
}
