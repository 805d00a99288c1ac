package lab

import (
	"path/filepath"
	"strings"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/figure"
	"github.com/cnperf/cnperf/internal/golden"
	"github.com/cnperf/cnperf/internal/plan"
)

func TestRunTag(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		err      bool
	}{
		{"3F2A9C1B-0000-4000-8000-000000000000", "3f2a9c", false},
		{"3f-2a-9c-1b", "3f2a9c", false},
		{"xyz", "", true},
		{"12345", "", true},
	} {
		got, err := RunTag(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("RunTag(%q) = %q, %v; want %q, error %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestTagOf(t *testing.T) {
	for in, want := range map[string]string{
		"cnp-3f2a9c-routed-node1":               "3f2a9c",
		"cnp-3f2a9c-vxlan-p1000-chains-ct-n1p1": "3f2a9c",
		"cnp-3f2a9-routed-node1":                "",
		"cni-3f2a9c-routed-node1":               "",
		"cnp-3F2A9C-routed-node1":               "",
		"cnp-3f2a9c":                            "",
	} {
		if got := TagOf(in); got != want {
			t.Errorf("TagOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNamesFitIFNAMSIZ(t *testing.T) {
	for _, suf := range []string{"eth0", "fab", "f1", "f2", "cni0", "vx1", "v1", "v50"} {
		if n := linkName("abcdef", suf); len(n) > 15 {
			t.Errorf("%s is %d bytes", n, len(n))
		}
	}
}

func TestMarkerRoundTrip(t *testing.T) {
	m := ownerMarker{RunID: "3f2a9c1b-x", PID: 4242, StartTick: 987654}
	got, ok := parseMarker(m.String())
	if !ok || got != m {
		t.Fatalf("parseMarker(%q) = %+v, %v", m.String(), got, ok)
	}
	for _, bad := range []string{"", "cnperf-lab run=x pid=1", "cnperf-lab run=x pid=a start=1", "other run=x pid=1 start=2", "cnperf-lab run=x pid=1 foo=2"} {
		if _, ok := parseMarker(bad); ok {
			t.Errorf("parseMarker(%q) accepted", bad)
		}
	}
	self := selfMarker("r", false)
	if !self.alive() {
		t.Errorf("this process's marker %+v is not alive", self)
	}
	if selfMarker("r", true).alive() {
		t.Error("a detached marker is alive")
	}
	dead := self
	dead.StartTick++
	if dead.alive() {
		t.Error("a marker with another start time (pid reused) is alive")
	}
}

func TestCheckCaps(t *testing.T) {
	all := uint64(1<<capNetAdmin | 1<<capSysAdmin)
	if err := checkCaps(all); err != nil {
		t.Errorf("both capabilities: %v", err)
	}
	err := checkCaps(1 << capSysAdmin)
	if err == nil || !strings.Contains(err.Error(), "CAP_NET_ADMIN") || strings.Contains(err.Error(), "CAP_SYS_ADMIN") ||
		!strings.Contains(err.Error(), "only the loopback path") {
		t.Errorf("without CAP_NET_ADMIN: %v", err)
	}
	if err := checkCaps(0); err == nil || !strings.Contains(err.Error(), "CAP_NET_ADMIN and CAP_SYS_ADMIN") {
		t.Errorf("without both: %v", err)
	}
}

func TestParseRoutes(t *testing.T) {
	js := `[{"dst":"default","gateway":"192.0.2.1","dev":"eth0"},{"dst":"192.0.2.0/24","dev":"eth0"},` +
		`{"type":"local","dst":"192.0.2.2","dev":"eth0","table":"local"},{"type":"broadcast","dst":"127.255.255.255","table":"local"},` +
		`{"dst":"0.0.0.0/0","dev":"wg0"}]`
	rs, err := parseRoutes([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rs {
		got = append(got, r.String())
	}
	want := "192.0.2.0/24 192.0.2.2/32 127.255.255.255/32"
	if strings.Join(got, " ") != want {
		t.Errorf("routes %v, want %s", got, want)
	}
	if _, err := parseRoutes([]byte("not json")); err == nil {
		t.Error("bad JSON accepted")
	}
}

func TestAddrPlan(t *testing.T) {
	a, err := newAddrPlan(DefaultCIDR)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ got, want string }{
		{a.nodeCIDR(1), "198.18.0.1/24"},
		{a.nodeCIDR(2), "198.18.0.2/24"},
		{a.podCIDR(2).String(), "198.18.2.0/24"},
		{a.vtepIP(1).String(), "198.18.1.0"},
		{a.gateway(2).String(), "198.18.2.1"},
		{a.podAddrCIDR(1, 2), "198.18.1.11/24"},
		{a.serviceIP().String(), "198.18.3.10"},
		{a.policySource(251).String(), "198.18.4.2"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %s, want %s", tc.got, tc.want)
		}
	}
	for _, bad := range []string{"10.0.0.0/22", "fd00::/48", "nonsense"} {
		if _, err := newAddrPlan(bad); err == nil {
			t.Errorf("newAddrPlan(%q) accepted", bad)
		}
	}
	b, _ := newAddrPlan("10.200.0.0/21")
	if got := b.podAddrCIDR(2, 1); got != "10.200.2.10/24" {
		t.Errorf("custom range pod address %s", got)
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*Options)
		want string // substring of the error; "" = valid
	}{
		{"defaults", func(*Options) {}, ""},
		{"mtu", func(o *Options) { o.MTUBytes = 100 }, "--mtu 100"},
		{"underlay", func(o *Options) { o.Underlay = "wifi" }, `--underlay "wifi"`},
		{"overlay", func(o *Options) { o.Overlays = []string{"geneve"} }, `--overlay "geneve"`},
		{"no overlay", func(o *Options) { o.Overlays = nil }, "--overlay: give at least one"},
		{"dup overlay", func(o *Options) { o.Overlays = []string{"vxlan", "vxlan"} }, "listed twice"},
		{"rules", func(o *Options) { o.PolicyRules = []int{0, -1} }, "--policy-rules -1"},
		{"dup rules", func(o *Options) { o.PolicyRules = []int{100, 100} }, "--policy-rules 100: listed twice"},
		{"style", func(o *Options) { o.PolicyStyles = []string{"ebpf"} }, `--policy-style "ebpf"`},
		{"no style", func(o *Options) { o.PolicyRules = []int{10}; o.PolicyStyles = nil }, "give at least one style"},
		{"proxy", func(o *Options) { o.ServiceProxies = []string{"ipvs"} }, `--service-proxy "ipvs"`},
		{"backends", func(o *Options) { o.ServiceBackends = 0 }, "--service-backends 0"},
		{"cidr", func(o *Options) { o.CIDR = "10.0.0.0/24" }, "--lab-cidr"},
		{"pod mtu", func(o *Options) { o.PodMTUBytes = 100 }, "--lab-pod-mtu 100"},
		{"pod mtu above the path", func(o *Options) { o.MTUBytes, o.PodMTUBytes, o.DropFragNeeded = 1400, 1500, true }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := DefaultOptions()
			tc.mod(&o)
			err := o.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func TestExpand(t *testing.T) {
	o := DefaultOptions()
	o.PolicyRules = []int{0, 1000}
	o.PolicyStyles = []string{PolicyChains, PolicySets}
	o.ServiceProxies = []string{ProxyNftables, ProxyIptables}
	var cases []plan.Case
	for _, p := range []api.Path{api.PathLoopback, api.PathHostHost, api.PathPodPodSameNode, api.PathPodPodCrossNode,
		api.PathPodHost, api.PathHostPod, api.PathPodClusterIP} {
		cases = append(cases, plan.Case{Profile: api.TCPRR, Path: p, Driver: "native"})
	}
	got := Expand(cases, o)
	var lines []string
	for i, c := range got {
		if c.Index != i {
			t.Errorf("case %d has index %d", i, c.Index)
		}
		line := string(c.Path)
		if c.Topology != nil {
			line += " | " + figure.TopologyLabel(c.Topology)
			s, err := o.SpecFor(c.Path, c.Topology)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			line += " | cluster " + s.Name()
		}
		lines = append(lines, line)
	}
	golden.Check(t, filepath.Join("testdata", "expand.txt"), []byte(strings.Join(lines, "\n")+"\n"))
	// Topologies are distinct values: changing one case's must not change another's.
	got[1].Topology.MTUBytes = 1
	for _, c := range got[2:] {
		if c.Topology != nil && c.Topology.MTUBytes == 1 {
			t.Fatal("cases share a Topology pointer")
		}
	}
}

func TestSpecForErrors(t *testing.T) {
	o := DefaultOptions()
	for _, tc := range []struct {
		path api.Path
		topo *api.Topology
		want string
	}{
		{api.PathHostHost, nil, "has no topology"},
		{api.PathPodPodCrossNode, &api.Topology{Flavour: "geneve"}, "unknown flavour"},
		{api.PathPodClusterIP, &api.Topology{Flavour: "ipvs"}, "unknown flavour"},
		{api.PathHostPod, &api.Topology{Flavour: "routed", PolicyRules: 10, PolicyStyle: "chains"}, "pod-pod paths only"},
		{api.PathPodPodSameNode, &api.Topology{Flavour: "bridge", PolicyRules: 10, PolicyStyle: "x"}, "unknown policy style"},
		{api.PathLoopback, &api.Topology{}, "not built by the lab"},
	} {
		if _, err := o.SpecFor(tc.path, tc.topo); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("SpecFor(%s, %+v) = %v, want %q", tc.path, tc.topo, err, tc.want)
		}
	}
}

func TestRulesets(t *testing.T) {
	a, _ := newAddrPlan(DefaultCIDR)
	base := Spec{Underlay: UnderlayBridge, MTUBytes: 1500, Overlay: OverlayRouted}
	for _, tc := range []struct {
		name string
		spec func(Spec) Spec
		text func(Spec) string
	}{
		{"policy-chains-25.nft", func(s Spec) Spec { s.PolicyRules, s.PolicyStyle = 25, PolicyChains; return s },
			func(s Spec) string { return policyRuleset("abcdef", a, 2, s) }},
		{"policy-sets-ct-25.nft", func(s Spec) Spec { s.PolicyRules, s.PolicyStyle = 25, PolicySetsCT; return s },
			func(s Spec) string { return policyRuleset("abcdef", a, 1, s) }},
		{"service-3.nft", func(s Spec) Spec { s.Proxy, s.Backends, s.Affinity = ProxyNftables, 3, true; return s },
			func(s Spec) string { return nftService("abcdef", a, s) }},
		{"service-3.iptables", func(s Spec) Spec { s.Proxy, s.Backends, s.Affinity = ProxyIptables, 3, true; return s },
			func(s Spec) string { return iptablesService("abcdef", a, s) }},
		{"masquerade.nft", func(s Spec) Spec { s.Masquerade = true; return s },
			func(s Spec) string { return masqueradeRuleset("abcdef", a, 1) }},
		{"service-1-noaffinity.iptables", func(s Spec) Spec { s.Proxy, s.Backends = ProxyIptables, 1; return s },
			func(s Spec) string { return iptablesService("abcdef", a, s) }},
		{"drop-frag-needed.nft", func(s Spec) Spec { s.DropFragNeeded = true; return s },
			func(Spec) string { return dropFragNeededRuleset("abcdef") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			golden.Check(t, filepath.Join("testdata", tc.name), []byte(tc.text(tc.spec(base))))
		})
	}
	// Rule counts: every rule is there, once.
	for _, n := range []int{1, 10, 11, 10000} {
		s := base
		s.PolicyRules, s.PolicyStyle = n, PolicyChains
		got := strings.Count(policyRuleset("abcdef", a, 1, s), "tcp dport")
		if got != n {
			t.Errorf("chains with %d rules: %d rules generated", n, got)
		}
		s.PolicyStyle = PolicySets
		got = strings.Count(policyRuleset("abcdef", a, 1, s), " . tcp . ")
		if got != n {
			t.Errorf("sets with %d rules: %d elements generated", n, got)
		}
	}
}

// TestSpecBrokenMTU: a pod MTU of its own and the ICMP-dropping rule give the cluster a name
// of its own (its namespaces differ from the healthy cluster's) and the pods that MTU.
func TestSpecBrokenMTU(t *testing.T) {
	for _, tc := range []struct {
		spec   Spec
		name   string
		podMTU int
	}{
		{Spec{MTUBytes: 1500, Overlay: OverlayVXLAN}, "vxlan", 1450},
		{Spec{MTUBytes: 1400, Overlay: OverlayRouted, PodMTUOverride: 1500}, "routed-pmtu1500", 1500},
		{Spec{MTUBytes: 1400, Overlay: OverlayVXLAN, PodMTUOverride: 1500, DropFragNeeded: true}, "vxlan-pmtu1500-noicmp", 1500},
	} {
		if got := tc.spec.Name(); got != tc.name {
			t.Errorf("Name() = %q, want %q", got, tc.name)
		}
		if got := tc.spec.PodMTUBytes(); got != tc.podMTU {
			t.Errorf("%s: PodMTUBytes() = %d, want %d", tc.name, got, tc.podMTU)
		}
	}
	o := DefaultOptions()
	o.MTUBytes, o.PodMTUBytes, o.DropFragNeeded = 1400, 1500, true
	s, err := o.SpecFor(api.PathPodPodCrossNode, &api.Topology{Flavour: OverlayRouted, MTUBytes: 1400})
	if err != nil {
		t.Fatal(err)
	}
	if s.PodMTUOverride != 1500 || !s.DropFragNeeded {
		t.Errorf("SpecFor did not carry the broken MTU: %+v", s)
	}
}
