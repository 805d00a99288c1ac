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

// TestNodePortAddrsTakeTheClustersFamily: the NodePort probes dial each node at its address of
// the family cnperf run measures on for the same nodes (IPv6 when every node puts IPv6 first),
// not at the first InternalIP, which a dual-stack IPv6-first node may list as IPv4.
func TestNodePortAddrsTakeTheClustersFamily(t *testing.T) {
	for _, tc := range []struct {
		name  string
		nodes []*corev1.Node
		want  map[string]string
	}{
		{"ipv4", []*corev1.Node{kubetest.AddressedNode("a", []string{"10.244.1.0/24"}, "10.0.0.1")}, map[string]string{"a": "10.0.0.1"}},
		{"ipv6 only", []*corev1.Node{kubetest.AddressedNode("a", []string{"fd00:10:244:1::/64"}, "fd00::1")}, map[string]string{"a": "fd00::1"}},
		{"dual, IPv6 pods first, IPv4 address first", []*corev1.Node{
			kubetest.AddressedNode("a", []string{"fd00:10:244:1::/64", "10.244.1.0/24"}, "10.0.0.1", "fd00::1"),
			kubetest.AddressedNode("b", []string{"fd00:10:244:2::/64", "10.244.2.0/24"}, "10.0.0.2", "fd00::2"),
		}, map[string]string{"a": "fd00::1", "b": "fd00::2"}},
		{"dual, IPv4 first", []*corev1.Node{
			kubetest.AddressedNode("a", []string{"10.244.1.0/24", "fd00:10:244:1::/64"}, "fd00::1", "10.0.0.1"),
		}, map[string]string{"a": "fd00::1"}}, // the default family: the first InternalIP, as cnperf run takes it
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
		if got := nodeAddrs(nodes); !maps.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
