package iperf3

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/driver/toolkit"
)

// report is the part of iperf3's -J document cnperf reads (iperf3 3.x, src/iperf_api.c).
type report struct {
	Start struct {
		Version   string `json:"version"`
		Timestamp struct {
			Timesecs int64 `json:"timesecs"`
		} `json:"timestamp"`
		TestStart struct {
			Protocol      string  `json:"protocol"`
			NumStreams    int     `json:"num_streams"`
			Blksize       int     `json:"blksize"`
			Omit          int     `json:"omit"`
			Duration      float64 `json:"duration"`
			Reverse       int     `json:"reverse"`
			Bidir         int     `json:"bidir"`
			TargetBitrate float64 `json:"target_bitrate"`
		} `json:"test_start"`
	} `json:"start"`
	End struct {
		Sum                     *sum `json:"sum"`
		SumSent                 *sum `json:"sum_sent"`
		SumReceived             *sum `json:"sum_received"`
		SumSentBidirReverse     *sum `json:"sum_sent_bidir_reverse"`
		SumReceivedBidirReverse *sum `json:"sum_received_bidir_reverse"`
		CPU                     *cpu `json:"cpu_utilization_percent"`
	} `json:"end"`
	Error string `json:"error"`
}

type sum struct {
	Seconds       float64  `json:"seconds"`
	Bytes         float64  `json:"bytes"`
	BitsPerSecond float64  `json:"bits_per_second"`
	Retransmits   *float64 `json:"retransmits"`
	JitterMs      *float64 `json:"jitter_ms"`
	LostPackets   *float64 `json:"lost_packets"`
	Packets       *float64 `json:"packets"`
	LostPercent   *float64 `json:"lost_percent"`
}

type cpu struct {
	HostTotal    *float64 `json:"host_total"`
	HostUser     *float64 `json:"host_user"`
	HostSystem   *float64 `json:"host_system"`
	RemoteTotal  *float64 `json:"remote_total"`
	RemoteUser   *float64 `json:"remote_user"`
	RemoteSystem *float64 `json:"remote_system"`
}

// Result is one parsed iperf3 run.
type Result struct {
	Sample api.Sample
	// Protocol is "TCP" or "UDP".
	Protocol   string
	Reverse    bool
	Bidir      bool
	Streams    int
	BlockBytes int
	Omit       int
	Duration   float64
	// TargetBitrate is the per-stream -b value (0 = none).
	TargetBitrate float64
	Version       string
	Start         time.Time
}

// Profile is the cnperf profile the run corresponds to.
func (r Result) Profile() api.Profile {
	switch {
	case r.Protocol == "UDP":
		return api.UDPStream
	case r.Reverse:
		return api.TCPMaerts
	default:
		return api.TCPStream
	}
}

// ParseJSON parses one iperf3 -J document. iperf3's "error" field, truncated JSON and a
// run that moved no data are errors carrying iperf3's message.
func ParseJSON(data []byte) (Result, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return Result{}, errors.New("iperf3 printed nothing on stdout")
	}
	if trimmed[0] != '{' {
		// Something printed before the document (a shell or a library warning): skip to it.
		i := bytes.Index(trimmed, []byte("\n{"))
		if i < 0 {
			return Result{}, fmt.Errorf("iperf3 output is not JSON: %s", toolkit.Tail(trimmed, 3))
		}
		trimmed = trimmed[i+1:]
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	var r report
	if err := dec.Decode(&r); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "unexpected end of JSON") {
			return Result{}, fmt.Errorf("iperf3 JSON output is truncated (the run was cut short?): %s", toolkit.Tail(trimmed, 2))
		}
		return Result{}, fmt.Errorf("iperf3 output is not valid JSON: %v", err)
	}
	return fromReport(r)
}

// ParseAll parses every iperf3 -J document in data (files made by appending runs).
func ParseAll(data []byte) ([]Result, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var out []Result
	for i := 0; ; i++ {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if err == io.EOF {
			break
		}
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return out, fmt.Errorf("document %d: iperf3 JSON output is truncated", i+1)
			}
			return out, fmt.Errorf("document %d: not valid iperf3 JSON: %v", i+1, err)
		}
		var r report
		if err := json.Unmarshal(raw, &r); err != nil {
			return out, fmt.Errorf("document %d: %v", i+1, err)
		}
		res, err := fromReport(r)
		if err != nil {
			return out, fmt.Errorf("document %d: %w", i+1, err)
		}
		out = append(out, res)
	}
	if len(out) == 0 {
		return nil, errors.New("no iperf3 JSON document found")
	}
	return out, nil
}

