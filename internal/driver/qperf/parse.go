package qperf

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver/toolkit"
)

// Result is one parsed qperf test.
type Result struct {
	// Test is the qperf test name ("tcp_lat", ...).
	Test   string
	Sample api.Sample
	// Values are every "name = value unit" line in base units: seconds, bytes, bytes/s,
	// per second, percent.
	Values map[string]float64
	// Coarse is true when qperf printed its default, 3-significant-digit human units.
	Coarse bool
}

// Profile is the cnperf profile of the test.
func (r Result) Profile() api.Profile {
	switch r.Test {
	case "tcp_bw":
		return api.TCPStream
	case "udp_bw":
		return api.UDPStream
	case "tcp_lat":
		return api.TCPRR
	case "udp_lat":
		return api.UDPRR
	}
	return ""
}

var (
	headerRE = regexp.MustCompile(`^([a-z0-9_]+):\s*$`)
	lineRE   = regexp.MustCompile(`^\s+([a-z0-9_]+)\s+=\s+(-?[0-9][0-9,]*(?:\.[0-9]+)?)\s*([^()]*?)\s*(?:\(([0-9,]+)\))?\s*$`)
)

// unit multipliers to base units (qperf.c: view_time, view_band, view_rate, view_size,
// view_long, view_cost, view_cpus, nice_1024).
var units = map[string]float64{
	"": 1, "thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12,
	"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "sec": 1,
	"bytes": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
	"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40,
	"bytes/sec": 1, "KB/sec": 1e3, "MB/sec": 1e6, "GB/sec": 1e9, "TB/sec": 1e12,
	"bits/sec": 1.0 / 8, "Kb/sec": 1e3 / 8, "Mb/sec": 1e6 / 8, "Gb/sec": 1e9 / 8, "Tb/sec": 1e12 / 8,
	"/sec": 1, "K/sec": 1e3, "M/sec": 1e6, "G/sec": 1e9, "T/sec": 1e12,
	"ns/GB": 1e-9, "us/GB": 1e-6, "ms/GB": 1e-3, "sec/GB": 1,
	"% cpus": 1,
}

// coarseUnits are the units qperf only uses without -uu (rounded to -e digits, 3 by default).
var coarseUnits = map[string]bool{"thousand": true, "million": true, "billion": true, "trillion": true,
	"us": true, "ms": true, "sec": true, "KB": true, "MB": true, "GB": true, "TB": true,
	"KB/sec": true, "MB/sec": true, "GB/sec": true, "TB/sec": true, "Kb/sec": true, "Mb/sec": true,
	"Gb/sec": true, "Tb/sec": true, "K/sec": true, "M/sec": true, "G/sec": true, "T/sec": true}

// ParseOutput parses one qperf test's output. strict requires the complete -vv -un listing
// cnperf asks for (its last line, rem_recv_msgs), so a cut output is an error.
func ParseOutput(data []byte, strict bool) (Result, error) {
	text := strings.ReplaceAll(toolkit.Text(data), "\r", "")
	r := Result{Values: map[string]float64{}}
	var other []string
	for _, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		if m := headerRE.FindStringSubmatch(line); m != nil && r.Test == "" {
			r.Test = m[1]
			continue
		}
		m := lineRE.FindStringSubmatch(line)
		if m == nil {
			other = append(other, strings.TrimSpace(line))
			continue
		}
		key, num, unit, alt := m[1], m[2], m[3], m[4]
		mult, ok := units[unit]
		if !ok {
			return Result{}, fmt.Errorf("qperf: unknown unit %q in line %q", unit, strings.TrimSpace(line))
		}
		if coarseUnits[unit] {
			r.Coarse = true
		}
		if alt != "" { // "64 KiB (65,536)": the exact value in parentheses
			num, mult = alt, 1
		}
		v, err := strconv.ParseFloat(strings.ReplaceAll(num, ",", ""), 64)
		if err != nil {
			return Result{}, fmt.Errorf("qperf: bad number in line %q", strings.TrimSpace(line))
		}
		r.Values[key] = v * mult
	}
	if r.Test == "" {
		if len(other) > 0 {
			return Result{}, fmt.Errorf("qperf output is not a test report: %s", toolkit.Tail([]byte(strings.Join(other, "\n")), 3))
		}
		return Result{}, errors.New("qperf printed nothing")
	}
	if len(other) > 0 {
		// qperf prints errors after the test header, e.g. "failed to connect", "failed to
		// receive port: timed out".
		return Result{}, fmt.Errorf("qperf %s: %s", r.Test, strings.Join(other, " | "))
	}
	if strict {
		if _, ok := r.Values["rem_recv_msgs"]; !ok {
			return Result{}, fmt.Errorf("qperf %s output is incomplete (no rem_recv_msgs line: cut short, or the server received nothing)", r.Test)
		}
	}
	var err error
	switch r.Test {
	case "tcp_bw", "udp_bw":
		r.Sample, err = bwSample(r)
	case "tcp_lat", "udp_lat":
		r.Sample, err = latSample(r)
	default:
		return Result{}, fmt.Errorf("qperf test %q is not one cnperf reads (tcp_bw, udp_bw, tcp_lat, udp_lat)", r.Test)
	}
	if err != nil {
		return Result{}, err
	}
	addCPU(&r.Sample, r.Values)
	if r.Coarse {
		toolkit.AddNote(&r.Sample, "qperf printed human units rounded to a few significant digits (no -uu -e 6)")
	}
	return r, nil
}

