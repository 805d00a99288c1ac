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
		CPUMillicores: 25.570966428571427, MemoryWorkingSetBytes: new(uint64(1892352)), WindowSeconds: 28}
	proxy := agent
	proxy.Component, proxy.Pod = "kube-proxy", "kube-proxy-node2"
	proxy.Node = "node2"
	noMemory := proxy
	noMemory.MemoryWorkingSetBytes = nil
	// `cnperf agent node-hardware` on node1 of the e2e cluster
	// (internal/clusterinfo/testdata/hardware), from the host network and from a pod's
	hw := api.NodeHardware{Source: "agent", CPUModel: "AMD EPYC", CPUCount: 2, Kernel: "6.18.44-fc-v595", Uplink: "eth0",
		Driver: "veth", SpeedBitsPerSecond: 10_000_000_000, MTUBytes: 1500,
		Offloads: map[string]bool{"gro": false, "gso": true, "rx-checksum": true, "tso": true, "tx-checksum": true}}
	podOnly := api.NodeHardware{Source: "agent", CPUModel: "AMD EPYC", CPUCount: 2, Kernel: "6.18.44-fc-v595",
		Note: "uplink not read: no endpoint on the node's host network (a host path, e.g. host-host, has one)"}
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
		{"no memory reading: said, not a zero", &api.ClusterDetails{IdleFootprint: &api.IdleFootprint{Source: "kubelet summary",
			WindowSeconds: 30.2, Agents: []api.AgentFootprint{noMemory}}},
			[]string{"idle footprint before the measurement (kubelet summary, 30 s): node2: kube-proxy 25.6m CPU memory not reported"}},
		{"hardware as the agent read it on the e2e cluster, footprint not asked", &api.ClusterDetails{Nodes: []api.NodeInfo{
			{Name: "node1", Hardware: &hw}, {Name: "node2", Hardware: &hw}, {Name: "node3", Hardware: &podOnly}, {Name: "node4"}}},
			[]string{"node hardware: node1, node2: AMD EPYC x2, kernel 6.18.44-fc-v595, uplink eth0 (veth, 10 Gbit/s, MTU 1500; gso rx-checksum tso tx-checksum on, gro off); node3: AMD EPYC x2, kernel 6.18.44-fc-v595"}},
		// TestNodeHardwareFromRealNodeExporter's readings of this machine (internal/sink/prometheus),
		// whose eth0 (virtio_net) has no speed (/sys/class/net/eth0/speed: -1)
		{"hardware from node-exporter says so", &api.ClusterDetails{Nodes: []api.NodeInfo{{Name: "vm", Hardware: &api.NodeHardware{
			Source: api.HardwareFromNodeExporter, CPUModel: "AMD EPYC", CPUCount: 2, Kernel: "6.18.44-fc-v595", Uplink: "eth0", MTUBytes: 1400,
			SpeedUnknown: api.SpeedNotReported, Note: "no NIC driver or offloads (not read from node-exporter)"}}}},
			[]string{"node hardware: vm: AMD EPYC x2, kernel 6.18.44-fc-v595, uplink eth0 (speed not reported, MTU 1400) (from node-exporter)"}},
		{"a speed not reported and one not read differ", &api.ClusterDetails{Nodes: []api.NodeInfo{
			{Name: "vm", Hardware: &api.NodeHardware{Source: api.HardwareFromAgent, CPUModel: "AMD EPYC", CPUCount: 2, Kernel: "6.18.44-fc-v595",
				Uplink: "eth0", Driver: "virtio_net", SpeedUnknown: api.SpeedNotReported, MTUBytes: 1400}},
			{Name: "vm2", Hardware: &api.NodeHardware{Source: api.HardwareFromAgent, CPUModel: "AMD EPYC", CPUCount: 2, Kernel: "6.18.44-fc-v595",
				Uplink: "eth0", Driver: "virtio_net", SpeedUnknown: api.SpeedNotRead, MTUBytes: 1400,
				Note: "uplink eth0: link speed: open /sys/class/net/eth0/speed: no such file or directory"}},
			{Name: "old", Hardware: &api.NodeHardware{Source: api.HardwareFromAgent, CPUModel: "AMD EPYC", CPUCount: 2, Kernel: "6.18.44-fc-v595",
				Uplink: "eth0", Driver: "virtio_net", MTUBytes: 1400}}}},
			[]string{"node hardware: vm: AMD EPYC x2, kernel 6.18.44-fc-v595, uplink eth0 (virtio_net, speed not reported, MTU 1400); " +
				"vm2: AMD EPYC x2, kernel 6.18.44-fc-v595, uplink eth0 (virtio_net, speed not read, MTU 1400); " +
				"old: AMD EPYC x2, kernel 6.18.44-fc-v595, uplink eth0 (virtio_net, MTU 1400)"}},
		{"denied", &api.ClusterDetails{IdleFootprint: &api.IdleFootprint{Source: "kubelet summary", Note: "missing permission get nodes/proxy (cluster-wide)"}},
			[]string{"idle footprint before the measurement (kubelet summary, 0 s): missing permission get nodes/proxy (cluster-wide)"}},
	} {
		if got := ClusterLines(tc.c); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}
