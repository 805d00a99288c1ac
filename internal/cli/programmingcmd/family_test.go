package programmingcmd

import (
	"context"
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/cnperf/cnperf/internal/mesh"

	"github.com/cnperf/cnperf/internal/kube/kubetest"
)

// TestNodePortAddrsAreEveryFamily: the runner gets each node's address of every family it has
// (its InternalIP of that family), to dial a Service's node port at the address of the
// Service's family; before, it got one address, of the nodes' family (mesh.DefaultFamily) or
// the first InternalIP, which on a dual-stack node listing IPv6 first was IPv6 where the
// cluster's Services, and so their node ports, were IPv4.
func TestNodePortAddrsAreEveryFamily(t *testing.T) {
	for _, tc := range []struct {
		name  string
		nodes []*corev1.Node
		want  map[string]map[string]string
	}{
		{"ipv4", []*corev1.Node{kubetest.AddressedNode("a", []string{"10.244.1.0/24"}, "10.0.0.1")}, map[string]map[string]string{"a": {"ipv4": "10.0.0.1"}}},
		{"ipv6 only", []*corev1.Node{kubetest.AddressedNode("a", []string{"fd00:10:244:1::/64"}, "fd00::1")}, map[string]map[string]string{"a": {"ipv6": "fd00::1"}}},
		{"dual, IPv6 pods first, IPv4 address first", []*corev1.Node{
			kubetest.AddressedNode("a", []string{"fd00:10:244:1::/64", "10.244.1.0/24"}, "10.0.0.1", "fd00::1"),
			kubetest.AddressedNode("b", []string{"fd00:10:244:2::/64", "10.244.2.0/24"}, "10.0.0.2", "fd00::2"),
		}, map[string]map[string]string{"a": {"ipv4": "10.0.0.1", "ipv6": "fd00::1"}, "b": {"ipv4": "10.0.0.2", "ipv6": "fd00::2"}}},
		{"dual, IPv4 first, IPv6 address first", []*corev1.Node{
			kubetest.AddressedNode("a", []string{"10.244.1.0/24", "fd00:10:244:1::/64"}, "fd00::1", "10.0.0.1"),
		}, map[string]map[string]string{"a": {"ipv4": "10.0.0.1", "ipv6": "fd00::1"}}},
	} {
		cs := fake.NewClientset()
		for _, n := range tc.nodes {
			if _, err := cs.CoreV1().Nodes().Create(context.Background(), n, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		nodes, _, err := mesh.ListNodes(context.Background(), cs, mesh.NodeFilter{})
		if err != nil {
			t.Fatal(err)
		}
		got := nodeAddrs(nodes)
		if !maps.EqualFunc(got, tc.want, maps.Equal) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
