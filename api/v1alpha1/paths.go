package v1alpha1

// The path table: what each path is, one row per path. Every consumer (the platforms'
// placement, the encoders, the k8s-netperf CSV, perfdash, tiger-bench's report, the
// --tolerance gate, the RBAC preflight) reads a path's row instead of naming paths; adding a
// path is one row here plus what is truly new about it (docs/contributing.md, "Add a path").

// Path names where traffic flows.
type Path string

// Known paths.
const (
	PathLoopback        Path = "loopback"
	PathPodPodSameNode  Path = "pod-pod-same-node"
	PathPodPodCrossNode Path = "pod-pod-cross-node"
	PathPodPodCrossZone Path = "pod-pod-cross-zone"
	PathHostHost        Path = "host-host"
	PathPodHost         Path = "pod-host"
	PathHostPod         Path = "host-pod"
	PathPodClusterIP    Path = "pod-clusterip"
	PathPodHairpin      Path = "pod-hairpin"
	PathPodNodePort     Path = "pod-nodeport"
	PathExternalService Path = "external-service"
)

// Network is the network an endpoint's traffic flows on: the pod network or the node's own
// (hostNetwork). A secondary network (a Multus NetworkAttachmentDefinition) is another value
// here, with its attachment in the row's Attachment.
type Network string

// Networks.
const (
	NetworkPod  Network = "pod"
	NetworkHost Network = "host"
	// NetworkAttachment is a secondary network both endpoints attach to (a Multus
	// NetworkAttachmentDefinition, named by the row's Attachment): what a case's
	// Params.Network makes of a pod-to-pod path.
	NetworkAttachment Network = "attachment"
)

// Nodes is where the client runs relative to the server.
type Nodes string

// Node relations.
const (
	NodesLocal     Nodes = "local"      // one host, process to process (the local platform)
	NodesSame      Nodes = "same-node"  // the server's node
	NodesCross     Nodes = "cross-node" // another node
	NodesCrossZone Nodes = "cross-zone" // a node in another zone
	// NodesSelf: the client runs in the server's own pod (hairpin: a pod reaching its own
	// Service, whose only backend is itself).
	NodesSelf Nodes = "self"
)

// Access is how the client reaches the server.
type Access string

// Accesses.
const (
	AccessDirect    Access = "direct"    // the server's pod or node IP
	AccessClusterIP Access = "clusterip" // a ClusterIP Service
	AccessNodePort  Access = "nodeport"  // a NodePort Service, on the server's node IP
	AccessExternal  Access = "external"  // what --external names (not cnperf's to create)
)

// PathRow is one path's properties.
type PathRow struct {
	Path Path
	// ClientNetwork and ServerNetwork are the endpoints' networks; "" on loopback (processes
	// of one host, no cluster network).
	ClientNetwork, ServerNetwork Network
	// Attachment names the secondary network both endpoints attach to (a Multus
	// NetworkAttachmentDefinition, NAMESPACE/NAME); "" for the cluster's own networks. It is
	// the case's Params.Network, set by Effective on the paths that take one (TakesAttachment).
	Attachment string
	Nodes      Nodes
	Access     Access
	// Tolerance is the class --tolerance compares a hostNetwork result with a pod-network one
	// in ("cross-node", "same-node", "cross-node+service"); "" when the path takes no part.
	Tolerance string
}

// pathTable is every path, in report order.
var pathTable = []PathRow{
	{Path: PathLoopback, Nodes: NodesLocal, Access: AccessDirect},
	{Path: PathHostHost, ClientNetwork: NetworkHost, ServerNetwork: NetworkHost, Nodes: NodesCross, Access: AccessDirect,
		Tolerance: "cross-node"},
	{Path: PathPodPodSameNode, ClientNetwork: NetworkPod, ServerNetwork: NetworkPod, Nodes: NodesSame, Access: AccessDirect,
		Tolerance: "same-node"},
	{Path: PathPodPodCrossNode, ClientNetwork: NetworkPod, ServerNetwork: NetworkPod, Nodes: NodesCross, Access: AccessDirect,
		Tolerance: "cross-node"},
	{Path: PathPodPodCrossZone, ClientNetwork: NetworkPod, ServerNetwork: NetworkPod, Nodes: NodesCrossZone, Access: AccessDirect},
	{Path: PathPodHost, ClientNetwork: NetworkPod, ServerNetwork: NetworkHost, Nodes: NodesCross, Access: AccessDirect},
	{Path: PathHostPod, ClientNetwork: NetworkHost, ServerNetwork: NetworkPod, Nodes: NodesCross, Access: AccessDirect},
	{Path: PathPodClusterIP, ClientNetwork: NetworkPod, ServerNetwork: NetworkPod, Nodes: NodesCross, Access: AccessClusterIP,
		Tolerance: "cross-node+service"},
	{Path: PathPodHairpin, ClientNetwork: NetworkPod, ServerNetwork: NetworkPod, Nodes: NodesSelf, Access: AccessClusterIP},
	{Path: PathPodNodePort, ClientNetwork: NetworkPod, ServerNetwork: NetworkPod, Nodes: NodesCross, Access: AccessNodePort},
	{Path: PathExternalService, ClientNetwork: NetworkPod, ServerNetwork: NetworkPod, Nodes: NodesCross, Access: AccessExternal},
}

