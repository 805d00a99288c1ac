package clusterinfo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes/fake"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

// TestNodeHardware reads what `cnperf agent node-hardware` printed on the e2e cluster's node1
// (in its network namespace, as from a host-network pod), on this machine without --address
// (as from a pod-network pod), and what an agent older than the command prints (its help).
func TestNodeHardware(t *testing.T) {
	answer := func(name string) ExecFunc {
		b, err := os.ReadFile(filepath.Join("testdata", "hardware", name))
		if err != nil {
			t.Fatal(err)
		}
		return func(_ context.Context, argv []string) (string, error) { return string(b), nil }
	}
	host := nodeHardware(context.Background(), answer("node1-host-network.json"), "10.123.0.11", true)
	want := &api.NodeHardware{Source: "agent", CPUModel: "AMD EPYC", CPUCount: 2, Kernel: "6.18.44-fc-v595", Uplink: "eth0",
		Driver: "veth", SpeedBitsPerSecond: 10_000_000_000, MTUBytes: 1500,
		Offloads: map[string]bool{"gro": false, "gso": true, "rx-checksum": true, "tso": true, "tx-checksum": true}}
	if !reflect.DeepEqual(host, want) {
		t.Errorf("host network:\n got %+v\nwant %+v", host, want)
	}
	pod := nodeHardware(context.Background(), answer("pod-network.json"), "10.123.0.11", false)
	if pod.CPUModel != "AMD EPYC" || pod.CPUCount != 2 || pod.Uplink != "" || !strings.Contains(pod.Note, "no endpoint on the node's host network") {
		t.Errorf("pod network: %+v", pod)
	}
	old := nodeHardware(context.Background(), answer("older-agent.txt"), "10.123.0.11", true)
	if old.CPUModel != "" || !strings.Contains(old.Note, "older than `cnperf agent node-hardware`") {
		t.Errorf("older agent: %+v", old)
	}
	var argv []string
	failed := nodeHardware(context.Background(), func(_ context.Context, a []string) (string, error) {
		argv = a
		return "", errors.New("exec: container not found")
	}, "10.123.0.11", true)
	if strings.Join(argv, " ") != "cnperf agent node-hardware --address 10.123.0.11" || !strings.Contains(failed.Note, "container not found") {
		t.Errorf("argv %q, note %q", argv, failed.Note)
	}
}

// hardwareReader answers NodeHardware from a table, as a Prometheus with node-exporters on
// some nodes does, and records what it was asked.
type hardwareReader struct {
	hw    map[string]*api.NodeHardware
	err   error
	asked map[string]string
}

func (r *hardwareReader) NodeHardware(_ context.Context, nodes map[string]string) (map[string]*api.NodeHardware, error) {
	r.asked = nodes
	return r.hw, r.err
}

// TestCollectHardwareFromPrometheus: with a HardwareReader (--prometheus), a node it knows is
// read from it and the agent is not asked; a node it does not know, or every node when it
// fails, is read by the agent, and the log says so.
func TestCollectHardwareFromPrometheus(t *testing.T) {
	n1, n2 := readNode(t, "flannel-host-gw-node1.json"), readNode(t, "flannel-host-gw-node2.json")
	agentJSON, err := os.ReadFile(filepath.Join("testdata", "hardware", "node1-host-network.json"))
	if err != nil {
		t.Fatal(err)
	}
	fromProm := &api.NodeHardware{Source: api.HardwareFromNodeExporter, CPUCount: 2, Kernel: "6.18.44-fc-v595", Uplink: "eth0",
		MTUBytes: 1500, Note: "no NIC driver or offloads (not read from node-exporter)"}
	for _, tc := range []struct {
		name       string
		reader     *hardwareReader
		want       map[string]string // node → source
		agentAsked []string
		log        string
	}{
		{"prometheus knows node1", &hardwareReader{hw: map[string]*api.NodeHardware{"node1": fromProm}},
			map[string]string{"node1": "node-exporter", "node2": "agent"}, []string{"node2"},
			"node node2 hardware: no node-exporter of it in Prometheus; the agent reads it instead"},
		{"prometheus fails", &hardwareReader{err: errors.New("prometheus: 403 forbidden")},
			map[string]string{"node1": "agent", "node2": "agent"}, []string{"node1", "node2"},
			"node hardware from Prometheus: prometheus: 403 forbidden; the agent reads it instead"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked []string
			agent := func(node string) ExecFunc {
				return func(context.Context, []string) (string, error) {
					asked = append(asked, node)
					return string(agentJSON), nil
				}
			}
			var log strings.Builder
			cd, err := Collect(context.Background(), Input{Client: fake.NewClientset(&n1, &n2), Nodes: []string{"node1", "node2"},
				NodeExec:        map[string]ExecFunc{"node1": agent("node1"), "node2": agent("node2")},
				NodeHostNetwork: map[string]bool{"node1": true, "node2": true}, Hardware: tc.reader, Log: &log})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, n := range cd.Nodes {
				got[n.Name] = n.Hardware.Source
			}
			if !reflect.DeepEqual(got, tc.want) || !reflect.DeepEqual(asked, tc.agentAsked) {
				t.Errorf("sources %v (want %v), agent asked on %v (want %v)", got, tc.want, asked, tc.agentAsked)
			}
			if ip := tc.reader.asked["node1"]; ip != cd.Nodes[0].InternalIP || ip == "" {
				t.Errorf("asked for node1 at %q, its InternalIP is %q", ip, cd.Nodes[0].InternalIP)
			}
			if !strings.Contains(log.String(), tc.log) {
				t.Errorf("log lacks %q:\n%s", tc.log, log.String())
			}
			if tc.want["node1"] == "node-exporter" && !strings.Contains(log.String(), "node node1 hardware from node-exporter: no NIC driver") {
				t.Errorf("the note of node-exporter's reading is not logged:\n%s", log.String())
			}
		})
	}
}
