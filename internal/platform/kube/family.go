package kube

import (
	"context"
	"fmt"
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

// DefaultIPFamily implements platform.FamilyDefaulter: the IP family of every node's pods and
// addresses, decided by kube.PrimaryFamily ("ipv6" on an IPv6-only cluster or a dual-stack one
// that lists IPv6 first), so that the cases that name no family are measured on IPv6 and say
// so; "" otherwise (IPv4, the default).
func (p *Platform) DefaultIPFamily(ctx context.Context) (string, error) {
	nodeList, err := p.listNodes(ctx)
	if err != nil {
		return "", err
	}
	return kube.PrimaryFamily(nodeList.Items), nil
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
			if cidrs := n.Spec.PodCIDRs; len(cidrs) > 0 && !slices.ContainsFunc(cidrs, func(c string) bool { return kube.CIDRFamily(c) == fam }) {
				return fmt.Errorf("--ip-family %s: node %s has no %s pod CIDR (podCIDRs: %s); the pod network is not %s",
					fam, name, fam, strings.Join(cidrs, ", "), fam)
			}
		}
	}
	return nil
}

func orNone(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, ", ")
}
