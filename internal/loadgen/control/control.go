// Package control is the versioned control protocol between a loadgen client and server.
//
// One TCP connection carries a sequence of frames. A frame is the 4-byte magic "CNPF", a 4-byte
// big-endian body length and a JSON body (one Message). The decoder rejects a wrong magic, a
// body larger than the limit, bodies that are not exactly one JSON object, unknown fields,
// unknown message types, a payload that does not match the type and out-of-range values, always
// with an error and never with a panic (see FuzzDecode).
//
// A test runs as:
//
//	client → hello{version, token}    server → hello{version} | error
//	client → setup{...}               server → ready{dataPort, cookie} | error
//	client opens its data flows
//	client → start                    server → started   (all flows accepted; traffic begins)
//	client → measure                  (both sides snapshot counters and CPU: window start)
//	client → stop                     (window end; traffic stops)
//	client → finish{lastSeq}          server → result{...} | error
package control

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/cnperf/cnperf/internal/limits"
)

// Version is the protocol version this package speaks. A peer with another version is refused.
// Version 2 added the run's token to the setup message; version 3 moved it to the client's
// hello, so that a server says nothing of itself (its hello) to a client without the token.
const Version = 3

// Magic starts every frame.
const Magic = "CNPF"

// MaxFrameBytes bounds a frame body. Results are the largest messages (one entry per flow).
const MaxFrameBytes = 1 << 20

// Limits on negotiated values: the native agent's row of internal/limits, which the plan's
// validation reads too.
const (
	MaxParallel      = limits.NativeMaxParallelFlows
	MaxBurst         = limits.NativeMaxBurst
	MaxMessageBytes  = limits.NativeMaxMessageSizeBytes
	MaxUDPBytes      = limits.NativeMaxUDPMessageBytes
	MaxDuration      = int64(limits.NativeMaxDuration)
	MaxWarmup        = int64(limits.NativeMaxWarmup)
	MaxSocketBuffer  = limits.NativeMaxSocketBufferBytes
	MaxCPU           = limits.NativeMaxCPU
	MaxErrorBytes    = 4096
	MaxTokenBytes    = 256
	MaxFlowsInResult = MaxParallel
)

// Message types.
const (
	TypeHello   = "hello"
	TypeSetup   = "setup"
	TypeReady   = "ready"
	TypeStart   = "start"
	TypeStarted = "started"
	TypeMeasure = "measure"
	TypeStop    = "stop"
	TypeFinish  = "finish"
	TypeResult  = "result"
	TypeError   = "error"
)

// Profiles the generator runs (netperf's names).
var Profiles = []string{"TCP_STREAM", "TCP_SENDFILE", "TCP_MAERTS", "UDP_STREAM", "TCP_RR", "UDP_RR", "TCP_CRR", "TCP_STREAM_LAT"}

// CRR close modes.
const (
	CloseGraceful = "graceful" // the server closes first with FIN and keeps TIME_WAIT (netperf's way)
	CloseRST      = "rst"      // client closes with SO_LINGER 0: RST, no TIME_WAIT
)

// Message is one control frame's body. Exactly the payload matching Type is set.
type Message struct {
	Type   string        `json:"type"`
	Hello  *Hello        `json:"hello,omitempty"`
	Setup  *Setup        `json:"setup,omitempty"`
	Ready  *Ready        `json:"ready,omitempty"`
	Finish *Finish       `json:"finish,omitempty"`
	Result *ServerResult `json:"result,omitempty"`
	Error  string        `json:"error,omitempty"`
}

// Hello opens a session.
type Hello struct {
	Version  int    `json:"version"`
	Software string `json:"software,omitempty"` // e.g. "cnperf v0.1.0"
	// Token is the run's secret, in the client's hello only: the server answers, and runs a
	// test, only for a client that presents the token it was started with (compared in
	// constant time). It never leaves the control connection.
	Token string `json:"token,omitempty"`
}

