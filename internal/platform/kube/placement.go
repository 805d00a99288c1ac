package kube

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/plan"
)

// nodeRole names the node an endpoint goes to.
type nodeRole string

const (
	roleServerNode nodeRole = "server-node" // S: every server, and same-node clients
	roleClientNode nodeRole = "client-node" // C: cross-node clients
	roleZoneNode   nodeRole = "zone-node"   // Z: cross-zone clients (C when C is already in another zone)
	roleLocal      nodeRole = "local"       // this machine (external-service with --external-client local)
	roleSelf       nodeRole = "server-pod"  // the server's own pod (hairpin): no client pod
)

// route is where a case's endpoints go and how the client reaches the server: the path's
// row (api.PathRow) with the case's k8s-netperf switches applied, its node relation made a
// node role.
type route struct {
	serverNet  api.Network
	clientNet  api.Network
	clientNode nodeRole
	access     api.Access
	attachment string // the secondary network (NAMESPACE/NAME) when the networks are api.NetworkAttachment
}

// clientNodes is the node role of a client, by the path's node relation.
var clientNodes = map[api.Nodes]nodeRole{
	api.NodesSame:      roleServerNode,
	api.NodesCross:     roleClientNode,
	api.NodesCrossZone: roleZoneNode,
	api.NodesSelf:      roleSelf,
}

// routeFor maps a case to its route. The servers always run on the server node.
func routeFor(c plan.Case, externalClient string) (route, error) {
	row, ok := c.Path.Row()
	if !ok {
		return route{}, fmt.Errorf("path %q is not known to the Kubernetes platform", c.Path)
	}
	if row.Nodes == api.NodesLocal {
		return route{}, fmt.Errorf("path %q runs on the local platform (--platform local); on Kubernetes use pod-pod-same-node", c.Path)
	}
	// k8s-netperf's hostNetwork and service switches, when a plan sets them on a pod path.
	if c.Params.HostNetwork && !row.TakesHostNetwork() {
		return route{}, fmt.Errorf("hostNetwork: true does not apply to path %q (use %s)", c.Path, hostNetworkPaths())
	}
	if c.Params.Network != "" {
		if c.Params.HostNetwork {
			return route{}, fmt.Errorf("network %s and hostNetwork: true exclude each other (a hostNetwork pod has no secondary network)", c.Params.Network)
		}
		if c.Params.Service {
			return route{}, fmt.Errorf("network %s and service: true exclude each other (a Service's address is on the default network)", c.Params.Network)
		}
		if !row.TakesAttachment() {
			return route{}, fmt.Errorf("network %s: path %q has no secondary network (use %s)",
				c.Params.Network, c.Path, plan.Join(attachmentPaths()))
		}
	}
	row = row.Effective(c.Params)
	r := route{serverNet: row.ServerNetwork, clientNet: row.ClientNetwork, clientNode: clientNodes[row.Nodes], access: row.Access,
		attachment: row.Attachment}
	if row.Access == api.AccessExternal && externalClient == "local" {
		r.clientNode = roleLocal
	}
	return r, nil
}

// hostNetworkPaths lists, from the path table, the paths with an endpoint on a node's own
// network ("host-host, pod-host or host-pod"): what to use where hostNetwork: true does not apply.
func hostNetworkPaths() string {
	var out []api.Path
	for _, p := range api.Paths {
		if row, _ := p.Row(); row.ClientNetwork == api.NetworkHost || row.ServerNetwork == api.NetworkHost {
			out = append(out, p)
		}
	}
	if len(out) < 2 {
		return plan.Join(out)
	}
	return plan.Join(out[:len(out)-1]) + " or " + string(out[len(out)-1])
}

// attachmentPaths lists, from the path table, the paths a secondary network applies to.
func attachmentPaths() []api.Path {
	var out []api.Path
	for _, p := range api.Paths {
		if row, _ := p.Row(); row.TakesAttachment() {
			out = append(out, p)
		}
	}
	return out
}

// needs is what a plan asks of the cluster's nodes.
type needs struct {
	clientNode bool // a second node
	zoneNode   bool // a node in another zone
	paths      []api.Path
}

