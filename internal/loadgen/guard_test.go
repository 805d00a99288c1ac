package loadgen

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cnperf/cnperf/internal/agenttoken"
	"github.com/cnperf/cnperf/internal/loadgen/control"
)

// rawHello speaks the control protocol by hand: a hello with token; it returns the server's
// answer (its hello, or an error) and the connection.
func rawHello(t *testing.T, s *Server, token string) (*control.Message, net.Conn) {
	t.Helper()
	c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port())))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	if err := control.Encode(c, &control.Message{Type: control.TypeHello, Hello: &control.Hello{Version: control.Version, Token: token}}); err != nil {
		t.Fatal(err)
	}
	m, err := control.Decode(c)
	if err != nil {
		t.Fatalf("answer to hello: %v", err)
	}
	return m, c
}

// rawSession is rawHello with the run's token, then setup st; it returns the server's answer
// to the setup (ready or error) and the connection.
func rawSession(t *testing.T, s *Server, st control.Setup) (*control.Message, net.Conn) {
	t.Helper()
	m, c := rawHello(t, s, testToken)
	if m.Type != control.TypeHello {
		t.Fatalf("hello with the token answered %+v", m)
	}
	if err := control.Encode(c, &control.Message{Type: control.TypeSetup, Setup: &st}); err != nil {
		t.Fatal(err)
	}
	m, err := control.Decode(c)
	if err != nil {
		t.Fatalf("answer to setup: %v", err)
	}
	return m, c
}

func validSetup() control.Setup {
	return control.Setup{Profile: "TCP_RR", DurationNs: int64(200 * time.Millisecond), MessageBytes: 1,
		ResponseBytes: 1, Parallel: 1, ServerCPU: -1}
}

// A client without the run's token gets nothing: the server answers its hello with an error,
// never with its own hello (no version, no software), and never with ready.
func TestTokenRequired(t *testing.T) {
	var log bytes.Buffer
	var mu sync.Mutex
	s := startServer(t, ServerConfig{Log: lockedWriter{&mu, &log}})
	for _, tc := range []struct{ name, token string }{
		{"no token", ""},
		{"wrong token", strings.Repeat("f", len(testToken))},
		{"prefix of the token", testToken[:len(testToken)-1]},
		{"token plus a byte", testToken + "0"},
		{"upper case", strings.ToUpper(testToken)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, c := rawHello(t, s, tc.token)
			if m.Type != control.TypeError || !strings.Contains(m.Error, "token") || strings.Contains(m.Error, "cnperf v") {
				t.Fatalf("hello with %s answered %+v, want an error about the token", tc.name, m)
			}
			if _, err := control.Decode(c); err == nil {
				t.Fatalf("hello with %s: the connection stayed open", tc.name)
			}
			// the client's own API says the same
			_, err := Run(context.Background(), ClientConfig{Host: "127.0.0.1", Port: s.Port(), Profile: "TCP_RR",
				Duration: 100 * time.Millisecond, ClientCPU: -1, ServerCPU: -1, Token: tc.token})
			if err == nil || !strings.Contains(err.Error(), "token") {
				t.Fatalf("Run with %s: err = %v", tc.name, err)
			}
		})
	}
	m, _ := rawSession(t, s, validSetup())
	if m.Type != control.TypeReady {
		t.Fatalf("setup with the token answered %+v, want ready", m)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Contains(log.String(), testToken) {
		t.Fatalf("the server's log shows the token:\n%s", log.String())
	}
}

func TestServerNeedsToken(t *testing.T) {
	for _, tok := range []string{"", "short", strings.Repeat("x", control.MaxTokenBytes+1)} {
		if _, err := NewServer(ServerConfig{Bind: "127.0.0.1", Token: tok}); err == nil || !strings.Contains(err.Error(), agenttoken.Env) {
			t.Errorf("token %q: err = %v, want one naming %s", tok, err, agenttoken.Env)
		}
	}
}

// The token never reaches a report: it is only in the hello message on the wire.
func TestTokenNotInReport(t *testing.T) {
	s := startServer(t, ServerConfig{})
	rep := runClient(t, s, ClientConfig{Profile: "TCP_RR", Duration: 100 * time.Millisecond})
	b := fmt.Sprintf("%+v %+v", rep.Sample, rep.Setup)
	if strings.Contains(b, testToken) {
		t.Fatal("report shows the token")
	}
}

