package loadgen

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/loadgen/control"
)

// ClientConfig is one test as the client runs it.
type ClientConfig struct {
	Host string
	Port int // control port
	// DataPort, when set, is dialled for data instead of the port the server announces (NAT,
	// e.g. a NodePort in front of the server's fixed data port).
	DataPort          int
	Profile           string
	Duration          time.Duration
	Warmup            time.Duration
	MessageSize       int // 0: the profile's default (DefaultMessageSize)
	ResponseSize      int // 0: the message size
	Parallel          int // 0: 1
	Burst             int
	RateBitsPerSecond float64 // total over all flows; 0 = unlimited
	SendBuffer        int     // SO_SNDBUF on both sides; 0 = kernel default
	RecvBuffer        int     // SO_RCVBUF on both sides; 0 = kernel default
	CRRClose          string  // control.CloseGraceful (default) or control.CloseRST
	ZeroCopy          bool    // MSG_ZEROCOPY for TCP_STREAM / TCP_MAERTS senders
	NoOffload         bool    // no UDP GSO/GRO
	ClientCPU         int     // pin client data threads to this CPU; -1 = no pinning
	ServerCPU         int     // ask the server to pin its data threads; -1 = no pinning
	NoHistogram       bool    // do not time transactions (to measure the histogram's cost)
	ConnectTimeout    time.Duration
	Software          string
	// Token is the run's secret the server was started with (agenttoken.Env); it is sent in the
	// hello message only and is in no report.
	Token string
}

// DefaultMessageSize is the message size used when none is given: 128 KiB for TCP streams
// (iperf3's default; TCP_STREAM_LAT's stream too), 1400 bytes for UDP_STREAM (fits a 1500-byte
// MTU), 1 byte for RR and CRR.
func DefaultMessageSize(profile string) int {
	switch kindOf(profile) {
	case kindStream, kindMaerts, kindStreamLat:
		return 128 << 10
	case kindUDPStream:
		return 1400
	}
	return 1
}

// ClientFlow is one client flow's own counters, kept for cross-checks with the server's.
type ClientFlow struct {
	WindowBytesTx, WindowBytesRx, WindowTransactions int64
	TotalBytesTx, TotalBytesRx, TotalTransactions    int64
	Retransmits                                      int64
	LastSeq                                          uint64 // UDP_STREAM: datagrams sent in the window
	LostTransactions                                 int64  // UDP_RR: given up after a timeout
}

// Report is everything one test measured.
type Report struct {
	Sample      api.Sample
	Setup       control.Setup
	Server      *control.ServerResult
	ClientFlows []ClientFlow
	ClientCPU   *control.CPU
	WindowNs    int64
	Offload     []string
}

func (c *ClientConfig) setup() (control.Setup, error) {
	st := control.Setup{
		Profile:           c.Profile,
		DurationNs:        c.Duration.Nanoseconds(),
		WarmupNs:          c.Warmup.Nanoseconds(),
		MessageBytes:      c.MessageSize,
		ResponseBytes:     c.ResponseSize,
		Parallel:          c.Parallel,
		Burst:             c.Burst,
		RateBitsPerSecond: c.RateBitsPerSecond,
		SendBufferBytes:   c.SendBuffer,
		RecvBufferBytes:   c.RecvBuffer,
		CRRClose:          c.CRRClose,
		ZeroCopy:          c.ZeroCopy,
		NoOffload:         c.NoOffload,
		ServerCPU:         c.ServerCPU,
	}
	if st.MessageBytes == 0 {
		st.MessageBytes = DefaultMessageSize(c.Profile)
	}
	if st.Parallel == 0 {
		st.Parallel = 1
	}
	if c.ZeroCopy && kindOf(c.Profile) != kindStream && kindOf(c.Profile) != kindMaerts {
		return st, fmt.Errorf("zero-copy applies to TCP_STREAM and TCP_MAERTS only, not %s", c.Profile)
	}
	if c.ZeroCopy && c.Profile == "TCP_SENDFILE" {
		return st, errors.New("TCP_SENDFILE and zero-copy are separate ways of sending; pick one")
	}
	if c.ClientCPU < -1 {
		return st, fmt.Errorf("client CPU %d invalid", c.ClientCPU)
	}
	if err := st.Validate(); err != nil {
		return st, fmt.Errorf("invalid test: %w", err)
	}
	return normalizeSetup(st), nil
}

func resolve(ctx context.Context, host string) (netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return a.Unmap(), nil
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("resolve %q: %w", host, err)
	}
	for _, a := range addrs { // prefer IPv4, like most tools
		if a.Unmap().Is4() {
			return a.Unmap(), nil
		}
	}
	if len(addrs) == 0 {
		return netip.Addr{}, fmt.Errorf("resolve %q: no address", host)
	}
	return addrs[0], nil
}

