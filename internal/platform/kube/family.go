package kube

import (
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
	switch {
	case err != nil:
		return ""
	case ip.To4() != nil:
		return "ipv4"
	}
	return "ipv6"
}

func orNone(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, ", ")
}
