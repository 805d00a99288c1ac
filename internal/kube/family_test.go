package kube

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/cnperf/cnperf/internal/kube/kubetest"
)

// TestPrimaryFamily is the one decision of the default IP family (cnperf run, mesh,
// programming, tiger-bench).
func TestPrimaryFamily(t *testing.T) {
	v4 := kubetest.AddressedNode("a", []string{"10.244.1.0/24"}, "10.123.0.11")
	v6 := kubetest.AddressedNode("b", []string{"fd00:10:244:1::/64"}, "fd00:10:123::11")
	v6AddrOnly := kubetest.AddressedNode("c", nil, "fd00:10:123::12")
	dual := kubetest.AddressedNode("d", []string{"10.244.1.0/24", "fd00:10:244:1::/64"}, "10.123.0.11", "fd00:10:123::11")
	dualV6First := kubetest.AddressedNode("e", []string{"fd00:10:244:1::/64", "10.244.1.0/24"}, "fd00:10:123::11", "10.123.0.11")
	bare := kubetest.AddressedNode("f", nil)
	v6External := kubetest.AddressedNode("g", nil)
	v6External.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeExternalIP, Address: "2001:db8::7"}}
	tests := []struct {
		name  string
		nodes []*corev1.Node
		want  string
	}{
		{"ipv4", []*corev1.Node{v4}, ""},
		{"ipv6 by pod CIDR", []*corev1.Node{v6}, "ipv6"},
		{"ipv6 by address", []*corev1.Node{v6AddrOnly}, "ipv6"},
		{"ipv6 with a node that says nothing", []*corev1.Node{v6, bare}, "ipv6"},
		{"dual, IPv4 first", []*corev1.Node{dual}, ""},
		{"dual, IPv6 first", []*corev1.Node{dualV6First}, "ipv6"},
		{"mixed nodes", []*corev1.Node{v6, v4}, ""},
		{"no nodes", nil, ""},
		{"nothing known", []*corev1.Node{bare}, ""},
		{"ipv6 by external address", []*corev1.Node{v6External}, "ipv6"},
	}
	for _, tt := range tests {
		var nodes []corev1.Node
		for _, n := range tt.nodes {
			nodes = append(nodes, *n)
		}
		if got := PrimaryFamily(nodes); got != tt.want {
			t.Errorf("%s: PrimaryFamily = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestNodeIP(t *testing.T) {
	dual := kubetest.AddressedNode("d", nil, "10.123.0.11", "fd00:10:123::11")
	ext := &corev1.Node{Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{
		{Type: corev1.NodeHostName, Address: "n"}, {Type: corev1.NodeExternalIP, Address: "2001:db8::7"}}}}
	for _, tt := range []struct {
		name   string
		n      *corev1.Node
		family string
		want   string
	}{
		{"first", dual, "", "10.123.0.11"},
		{"ipv4", dual, "ipv4", "10.123.0.11"},
		{"ipv6", dual, "ipv6", "fd00:10:123::11"},
		{"external when no internal", ext, "ipv6", "2001:db8::7"},
		{"none of the family", ext, "ipv4", ""},
		{"no node", nil, "", ""},
	} {
		if got := NodeIP(tt.n, tt.family); got != tt.want {
			t.Errorf("%s: NodeIP = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestServiceFamily: the family of a Service's ClusterIP, read from the Service as the API
// server answers a create (spec.clusterIP, clusterIPs, ipFamilies, ipFamilyPolicy set by it);
// a dual-stack Service's is its first family's, the one spec.clusterIP belongs to.
func TestServiceFamily(t *testing.T) {
	const answered = `apiVersion: v1
kind: Service
metadata: {name: cnperf-prog-ip-0b5c3e2a, namespace: cnperf-prog}
spec:
  type: %s
  clusterIP: %s
  clusterIPs: [%s]
  ipFamilies: [%s]
  ipFamilyPolicy: %s
  internalTrafficPolicy: Cluster
  ports: [{name: probe, port: 7100, protocol: TCP, targetPort: 7100, nodePort: 31201}]
  sessionAffinity: None
status: {loadBalancer: {}}
`
	for _, tc := range []struct {
		name                                         string
		typ, clusterIP, clusterIPs, families, policy string
		want                                         string
	}{
		{"IPv4 single-stack", "ClusterIP", "10.96.14.7", "10.96.14.7", "IPv4", "SingleStack", "ipv4"},
		{"IPv6 single-stack", "NodePort", "fd00:10:96::3a1", "fd00:10:96::3a1", "IPv6", "SingleStack", "ipv6"},
		{"dual-stack, IPv6 first", "ClusterIP", "fd00:10:96::3a1", "fd00:10:96::3a1, 10.96.14.7", "IPv6, IPv4", "PreferDualStack", "ipv6"},
		{"dual-stack, IPv4 first", "NodePort", "10.96.14.7", "10.96.14.7, fd00:10:96::3a1", "IPv4, IPv6", "RequireDualStack", "ipv4"},
		{"no ipFamilies (an API server before 1.20)", "ClusterIP", "fd00:10:96::3a1", "fd00:10:96::3a1", "", "SingleStack", "ipv6"},
		{"headless", "ClusterIP", "None", "None", "IPv4", "SingleStack", ""},
	} {
		var svc corev1.Service
		if err := yaml.UnmarshalStrict([]byte(fmt.Sprintf(answered, tc.typ, tc.clusterIP, tc.clusterIPs, tc.families, tc.policy)), &svc); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := ServiceFamily(&svc); got != tc.want {
			t.Errorf("%s: ServiceFamily = %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := ServiceFamily(&corev1.Service{}); got != "" {
		t.Errorf("a Service without a ClusterIP: %q, want none", got)
	}
}
