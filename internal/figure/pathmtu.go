package figure

import (
	"fmt"
	"strings"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

// PathMTUName is a path-MTU check's path, with its lab topology when it has one:
// "pod-pod-cross-node", "pod-pod-cross-node routed mtu1400".
func PathMTUName(m api.PathMTU) string {
	if m.Topology == nil {
		return string(m.Path)
	}
	return string(m.Path) + " " + TopologyLabel(m.Topology)
}

// PathMTULine says what a path-MTU check found, in one line (wrapped by whoever prints it):
// the finding and its consequence, a direction that could not be probed, or, when all is
// well, the sizes that passed each way.
func PathMTULine(m api.PathMTU) string {
	var parts []string
	for _, d := range []struct {
		name string
		p    api.PathMTUProbe
	}{{"client → server", m.Forward}, {"server → client", m.Reverse}} {
		if d.p.Error != "" {
			parts = append(parts, d.name+": "+d.p.Error)
		}
	}
	head := "path MTU " + PathMTUName(m) + ": "
	if m.Finding != "" {
		return head + strings.ToUpper(m.Finding) + ": " + m.Consequence + joinNotes(parts)
	}
	if len(parts) > 0 {
		return head + strings.Join(parts, "; ")
	}
	return head + fmt.Sprintf("%d bytes client → server, %d server → client, as the interface MTUs (%d, %d): no mismatch",
		m.Forward.LargestBytes, m.Reverse.LargestBytes, m.Forward.InterfaceMTUBytes, m.Reverse.InterfaceMTUBytes)
}

func joinNotes(parts []string) string {
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}
