package lab

import (
	"fmt"
	"strings"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/plan"
)

// Paths are the paths the lab builds, in report order (loopback is the local platform's own).
var Paths = []api.Path{api.PathHostHost, api.PathPodPodSameNode, api.PathPodPodCrossNode,
	api.PathPodHost, api.PathHostPod, api.PathPodClusterIP}

// Supports reports whether the lab builds path p.
func Supports(p api.Path) bool {
	for _, q := range Paths {
		if p == q {
			return true
		}
	}
	return false
}

// Flavour names recorded in api.Topology.Flavour.
const (
	FlavourBridge = "bridge" // pods on one node's bridge
)

// underlayFlavour is host-host's flavour: "underlay-bridge" or "underlay-veth".
func underlayFlavour(u string) string { return "underlay-" + u }

// Topologies lists the datapaths path p is measured on, in order:
//
//	host-host           the underlay                         Flavour underlay-<underlay>
//	pod-pod-same-node   × policy rules × styles              Flavour bridge
//	pod-pod-cross-node  × overlays × policy rules × styles   Flavour routed | vxlan
//	pod-host, host-pod  × overlays                           Flavour routed | vxlan
//	pod-clusterip       × service proxies                    Flavour nftables | iptables
//
// Paths that have no overlay of their own (same-node, clusterip) run on the first overlay;
// when that is not routed, its name is appended to the flavour ("nftables+vxlan").
// MTUBytes is the smallest MTU on the path.
func (o Options) Topologies(p api.Path) []api.Topology {
	base := o.Overlays[0]
	withBase := func(f string) string {
		if base != OverlayRouted {
			return f + "+" + base
		}
		return f
	}
	policies := func(t api.Topology) []api.Topology {
		var out []api.Topology
		for _, n := range o.PolicyRules {
			if n == 0 {
				out = append(out, t)
				continue
			}
			for _, st := range o.PolicyStyles {
				v := t
				v.PolicyRules, v.PolicyStyle = n, st
				out = append(out, v)
			}
		}
		return out
	}
	switch shapeOf(p) {
	case shapeHosts:
		return []api.Topology{{Flavour: underlayFlavour(o.Underlay), MTUBytes: o.MTUBytes}}
	case shapeSameNode:
		return policies(api.Topology{Flavour: withBase(FlavourBridge), MTUBytes: podMTU(o.MTUBytes, base)})
	case shapeCrossNode:
		var out []api.Topology
		for _, ov := range o.Overlays {
			out = append(out, policies(api.Topology{Flavour: ov, MTUBytes: podMTU(o.MTUBytes, ov)})...)
		}
		return out
	case shapePodAndHost:
		var out []api.Topology
		for _, ov := range o.Overlays {
			out = append(out, api.Topology{Flavour: ov, MTUBytes: podMTU(o.MTUBytes, ov)})
		}
		return out
	case shapeClusterIP:
		var out []api.Topology
		for _, px := range o.ServiceProxies {
			out = append(out, api.Topology{Flavour: withBase(px), MTUBytes: podMTU(o.MTUBytes, base), Backends: o.ServiceBackends})
		}
		return out
	}
	return nil
}

// shape is what the lab builds for a path, read from its row of the path table.
type shape int

const (
	shapeNone       shape = iota // not a lab path
	shapeHosts                   // node to node on the underlay (host-host)
	shapeSameNode                // two pods on one node's bridge
	shapeCrossNode               // pods on two nodes, over an overlay
	shapePodAndHost              // a pod and the other node's own address (pod-host, host-pod)
	shapeClusterIP               // a pod to a ClusterIP Service over the pods of other nodes
)

