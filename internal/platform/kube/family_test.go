package kube

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/cnperf/cnperf/internal/kube/kubetest"
)

func TestCheckNodeFamilies(t *testing.T) {
	v4 := map[string]*corev1.Node{
		"a": kubetest.AddressedNode("a", []string{"10.244.1.0/24"}, "10.123.0.11"),
		"b": kubetest.AddressedNode("b", nil, "10.123.0.12"),
	}
	dual := map[string]*corev1.Node{
		"a": kubetest.AddressedNode("a", []string{"10.244.1.0/24", "fd00:10:244:1::/64"}, "10.123.0.11", "fd00:10:123::11"),
		"b": kubetest.AddressedNode("b", nil, "10.123.0.12", "fd00:10:123::12"),
	}
	v6AddrOnly := map[string]*corev1.Node{
		"a": kubetest.AddressedNode("a", []string{"10.244.1.0/24"}, "10.123.0.11", "fd00:10:123::11"),
	}
	tests := []struct {
		name     string
		nodes    map[string]*corev1.Node
		families []string
		wantErr  string
	}{
		{"ipv4 on ipv4", v4, []string{"ipv4"}, ""},
		{"default asks nothing", v4, nil, ""},
		{"ipv6 on ipv4", v4, []string{"ipv6"}, "node a has no ipv6 InternalIP (InternalIPs: 10.123.0.11)"},
		{"both on dual", dual, []string{"ipv4", "ipv6"}, ""},
		{"ipv6 pod CIDR missing", v6AddrOnly, []string{"ipv6"}, "node a has no ipv6 pod CIDR (podCIDRs: 10.244.1.0/24)"},
	}
	for _, tt := range tests {
		err := checkNodeFamilies(tt.nodes, []string{"a", "b", ""}, tt.families)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s: error %v, want one with %q", tt.name, err, tt.wantErr)
		}
	}
}

func TestDefaultIPFamilyAsksTheNodes(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		addr, want string
	}{{"10.123.0.11", ""}, {"fd00:10:123::11", "ipv6"}} {
		n := node("node1", "")
		n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: tt.addr}}
		p := newTestPlatform(t, newCluster(t, n), Options{})
		got, err := p.DefaultIPFamily(ctx)
		if err != nil || got != tt.want {
			t.Errorf("node at %s: DefaultIPFamily = %q, %v; want %q", tt.addr, got, err, tt.want)
		}
	}
}

// TestIPFamilyOf: the family of a pod's addresses as ClusterDetails.IPFamily spells it
// ("dual-stack" for both, as docs/kubernetes.md shows), whatever the order of its addresses.
func TestIPFamilyOf(t *testing.T) {
	for _, tt := range []struct {
		ips  []string
		want string
	}{
		{[]string{"10.244.1.5", "fd00:10:244:1::5"}, "dual-stack"},
		{[]string{"fd00:10:244:1::5", "10.244.1.5"}, "dual-stack"},
		{[]string{"fd00:10:244:1::5"}, "ipv6"},
		{[]string{"10.244.1.5"}, "ipv4"},
		{[]string{"not-an-address"}, ""},
		{nil, ""},
	} {
		pod := &corev1.Pod{}
		for _, ip := range tt.ips {
			pod.Status.PodIPs = append(pod.Status.PodIPs, corev1.PodIP{IP: ip})
		}
		if got := ipFamilyOf(pod); got != tt.want {
			t.Errorf("%v: %q, want %q", tt.ips, got, tt.want)
		}
	}
}