func needsOf(routes []route, cases []plan.Case) needs {
	var n needs
	seen := map[api.Path]bool{}
	for i, r := range routes {
		switch r.clientNode {
		case roleClientNode:
			n.clientNode = true
		case roleZoneNode:
			n.zoneNode = true
		}
		if p := cases[i].Path; !seen[p] {
			seen[p] = true
			n.paths = append(n.paths, p)
		}
	}
	return n
}

// nodePlacement is the nodes chosen for a plan.
type nodePlacement struct {
	Server string // S
	Client string // C ("" when no case needs it)
	Zone   string // Z ("" when no case needs it)
	// zones by node name, for every node considered
	zones map[string]string
}

// node returns the node of a role.
func (np *nodePlacement) node(r nodeRole) string {
	switch r {
	case roleServerNode:
		return np.Server
	case roleClientNode:
		return np.Client
	case roleZoneNode:
		return np.Zone
	}
	return ""
}

// eligible says whether endpoints may run on n, and why not.
func eligible(n *corev1.Node, selector map[string]string, tols []corev1.Toleration) (bool, string) {
	block, taint := kube.Schedulable(n, tols)
	if why := block.Why(n, "endpoints"); why != "" {
		return false, why
	}
	for _, k := range sortedKeys(selector) {
		if n.Labels[k] != selector[k] {
			return false, fmt.Sprintf("does not match --node-selector %s=%s", k, selector[k])
		}
	}
	if block == kube.NodeTainted {
		return false, fmt.Sprintf("tainted %s (add --tolerations %s)", kube.TaintString(taint), tolerationHint(taint))
	}
	return true, ""
}

func tolerationHint(t *corev1.Taint) string { return kube.TaintString(t) }

// candidates are the cluster's nodes sorted by name: those that can run endpoints (ok) and
// why the others cannot.
type candidates struct {
	sorted   []*corev1.Node
	byName   map[string]*corev1.Node
	ok       []*corev1.Node
	rejected []string
	s        *settings
}

func newCandidates(nodes []corev1.Node, s *settings, np *nodePlacement) *candidates {
	c := &candidates{byName: map[string]*corev1.Node{}, s: s}
	for i := range nodes {
		c.sorted = append(c.sorted, &nodes[i])
	}
	sort.Slice(c.sorted, func(i, j int) bool { return c.sorted[i].Name < c.sorted[j].Name })
	for _, n := range c.sorted {
		c.byName[n.Name] = n
		np.zones[n.Name] = kube.Zone(n)
		if good, why := eligible(n, s.nodeSelector, s.tolerations); good {
			c.ok = append(c.ok, n)
		} else {
			c.rejected = append(c.rejected, n.Name+": "+why)
		}
	}
	return c
}

// describeRejected says which nodes cannot run endpoints and why ("" when every node can).
func (c *candidates) describeRejected() string {
	if len(c.rejected) == 0 {
		return ""
	}
	return "; not usable: " + strings.Join(c.rejected, "; ")
}

// pinned is the node a flag names, which must exist and be able to run endpoints.
func (c *candidates) pinned(flag, name string) (*corev1.Node, error) {
	n, found := c.byName[name]
	if !found {
		return nil, fmt.Errorf("%s: no node named %q (nodes: %s)", flag, name, nodeNames(c.sorted))
	}
	if good, why := eligible(n, c.s.nodeSelector, c.s.tolerations); !good {
		return nil, fmt.Errorf("%s: node %q cannot run endpoints: %s", flag, name, why)
	}
	return n, nil
}

// choosePlacement picks the server node and the client nodes the plan needs. It contacts
// nothing: nodes is the cluster's node list.
func choosePlacement(nodes []corev1.Node, s *settings, nd needs) (*nodePlacement, error) {
	np := &nodePlacement{zones: map[string]string{}}
	c := newCandidates(nodes, s, np)
	if len(c.ok) == 0 {
		return nil, fmt.Errorf("no node can run endpoints (need Ready, schedulable, Linux, untainted or tolerated)%s", c.describeRejected())
	}
	// Server node: --server-node, else netperf=server, else a worker, else any.
	var server *corev1.Node
	if s.ServerNode != "" {
		n, err := c.pinned("--server-node", s.ServerNode)
		if err != nil {
			return nil, err
		}
		server = n
	} else {
		server = preferred(c.ok, "server", nil, nd, np)
	}
	np.Server = server.Name
	if nd.clientNode {
		client, err := c.clientNode(server, nd, np)
		if err != nil {
			return nil, err
		}
		np.Client = client.Name
	}
	if nd.zoneNode {
		zone, err := c.zoneNode(server, nd, np)
		if err != nil {
			return nil, err
		}
		np.Zone = zone
	}
	return np, nil
}

