package mesh

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/cnperf/cnperf/internal/kube"
)

// Node is a node that takes part in a mesh.
type Node struct {
	Name       string
	Zone       string
	InternalIP string // the first, as the run's cluster details record it
	// Family is the IP family the node puts first (kube.NodeFamily), which DefaultFamily reads.
	Family string
	// IPs are its address of each family, "ipv4" and "ipv6" (kube.NodeIP), for Addr.
	IPs map[string]string
}

// Addr is n's address of the family (kube.NodeIP: an InternalIP, else an ExternalIP; "" = the
// first InternalIP).
func (n Node) Addr(family string) string {
	if family == "" {
		return n.InternalIP
	}
	return n.IPs[family]
}

// DefaultFamily is the IP family a mesh or programming run on nodes measures on, decided as
// cnperf run decides it (kube.DefaultFamily): "ipv6" when every node puts IPv6 first, ""
// (IPv4) otherwise.
func DefaultFamily(nodes []Node) string {
	fams := make([]string, len(nodes))
	for i, n := range nodes {
		fams[i] = n.Family
	}
	return kube.DefaultFamily(fams)
}

// newNode is the Node of n.
func newNode(n *corev1.Node) Node {
	ips := map[string]string{}
	for _, f := range []string{"ipv4", "ipv6"} {
		if ip := kube.NodeIP(n, f); ip != "" {
			ips[f] = ip
		}
	}
	return Node{Name: n.Name, Zone: n.Labels[kube.LabelZone], InternalIP: internalIP(n), Family: kube.NodeFamily(n), IPs: ips}
}

// NodeFilter chooses the nodes of a mesh.
type NodeFilter struct {
	// LabelSelector is a Kubernetes label selector ("k=v,k2 in (a,b)"); empty means all.
	LabelSelector string
	// Names, when set, are the only nodes considered (in any order; the result is sorted).
	Names []string
	// Tolerations are the agents' tolerations: a node with a NoSchedule or NoExecute taint
	// they do not tolerate is skipped, as the DaemonSet would skip it.
	Tolerations []corev1.Toleration
}

// Skipped is a node left out, and why.
type Skipped struct{ Node, Reason string }

// listPageSize keeps one LIST response small on large clusters.
const listPageSize = 500

// ListNodes returns the Ready, schedulable nodes that pass f, sorted by name, and the nodes
// it left out with the reason.
func ListNodes(ctx context.Context, cs kubernetes.Interface, f NodeFilter) ([]Node, []Skipped, error) {
	want := map[string]bool{}
	for _, n := range f.Names {
		want[n] = true
	}
	var nodes []Node
	var skipped []Skipped
	found := map[string]bool{}
	opts := metav1.ListOptions{LabelSelector: f.LabelSelector, Limit: listPageSize}
	for {
		list, err := cs.CoreV1().Nodes().List(ctx, opts)
		if err != nil {
			return nil, nil, fmt.Errorf("list nodes (selector %q): %w", f.LabelSelector, err)
		}
		for i := range list.Items {
			n := &list.Items[i]
			if len(want) > 0 && !want[n.Name] {
				continue
			}
			found[n.Name] = true
			if why := unusable(n, f.Tolerations); why != "" {
				skipped = append(skipped, Skipped{n.Name, why})
				continue
			}
			nodes = append(nodes, newNode(n))
		}
		if list.Continue == "" {
			break
		}
		opts.Continue = list.Continue
	}
	for _, name := range f.Names {
		if !found[name] {
			skipped = append(skipped, Skipped{name, "no such node (or it does not match the selector)"})
		}
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	sort.Slice(skipped, func(i, j int) bool { return skipped[i].Node < skipped[j].Node })
	return nodes, skipped, nil
}

// unusable says why agents cannot run on n (kube.Schedulable), or "".
func unusable(n *corev1.Node, tolerations []corev1.Toleration) string {
	block, taint := kube.Schedulable(n, tolerations)
	if block == kube.NodeTainted {
		return fmt.Sprintf("taint %s not tolerated (see --tolerations)", taint.ToString())
	}
	return block.Why(n, "agents")
}

func internalIP(n *corev1.Node) string {
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			return a.Address
		}
	}
	return ""
}

// Names returns the nodes' names in order.
func Names(nodes []Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.Name
	}
	return out
}
