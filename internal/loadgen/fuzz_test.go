package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/loadgen/control"
)

var (
	fuzzOnce   sync.Once
	fuzzServer *Server
	fuzzErr    error
)

// liveFuzzServer is one real server shared by every fuzz input (a server per input would
// measure start-up, not the protocol). It is never stopped: the fuzz worker process ends.
func liveFuzzServer() (*Server, error) {
	fuzzOnce.Do(func() {
		fuzzServer, fuzzErr = NewServer(ServerConfig{Bind: "127.0.0.1", Token: testToken,
			SetupTimeout: 500 * time.Millisecond, HoldMargin: time.Second})
		if fuzzErr == nil {
			go func() { _ = fuzzServer.Serve(context.Background()) }()
		}
	})
	return fuzzServer, fuzzErr
}

func fuzzFrame(m *control.Message) []byte {
	body, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return frameOf(body)
}

// FuzzServer writes arbitrary bytes to a live agent's control port. Whatever arrives, the
// agent answers only with well-formed frames, never starts a test (ready, started, result)
// for a client without the run's token — nor its own hello, which would say what it is —,
// closes the connection in bounded time and keeps serving. `make test` runs it for a few seconds; the seeds are in testdata/fuzz/FuzzServer.
func FuzzServer(f *testing.F) {
	hello := fuzzFrame(&control.Message{Type: control.TypeHello, Hello: &control.Hello{Version: control.Version}})
	wrongHello := fuzzFrame(&control.Message{Type: control.TypeHello, Hello: &control.Hello{Version: control.Version,
		Token: "0123456789abcdef0123456789abcdeX"}})
	st := validSetup()
	setup := fuzzFrame(&control.Message{Type: control.TypeSetup, Setup: &st})
	start := fuzzFrame(&control.Message{Type: control.TypeStart})
	f.Add(hello)
	f.Add(append(append([]byte{}, hello...), setup...))
	f.Add(append(append(append([]byte{}, wrongHello...), setup...), start...))
	f.Add(append(append([]byte{}, hello...), start...))
	f.Add(setup)
	f.Add([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	f.Add([]byte("CNPF\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if bytes.Contains(data, []byte(testToken)) {
			t.Skip("input holds the token")
		}
		s, err := liveFuzzServer()
		if err != nil {
			t.Fatal(err)
		}
		c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port())))
		if err != nil {
			t.Fatalf("the agent stopped accepting: %v", err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		go func() {
			_, _ = c.Write(data)
			_ = c.(*net.TCPConn).CloseWrite() // the agent sees the end of the input at once
		}()
		for {
			m, err := control.Decode(c)
			if errors.Is(err, io.EOF) {
				return
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatal("the agent kept the connection open past its setup timeout")
			}
			if errors.Is(err, syscall.ECONNRESET) {
				return // the agent closed with our bytes unread
			}
			if err != nil {
				t.Fatalf("the agent sent what is not a frame: %v", err)
			}
			switch m.Type {
			case control.TypeError:
			default:
				t.Fatalf("the agent answered %q to a client without the token", m.Type)
			}
		}
	})
}