// shapeOf is p's shape: what its row says of the endpoints' networks, their nodes and the
// access, for the paths the lab builds (Paths); shapeNone for any other.
func shapeOf(p api.Path) shape {
	r, ok := p.Row()
	if !ok || !Supports(p) {
		return shapeNone
	}
	pods := r.ClientNetwork == api.NetworkPod && r.ServerNetwork == api.NetworkPod
	switch {
	case r.Access == api.AccessClusterIP && pods && r.Nodes == api.NodesCross:
		return shapeClusterIP
	case r.Access != api.AccessDirect:
		return shapeNone
	case r.HostNetwork() && r.Nodes == api.NodesCross:
		return shapeHosts
	case pods && r.Nodes == api.NodesSame:
		return shapeSameNode
	case pods && r.Nodes == api.NodesCross:
		return shapeCrossNode
	case r.ClientNetwork != r.ServerNetwork && r.Nodes == api.NodesCross:
		return shapePodAndHost
	}
	return shapeNone
}

// Expand replaces every case on a lab path by one case per topology it is measured on (see
// Topologies), with Case.Topology set, and renumbers the cases. Other cases pass unchanged.
func Expand(cases []plan.Case, o Options) []plan.Case {
	var out []plan.Case
	for _, c := range cases {
		if !Supports(c.Path) {
			out = append(out, c)
			continue
		}
		for _, t := range o.Topologies(c.Path) {
			v := c
			t := t
			v.Topology = &t
			out = append(out, v)
		}
	}
	for i := range out {
		out[i].Index = i
	}
	return out
}

// SpecFor returns the cluster a case on path p with topology t runs in. Cases whose spec is
// equal share a cluster: by default host-host, same-node pods, and the routed cross-node,
// pod-host and host-pod paths all run in one "routed" cluster.
func (o Options) SpecFor(p api.Path, t *api.Topology) (Spec, error) {
	if t == nil {
		return Spec{}, fmt.Errorf("case on lab path %s has no topology (lab.Expand was not applied)", p)
	}
	s := Spec{Underlay: o.Underlay, MTUBytes: o.MTUBytes, Overlay: o.Overlays[0], PodMTUOverride: o.PodMTUBytes,
		DropFragNeeded: o.DropFragNeeded}
	flavour, overlay, _ := strings.Cut(t.Flavour, "+")
	if overlay != "" {
		s.Overlay = overlay
	}
	row, _ := p.Row()
	shape := shapeOf(p)
	switch shape {
	case shapeHosts:
	case shapeSameNode:
		if flavour != FlavourBridge {
			return Spec{}, fmt.Errorf("path %s: unknown flavour %q", p, t.Flavour)
		}
	case shapeCrossNode, shapePodAndHost:
		if flavour != OverlayRouted && flavour != OverlayVXLAN {
			return Spec{}, fmt.Errorf("path %s: unknown flavour %q", p, t.Flavour)
		}
		s.Overlay = flavour
		// Pod to a node's address leaves the pod network: SNAT'ed to the node, as CNIs do.
		s.Masquerade = row.ClientNetwork == api.NetworkPod && row.ServerNetwork == api.NetworkHost
	case shapeClusterIP:
		if flavour != ProxyNftables && flavour != ProxyIptables {
			return Spec{}, fmt.Errorf("path %s: unknown flavour %q", p, t.Flavour)
		}
		s.Proxy, s.Backends, s.Affinity = flavour, t.Backends, o.ServiceAffinity
		if s.Backends < 1 {
			s.Backends = 1
		}
	default:
		return Spec{}, fmt.Errorf("path %q is not built by the lab", p)
	}
	if t.PolicyRules > 0 {
		if shape != shapeSameNode && shape != shapeCrossNode {
			return Spec{}, fmt.Errorf("path %s: policy rules apply to the pod-pod paths only", p)
		}
		switch t.PolicyStyle {
		case PolicyChains, PolicySets, PolicyChainsCT, PolicySetsCT:
		default:
			return Spec{}, fmt.Errorf("path %s: unknown policy style %q", p, t.PolicyStyle)
		}
		s.PolicyRules, s.PolicyStyle = t.PolicyRules, t.PolicyStyle
	}
	return s, nil
}
