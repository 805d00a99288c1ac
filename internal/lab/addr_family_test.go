package lab

import "testing"

// TestAddrPlanFamilies: every address of the plan in IPv4 and its IPv6 twin in CIDR6.
func TestAddrPlanFamilies(t *testing.T) {
	a, err := newAddrPlan("198.18.0.0/16")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, v4, v6 string }{
		{"underlay", a.underlayF(ipv4).String(), a.underlayF(ipv6).String()},
		{"node 2", a.nodeIPF(ipv4, 2).String(), a.nodeIPF(ipv6, 2).String()},
		{"pod CIDR 1", a.podCIDRF(ipv4, 1).String(), a.podCIDRF(ipv6, 1).String()},
		{"VTEP 2", a.vtepIPF(ipv4, 2).String(), a.vtepIPF(ipv6, 2).String()},
		{"gateway 1", a.gatewayF(ipv4, 1).String(), a.gatewayF(ipv6, 1).String()},
		{"pod 2/1", a.podIPF(ipv4, 2, 1).String(), a.podIPF(ipv6, 2, 1).String()},
		{"service", a.serviceIPF(ipv4).String(), a.serviceIPF(ipv6).String()},
	}
	want := map[string][2]string{
		"underlay":   {"198.18.0.0/24", "2001:2::/64"},
		"node 2":     {"198.18.0.2", "2001:2::2"},
		"pod CIDR 1": {"198.18.1.0/24", "2001:2:0:1::/64"},
		"VTEP 2":     {"198.18.2.0", "2001:2:0:2::fff0"},
		"gateway 1":  {"198.18.1.1", "2001:2:0:1::1"},
		"pod 2/1":    {"198.18.2.10", "2001:2:0:2::a"},
		"service":    {"198.18.3.10", "2001:2:0:3::a"},
	}
	for _, tt := range tests {
		if w := want[tt.name]; tt.v4 != w[0] || tt.v6 != w[1] {
			t.Errorf("%s: %s and %s, want %s and %s", tt.name, tt.v4, tt.v6, w[0], w[1])
		}
	}
	if a.nodeIP(2) != a.nodeIPF(ipv4, 2) || a.podCIDR(1) != a.podCIDRF("", 1) {
		t.Error("the IPv4 accessors differ from the family ones")
	}
}
