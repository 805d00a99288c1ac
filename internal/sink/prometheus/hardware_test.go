package prometheus

import (
	"context"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/nodehw"
)

// hostAddress is a global IPv4 address of this host and its interface: the "InternalIP" the
// tests hand NodeHardware.
func hostAddress(t *testing.T) (string, string) {
	t.Helper()
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range ifs {
		if i.Flags&net.FlagUp == 0 || i.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := i.Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && n.IP.IsGlobalUnicast() {
				return n.IP.String(), i.Name
			}
		}
	}
	t.Skip("this host has no global IPv4 address to stand for a node's InternalIP")
	return "", ""
}

// TestNodeHardwareFromRealNodeExporter reads this host's hardware from a real node-exporter
// through a real Prometheus (both on loopback) and checks it against what the agent reads
// (nodehw.Read) on the same host: kernel, CPU count and model, and the uplink with its speed
// and MTU; a node no exporter answers for is absent. Without the collectors that name the uplink
// or the CPU model, the note says which flag would give them; with network_route instead of
// address-info, the uplink is found from the route whose source is the address.
func TestNodeHardwareFromRealNodeExporter(t *testing.T) {
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	addr, dev := hostAddress(t)
	agent := nodehw.Read(addr)
	if agent.Uplink != dev {
		t.Fatalf("the agent's uplink %q is not %s, the interface of %s", agent.Uplink, dev, addr)
	}
	nodes := map[string]string{host: addr, "elsewhere": "203.0.113.9"}
	for _, tc := range []struct {
		name       string
		collectors []string
		model      bool   // node_cpu_info exported
		noteHas    string // a part of the note
	}{
		{"address-info", []string{"--collector.cpu", "--collector.cpu.info", "--collector.uname", "--collector.netclass",
			"--collector.netdev", "--collector.netdev.address-info"}, true, "no NIC driver or offloads"},
		{"route", []string{"--collector.cpu", "--collector.uname", "--collector.netclass", "--collector.network_route"}, false,
			"no CPU model (node_cpu_info needs node-exporter's --collector.cpu.info)"},
		// without netclass there is neither speed nor MTU: the speed is not read, which is not
		// what a kernel without a speed for the link says
		{"no netclass", []string{"--collector.cpu", "--collector.cpu.info", "--collector.uname",
			"--collector.netdev", "--collector.netdev.address-info"}, true,
			"no link speed of " + dev + " (node_network_speed_bytes: node-exporter's netclass collector is off)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			c := startNodeExporter(t, ctx, tc.collectors...)
			hw, err := c.NodeHardware(ctx, nodes)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := hw["elsewhere"]; ok || len(hw) != 1 {
				t.Fatalf("hardware of %d nodes, want only %s: %+v", len(hw), host, hw)
			}
			h := hw[host]
			if h == nil {
				t.Fatalf("no hardware for %s", host)
			}
			t.Logf("node-exporter: %s (note: %s)", h.Text(), h.Note)
			t.Logf("agent:         %s", agent.Text())
			netclass := slices.Contains(tc.collectors, "--collector.netclass")
			if h.Source != HardwareSource || h.Kernel != agent.Kernel || h.CPUCount != agent.CPUCount || h.Uplink != agent.Uplink ||
				netclass && (h.MTUBytes != agent.MTUBytes || h.SpeedBitsPerSecond != agent.SpeedBitsPerSecond || h.SpeedUnknown != agent.SpeedUnknown) {
				t.Errorf("node-exporter's %+v\ndiffers from the agent's %+v", *h, *agent)
			}
			if !netclass && (h.MTUBytes != 0 || h.SpeedBitsPerSecond != 0 || h.SpeedUnknown != api.SpeedNotRead) {
				t.Errorf("without netclass: MTU %d, speed %d, %q; want none, not read", h.MTUBytes, h.SpeedBitsPerSecond, h.SpeedUnknown)
			}
			if tc.model && h.CPUModel != agent.CPUModel || !tc.model && h.CPUModel != "" {
				t.Errorf("CPU model %q, the agent's %q (node_cpu_info exported: %v)", h.CPUModel, agent.CPUModel, tc.model)
			}
			if !strings.Contains(h.Note, tc.noteHas) {
				t.Errorf("note %q lacks %q", h.Note, tc.noteHas)
			}
		})
	}
	t.Run("no uplink collectors", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		c := startNodeExporter(t, ctx, "--collector.cpu", "--collector.uname", "--collector.netclass")
		hw, err := c.NodeHardware(ctx, nodes)
		if err != nil {
			t.Fatal(err)
		}
		h := hw[host]
		if h == nil || h.Uplink != "" || h.CPUCount != agent.CPUCount || h.Kernel != agent.Kernel ||
			!strings.Contains(h.Note, "uplink not identified: no interface holds "+addr) {
			t.Errorf("%+v", h)
		}
	})
}