// Hundreds of connections at once that say nothing: the server keeps at most MaxHandshakes
// of them waiting (a new one closes the oldest), closes the rest after SetupTimeout, and a
// client with the token is served while they are all still open. Clients with the token
// beyond MaxConns are refused at once with a reason.
func TestConnectionFlood(t *testing.T) {
	const maxConns, maxHandshakes, flood = 2, 8, 300
	log := &lineCounter{}
	s := startServer(t, ServerConfig{MaxConns: maxConns, MaxHandshakes: maxHandshakes, SetupTimeout: 2 * time.Second, Log: log})
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := 0; i < flood; i++ {
		c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port())))
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		conns = append(conns, c)
	}
	// a real test while the flood's connections are open
	rep := runClient(t, s, ClientConfig{Profile: "TCP_RR", Duration: 100 * time.Millisecond})
	if rep.Sample.Error != "" {
		t.Fatal(rep.Sample.Error)
	}
	// which connections the server has closed by now, each looked at without waiting (not a
	// wall-clock window, which a loaded machine can exceed); a test slower than SetupTimeout can only
	// move connections from kept to closed early
	early := make([]bool, len(conns))
	for i, c := range conns {
		early[i] = closedNow(t, c)
	}
	closedEarly, closedIdle := 0, 0
	for i, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		m, err := control.Decode(c)
		switch {
		case errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET):
			if early[i] {
				closedEarly++ // pushed out by newer connections
			} else {
				closedIdle++ // closed when it sent nothing within SetupTimeout
			}
		default:
			t.Fatalf("connection %d: %v %+v (the server must say nothing to a connection without the token)", i, err, m)
		}
	}
	if closedIdle > maxHandshakes || closedEarly < flood-maxHandshakes {
		t.Fatalf("%d kept until the setup timeout, %d closed early; want at most %d kept", closedIdle, closedEarly, maxHandshakes)
	}
	t.Logf("%d silent connections: %d kept until the setup timeout, %d pushed out by newer ones; %d log lines",
		flood, closedIdle, closedEarly, log.count())
	// clients with the token beyond MaxConns: refused at once, with the reason
	var held []net.Conn
	for i := 0; i < maxConns; i++ {
		m, c := rawHello(t, s, testToken)
		if m.Type != control.TypeHello {
			t.Fatalf("client %d with the token: %+v", i, m)
		}
		held = append(held, c)
	}
	m, _ := rawHello(t, s, testToken)
	if m.Type != control.TypeError || !strings.Contains(m.Error, "too many control connections (limit 2)") {
		t.Fatalf("one client more than MaxConns: %+v", m)
	}
	for _, c := range held {
		c.Close()
	}
}

// closedNow reports, without waiting, whether the peer of c has closed it (its end of file or
// a reset is queued); data from the peer reads as open, for the caller's read to see.
func closedNow(t *testing.T, c net.Conn) bool {
	t.Helper()
	rc, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var closed bool
	err = rc.Read(func(fd uintptr) bool {
		var b [1]byte
		n, _, err := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
		closed = (err == nil && n == 0) || err == unix.ECONNRESET
		return true // done, whatever it found
	})
	if err != nil {
		t.Fatal(err)
	}
	return closed
}

// A connection that does not complete hello and setup in time is closed, and one that sends
// half a frame does not keep the server's slot.
func TestSetupTimeout(t *testing.T) {
	s := startServer(t, ServerConfig{SetupTimeout: 300 * time.Millisecond})
	for _, partial := range [][]byte{nil, []byte("CNPF\x00\x00\x00\x10{\"type\""), []byte("CN")} {
		c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port())))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Write(partial); err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err = io.ReadAll(c)
		c.Close()
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("partial %q: the server kept the connection open past its setup timeout", partial)
		}
	}
}

// A test that stops talking after ready cannot hold the test slot past its warm-up and
// duration plus the margin: the server ends it and serves the next client.
func TestHoldLimit(t *testing.T) {
	// the margin also bounds the next client's 100 ms test (opening its flow, finishing): 1 s
	// was too short on a loaded machine (load average above 30)
	const margin = 5 * time.Second
	s := startServer(t, ServerConfig{HoldMargin: margin, Log: testLog{t}})
	m, c := rawSession(t, s, validSetup())
	if m.Type != control.TypeReady {
		t.Fatalf("ready: %+v", m)
	}
	// the client goes silent; the server must close the connection once the slot is due back
	// (DefaultHoldMargin, 30 s, would be far past this deadline)
	_ = c.SetReadDeadline(time.Now().Add(3 * margin))
	if _, err := io.ReadAll(c); err != nil {
		t.Fatalf("the server did not end the silent test: %v", err)
	}
	rep := runClient(t, s, ClientConfig{Profile: "TCP_RR", Duration: 100 * time.Millisecond})
	if rep.Sample.Error != "" {
		t.Fatal(rep.Sample.Error)
	}
}

