package prometheus

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

// HardwareSource is the NodeHardware.Source of what NodeHardware reads.
const HardwareSource = api.HardwareFromNodeExporter

// NodeHardware reads the hardware of the given nodes (name → InternalIP) from their
// node-exporters, as they are now: the kernel (node_uname_info's release), the CPU count (the
// node's CPUs in node_cpu_seconds_total) and model (node_cpu_info, with node-exporter's
// --collector.cpu.info), and the uplink — the interface that holds the InternalIP, found in
// node_network_address_info (--collector.netdev.address-info) or else as the device of the
// route whose source is the InternalIP (node_network_route_info, --collector.network_route) —
// with its link speed (node_network_speed_bytes; SpeedNotReported when the kernel has none,
// SpeedNotRead when node-exporter exports nothing of the device) and MTU
// (node_network_mtu_bytes). A node's exporter is the one whose node_uname_info nodename is the
// node's name (or its first label), or whose instance is the InternalIP. Nodes no exporter
// answers for are absent from the map; what could not be read of a node is said in its Note.
// Only a Prometheus that cannot be reached, or answers node_uname_info with an error, is an
// error.
func (c *Collector) NodeHardware(ctx context.Context, nodes map[string]string) (map[string]*api.NodeHardware, error) {
	now := time.Now()
	uname, err := c.Query(ctx, `node_uname_info`, now)
	if err != nil {
		return nil, err
	}
	inst := map[string]string{} // node → instance
	hw := map[string]*api.NodeHardware{}
	for _, s := range uname {
		name, ok := nodeOf(s.Labels, nodes)
		if !ok || hw[name] != nil {
			continue
		}
		inst[name] = s.Labels["instance"]
		hw[name] = &api.NodeHardware{Source: HardwareSource, Kernel: s.Labels["release"]}
	}
	if len(hw) == 0 {
		return hw, nil
	}
	byInstance := func(query string) (map[string][]Sample, error) {
		res, err := c.Query(ctx, query, now)
		if err != nil {
			return nil, err
		}
		out := map[string][]Sample{}
		for _, s := range res {
			out[s.Labels["instance"]] = append(out[s.Labels["instance"]], s)
		}
		return out, nil
	}
	notes := map[string][]string{}
	note := func(name, format string, a ...any) { notes[name] = append(notes[name], fmt.Sprintf(format, a...)) }
	cpus, cpuErr := byInstance(`count by (instance) (node_cpu_seconds_total{mode="idle"})`)
	models, modelErr := byInstance(`count by (instance, model_name) (node_cpu_info)`)
	addrs, addrErr := byInstance(`node_network_address_info`)
	routes, routeErr := byInstance(`node_network_route_info`)
	speeds, speedErr := byInstance(`node_network_speed_bytes`)
	mtus, mtuErr := byInstance(`node_network_mtu_bytes`)
	for _, err := range []error{cpuErr, modelErr, addrErr, routeErr, speedErr, mtuErr} {
		if err != nil && isTransport(err) {
			return nil, err
		}
	}
	for name, h := range hw {
		in := inst[name]
		if h.Kernel == "" {
			note(name, "no kernel release in node_uname_info")
		}
		switch s := cpus[in]; {
		case cpuErr != nil:
			note(name, "CPU count: %v", cpuErr)
		case len(s) == 0:
			note(name, "no CPU count (no node_cpu_seconds_total: node-exporter's cpu collector is off)")
		default:
			h.CPUCount = int(s[0].Value)
		}
		switch s := models[in]; {
		case modelErr != nil:
			note(name, "CPU model: %v", modelErr)
		case len(s) == 1:
			h.CPUModel = s[0].Labels["model_name"]
		case len(s) == 0:
			note(name, "no CPU model (node_cpu_info needs node-exporter's --collector.cpu.info)")
		default:
			note(name, "no CPU model: node_cpu_info names %d", len(s))
		}
		dev := deviceOf(nodes[name], addrs[in], "address")
		if dev == "" {
			dev = deviceOf(nodes[name], routes[in], "src")
		}
		if dev == "" && (addrErr != nil || routeErr != nil) {
			note(name, "uplink not identified: %v", errors.Join(addrErr, routeErr))
		} else if dev == "" {
			note(name, "uplink not identified: no interface holds %s in node_network_address_info or node_network_route_info "+
				"(node-exporter's --collector.netdev.address-info or --collector.network_route exports them)", nodes[name])
		} else {
			h.Uplink = dev
			mtu := ofDevice(mtus[in], dev)
			switch s := ofDevice(speeds[in], dev); {
			case s != nil && s.Value > 0:
				h.SpeedBitsPerSecond = int64(s.Value * 8)
			case s != nil, mtu != nil:
				// the kernel has no speed for it: node-exporter exports its -1 as a negative
				// speed, or nothing (EINVAL, or -1 with --collector.netclass.ignore-invalid-speed)
				// while it exports the device's MTU
				h.SpeedUnknown = api.SpeedNotReported
			case speedErr != nil:
				h.SpeedUnknown = api.SpeedNotRead
				note(name, "link speed of %s: %v", dev, speedErr)
			default:
				h.SpeedUnknown = api.SpeedNotRead
				note(name, "no link speed of %s (node_network_speed_bytes: node-exporter's netclass collector is off)", dev)
			}
			if s := mtu; s != nil {
				h.MTUBytes = int(s.Value)
			} else if mtuErr != nil {
				note(name, "MTU of %s: %v", dev, mtuErr)
			} else {
				note(name, "no MTU of %s (node_network_mtu_bytes: node-exporter's netclass collector is off)", dev)
			}
		}
		note(name, "no NIC driver or offloads (not read from node-exporter)")
		h.Note = strings.Join(notes[name], "; ")
	}
	return hw, nil
}

// nodeOf is the node (of nodes, name → InternalIP) a node-exporter's labels belong to: the one
// whose name, or its first label, is the nodename, or whose InternalIP is the instance's host.
func nodeOf(l map[string]string, nodes map[string]string) (string, bool) {
	host := l["instance"]
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	names := make([]string, 0, len(nodes))
	for n := range nodes {
		names = append(names, n)
	}
	sort.Strings(names)
	short := func(s string) string { s, _, _ = strings.Cut(s, "."); return s }
	for _, n := range names {
		if nn := l["nodename"]; nn != "" && (nn == n || short(nn) == short(n)) {
			return n, true
		}
	}
	for _, n := range names {
		if ip := nodes[n]; ip != "" && ip == host {
			return n, true
		}
	}
	return "", false
}

// deviceOf is the device of the first sample whose label key is the address ip.
func deviceOf(ip string, samples []Sample, key string) string {
	if ip == "" {
		return ""
	}
	for _, s := range samples {
		if s.Labels[key] == ip {
			return s.Labels["device"]
		}
	}
	return ""
}

func ofDevice(samples []Sample, dev string) *Sample {
	for i := range samples {
		if samples[i].Labels["device"] == dev {
			return &samples[i]
		}
	}
	return nil
}
