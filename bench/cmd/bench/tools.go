package main

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/driver/sockperf"
)

// figure is what one run of one tool measured.
type figure struct {
	value  float64 // in the scenario's unit
	detail string  // e.g. "p50 18.2µs", "loss 3.1%"
}

// serverSpec is a server some tools need; started once per path and shared.
type serverSpec struct {
	key   string
	argv  func(p path) []string
	ready string // substring of its output that means ready; "" = running for 700ms
}

// tool is one side of a comparison.
type tool struct {
	name   string
	binary string // must be in PATH (or built) for the tool to run
	server *serverSpec
	client func(p path) []string
	parse  func(stdout string) (figure, error)
	// busy is how long the tool generates traffic in one run (its measured time plus its own
	// warm-up): the denominator of its CPU figures when a run is too short for a steady-state
	// sample (wall-clock time would count start-up pauses, sockperf sleeps before it starts).
	busy float64
}

type settings struct {
	agent, crr string // built binaries
	dur, warm  int    // whole seconds
}

func secs(n int) string { return strconv.Itoa(n) }

// ---- cnperf ----

func cnperfServer(s settings) *serverSpec {
	return &serverSpec{key: "cnperf", ready: "cnperf agent listening",
		argv: func(p path) []string { return inNS(p.serverNS, "", s.agent, "agent", "serve", "--port", "17100") }}
}

func cnperfTool(s settings, unit string, args ...string) tool {
	return cnperfNamed(s, "cnperf", unit, args...)
}

func cnperfNamed(s settings, name, unit string, args ...string) tool {
	return tool{name: name, binary: s.agent, server: cnperfServer(s), busy: float64(s.dur + s.warm),
		client: func(p path) []string {
			a := []string{s.agent, "agent", "client", "--json", "--host", p.host, "--port", "17100",
				"--duration", secs(s.dur) + "s", "--warmup", secs(s.warm) + "s"}
			return inNS(p.clientNS, "", append(a, args...)...)
		},
		parse: func(out string) (figure, error) { return parseCnperf(out, unit) },
	}
}

type cnperfSample struct {
	Error                   string   `json:"error"`
	ThroughputBitsPerSecond *float64 `json:"throughputBitsPerSecond"`
	PacketsPerSecond        *float64 `json:"packetsPerSecond"`
	TransactionsPerSecond   *float64 `json:"transactionsPerSecond"`
	LossPercent             *float64 `json:"lossPercent"`
	Latency                 *struct {
		P50 *float64 `json:"p50"`
	} `json:"latencyMicroseconds"`
}

func parseCnperf(out, unit string) (figure, error) {
	var s cnperfSample
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		return figure{}, fmt.Errorf("cnperf output: %w", err)
	}
	if s.Error != "" {
		return figure{}, fmt.Errorf("cnperf: %s", s.Error)
	}
	var f figure
	switch unit {
	case unitGbps:
		if s.ThroughputBitsPerSecond == nil {
			return f, fmt.Errorf("cnperf: no throughput")
		}
		f.value = *s.ThroughputBitsPerSecond / 1e9
	case unitMpps:
		if s.PacketsPerSecond == nil {
			return f, fmt.Errorf("cnperf: no packet rate")
		}
		f.value = *s.PacketsPerSecond / 1e6
		if s.LossPercent != nil {
			f.detail = fmt.Sprintf("loss %.1f%%", *s.LossPercent)
		}
	default:
		if s.TransactionsPerSecond == nil {
			return f, fmt.Errorf("cnperf: no transaction rate")
		}
		f.value = *s.TransactionsPerSecond
		if s.Latency != nil && s.Latency.P50 != nil {
			f.detail = fmt.Sprintf("p50 %.1fµs", *s.Latency.P50)
		}
	}
	return f, nil
}

// ---- iperf3 ----

var iperf3Server = &serverSpec{key: "iperf3", ready: "Server listening",
	argv: func(p path) []string { return inNS(p.serverNS, "", "iperf3", "-s", "-p", "15201", "--forceflush") }}

