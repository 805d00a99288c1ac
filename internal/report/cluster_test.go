package report

import (
	"reflect"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

func TestClusterLines(t *testing.T) {
	// the figures clusterinfo computed from the kubelet summaries captured on the e2e cluster
	// (internal/clusterinfo/testdata/summary)
	agent := api.AgentFootprint{Node: "node1", Component: "other", Namespace: "kube-system", Pod: "nodeinfo-capture-agent-vp7lt",
		CPUMillicores: 25.570966428571427, MemoryWorkingSetBytes: 1892352, WindowSeconds: 28}
	proxy := agent
	proxy.Component, proxy.Pod = "kube-proxy", "kube-proxy-node2"
	proxy.Node = "node2"
	for _, tc := range []struct {
		name string
		c    *api.ClusterDetails
		want []string
	}{
		{"no details", nil, nil},
		{"no footprint asked", &api.ClusterDetails{CNI: "Calico"}, nil},
		{"two nodes", &api.ClusterDetails{IdleFootprint: &api.IdleFootprint{Source: "kubelet summary", WindowSeconds: 30.2,
			Agents: []api.AgentFootprint{agent, proxy}}},
			[]string{"idle footprint before the measurement (kubelet summary, 30 s): node1: kube-system/nodeinfo-capture-agent-vp7lt 25.6m CPU 1.8 MiB; node2: kube-proxy 25.6m CPU 1.8 MiB"}},
		{"denied", &api.ClusterDetails{IdleFootprint: &api.IdleFootprint{Source: "kubelet summary", Note: "missing permission get nodes/proxy (cluster-wide)"}},
			[]string{"idle footprint before the measurement (kubelet summary, 0 s): missing permission get nodes/proxy (cluster-wide)"}},
	} {
		if got := ClusterLines(tc.c); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}