// Setup is what the client asks the server to prepare.
type Setup struct {
	Profile           string  `json:"profile"`
	DurationNs        int64   `json:"durationNs"`
	WarmupNs          int64   `json:"warmupNs"`
	MessageBytes      int     `json:"messageBytes"`
	ResponseBytes     int     `json:"responseBytes"`
	Parallel          int     `json:"parallel"`
	Burst             int     `json:"burst"`
	RateBitsPerSecond float64 `json:"rateBitsPerSecond,omitempty"`
	SendBufferBytes   int     `json:"sendBufferBytes,omitempty"`
	RecvBufferBytes   int     `json:"recvBufferBytes,omitempty"`
	CRRClose          string  `json:"crrClose,omitempty"`
	ZeroCopy          bool    `json:"zeroCopy,omitempty"`
	NoOffload         bool    `json:"noOffload,omitempty"` // no UDP GRO on the server
	ServerCPU         int     `json:"serverCPU"`           // -1: no pinning
}

// Ready says the server is listening for the data flows.
type Ready struct {
	DataPort int    `json:"dataPort"`
	Cookie   string `json:"cookie"` // 32 hex digits; sent by the client on each TCP data connection
	Software string `json:"software,omitempty"`
	Offload  string `json:"offload,omitempty"` // e.g. "udp-gro"
}

// Finish ends the traffic; LastSeq is the last UDP sequence number each flow sent in the
// measured window (0 when none), so the server can count trailing losses.
type Finish struct {
	LastSeq []uint64 `json:"lastSeq,omitempty"`
}

// CPU is CPU time consumed by one side over the measured window.
type CPU struct {
	WindowNs    int64   `json:"windowNs"`
	UserNs      int64   `json:"userNs"`
	SystemNs    int64   `json:"systemNs"`
	HostBusy    float64 `json:"hostBusy"`  // jiffies busy on all CPUs (from /proc/stat)
	HostTotal   float64 `json:"hostTotal"` // jiffies in all on all CPUs
	NumCPU      int     `json:"numCPU"`
	HostMissing bool    `json:"hostMissing,omitempty"`
}

// FlowCounters are one flow's figures as the server saw them.
type FlowCounters struct {
	Flow int `json:"flow"`
	// Window figures: between the measure and stop messages (UDP: packets the client marked
	// as measured).
	WindowBytesRx      int64 `json:"windowBytesRx"`
	WindowBytesTx      int64 `json:"windowBytesTx"`
	WindowTransactions int64 `json:"windowTransactions"`
	WindowRetransmits  int64 `json:"windowRetransmits"`
	// Totals over the whole test (warm-up and drain included), for cross-checks.
	TotalBytesRx      int64 `json:"totalBytesRx"`
	TotalBytesTx      int64 `json:"totalBytesTx"`
	TotalTransactions int64 `json:"totalTransactions"`
	// UDP_STREAM receiver figures over the measured packets, as iperf3 computes them.
	PacketsRx  int64   `json:"packetsRx,omitempty"`
	HighestSeq uint64  `json:"highestSeq,omitempty"`
	Lost       int64   `json:"lost,omitempty"` // sequence gaps minus late arrivals, plus trailing losses
	OutOfOrder int64   `json:"outOfOrder,omitempty"`
	JitterNs   float64 `json:"jitterNs,omitempty"`
}

// ServerResult is what the server measured.
type ServerResult struct {
	WindowNs int64          `json:"windowNs"`
	CPU      *CPU           `json:"cpu,omitempty"`
	Flows    []FlowCounters `json:"flows"`
	Notes    []string       `json:"notes,omitempty"`
}

// Encode writes one frame.
func Encode(w io.Writer, m *Message) error {
	if err := m.Validate(); err != nil {
		return fmt.Errorf("control: refusing to send invalid %q message: %w", m.Type, err)
	}
	body, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("control: encode %q: %w", m.Type, err)
	}
	if len(body) > MaxFrameBytes {
		return fmt.Errorf("control: %q message is %d bytes, limit %d", m.Type, len(body), MaxFrameBytes)
	}
	buf := make([]byte, 8+len(body))
	copy(buf, Magic)
	binary.BigEndian.PutUint32(buf[4:], uint32(len(body)))
	copy(buf[8:], body)
	if _, err := w.Write(buf); err != nil {
		return fmt.Errorf("control: send %q: %w", m.Type, err)
	}
	return nil
}

