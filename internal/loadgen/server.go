package loadgen

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/cnperf/cnperf/internal/agenttoken"
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
	// Token is the run's secret (see agenttoken.New): only a client that presents it in its
	// hello gets an answer and can start a test. Required.
	Token string

	// MaxConns caps the control connections open at once that proved the token (0:
	// DefaultMaxConns); one more is told "too many control connections" and closed at once.
	MaxConns int
	// MaxHandshakes caps the connections that have not yet proved the token (0:
	// DefaultMaxHandshakes); a new connection beyond it closes the oldest of them, so peers
	// that connect and say nothing cannot keep a client with the token out.
	MaxHandshakes int
	// SetupTimeout is how long a new connection has to complete hello and setup
	// (0: DefaultSetupTimeout).
	SetupTimeout time.Duration
	// RefusalSummaryEvery is how often refused connections are summed up in one log line
	// (0: DefaultRefusalSummaryEvery); the first refusal is logged at once.
	RefusalSummaryEvery time.Duration
	// HoldMargin is how long a test may hold the test slot beyond its declared warm-up and
	// duration, for opening its flows and finishing (0: DefaultHoldMargin).
	HoldMargin time.Duration
}

// Defaults of the server's limits.
const (
	DefaultMaxConns            = 16
	DefaultMaxHandshakes       = 512
	DefaultSetupTimeout        = 5 * time.Second
	DefaultHoldMargin          = 30 * time.Second
	DefaultRefusalSummaryEvery = 10 * time.Second
)

// Server runs tests for clients, one at a time.
type Server struct {
	cfg   ServerConfig
	ln    net.Listener
	addr  netip.Addr    // data bind address
	busy  chan struct{} // one test at a time
	conns chan struct{} // control connections open that proved the token (capacity MaxConns)
	token [sha256.Size]byte
	wg    sync.WaitGroup

	hsMu       sync.Mutex
	handshakes map[net.Conn]time.Time // connections that have not proved the token yet
	refused    *refusals
	onceTaken  sync.Once
}

// MinTokenBytes is the shortest token a server accepts to be started with.
const MinTokenBytes = 16

// NewServer starts listening on the control port.
func NewServer(cfg ServerConfig) (*Server, error) {
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if cfg.DataPort < 0 || cfg.DataPort > 65535 || cfg.Port < 0 || cfg.Port > 65535 {
		return nil, fmt.Errorf("port out of range (control %d, data %d)", cfg.Port, cfg.DataPort)
	}
	if len(cfg.Token) < MinTokenBytes || len(cfg.Token) > control.MaxTokenBytes {
		return nil, fmt.Errorf("agent token must be %d..%d bytes (got %d): set %s (cnperf agent token prints a new one)",
			MinTokenBytes, control.MaxTokenBytes, len(cfg.Token), agenttoken.Env)
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	if cfg.MaxHandshakes <= 0 {
		cfg.MaxHandshakes = DefaultMaxHandshakes
	}
	if cfg.RefusalSummaryEvery <= 0 {
		cfg.RefusalSummaryEvery = DefaultRefusalSummaryEvery
	}
	if cfg.SetupTimeout <= 0 {
		cfg.SetupTimeout = DefaultSetupTimeout
	}
	if cfg.HoldMargin <= 0 {
		cfg.HoldMargin = DefaultHoldMargin
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
	return &Server{cfg: cfg, ln: ln, addr: addr, busy: make(chan struct{}, 1), conns: make(chan struct{}, cfg.MaxConns),
		token: sha256.Sum256([]byte(cfg.Token)), handshakes: map[net.Conn]time.Time{},
		refused: &refusals{log: cfg.Log, every: cfg.RefusalSummaryEvery}}, nil
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
		// connections still waiting for their hello end with the server
		s.hsMu.Lock()
		for c := range s.handshakes {
			_ = c.Close()
		}
		s.hsMu.Unlock()
	}()
	defer s.refused.flush()
	defer s.wg.Wait()
	onceErr := make(chan error, 1) // --once: the result of the one session served
	var backoff time.Duration
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				select {
				case err := <-onceErr:
					return err
				default:
					return nil
				}
			}
			if !acceptRetryable(err) {
				return fmt.Errorf("accept control connection: %w", err)
			}
			// out of file descriptors or memory, or a connection reset while queued: wait
			// and go on (as net/http does) instead of leaving the run without its server
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			fmt.Fprintf(s.cfg.Log, "accept control connection: %v; retrying in %s\n", err, backoff)
			select {
			case <-time.After(backoff):
			case <-ctx.Done():
				return nil
			}
			continue
		}
		backoff = 0
		s.admit(conn)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			if served, err := s.handle(ctx, conn); served && s.cfg.Once {
				s.onceTaken.Do(func() {
					onceErr <- err
					cancel()
				})
			}
		}()
	}
}