// pick returns the first of the keys that is present (-un output says loc_/rem_, the default
// output send_/recv_ for one-way tests).
func pick(v map[string]float64, keys ...string) (float64, bool) {
	for _, k := range keys {
		if x, ok := v[k]; ok {
			return x, true
		}
	}
	return 0, false
}

func positive(name string, x float64, ok bool) error {
	if !ok {
		return fmt.Errorf("qperf output has no %s", name)
	}
	if math.IsNaN(x) || x <= 0 {
		return fmt.Errorf("qperf reported %s = %v", name, x)
	}
	return nil
}

func bwSample(r Result) (api.Sample, error) {
	v := r.Values
	// tcp_bw prints "bw" (the receive rate); udp_bw prints send_bw and recv_bw.
	bw, ok := pick(v, "bw", "recv_bw")
	if err := positive("bw/recv_bw", bw, ok); err != nil {
		return api.Sample{}, err
	}
	s := api.Sample{ThroughputBitsPerSecond: toolkit.F(bw * 8)}
	if t, ok := pick(v, "rem_real_time", "recv_real_time", "loc_real_time", "send_real_time"); ok {
		s.DurationSeconds = t
	}
	sentB, okSB := pick(v, "loc_send_bytes", "send_bytes")
	recvB, okRB := pick(v, "rem_recv_bytes", "recv_bytes")
	if okSB {
		s.BytesSent = toolkit.I(int64(sentB))
	}
	if okRB {
		s.BytesReceived = toolkit.I(int64(recvB))
	}
	if r.Test == "udp_bw" {
		sent, okS := pick(v, "loc_send_msgs", "send_msgs")
		recv, okR := pick(v, "rem_recv_msgs", "recv_msgs")
		if okS && okR && sent > 0 {
			s.PacketsSent = toolkit.I(int64(sent))
			s.PacketsReceived = toolkit.I(int64(recv))
			lost := sent - recv
			if lost < 0 {
				lost = 0
			}
			s.PacketsLost = toolkit.I(int64(lost))
			s.LossPercent = toolkit.F(100 * lost / sent)
		}
		// msg_rate is the received datagrams per second.
		if rate, ok := v["msg_rate"]; ok {
			s.PacketsPerSecond = toolkit.F(rate)
		}
		toolkit.AddNote(&s, "UDP throughput and packet rate as received by the qperf server")
	}
	return s, nil
}

func latSample(r Result) (api.Sample, error) {
	v := r.Values
	oneWay, ok := v["latency"]
	if err := positive("latency", oneWay, ok); err != nil {
		return api.Sample{}, err
	}
	rttUs := 2 * oneWay * 1e6
	s := api.Sample{
		Latency: &api.Latency{
			Mean:       toolkit.F(rttUs),
			Method:     "tool-rtt-from-one-way",
			Provenance: api.LatencyMeasured,
			Note: fmt.Sprintf("qperf prints one-way latency (the run time over the messages both sides received); "+
				"doubled to round-trip: %.6g µs one-way → %.6g µs RTT", oneWay*1e6, rttUs),
		},
	}
	if rate, ok := v["msg_rate"]; ok && rate > 0 {
		// Both directions' messages: one transaction is a request and a response.
		s.TransactionsPerSecond = toolkit.F(rate / 2)
	} else {
		s.TransactionsPerSecond = toolkit.F(1e6 / rttUs)
	}
	if n, ok := pick(v, "loc_recv_msgs"); ok {
		s.Transactions = toolkit.I(int64(n))
	}
	if t, ok := pick(v, "loc_real_time"); ok {
		s.DurationSeconds = t
	}
	if b, ok := v["loc_send_bytes"]; ok {
		s.BytesSent = toolkit.I(int64(b))
	}
	if b, ok := v["loc_recv_bytes"]; ok {
		s.BytesReceived = toolkit.I(int64(b))
	}
	if r.Test == "udp_lat" {
		sent, okS := v["loc_send_msgs"]
		got, okR := v["loc_recv_msgs"]
		if okS && okR && sent > 0 {
			s.PacketsSent = toolkit.I(int64(sent))
			s.PacketsReceived = toolkit.I(int64(got))
		}
	}
	toolkit.AddNote(&s, "latency is qperf's one-way time doubled to a round trip; no percentiles (qperf prints only the mean)")
	return s, nil
}

func addCPU(s *api.Sample, v map[string]float64) {
	cpu := func(prefixes ...string) *api.CPUUsage {
		for _, p := range prefixes {
			used, ok := v[p+"_cpus_used"]
			if !ok {
				continue
			}
			u := &api.CPUUsage{HostBusyCPUPercent: toolkit.F(used)}
			return u
		}
		return nil
	}
	client := cpu("loc", "send")
	server := cpu("rem", "recv")
	if client == nil && server == nil {
		return
	}
	s.CPU = &api.SampleCPU{Client: client, Server: server}
	toolkit.AddNote(s, "qperf CPU is system-wide busy time (all processes) in percent of one CPU")
}