// Decode reads and validates one frame. io.EOF is returned as is when the stream ends cleanly
// before a frame starts.
func Decode(r io.Reader) (*Message, error) {
	var hdr [8]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.EOF
		}
		return nil, fmt.Errorf("control: read frame header: %w", err)
	}
	if string(hdr[:4]) != Magic {
		return nil, fmt.Errorf("control: bad magic %q (not a cnperf agent?)", hdr[:4])
	}
	n := binary.BigEndian.Uint32(hdr[4:])
	if n == 0 || n > MaxFrameBytes {
		return nil, fmt.Errorf("control: frame body of %d bytes outside 1..%d", n, MaxFrameBytes)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, fmt.Errorf("control: read %d-byte frame body: %w", n, err)
	}
	return DecodeBody(body)
}

// DecodeBody parses and validates one frame body.
func DecodeBody(body []byte) (*Message, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var m Message
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("control: bad message: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("control: bad message: data after the JSON object")
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("control: bad %q message: %w", m.Type, err)
	}
	return &m, nil
}

// Validate checks that the payload matches the type and every value is in range.
func (m *Message) Validate() error {
	has := map[string]bool{
		TypeHello:  m.Hello != nil,
		TypeSetup:  m.Setup != nil,
		TypeReady:  m.Ready != nil,
		TypeFinish: m.Finish != nil,
		TypeResult: m.Result != nil,
		TypeError:  m.Error != "",
	}
	want := ""
	switch m.Type {
	case TypeHello, TypeSetup, TypeReady, TypeFinish, TypeResult, TypeError:
		want = m.Type
	case TypeStart, TypeStarted, TypeMeasure, TypeStop:
	default:
		return fmt.Errorf("unknown message type %q", m.Type)
	}
	for _, k := range []string{TypeHello, TypeSetup, TypeReady, TypeFinish, TypeResult, TypeError} {
		if has[k] && k != want {
			return fmt.Errorf("unexpected %s payload", k)
		}
		if !has[k] && k == want {
			return fmt.Errorf("missing %s payload", k)
		}
	}
	switch m.Type {
	case TypeHello:
		if m.Hello.Version < 1 || m.Hello.Version > 1000 {
			return fmt.Errorf("version %d out of range", m.Hello.Version)
		}
		if err := checkString("software", m.Hello.Software, 256); err != nil {
			return err
		}
		return checkString("token", m.Hello.Token, MaxTokenBytes)
	case TypeSetup:
		return m.Setup.Validate()
	case TypeReady:
		return m.Ready.validate()
	case TypeFinish:
		if len(m.Finish.LastSeq) > MaxParallel {
			return fmt.Errorf("%d lastSeq entries, limit %d", len(m.Finish.LastSeq), MaxParallel)
		}
	case TypeResult:
		return m.Result.validate()
	case TypeError:
		return checkString("error", m.Error, MaxErrorBytes)
	}
	return nil
}

func checkString(name, s string, max int) error {
	if len(s) > max {
		return fmt.Errorf("%s is %d bytes, limit %d", name, len(s), max)
	}
	return nil
}

// IsProfile reports whether p is a profile the generator runs.
func IsProfile(p string) bool {
	for _, q := range Profiles {
		if p == q {
			return true
		}
	}
	return false
}