func iperf3Tool(s settings, unit string, args ...string) tool {
	return tool{name: "iperf3 " + strings.Join(args, " "), binary: "iperf3", server: iperf3Server, busy: float64(s.dur + s.warm),
		client: func(p path) []string {
			a := []string{"iperf3", "-c", p.host, "-p", "15201", "-J", "-t", secs(s.dur), "-O", secs(s.warm)}
			return inNS(p.clientNS, "", append(a, args...)...)
		},
		parse: func(out string) (figure, error) { return parseIperf3(out, unit) },
	}
}

// iperf3PinnedTool runs the client on CPU cc and its own server on CPU sc (taskset, every
// thread), the way `cnperf --cpu cc,sc` pins both processes.
func iperf3PinnedTool(s settings, unit, cc, sc string, args ...string) tool {
	srv := &serverSpec{key: "iperf3-pinned-" + sc, ready: "Server listening",
		argv: func(p path) []string { return inNS(p.serverNS, sc, "iperf3", "-s", "-p", "15202", "--forceflush") }}
	name := fmt.Sprintf("iperf3 %s(taskset -c %s client, %s server)", strings.Join(append(args, ""), " "), cc, sc)
	return tool{name: name, binary: "iperf3", server: srv, busy: float64(s.dur + s.warm),
		client: func(p path) []string {
			a := []string{"iperf3", "-c", p.host, "-p", "15202", "-J", "-t", secs(s.dur), "-O", secs(s.warm)}
			return inNS(p.clientNS, cc, append(a, args...)...)
		},
		parse: func(out string) (figure, error) { return parseIperf3(out, unit) },
	}
}