// acceptRetryable reports accept errors that pass: a timeout, no file descriptors or buffers
// left, or a connection that went away while it waited in the queue.
func acceptRetryable(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	for _, e := range []error{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM,
		syscall.ECONNABORTED, syscall.ECONNRESET, syscall.EINTR, syscall.EAGAIN} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// admit records a new connection as a handshake (it has not proved the token yet); when
// MaxHandshakes are already waiting, the oldest of them is closed to make room. A client with
// the token sends its hello at once, so peers that connect and say nothing cannot keep it out:
// they only push each other out.
func (s *Server) admit(conn net.Conn) {
	s.hsMu.Lock()
	defer s.hsMu.Unlock()
	if len(s.handshakes) >= s.cfg.MaxHandshakes {
		var oldest net.Conn
		var at time.Time
		for c, t := range s.handshakes {
			if oldest == nil || t.Before(at) {
				oldest, at = c, t
			}
		}
		delete(s.handshakes, oldest)
		_ = oldest.Close() // its handle sees the read fail and counts it as refused
	}
	s.handshakes[conn] = time.Now()
}

// handshakeDone forgets conn as a handshake.
func (s *Server) handshakeDone(conn net.Conn) {
	s.hsMu.Lock()
	delete(s.handshakes, conn)
	s.hsMu.Unlock()
}

// handle serves one accepted connection: its hello must prove the token within SetupTimeout
// (until then it holds only a handshake place, see admit, and the server says nothing of
// itself); then it takes one of MaxConns control slots and runs its session. served says
// whether it proved the token and was served.
func (s *Server) handle(ctx context.Context, conn net.Conn) (served bool, err error) {
	defer conn.Close()
	// hello and setup must arrive within SetupTimeout of the accept
	_ = conn.SetDeadline(time.Now().Add(s.cfg.SetupTimeout))
	reason, err := s.authenticate(conn)
	s.handshakeDone(conn)
	if err != nil {
		s.refused.add(conn.RemoteAddr(), reason)
		return false, err
	}
	select {
	case s.conns <- struct{}{}:
	default:
		_ = conn.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
		_ = control.Encode(conn, &control.Message{Type: control.TypeError,
			Error: fmt.Sprintf("too many control connections (limit %d)", s.cfg.MaxConns)})
		s.refused.add(conn.RemoteAddr(), refusedTooMany)
		return false, nil
	}
	defer func() { <-s.conns }()
	if err := s.session(ctx, conn); err != nil {
		fmt.Fprintf(s.cfg.Log, "session from %s failed: %v\n", conn.RemoteAddr(), err)
		return true, err
	}
	return true, nil
}

// Why connections are refused, as the log sums them up.
const (
	refusedNoHello  = "no hello in time (or closed)"
	refusedBadHello = "not a hello of this protocol"
	refusedVersion  = "another protocol version"
	refusedNoToken  = "without the token"
	refusedTooMany  = "too many control connections"
)

// authenticate reads the client's hello and checks its version and token; it answers only an
// error, and why the connection is refused (one of the refused* reasons).
func (s *Server) authenticate(conn net.Conn) (reason string, err error) {
	fail := func(why string, e error) (string, error) {
		_ = control.Encode(conn, &control.Message{Type: control.TypeError, Error: truncate(e.Error(), control.MaxErrorBytes)})
		return why, e
	}
	m, err := control.Decode(conn)
	if err != nil {
		var ne net.Error
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) || errors.As(err, &ne) {
			return refusedNoHello, err // nobody listens
		}
		return fail(refusedBadHello, err)
	}
	if m.Type != control.TypeHello {
		return fail(refusedBadHello, fmt.Errorf("expected hello, got %q", m.Type))
	}
	if m.Hello.Version != control.Version {
		return fail(refusedVersion, fmt.Errorf("protocol version %d not supported (want %d: a client of the same cnperf release)",
			m.Hello.Version, control.Version))
	}
	if !s.authorized(m.Hello.Token) {
		return fail(refusedNoToken, errUnauthorized)
	}
	return "", nil
}

