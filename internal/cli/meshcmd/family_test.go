package meshcmd

import (
	"slices"
	"strings"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/mesh"
	"github.com/cnperf/cnperf/internal/plan"
)

// TestCellsTakeTheNodesFamily: on nodes that put IPv6 first, every cell is an IPv6 case and the
// agents' servers (built from the cells as prepare builds them: sockperf's binds "::") listen on IPv6, as cnperf run's
// cases on the same cluster do; elsewhere the cells name no family (IPv4).
func TestCellsTakeTheNodesFamily(t *testing.T) {
	v4 := mesh.Node{Name: "a", Family: "ipv4"}
	v6 := mesh.Node{Name: "b", Family: "ipv6"}
	for _, tc := range []struct {
		name   string
		nodes  []mesh.Node
		family string
		ipv6   bool // sockperf's server binds "::"
	}{
		{"ipv4 nodes", []mesh.Node{v4, v4}, "", false},
		{"ipv6 nodes", []mesh.Node{v6, v6}, "ipv6", true},
		{"mixed nodes", []mesh.Node{v6, v4}, "", false},
	} {
		_, s, err := parse(t, "--driver", "sockperf", "--profile", "TCP_RR")
		if err != nil {
			t.Fatal(err)
		}
		o := &Options{Port: 20000}
		mo := o.meshOptions(s, mesh.DefaultFamily(tc.nodes))
		c := mo.Case(api.PathPodPodCrossNode, api.NetworkPod, nil)
		if c.Params.IPFamily != tc.family {
			t.Errorf("%s: cell family %q, want %q", tc.name, c.Params.IPFamily, tc.family)
		}
		servers := driver.Servers(s.drv, []plan.Case{c})
		if len(servers) == 0 {
			t.Fatalf("%s: no server", tc.name)
		}
		argv := servers[0].Argv
		if has := slices.Contains(argv, "::"); has != tc.ipv6 {
			t.Errorf("%s: sockperf server %s, on IPv6 (\"::\"): %v, want %v", tc.name, strings.Join(argv, " "), has, tc.ipv6)
		}
	}
}
