package figure

import (
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

func TestPathMTULine(t *testing.T) {
	ok := api.PathMTUProbe{InterfaceMTUBytes: 1450, LargestBytes: 1450}
	tests := []struct {
		name string
		m    api.PathMTU
		want string
	}{
		{"healthy", api.PathMTU{Path: api.PathPodPodCrossNode, Forward: ok, Reverse: ok},
			"path MTU pod-pod-cross-node: 1450 bytes client → server, 1450 server → client, as the interface MTUs (1450, 1450): no mismatch"},
		{"lab topology", api.PathMTU{Path: api.PathHostHost, Topology: &api.Topology{Flavour: "underlay-bridge", MTUBytes: 1400},
			Forward: ok, Reverse: ok},
			"path MTU host-host underlay-bridge mtu1400: 1450 bytes client → server, 1450 server → client, as the interface MTUs (1450, 1450): no mismatch"},
		{"finding", api.PathMTU{Path: api.PathPodPodCrossNode, Finding: "black hole", Consequence: "packets above 1400 bytes are dropped",
			Forward: ok, Reverse: ok}, "path MTU pod-pod-cross-node: BLACK HOLE: packets above 1400 bytes are dropped"},
		{"finding one way, the other not probed", api.PathMTU{Path: api.PathPodPodCrossNode, Finding: "black hole", Consequence: "dropped",
			Forward: ok, Reverse: api.PathMTUProbe{Error: "no echo reply"}},
			"path MTU pod-pod-cross-node: BLACK HOLE: dropped (server → client: no echo reply)"},
		{"not probed", api.PathMTU{Path: api.PathPodClusterIP, Forward: api.PathMTUProbe{Error: "not probed: several backends"},
			Reverse: api.PathMTUProbe{Error: "not probed: several backends"}},
			"path MTU pod-clusterip: client → server: not probed: several backends; server → client: not probed: several backends"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := PathMTULine(tt.m); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}