// clientNode picks the cross-node clients' node: --client-node, else another node, in the
// server's zone if one is, so that cross-node is not also cross-zone.
func (c *candidates) clientNode(server *corev1.Node, nd needs, np *nodePlacement) (*corev1.Node, error) {
	if c.s.ClientNode != "" {
		n, err := c.pinned("--client-node", c.s.ClientNode)
		if err != nil {
			return nil, err
		}
		if n.Name == server.Name {
			return nil, fmt.Errorf("--client-node %q is also the server node: paths %s need the client on another node", n.Name, crossPaths(nd))
		}
		return n, nil
	}
	others := without(c.ok, server.Name)
	if len(others) == 0 {
		return nil, fmt.Errorf("paths %s need two nodes, but only %s can run endpoints%s", crossPaths(nd), server.Name, c.describeRejected())
	}
	sz := np.zones[server.Name]
	return preferred(others, "client", func(n *corev1.Node) bool { return np.zones[n.Name] == sz }, nd, np), nil
}

// zoneNode picks the cross-zone clients' node: the client node when it is in another zone
// than the server, else a node of another zone.
func (c *candidates) zoneNode(server *corev1.Node, nd needs, np *nodePlacement) (string, error) {
	sz := np.zones[server.Name]
	if sz == "" {
		return "", fmt.Errorf("path pod-pod-cross-zone: server node %s has no %s label", server.Name, kube.LabelZone)
	}
	if np.Client != "" && np.zones[np.Client] != "" && np.zones[np.Client] != sz {
		return np.Client, nil
	}
	var cands []*corev1.Node
	for _, n := range without(c.ok, server.Name) {
		if z := np.zones[n.Name]; z != "" && z != sz {
			cands = append(cands, n)
		}
	}
	if len(cands) == 0 {
		return "", fmt.Errorf("path pod-pod-cross-zone needs nodes in two zones (%s), but every usable node is in zone %q (%s)%s",
			kube.LabelZone, sz, nodeNames(c.ok), c.describeRejected())
	}
	return preferred(cands, "client", nil, nd, np).Name, nil
}

// preferred returns the first node labelled netperf=<hint>, else the first node for which
// better is true, else the first worker (not control-plane), else the first node. For the
// server, when the plan needs a client node it prefers a server that leaves one.
func preferred(nodes []*corev1.Node, hint string, better func(*corev1.Node) bool, nd needs, np *nodePlacement) *corev1.Node {
	for _, n := range nodes {
		if n.Labels[kube.LabelNetperfRole] == hint {
			return n
		}
	}
	if better != nil {
		for _, n := range nodes {
			if better(n) {
				return n
			}
		}
	}
	for _, n := range nodes {
		_, cp := n.Labels[kube.LabelControlPlane]
		_, m := n.Labels[kube.LabelMaster]
		if hint == "server" && n.Labels[kube.LabelNetperfRole] == "client" {
			continue
		}
		if !cp && !m {
			// A server must leave a client node in its zone and another zone when asked.
			if hint == "server" && nd.zoneNode && !otherZoneExists(nodes, n, np) {
				continue
			}
			return n
		}
	}
	return nodes[0]
}

func otherZoneExists(nodes []*corev1.Node, n *corev1.Node, np *nodePlacement) bool {
	z := np.zones[n.Name]
	for _, o := range nodes {
		if oz := np.zones[o.Name]; oz != "" && oz != z {
			return true
		}
	}
	return false
}

func without(nodes []*corev1.Node, name string) []*corev1.Node {
	var out []*corev1.Node
	for _, n := range nodes {
		if n.Name != name {
			out = append(out, n)
		}
	}
	return out
}

func nodeNames(nodes []*corev1.Node) string {
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = n.Name
	}
	return strings.Join(names, ", ")
}

func crossPaths(nd needs) string {
	var out []string
	for _, p := range nd.paths {
		if row, _ := p.Row(); !row.SameHost() {
			out = append(out, string(p))
		}
	}
	return strings.Join(out, ", ")
}
