package loadgen

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/cnperf/cnperf/internal/loadgen/control"
)

// DefaultPort is the agent's default control port; DefaultDataPort its default fixed data port
// (TCP and UDP) for the native driver, so Services and firewalls can name it.
const (
	DefaultPort     = 7100
	DefaultDataPort = 7101
)

// ReadyLine is what `cnperf agent serve` prints on standard error once it accepts clients.
const ReadyLine = "cnperf agent listening"

// ServerConfig configures a server.
type ServerConfig struct {
	// Bind is the address to listen on; empty means every address (IPv6 and IPv4).
	Bind string
	// Port is the control port (0 picks a free one, see Server.Port).
	Port int
	// DataPort fixes the data port (TCP and UDP) of every test; 0 picks a free one per test.
	DataPort int
	// Once makes Serve return after the first test session.
	Once bool
	// Log receives one line per session; nil discards.
	Log io.Writer
	// Software names the server in the handshake, e.g. "cnperf v0.1.0".
	Software string
}

// Server runs tests for clients, one at a time.
type Server struct {
	cfg  ServerConfig
	ln   net.Listener
	addr netip.Addr    // data bind address
	busy chan struct{} // one test at a time
	wg   sync.WaitGroup
}

// NewServer starts listening on the control port.
func NewServer(cfg ServerConfig) (*Server, error) {
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if cfg.DataPort < 0 || cfg.DataPort > 65535 || cfg.Port < 0 || cfg.Port > 65535 {
		return nil, fmt.Errorf("port out of range (control %d, data %d)", cfg.Port, cfg.DataPort)
	}
	var addr netip.Addr
	if cfg.Bind != "" {
		a, err := netip.ParseAddr(cfg.Bind)
		if err != nil {
			return nil, fmt.Errorf("--bind %q: want an IP address: %w", cfg.Bind, err)
		}
		addr = a.Unmap()
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(cfg.Bind, strconv.Itoa(cfg.Port)))
	if err != nil {
		return nil, fmt.Errorf("listen on control port: %w", err)
	}
	if !addr.IsValid() {
		// every address: dual-stack IPv6 wildcard when the host has IPv6, else IPv4
		addr = netip.IPv6Unspecified()
		if fd, err := newSocket(addr, 2 /* SOCK_DGRAM */); err != nil {
			addr = netip.IPv4Unspecified()
		} else {
			closeFd(fd)
		}
	}
	return &Server{cfg: cfg, ln: ln, addr: addr, busy: make(chan struct{}, 1)}, nil
}

// Port is the control port the server listens on.
func (s *Server) Port() int { return s.ln.Addr().(*net.TCPAddr).Port }

// Close stops accepting clients; running sessions end when their client goes.
func (s *Server) Close() error { return s.ln.Close() }

// Serve accepts clients until ctx ends (or after one session with Once) and waits for the
// sessions it started.
func (s *Server) Serve(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		<-ctx.Done()
		s.ln.Close()
	}()
	defer s.wg.Wait()
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return fmt.Errorf("accept control connection: %w", err)
		}
		if s.cfg.Once {
			err := s.session(ctx, conn)
			if err != nil {
				fmt.Fprintf(s.cfg.Log, "session from %s failed: %v\n", conn.RemoteAddr(), err)
			}
			return err
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			if err := s.session(ctx, conn); err != nil {
				fmt.Fprintf(s.cfg.Log, "session from %s failed: %v\n", conn.RemoteAddr(), err)
			}
		}()
	}
}

func (s *Server) session(ctx context.Context, conn net.Conn) (err error) {
	defer conn.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		<-ctx.Done()
		conn.Close()
	}()
	fail := func(e error) error {
		_ = control.Encode(conn, &control.Message{Type: control.TypeError, Error: truncate(e.Error(), control.MaxErrorBytes)})
		return e
	}
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	m, err := control.Decode(conn)
	if err != nil {
		return err
	}
	if m.Type != control.TypeHello {
		return fail(fmt.Errorf("expected hello, got %q", m.Type))
	}
	if m.Hello.Version != control.Version {
		return fail(fmt.Errorf("protocol version %d not supported (server speaks %d)", m.Hello.Version, control.Version))
	}
	if err := control.Encode(conn, &control.Message{Type: control.TypeHello, Hello: &control.Hello{Version: control.Version, Software: s.cfg.Software}}); err != nil {
		return err
	}
	m, err = control.Decode(conn)
	if err != nil {
		return err
	}
	if m.Type != control.TypeSetup {
		return fail(fmt.Errorf("expected setup, got %q", m.Type))
	}
	// one test at a time: wait a little for the previous one to wind down
	select {
	case s.busy <- struct{}{}:
	case <-time.After(busyWait):
		return fail(fmt.Errorf("server busy with another test for %s", busyWait))
	case <-ctx.Done():
		return fail(ctx.Err())
	}
	defer func() { <-s.busy }()
	st := normalizeSetup(*m.Setup)
	fmt.Fprintf(s.cfg.Log, "test from %s: %s %dB x%d burst %d for %s\n", conn.RemoteAddr(), st.Profile, st.MessageBytes,
		st.Parallel, st.Burst, time.Duration(st.DurationNs))
	ss, err := newServerSession(st, s.addr, s.cfg.DataPort)
	if err != nil {
		return fail(err)
	}
	defer ss.close()
	if err := control.Encode(conn, &control.Message{Type: control.TypeReady, Ready: &control.Ready{
		DataPort: ss.port, Cookie: hex.EncodeToString(ss.cookie), Software: s.cfg.Software, Offload: ss.offload}}); err != nil {
		return err
	}
	_ = conn.SetDeadline(time.Now().Add(time.Duration(st.WarmupNs+st.DurationNs) + 60*time.Second))
	expect := func(typ string) error {
		m, err := control.Decode(conn)
		if err != nil {
			return err
		}
		if m.Type != typ {
			return fmt.Errorf("expected %s, got %q", typ, m.Type)
		}
		if typ == control.TypeFinish {
			ss.lastSeq = m.Finish.LastSeq
		}
		return nil
	}
	if err := expect(control.TypeStart); err != nil {
		return fail(err)
	}
	if err := ss.start(); err != nil {
		return fail(err)
	}
	if err := control.Encode(conn, &control.Message{Type: control.TypeStarted}); err != nil {
		return err
	}
	if err := expect(control.TypeMeasure); err != nil {
		return fail(err)
	}
	ss.measure()
	if err := expect(control.TypeStop); err != nil {
		return fail(err)
	}
	ss.stopWindow()
	if err := expect(control.TypeFinish); err != nil {
		return fail(err)
	}
	res, err := ss.finish()
	if err != nil {
		return fail(err)
	}
	return control.Encode(conn, &control.Message{Type: control.TypeResult, Result: res})
}

const busyWait = 10 * time.Second

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// normalizeSetup fills derived defaults both sides agree on.
func normalizeSetup(s control.Setup) control.Setup {
	if s.ResponseBytes == 0 {
		s.ResponseBytes = s.MessageBytes
	}
	if s.CRRClose == "" {
		s.CRRClose = control.CloseGraceful
	}
	return s
}

func newCookie() []byte {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return b
}