// errUnauthorized is a hello without the server's token.
var errUnauthorized = errors.New("connection without this run's token: refused")

// authorized compares a presented token with the server's in constant time (both hashed, so
// neither the length nor a prefix of the secret shows in the time taken).
func (s *Server) authorized(token string) bool {
	h := sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(h[:], s.token[:]) == 1
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
	// a frame that does not decode is answered with why (a read error is not: nobody listens)
	failDecode := func(e error) error {
		var ne net.Error
		if errors.Is(e, io.EOF) || errors.Is(e, io.ErrUnexpectedEOF) || errors.Is(e, net.ErrClosed) || errors.As(e, &ne) {
			return e
		}
		return fail(e)
	}
	// the client proved the token (handle): now the server says who it is
	if err := control.Encode(conn, &control.Message{Type: control.TypeHello, Hello: &control.Hello{Version: control.Version, Software: s.cfg.Software}}); err != nil {
		return err
	}
	m, err := control.Decode(conn)
	if err != nil {
		return failDecode(err)
	}
	if m.Type != control.TypeSetup {
		return fail(fmt.Errorf("expected setup, got %q", m.Type))
	}
	if err := checkServerLimits(m.Setup); err != nil {
		return fail(err)
	}
	// one test at a time: wait a little for the previous one to wind down
	select {
	case s.busy <- struct{}{}:
	case <-time.After(busyWait):
		_ = conn.SetDeadline(time.Now().Add(time.Second))
		return fail(fmt.Errorf("server busy with another test for %s", busyWait))
	case <-ctx.Done():
		_ = conn.SetDeadline(time.Now().Add(time.Second))
		return fail(ctx.Err())
	}
	defer func() { <-s.busy }()
	st := normalizeSetup(*m.Setup)
	fmt.Fprintf(s.cfg.Log, "test from %s: %s %dB x%d burst %d for %s\n", conn.RemoteAddr(), st.Profile, st.MessageBytes,
		st.Parallel, st.Burst, time.Duration(st.DurationNs))
	// the test holds the slot for its declared time plus a margin, then is ended
	hold := time.Duration(st.WarmupNs+st.DurationNs) + s.cfg.HoldMargin
	holdEnd := time.Now().Add(hold)
	_ = conn.SetDeadline(holdEnd)
	ss, err := newServerSession(st, s.addr, s.cfg.DataPort)
	if err != nil {
		return fail(err)
	}
	defer ss.close()
	// ended guards the session's sockets: once the session returns, ss.close frees their
	// descriptors, and a late timer must not shut down numbers the next test reuses
	var (
		endMu sync.Mutex
		ended bool
	)
	expired := time.AfterFunc(time.Until(holdEnd), func() {
		endMu.Lock()
		defer endMu.Unlock()
		if ended {
			return
		}
		fmt.Fprintf(s.cfg.Log, "test from %s: ended after %s (its warm-up and duration plus %s)\n", conn.RemoteAddr(),
			hold, s.cfg.HoldMargin)
		conn.Close()
		ss.abort()
	})
	defer func() {
		expired.Stop()
		endMu.Lock()
		ended = true
		endMu.Unlock()
	}()
	if err := control.Encode(conn, &control.Message{Type: control.TypeReady, Ready: &control.Ready{
		DataPort: ss.port, Cookie: hex.EncodeToString(ss.cookie), Software: s.cfg.Software, Offload: ss.offload}}); err != nil {
		return err
	}
	_ = conn.SetDeadline(holdEnd)
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
		if kindOf(s.Profile) == kindStreamLat {
			s.ResponseBytes = 1 // the probe's small messages (k8s-netperf's messagereadsize default)
		}
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