func parseIperf3(out, unit string) (figure, error) {
	var d struct {
		Error string `json:"error"`
		End   struct {
			SumReceived *struct {
				Seconds       float64  `json:"seconds"`
				BitsPerSecond float64  `json:"bits_per_second"`
				Packets       *int64   `json:"packets"`
				LostPackets   *int64   `json:"lost_packets"`
				LostPercent   *float64 `json:"lost_percent"`
			} `json:"sum_received"`
		} `json:"end"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		return figure{}, fmt.Errorf("iperf3 output: %w", err)
	}
	if d.Error != "" {
		return figure{}, fmt.Errorf("iperf3: %s", d.Error)
	}
	r := d.End.SumReceived
	if r == nil {
		return figure{}, fmt.Errorf("iperf3: no end.sum_received")
	}
	if unit == unitMpps {
		if r.Packets == nil || r.LostPackets == nil || r.Seconds <= 0 {
			return figure{}, fmt.Errorf("iperf3: no UDP packet counts")
		}
		f := figure{value: float64(*r.Packets-*r.LostPackets) / r.Seconds / 1e6}
		if r.LostPercent != nil {
			f.detail = fmt.Sprintf("loss %.1f%%", *r.LostPercent)
		}
		return f, nil
	}
	return figure{value: r.BitsPerSecond / 1e9}, nil
}

// ---- sockperf ----

func sockperfServer(proto, port, cpus string) *serverSpec {
	return &serverSpec{key: "sockperf-" + proto + port + cpus,
		argv: func(p path) []string {
			a := []string{"sockperf", "server", "-i", "0.0.0.0", "-p", port}
			if proto == "tcp" {
				a = append(a, "--tcp")
			}
			return inNS(p.serverNS, cpus, a...)
		}}
}

func sockperfTool(s settings, proto, cpus string) tool {
	port := map[string]string{"tcp": "11111", "udp": "11112"}[proto]
	if cpus != "" {
		port = map[string]string{"tcp": "11113", "udp": "11114"}[proto]
	}
	name := "sockperf pp " + proto
	if cpus != "" {
		name += " (taskset -c " + cpus + " both)"
	}
	return tool{name: name, binary: "sockperf", server: sockperfServer(proto, port, cpus), busy: float64(s.dur), // -t includes its 400ms warm-up
		client: func(p path) []string {
			a := []string{"sockperf", "ping-pong", "-i", p.host, "-p", port, "-m", "14", "-t", secs(s.dur), "--full-rtt"}
			if proto == "tcp" {
				a = append(a, "--tcp")
			}
			return inNS(p.clientNS, cpus, a...)
		},
		parse: parseSockperf,
	}
}

// parseSockperf uses the sockperf driver's parser: the rate is the messages of sockperf's own
// measured window ([Valid Duration], after its warm-up and cool-down trim) over that window —
// the [Total Run] line counts the warm-up's messages too.
func parseSockperf(out string) (figure, error) {
	r, err := sockperf.ParseOutput([]byte(out), nil)
	if err != nil {
		return figure{}, err // names sockperf and what is missing, with the output's tail
	}
	if r.ValidSeconds <= 0 || r.Received <= 0 {
		return figure{}, fmt.Errorf("sockperf: no measured window ([Valid Duration] RunTime %v, ReceivedMessages %v): %s", r.ValidSeconds, r.Received, tail(out))
	}
	f := figure{value: float64(r.Received) / r.ValidSeconds}
	if p, ok := r.Percentiles["50.000"]; ok {
		f.detail = fmt.Sprintf("p50 %.3fµs", p)
	}
	return f, nil
}

// ---- qperf ----

var qperfServer = &serverSpec{key: "qperf",
	argv: func(p path) []string { return inNS(p.serverNS, "", "qperf", "--listen_port", "19765") }}

func qperfTool(s settings, test string) tool {
	return tool{name: "qperf " + test + " (msg_rate/2)", binary: "qperf", server: qperfServer, busy: float64(s.dur),
		client: func(p path) []string {
			return inNS(p.clientNS, "", "qperf", "-lp", "19765", "-t", secs(s.dur), "-v", p.host, test)
		},
		parse: parseQperf,
	}
}

var (
	reQRate = regexp.MustCompile(`msg_rate\s*=\s*([\d.]+)\s*([KMG]?)/sec`)
	reQLat  = regexp.MustCompile(`latency\s*=\s*([\d.]+)\s*(ns|us|ms|sec)`)
)

// parseQperf turns tcp_lat/udp_lat output into round trips per second: qperf's msg_rate counts
// messages in both directions (it is 1/latency with latency the one-way time), so a round trip
// is two messages.
func parseQperf(out string) (figure, error) {
	m := reQRate.FindStringSubmatch(out)
	if m == nil {
		return figure{}, fmt.Errorf("qperf: no msg_rate: %s", tail(out))
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	v *= map[string]float64{"": 1, "K": 1e3, "M": 1e6, "G": 1e9}[m[2]]
	f := figure{value: v / 2}
	if l := reQLat.FindStringSubmatch(out); l != nil {
		x, _ := strconv.ParseFloat(l[1], 64)
		x *= map[string]float64{"ns": 1e-3, "us": 1, "ms": 1e3, "sec": 1e6}[l[2]]
		f.detail = fmt.Sprintf("RTT %.1fµs (msg_rate %.0f/s)", 2*x, v)
	}
	return f, nil
}

// ---- iperf 2 bounceback ----

var iperf2Server = &serverSpec{key: "iperf2",
	argv: func(p path) []string { return inNS(p.serverNS, "", "iperf", "-s", "-p", "15001") }}

func iperf2Tool(s settings, flows int) tool {
	return tool{name: fmt.Sprintf("iperf2 --bounceback -P %d", flows), binary: "iperf", server: iperf2Server, busy: float64(s.dur),
		client: func(p path) []string {
			return inNS(p.clientNS, "", "iperf", "-c", p.host, "-p", "15001", "--bounceback", "--bounceback-period", "0",
				"-l", "100", "-t", secs(s.dur), "-P", strconv.Itoa(flows))
		},
		parse: parseIperf2,
	}
}

var reBB = regexp.MustCompile(`(?m)^\[\s*(\d+)\]\s+0\.0+-([\d.]+) sec .*?\s(\d+)=[\d.]+/[\d.]+/[\d.]+/[\d.]+ ms`)

// parseIperf2 sums the bounceback counts of every flow's whole-run line (the line per flow
// that starts at 0 and ends last) over the longest such interval.
func parseIperf2(out string) (figure, error) {
	type line struct {
		end   float64
		count float64
	}
	last := map[string]line{}
	for _, m := range reBB.FindAllStringSubmatch(out, -1) {
		end, _ := strconv.ParseFloat(m[2], 64)
		n, _ := strconv.ParseFloat(m[3], 64)
		if l, ok := last[m[1]]; !ok || end >= l.end {
			last[m[1]] = line{end, n}
		}
	}
	if len(last) == 0 {
		return figure{}, fmt.Errorf("iperf2: no bounceback lines: %s", tail(out))
	}
	var total, end float64
	for _, l := range last {
		total += l.count
		end = math.Max(end, l.end)
	}
	return figure{value: total / end, detail: fmt.Sprintf("%d flows", len(last))}, nil
}

// ---- C reference CRR loop ----

func crrServer(s settings, threads int) *serverSpec {
	port := strconv.Itoa(17200 + threads)
	return &serverSpec{key: "crr" + port, ready: "crr server listening",
		argv: func(p path) []string {
			return inNS(p.serverNS, "", s.crr, "server", port, "0.0.0.0", strconv.Itoa(threads))
		}}
}

func crrTool(s settings, flows int) tool {
	port := strconv.Itoa(17200 + flows)
	return tool{name: fmt.Sprintf("C loop bench/crr (%d flows)", flows), binary: s.crr, server: crrServer(s, flows), busy: float64(s.dur),
		client: func(p path) []string {
			return inNS(p.clientNS, "", s.crr, "client", p.host, port, secs(s.dur), strconv.Itoa(flows))
		},
		parse: func(out string) (figure, error) {
			m := regexp.MustCompile(`rate=([\d.]+) close=(\w+)`).FindStringSubmatch(out)
			if m == nil {
				return figure{}, fmt.Errorf("crr: no rate: %s", tail(out))
			}
			v, _ := strconv.ParseFloat(m[1], 64)
			return figure{value: v, detail: "close " + m[2]}, nil
		},
	}
}

func crrToolRST(s settings, flows int) tool {
	t := crrTool(s, flows)
	t.name += " rst"
	c := t.client
	t.client = func(p path) []string { return append(c(p), "rst") }
	return t
}

const (
	unitGbps = "Gbit/s"
	unitMpps = "Mpps"
	unitTPS  = "trans/s"
	unitCPS  = "conn/s"
)

// scenario is one comparison.
type scenario struct {
	name string
	unit string
	a    tool // cnperf
	b    tool // the peer
}

func scenarios(s settings) []scenario {
	return []scenario{
		{"TCP_STREAM 1 flow", unitGbps, cnperfTool(s, unitGbps, "--profile", "TCP_STREAM"), iperf3Tool(s, unitGbps)},
		{"TCP_STREAM 1 flow pinned cpu0/cpu1", unitGbps, cnperfTool(s, unitGbps, "--profile", "TCP_STREAM", "--cpu", "0,1"), iperf3PinnedTool(s, unitGbps, "0", "1")},
		{"TCP_STREAM 2 flows", unitGbps, cnperfTool(s, unitGbps, "--profile", "TCP_STREAM", "--parallel", "2"), iperf3Tool(s, unitGbps, "-P", "2")},
		{"TCP_STREAM zerocopy", unitGbps, cnperfTool(s, unitGbps, "--profile", "TCP_STREAM", "--zerocopy"), iperf3Tool(s, unitGbps)},
		{"TCP_SENDFILE", unitGbps, cnperfTool(s, unitGbps, "--profile", "TCP_SENDFILE"), iperf3Tool(s, unitGbps, "-Z")},
		{"TCP_MAERTS", unitGbps, cnperfTool(s, unitGbps, "--profile", "TCP_MAERTS"), iperf3Tool(s, unitGbps, "-R")},
		{"UDP_STREAM 64B", unitMpps, cnperfTool(s, unitMpps, "--profile", "UDP_STREAM", "--message-size", "64"), iperf3Tool(s, unitMpps, "-u", "-b", "0", "-l", "64")},
		{"UDP_STREAM 64B no GSO/GRO", unitMpps, cnperfTool(s, unitMpps, "--profile", "UDP_STREAM", "--message-size", "64", "--no-offload"), iperf3Tool(s, unitMpps, "-u", "-b", "0", "-l", "64")},
		{"UDP_STREAM 1400B", unitMpps, cnperfTool(s, unitMpps, "--profile", "UDP_STREAM", "--message-size", "1400"), iperf3Tool(s, unitMpps, "-u", "-b", "0", "-l", "1400")},
		{"TCP_RR 14B", unitTPS, cnperfTool(s, unitTPS, "--profile", "TCP_RR", "--message-size", "14"), sockperfTool(s, "tcp", "")},
		{"UDP_RR 14B", unitTPS, cnperfTool(s, unitTPS, "--profile", "UDP_RR", "--message-size", "14"), sockperfTool(s, "udp", "")},
		{"TCP_RR 14B pinned cpu0", unitTPS, cnperfTool(s, unitTPS, "--profile", "TCP_RR", "--message-size", "14", "--cpu", "0,0"), sockperfTool(s, "tcp", "0")},
		{"UDP_RR 14B pinned cpu0", unitTPS, cnperfTool(s, unitTPS, "--profile", "UDP_RR", "--message-size", "14", "--cpu", "0,0"), sockperfTool(s, "udp", "0")},
		{"TCP_RR 1B", unitTPS, cnperfTool(s, unitTPS, "--profile", "TCP_RR"), qperfTool(s, "tcp_lat")},
		{"UDP_RR 1B", unitTPS, cnperfTool(s, unitTPS, "--profile", "UDP_RR"), qperfTool(s, "udp_lat")},
		{"TCP_RR 100B x32 flows", unitTPS, cnperfTool(s, unitTPS, "--profile", "TCP_RR", "--message-size", "100", "--parallel", "32"), iperf2Tool(s, 32)},
		{"TCP_RR 1B burst 16", unitTPS, cnperfTool(s, unitTPS, "--profile", "TCP_RR", "--burst", "16"),
			cnperfNamed(s, "cnperf burst 0 (no peer keeps 16 in flight)", unitTPS, "--profile", "TCP_RR")},
		{"TCP_RR 1B histogram cost", unitTPS, cnperfTool(s, unitTPS, "--profile", "TCP_RR"),
			cnperfNamed(s, "cnperf --no-histogram", unitTPS, "--profile", "TCP_RR", "--no-histogram")},
		{"TCP_STREAM scaling 1→2 flows", unitGbps, cnperfTool(s, unitGbps, "--profile", "TCP_STREAM", "--parallel", "2"),
			cnperfNamed(s, "cnperf 1 flow", unitGbps, "--profile", "TCP_STREAM")},
		{"TCP_RR 1B scaling 1→2 flows", unitTPS, cnperfTool(s, unitTPS, "--profile", "TCP_RR", "--parallel", "2"),
			cnperfNamed(s, "cnperf 1 flow", unitTPS, "--profile", "TCP_RR")},
		{"TCP_CRR 1 flow", unitCPS, cnperfTool(s, unitCPS, "--profile", "TCP_CRR"), crrTool(s, 1)},
		{"TCP_CRR 8 flows", unitCPS, cnperfTool(s, unitCPS, "--profile", "TCP_CRR", "--parallel", "8"), crrTool(s, 8)},
		{"TCP_CRR 1 flow RST close", unitCPS, cnperfTool(s, unitCPS, "--profile", "TCP_CRR", "--crr-close", "rst"), crrToolRST(s, 1)},
	}
}

func runTimeout(s settings) time.Duration { return time.Duration(s.dur+s.warm+30) * time.Second }