// Validate checks a setup request.
func (s *Setup) Validate() error {
	if !IsProfile(s.Profile) {
		return fmt.Errorf("unknown profile %q", s.Profile)
	}
	if s.DurationNs <= 0 || s.DurationNs > MaxDuration {
		return fmt.Errorf("durationNs %d outside 1..%d", s.DurationNs, MaxDuration)
	}
	if s.WarmupNs < 0 || s.WarmupNs > MaxWarmup {
		return fmt.Errorf("warmupNs %d outside 0..%d", s.WarmupNs, MaxWarmup)
	}
	maxMsg := MaxMessageBytes
	minMsg := 1
	udp := s.Profile == "UDP_STREAM" || s.Profile == "UDP_RR"
	if udp {
		maxMsg = MaxUDPBytes
	}
	if s.Profile == "UDP_STREAM" {
		minMsg = UDPHeaderBytes
	}
	if s.MessageBytes < minMsg || s.MessageBytes > maxMsg {
		return fmt.Errorf("messageBytes %d outside %d..%d for %s", s.MessageBytes, minMsg, maxMsg, s.Profile)
	}
	if s.ResponseBytes < 0 || s.ResponseBytes > maxMsg {
		return fmt.Errorf("responseBytes %d outside 0..%d", s.ResponseBytes, maxMsg)
	}
	if s.Parallel < 1 || s.Parallel > MaxParallel {
		return fmt.Errorf("parallel %d outside 1..%d", s.Parallel, MaxParallel)
	}
	if s.Profile == "TCP_STREAM_LAT" && s.Parallel >= MaxParallel {
		// its probe is one more connection
		return fmt.Errorf("parallel %d outside 1..%d for TCP_STREAM_LAT (its probe is one more flow)", s.Parallel, MaxParallel-1)
	}
	if s.Burst < 0 || s.Burst > MaxBurst {
		return fmt.Errorf("burst %d outside 0..%d", s.Burst, MaxBurst)
	}
	if math.IsNaN(s.RateBitsPerSecond) || math.IsInf(s.RateBitsPerSecond, 0) || s.RateBitsPerSecond < 0 {
		return fmt.Errorf("rateBitsPerSecond %v invalid", s.RateBitsPerSecond)
	}
	if s.SendBufferBytes < 0 || s.SendBufferBytes > MaxSocketBuffer || s.RecvBufferBytes < 0 || s.RecvBufferBytes > MaxSocketBuffer {
		return fmt.Errorf("socket buffer sizes %d/%d outside 0..%d", s.SendBufferBytes, s.RecvBufferBytes, MaxSocketBuffer)
	}
	switch s.CRRClose {
	case "", CloseGraceful, CloseRST:
	default:
		return fmt.Errorf("crrClose %q: want %q or %q", s.CRRClose, CloseGraceful, CloseRST)
	}
	if s.ServerCPU < -1 || s.ServerCPU > MaxCPU {
		return fmt.Errorf("serverCPU %d outside -1..%d", s.ServerCPU, MaxCPU)
	}
	return nil
}

func (r *Ready) validate() error {
	if r.DataPort < 1 || r.DataPort > 65535 {
		return fmt.Errorf("dataPort %d outside 1..65535", r.DataPort)
	}
	if len(r.Cookie) != 32 {
		return fmt.Errorf("cookie must be 32 hex digits")
	}
	for _, c := range r.Cookie {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return fmt.Errorf("cookie must be 32 lower-case hex digits")
		}
	}
	if err := checkString("software", r.Software, 256); err != nil {
		return err
	}
	return checkString("offload", r.Offload, 256)
}

func (r *ServerResult) validate() error {
	if r.WindowNs <= 0 || r.WindowNs > MaxDuration*2 {
		return fmt.Errorf("windowNs %d out of range", r.WindowNs)
	}
	if len(r.Flows) < 1 || len(r.Flows) > MaxFlowsInResult {
		return fmt.Errorf("%d flows, want 1..%d", len(r.Flows), MaxFlowsInResult)
	}
	for i, f := range r.Flows {
		if f.Flow != i {
			return fmt.Errorf("flow %d has index %d", i, f.Flow)
		}
		for _, v := range []int64{f.WindowBytesRx, f.WindowBytesTx, f.WindowTransactions, f.WindowRetransmits,
			f.TotalBytesRx, f.TotalBytesTx, f.TotalTransactions, f.PacketsRx, f.Lost, f.OutOfOrder} {
			if v < 0 {
				return fmt.Errorf("flow %d: negative counter", i)
			}
		}
		if math.IsNaN(f.JitterNs) || math.IsInf(f.JitterNs, 0) || f.JitterNs < 0 {
			return fmt.Errorf("flow %d: jitter %v invalid", i, f.JitterNs)
		}
	}
	if c := r.CPU; c != nil {
		if c.WindowNs <= 0 || c.UserNs < 0 || c.SystemNs < 0 || c.NumCPU < 0 || c.NumCPU > 1<<16 ||
			!(c.HostBusy >= 0) || !(c.HostTotal >= c.HostBusy) || math.IsInf(c.HostTotal, 0) {
			return errors.New("cpu figures out of range")
		}
	}
	if len(r.Notes) > 32 {
		return fmt.Errorf("%d notes, limit 32", len(r.Notes))
	}
	for _, n := range r.Notes {
		if err := checkString("note", n, 1024); err != nil {
			return err
		}
	}
	return nil
}

// UDPHeaderBytes is the size of the header every UDP_STREAM datagram carries:
// flow (u32), phase (u8), 3 reserved bytes, sequence (u64), send time in ns (u64), big-endian.
const UDPHeaderBytes = limits.NativeMinUDPStreamBytes