func fromReport(r report) (Result, error) {
	if msg := strings.TrimSpace(r.Error); msg != "" {
		return Result{}, &driver.FailedRun{Msg: "iperf3: " + msg}
	}
	ts := r.Start.TestStart
	res := Result{
		Protocol:      strings.ToUpper(ts.Protocol),
		Reverse:       ts.Reverse != 0,
		Bidir:         ts.Bidir != 0 || r.End.SumReceivedBidirReverse != nil,
		Streams:       ts.NumStreams,
		BlockBytes:    ts.Blksize,
		Omit:          ts.Omit,
		Duration:      ts.Duration,
		TargetBitrate: ts.TargetBitrate,
		Version:       r.Start.Version,
	}
	if r.Start.Timestamp.Timesecs > 0 {
		res.Start = time.Unix(r.Start.Timestamp.Timesecs, 0).UTC()
	}
	var err error
	switch res.Protocol {
	case "TCP":
		res.Sample, err = tcpSample(r, res.Bidir)
	case "UDP":
		res.Sample, err = udpSample(r, res)
	case "":
		return Result{}, errors.New("iperf3 output has no test_start (the test never started)")
	default:
		return Result{}, fmt.Errorf("iperf3 protocol %q is not supported", ts.Protocol)
	}
	if err != nil {
		return Result{}, err
	}
	s := &res.Sample
	if c := r.End.CPU; c != nil && c.HostTotal != nil {
		s.CPU = &api.SampleCPU{
			Client: &api.CPUUsage{ProcessPercent: c.HostTotal, UserPercent: c.HostUser, SystemPercent: c.HostSystem},
		}
		if c.RemoteTotal != nil {
			s.CPU.Server = &api.CPUUsage{ProcessPercent: c.RemoteTotal, UserPercent: c.RemoteUser, SystemPercent: c.RemoteSystem}
		}
	}
	if res.Omit > 0 {
		toolkit.AddNote(s, fmt.Sprintf("first %d s omitted from the figures as warm-up (iperf3 -O)", res.Omit))
	}
	if res.Bidir {
		toolkit.AddNote(s, "bidirectional test (--bidir): throughput, bytes and retransmits add both directions")
	}
	return res, nil
}

func validRate(what string, x *sum) error {
	if x == nil {
		return fmt.Errorf("iperf3 output has no end.%s (the test did not finish)", what)
	}
	if math.IsNaN(x.BitsPerSecond) || math.IsInf(x.BitsPerSecond, 0) || x.BitsPerSecond < 0 {
		return fmt.Errorf("iperf3 end.%s.bits_per_second is %v", what, x.BitsPerSecond)
	}
	if x.Bytes <= 0 || x.BitsPerSecond == 0 {
		return fmt.Errorf("iperf3 end.%s reports no data received (%v bytes in %.3f s)", what, x.Bytes, x.Seconds)
	}
	return nil
}

func tcpSample(r report, bidir bool) (api.Sample, error) {
	e := r.End
	if err := validRate("sum_received", e.SumReceived); err != nil {
		return api.Sample{}, err
	}
	if e.SumSent == nil {
		return api.Sample{}, errors.New("iperf3 output has no end.sum_sent (the test did not finish)")
	}
	bps := e.SumReceived.BitsPerSecond
	sent, recv := e.SumSent.Bytes, e.SumReceived.Bytes
	retrans := e.SumSent.Retransmits
	if bidir {
		if err := validRate("sum_received_bidir_reverse", e.SumReceivedBidirReverse); err != nil {
			return api.Sample{}, err
		}
		bps += e.SumReceivedBidirReverse.BitsPerSecond
		recv += e.SumReceivedBidirReverse.Bytes
		if b := e.SumSentBidirReverse; b != nil {
			sent += b.Bytes
			if retrans != nil && b.Retransmits != nil {
				retrans = toolkit.F(*retrans + *b.Retransmits)
			} else {
				retrans = nil
			}
		}
	}
	s := api.Sample{
		DurationSeconds:         e.SumReceived.Seconds,
		ThroughputBitsPerSecond: toolkit.F(bps),
		BytesSent:               toolkit.I(int64(sent)),
		BytesReceived:           toolkit.I(int64(recv)),
	}
	if retrans != nil {
		s.Retransmits = toolkit.F(*retrans)
	}
	return s, nil
}