// Absurd requests are refused with the field and the limit, and the server goes on serving.
func TestAbsurdRequests(t *testing.T) {
	s := startServer(t, ServerConfig{})
	rmem, err := readSysctlInt("/proc/sys/net/core/rmem_max")
	tests := []struct {
		name string
		mod  func(*control.Setup)
		want string
	}{
		{"duration of 100 years", func(st *control.Setup) { st.DurationNs = int64(100 * 365 * 24 * time.Hour) }, "durationNs"},
		{"negative duration", func(st *control.Setup) { st.DurationNs = -1 }, "durationNs"},
		{"warm-up of a week", func(st *control.Setup) { st.WarmupNs = int64(7 * 24 * time.Hour) }, "warmupNs"},
		{"a million flows", func(st *control.Setup) { st.Parallel = 1 << 20 }, "parallel"},
		{"burst of 2^31-1", func(st *control.Setup) { st.Burst = 1<<31 - 1 }, "burst"},
		{"2 GiB messages", func(st *control.Setup) { st.MessageBytes = 2 << 30 }, "messageBytes"},
		{"8 GiB socket buffer", func(st *control.Setup) { st.RecvBufferBytes = 8 << 30 }, "socket buffer"},
		{"CPU 4095", func(st *control.Setup) { st.ServerCPU = control.MaxCPU }, "serverCPU"},
		{"CPU 100000", func(st *control.Setup) { st.ServerCPU = 100000 }, "serverCPU"},
	}
	if err == nil && rmem < control.MaxSocketBuffer {
		tests = append(tests, struct {
			name string
			mod  func(*control.Setup)
			want string
		}{"1 GiB receive buffer, above rmem_max", func(st *control.Setup) { st.RecvBufferBytes = control.MaxSocketBuffer }, "net.core.rmem_max"})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := validSetup()
			tc.mod(&st)
			// the client library refuses these before sending; speak the protocol by hand
			body := fmt.Sprintf(`{"type":"setup","setup":{"profile":%q,"durationNs":%d,"warmupNs":%d,"messageBytes":%d,"responseBytes":%d,"parallel":%d,"burst":%d,"recvBufferBytes":%d,"serverCPU":%d}}`,
				st.Profile, st.DurationNs, st.WarmupNs, st.MessageBytes, st.ResponseBytes, st.Parallel, st.Burst, st.RecvBufferBytes, st.ServerCPU)
			m := rawFrames(t, s, []byte(body))
			if m == nil || m.Type != control.TypeError || !strings.Contains(m.Error, tc.want) {
				t.Fatalf("answer %+v, want an error naming %q", m, tc.want)
			}
			t.Logf("refused: %s", m.Error)
		})
	}
	rep := runClient(t, s, ClientConfig{Profile: "TCP_RR", Duration: 100 * time.Millisecond})
	if rep.Sample.Error != "" {
		t.Fatal(rep.Sample.Error)
	}
}

// rawFrames sends hello and then body as one frame and returns the server's answer to it (nil
// when the server closed the connection without one).
func rawFrames(t *testing.T, s *Server, body []byte) *control.Message {
	t.Helper()
	c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port())))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	if err := control.Encode(c, &control.Message{Type: control.TypeHello, Hello: &control.Hello{Version: control.Version, Token: testToken}}); err != nil {
		t.Fatal(err)
	}
	if _, err := control.Decode(c); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(frameOf(body)); err != nil {
		t.Fatal(err)
	}
	m, err := control.Decode(c)
	if err != nil {
		return nil
	}
	return m
}

func frameOf(body []byte) []byte {
	b := append([]byte(control.Magic), byte(len(body)>>24), byte(len(body)>>16), byte(len(body)>>8), byte(len(body)))
	return append(b, body...)
}

// Accept errors such as EMFILE pause the server; it does not exit. Running this process out
// of descriptors for real would break every other test in the binary, so a listener returns
// the real errno a few times before handing over real connections.
func TestAcceptErrorsBackOff(t *testing.T) {
	s := startServerWith(t, ServerConfig{}, func(ln net.Listener) net.Listener {
		return &failingListener{Listener: ln, errs: []error{
			&net.OpError{Op: "accept", Net: "tcp", Err: syscall.EMFILE},
			&net.OpError{Op: "accept", Net: "tcp", Err: syscall.ENFILE},
			&net.OpError{Op: "accept", Net: "tcp", Err: syscall.ECONNABORTED},
		}}
	})
	rep := runClient(t, s, ClientConfig{Profile: "TCP_RR", Duration: 100 * time.Millisecond})
	if rep.Sample.Error != "" {
		t.Fatal(rep.Sample.Error)
	}
}

type failingListener struct {
	net.Listener
	mu   sync.Mutex
	errs []error
}

func (l *failingListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	if len(l.errs) > 0 {
		err := l.errs[0]
		l.errs = l.errs[1:]
		l.mu.Unlock()
		return nil, err
	}
	l.mu.Unlock()
	return l.Listener.Accept()
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

type testLog struct{ t *testing.T }

func (l testLog) Write(b []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}