// Run runs one test against a server and returns what both sides measured. A failure is an
// error that says where it happened (control, data flows, server), never a zero figure.
func Run(ctx context.Context, cfg ClientConfig) (*Report, error) {
	st, err := cfg.setup()
	if err != nil {
		return nil, err
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = 5 * time.Second
	}
	addr, err := resolve(ctx, cfg.Host)
	if err != nil {
		return nil, err
	}
	hostPort := net.JoinHostPort(addr.String(), strconv.Itoa(cfg.Port))
	d := net.Dialer{Timeout: cfg.ConnectTimeout}
	conn, err := d.DialContext(ctx, "tcp", hostPort)
	if err != nil {
		return nil, fmt.Errorf("connect to agent at %s: %w", hostPort, err)
	}
	defer conn.Close()
	cs := &clientSession{cfg: cfg, st: st, addr: addr, conn: conn}
	defer cs.close()
	stopWatch := context.AfterFunc(ctx, func() {
		conn.Close()
		cs.abort()
	})
	defer stopWatch()
	rep, err := cs.run(ctx)
	if err != nil && ctx.Err() != nil {
		return nil, fmt.Errorf("%w (%v)", ctx.Err(), err)
	}
	return rep, err
}

// recv reads the next control message, turning a server error message into an error.
func (cs *clientSession) recv(want string) (*control.Message, error) {
	m, err := control.Decode(cs.conn)
	if err != nil {
		return nil, fmt.Errorf("control connection: waiting for %s: %w", want, err)
	}
	if m.Type == control.TypeError {
		return nil, fmt.Errorf("server: %s", m.Error)
	}
	if m.Type != want {
		return nil, fmt.Errorf("control connection: expected %s, got %s", want, m.Type)
	}
	return m, nil
}

func (cs *clientSession) send(m *control.Message) error {
	return control.Encode(cs.conn, m)
}

func (cs *clientSession) run(ctx context.Context) (*Report, error) {
	st := cs.st
	_ = cs.conn.SetDeadline(time.Now().Add(30 * time.Second))
	hello := &control.Hello{Version: control.Version, Software: cs.cfg.Software, Token: cs.cfg.Token}
	if err := cs.send(&control.Message{Type: control.TypeHello, Hello: hello}); err != nil {
		return nil, err
	}
	if _, err := cs.recv(control.TypeHello); err != nil {
		return nil, err
	}
	if err := cs.send(&control.Message{Type: control.TypeSetup, Setup: &st}); err != nil {
		return nil, err
	}
	m, err := cs.recv(control.TypeReady)
	if err != nil {
		return nil, err
	}
	cs.cookie, _ = hex.DecodeString(m.Ready.Cookie)
	cs.dataPort = m.Ready.DataPort
	if cs.cfg.DataPort > 0 {
		cs.dataPort = cs.cfg.DataPort
	}
	if m.Ready.Offload != "" {
		cs.offload = append(cs.offload, "server: "+m.Ready.Offload)
	}
	if err := cs.openFlows(); err != nil {
		return nil, fmt.Errorf("data flows to %s: %w", netip.AddrPortFrom(cs.addr, uint16(cs.dataPort)), err)
	}
	if err := cs.send(&control.Message{Type: control.TypeStart}); err != nil {
		return nil, err
	}
	if _, err := cs.recv(control.TypeStarted); err != nil {
		return nil, err
	}
	total := time.Duration(st.WarmupNs+st.DurationNs) + 60*time.Second
	_ = cs.conn.SetDeadline(time.Now().Add(total))
	cs.startWorkers()

	if err := sleepCtx(ctx, time.Duration(st.WarmupNs)); err != nil {
		return nil, err
	}
	if err := cs.workerErr(); err != nil {
		return nil, err
	}
	cs.measure()
	if err := cs.send(&control.Message{Type: control.TypeMeasure}); err != nil {
		return nil, err
	}
	if err := cs.sliceWindow(ctx); err != nil {
		return nil, err
	}
	cs.stopWindow()
	if err := cs.send(&control.Message{Type: control.TypeStop}); err != nil {
		return nil, err
	}
	if err := cs.finishWorkers(); err != nil {
		return nil, err
	}
	fin := &control.Finish{}
	if kindOf(st.Profile) == kindUDPStream {
		for _, f := range cs.flows {
			fin.LastSeq = append(fin.LastSeq, f.lastSeq)
		}
	}
	if err := cs.send(&control.Message{Type: control.TypeFinish, Finish: fin}); err != nil {
		return nil, err
	}
	m, err = cs.recv(control.TypeResult)
	if err != nil {
		return nil, err
	}
	return cs.report(m.Result)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