// Paths lists every path in a stable order (the table's).
var Paths = pathsOf(pathTable)

func pathsOf(rows []PathRow) []Path {
	out := make([]Path, len(rows))
	for i, r := range rows {
		out[i] = r.Path
	}
	return out
}

// Row is p's row of the path table; ok is false for an unknown path.
func (p Path) Row() (row PathRow, ok bool) {
	for _, r := range pathTable {
		if r.Path == p {
			return r, true
		}
	}
	return PathRow{Path: p}, false
}

// PathWith is the path whose row has these endpoints' networks, node relation and access; ok
// is false when no row has them.
func PathWith(client, server Network, nodes Nodes, access Access) (p Path, ok bool) {
	for _, r := range pathTable {
		if r.ClientNetwork == client && r.ServerNetwork == server && r.Nodes == nodes && r.Access == access {
			return r.Path, true
		}
	}
	return "", false
}

// Valid reports whether p is a known path.
func (p Path) Valid() bool {
	_, ok := p.Row()
	return ok
}

// AddPath adds a row to the path table and returns what removes it again: for tests that
// follow a new path through the code (not safe while others read the table).
func AddPath(row PathRow) (remove func()) {
	saved, savedPaths := pathTable, Paths
	pathTable = append(append([]PathRow(nil), pathTable...), row)
	Paths = pathsOf(pathTable)
	return func() { pathTable, Paths = saved, savedPaths }
}

// HostNetwork says whether both endpoints are on their nodes' own network.
func (r PathRow) HostNetwork() bool {
	return r.ClientNetwork == NetworkHost && r.ServerNetwork == NetworkHost
}

// Service says whether the client goes through a Service cnperf creates (ClusterIP, NodePort).
func (r PathRow) Service() bool { return r.Access == AccessClusterIP || r.Access == AccessNodePort }

// SameHost says whether client and server share a node (or, on loopback, the host).
func (r PathRow) SameHost() bool {
	return r.Nodes == NodesSame || r.Nodes == NodesLocal || r.Nodes == NodesSelf
}

// TakesHostNetwork says whether k8s-netperf's `hostNetwork: true` applies to the path: both
// endpoints on one kind of network, reached directly or through a ClusterIP Service.
func (r PathRow) TakesHostNetwork() bool {
	return r.ClientNetwork != "" && r.ClientNetwork == r.ServerNetwork &&
		(r.Access == AccessDirect || r.Access == AccessClusterIP)
}

// TakesAttachment says whether a secondary network (Params.Network) applies to the path: pod to
// pod, reached directly (a Service or a node's address is on the default network).
func (r PathRow) TakesAttachment() bool {
	return r.ClientNetwork == NetworkPod && r.ServerNetwork == NetworkPod && r.Access == AccessDirect
}

// Effective is the row as a case's switches change it: `network: NAMESPACE/NAME` puts both
// endpoints of a pod-to-pod path on that secondary network (the --tolerance gate, which compares
// the default networks, then leaves it out); k8s-netperf's `hostNetwork: true` puts both
// endpoints on the host network, `service: true` puts a ClusterIP Service in front of a direct
// path.
func (r PathRow) Effective(p Params) PathRow {
	if p.Network != "" && r.TakesAttachment() {
		r.ClientNetwork, r.ServerNetwork, r.Attachment, r.Tolerance = NetworkAttachment, NetworkAttachment, p.Network, ""
		return r
	}
	if p.HostNetwork && r.TakesHostNetwork() {
		r.ClientNetwork, r.ServerNetwork = NetworkHost, NetworkHost
	}
	if p.Service && r.Access == AccessDirect {
		r.Access = AccessClusterIP
	}
	return r
}
