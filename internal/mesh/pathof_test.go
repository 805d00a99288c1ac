package mesh

import (
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

func TestPathOfReadsThePathTable(t *testing.T) {
	a := Node{Name: "a", Zone: "z1"}
	b := Node{Name: "b", Zone: "z1"}
	c := Node{Name: "c", Zone: "z2"}
	d := Node{Name: "d"}
	for _, tc := range []struct {
		net            api.Network
		client, server Node
		want           api.Path
	}{
		{api.NetworkPod, a, a, api.PathPodPodSameNode},
		{api.NetworkPod, a, b, api.PathPodPodCrossNode},
		{api.NetworkPod, a, c, api.PathPodPodCrossZone},
		{api.NetworkPod, a, d, api.PathPodPodCrossNode}, // a zone unknown: not cross-zone
		{api.NetworkHost, a, a, api.PathHostHost},       // the host network has one path
		{api.NetworkHost, a, b, api.PathHostHost},
		{api.NetworkHost, a, c, api.PathHostHost},
	} {
		if got := PathOf(tc.net, tc.client, tc.server); got != tc.want {
			t.Errorf("PathOf(%s, %s, %s) = %s, want %s", tc.net, tc.client.Name, tc.server.Name, got, tc.want)
		}
	}
}

func TestPathOfFollowsANewRow(t *testing.T) {
	const net, path = api.Network("fast"), api.Path("fast-fast")
	defer api.AddPath(api.PathRow{Path: path, ClientNetwork: net, ServerNetwork: net, Nodes: api.NodesCross,
		Access: api.AccessDirect})()
	if got := PathOf(net, Node{Name: "a"}, Node{Name: "b"}); got != path {
		t.Errorf("PathOf on a secondary network = %q, want %q", got, path)
	}
}
