package clusterinfo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

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