func udpSample(r report, res Result) (api.Sample, error) {
	e := r.End
	// iperf3 3.x (since 3.2) has sum_received for UDP: the receiver's bytes and rate.
	// Older versions only have "sum", whose rate is the sender's; then the received rate is
	// derived from the packets that arrived.
	recv := e.SumReceived
	note := "UDP throughput, packets and loss as counted by the receiver"
	if recv == nil || recv.Packets == nil {
		if e.Sum == nil {
			return api.Sample{}, errors.New("iperf3 output has no end.sum (the test did not finish)")
		}
		x := *e.Sum
		if x.Packets == nil || x.LostPackets == nil || res.BlockBytes <= 0 || x.Seconds <= 0 {
			return api.Sample{}, errors.New("iperf3 UDP output has no receiver figures (sum_received, packets, lost_packets)")
		}
		got := *x.Packets - *x.LostPackets
		x.Bytes = got * float64(res.BlockBytes)
		x.BitsPerSecond = x.Bytes * 8 / x.Seconds
		recv = &x
		note = "UDP received rate derived from packets received × block size (this iperf3 has no end.sum_received)"
	}
	if err := validRate("sum_received", recv); err != nil {
		return api.Sample{}, err
	}
	s := api.Sample{
		DurationSeconds:         recv.Seconds,
		ThroughputBitsPerSecond: toolkit.F(recv.BitsPerSecond),
		BytesReceived:           toolkit.I(int64(recv.Bytes)),
	}
	if e.SumSent != nil {
		s.BytesSent = toolkit.I(int64(e.SumSent.Bytes))
		if e.SumSent.Packets != nil {
			s.PacketsSent = toolkit.I(int64(*e.SumSent.Packets))
		}
	}
	// Loss and jitter are the receiver's, reported in "sum" (and mirrored in sum_received).
	lossSrc := e.Sum
	if lossSrc == nil {
		lossSrc = recv
	}
	if lossSrc.LostPercent != nil {
		s.LossPercent = toolkit.F(*lossSrc.LostPercent)
	}
	if lossSrc.JitterMs != nil {
		s.JitterMicroseconds = toolkit.F(*lossSrc.JitterMs * 1000)
	}
	if lossSrc.LostPackets != nil {
		s.PacketsLost = toolkit.I(int64(*lossSrc.LostPackets))
	}
	// Received datagrams: the receiver's packet count (the highest sequence it saw) minus the
	// ones it found missing; with fixed-size datagrams this equals bytes / block size.
	if recv.Packets != nil && recv.LostPackets != nil {
		got := *recv.Packets - *recv.LostPackets
		if got > 0 {
			s.PacketsReceived = toolkit.I(int64(got))
			if recv.Seconds > 0 {
				s.PacketsPerSecond = toolkit.F(got / recv.Seconds)
			}
		}
	}
	if res.Bidir && e.SumReceivedBidirReverse != nil {
		b := e.SumReceivedBidirReverse
		s.ThroughputBitsPerSecond = toolkit.F(*s.ThroughputBitsPerSecond + b.BitsPerSecond)
		*s.BytesReceived += int64(b.Bytes)
		if s.PacketsReceived != nil && b.Packets != nil && b.LostPackets != nil {
			got := *b.Packets - *b.LostPackets
			*s.PacketsReceived += int64(got)
			if recv.Seconds > 0 {
				s.PacketsPerSecond = toolkit.F(float64(*s.PacketsReceived) / recv.Seconds)
			}
		}
		note += "; loss and jitter are the forward direction's"
	}
	toolkit.AddNote(&s, note)
	return s, nil
}
