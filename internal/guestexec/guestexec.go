// Package guestexec runs cnperf's own commands and the guest drivers' tools inside a virtual
// machine's guest for the Kubernetes platform's VM endpoints: there is no exec API into a
// guest, and cnperf keeps no SSH keys. The guest's /init runs `cnperf agent serve --exec-port N`; a client that presents
// the run's token (the agent token, compared in constant time) asks it to run one command and
// gets its exit code and capped output back. Only two kinds of command run: cnperf's own
// (argv[0] "cnperf", the binary itself) and the tools of the drivers the guest carries
// (Server.Tools, an explicit list the agent derives from those drivers, found on the guest's
// PATH); nothing else, no shell.
//
// A command runs to its end, or, with Request.Background (a driver's server: netserver,
// iperf3 -s), starts and keeps running until the guest's agent exits or a Stop request; the
// answer then comes when it is ready (its Ready text in its output, or its ReadyPort accepting
// on the guest's loopback), or with its output when it ended first.
//
// One TCP connection carries one command: the client sends one JSON Request line, the server
// answers one JSON Response line and closes.
package guestexec

import (
	"bufio"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cnperf/cnperf/internal/capbuf"
)

// DefaultPort is the port the cnperf guest's exec server listens on.
const DefaultPort = 7102

// Limits.
const (
	MaxRequestBytes = 64 << 10 // a request line
	MaxOutputBytes  = 1 << 20  // each of a command's streams
	MaxTimeout      = 2 * time.Hour
	// DefaultTimeout bounds a command whose request names none.
	DefaultTimeout = 10 * time.Minute
)

// Request is what a client asks: one command.
type Request struct {
	Token     string   `json:"token"`
	Argv      []string `json:"argv"`
	TimeoutNs int64    `json:"timeoutNs,omitempty"`
	// Background starts Argv and leaves it running (a server); the answer says it is ready:
	// Ready appeared in its output, or ReadyPort accepts TCP on 127.0.0.1 (both empty: once
	// started), within TimeoutNs.
	Background bool   `json:"background,omitempty"`
	Ready      string `json:"ready,omitempty"`
	ReadyPort  int    `json:"readyPort,omitempty"`
	// Stop ends every background command (Argv is empty then).
	Stop bool `json:"stop,omitempty"`
}

// Response is the command's outcome. Error is set when it could not run (or the request was
// refused); ExitCode is -1 then.
type Response struct {
	ExitCode int    `json:"exitCode"`
	Stdout   []byte `json:"stdout,omitempty"`
	Stderr   []byte `json:"stderr,omitempty"`
	Error    string `json:"error,omitempty"`
}

// ErrRefused is the server's answer to a wrong token.
var ErrRefused = errors.New("refused: wrong or missing token")

// Server runs the commands of clients that present Token.
type Server struct {
	Token string
	// Self is the cnperf executable argv[0] stands for (default: os.Executable()).
	Self string
	// Tools are the other programs argv[0] may name, looked up on PATH: the tools of the
	// drivers the guest carries (driver.Tools). Nothing else runs.
	Tools []string
	// Log receives one line per command (nil: none).
	Log io.Writer

	mu         sync.Mutex
	background []bgCmd
}

// bgCmd is a background command and what closes when it has ended.
type bgCmd struct {
	cmd   *exec.Cmd
	ended chan struct{}
}

// Serve accepts connections on l until ctx ends, each command in its own goroutine.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	if s.Token == "" {
		return errors.New("guest exec: no token")
	}
	go func() {
		<-ctx.Done()
		_ = l.Close()
	}()
	for {
		c, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		go s.handle(ctx, c)
	}
}

func (s *Server) handle(ctx context.Context, c net.Conn) {
	defer func() { _ = c.Close() }()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReaderSize(io.LimitReader(c, MaxRequestBytes), 4096).ReadBytes('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	resp := s.run(ctx, line, c.RemoteAddr())
	b, _ := json.Marshal(resp)
	_ = c.SetWriteDeadline(time.Now().Add(30 * time.Second))
	_, _ = c.Write(append(b, '\n'))
}

func (s *Server) logf(format string, a ...any) {
	if s.Log != nil {
		fmt.Fprintf(s.Log, "guest exec: "+format+"\n", a...)
	}
}

// run checks one request line and runs its command.
func (s *Server) run(ctx context.Context, line []byte, from net.Addr) Response {
	var req Request
	if err := json.Unmarshal(line, &req); err != nil {
		return Response{ExitCode: -1, Error: "bad request: " + err.Error()}
	}
	if subtle.ConstantTimeCompare([]byte(req.Token), []byte(s.Token)) != 1 {
		s.logf("refused a request from %s: wrong token", from)
		return Response{ExitCode: -1, Error: ErrRefused.Error()}
	}
	if req.Stop {
		n := s.stopBackground()
		s.logf("stop from %s: %d background command(s) ended", from, n)
		return Response{Stdout: []byte(fmt.Sprintf("%d background command(s) ended\n", n))}
	}
	if err := checkArgv(req.Argv, s.Tools); err != nil {
		return Response{ExitCode: -1, Error: err.Error()}
	}
	timeout := time.Duration(req.TimeoutNs)
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	timeout = min(timeout, MaxTimeout)
	prog, err := s.program(req.Argv[0])
	if err != nil {
		return Response{ExitCode: -1, Error: err.Error()}
	}
	if req.Background {
		return s.start(ctx, req, prog, timeout, from)
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, prog, req.Argv[1:]...)
	cmd.Env = append(os.Environ(), "CNPERF_AGENT_TOKEN="+s.Token)
	stdout, stderr := &capbuf.Buffer{Max: MaxOutputBytes}, &capbuf.Buffer{Max: MaxOutputBytes}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = time.Second // a child that keeps the pipes open does not hold the answer
	err = cmd.Run()
	resp := Response{Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case cctx.Err() != nil && ctx.Err() == nil:
		resp.ExitCode, resp.Error = -1, fmt.Sprintf("timed out after %s", timeout)
	case errors.As(err, &ee):
		resp.ExitCode = ee.ExitCode()
	default:
		resp.ExitCode, resp.Error = -1, err.Error()
	}
	s.logf("%s from %s: exit %d", req.Argv[:min(len(req.Argv), 3)], from, resp.ExitCode)
	return resp
}

// checkArgv refuses anything but a cnperf command or one of tools.
func checkArgv(argv []string, tools []string) error {
	if len(argv) >= 2 && argv[0] == "cnperf" || len(argv) >= 1 && slices.Contains(tools, argv[0]) {
		return nil
	}
	also := ""
	if len(tools) > 0 {
		also = " or one of the tools " + strings.Join(tools, ", ")
	}
	return fmt.Errorf("only cnperf's own commands (argv[0] \"cnperf\", with a subcommand)%s run here, not %q", also, argv)
}

// program is the executable argv0 names: the cnperf binary, or a tool found on PATH.
func (s *Server) program(argv0 string) (string, error) {
	if argv0 != "cnperf" {
		p, err := exec.LookPath(argv0)
		if err != nil {
			return "", fmt.Errorf("%s is not in this guest: %w", argv0, err)
		}
		return p, nil
	}
	if s.Self != "" {
		return s.Self, nil
	}
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("cannot find the cnperf executable: %w", err)
	}
	return self, nil
}

// start runs a background command until ctx ends or a Stop request, and answers when it is
// ready, or ended, or after timeout.
func (s *Server) start(ctx context.Context, req Request, prog string, timeout time.Duration, from net.Addr) Response {
	cmd := exec.CommandContext(ctx, prog, req.Argv[1:]...)
	cmd.Env = append(os.Environ(), "CNPERF_AGENT_TOKEN="+s.Token)
	out := &capbuf.Buffer{Max: MaxOutputBytes}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		return Response{ExitCode: -1, Error: err.Error()}
	}
	bg := bgCmd{cmd: cmd, ended: make(chan struct{})}
	s.mu.Lock()
	s.background = append(s.background, bg)
	s.mu.Unlock()
	ended := make(chan error, 1)
	go func() { ended <- cmd.Wait(); close(bg.ended) }()
	deadline := time.After(timeout)
	for {
		ready := req.Ready == "" && req.ReadyPort == 0
		if req.Ready != "" && strings.Contains(string(out.Bytes()), req.Ready) {
			ready = true
		}
		if req.ReadyPort > 0 {
			if c, err := net.DialTimeout("tcp", Addr("127.0.0.1", req.ReadyPort), time.Second); err == nil {
				_ = c.Close()
				ready = true
			}
		}
		if ready {
			s.logf("%s from %s: started in the background", req.Argv[:min(len(req.Argv), 3)], from)
			return Response{Stdout: out.Bytes()}
		}
		select {
		case err := <-ended:
			resp := Response{ExitCode: -1, Stdout: out.Bytes(), Error: fmt.Sprintf("%s ended before it was ready: %v", req.Argv[0], err)}
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				resp.ExitCode = ee.ExitCode()
			}
			return resp
		case <-deadline:
			_ = cmd.Process.Kill()
			if err := <-ended; err != nil {
				s.logf("%s killed after %s: %v", req.Argv[0], timeout, err)
			}
			return Response{ExitCode: -1, Stdout: out.Bytes(), Error: fmt.Sprintf("%s was not ready after %s", req.Argv[0], timeout)}
		case <-ctx.Done():
			return Response{ExitCode: -1, Error: ctx.Err().Error()}
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// stopBackground kills every background command, waits (a few seconds at most) until they
// have ended, and says how many still ran.
func (s *Server) stopBackground() int {
	s.mu.Lock()
	bgs := s.background
	s.background = nil
	s.mu.Unlock()
	n := 0
	for _, bg := range bgs {
		select {
		case <-bg.ended:
			continue // it had ended
		default:
		}
		if bg.cmd.Process.Kill() == nil {
			n++
		}
	}
	for _, bg := range bgs {
		select {
		case <-bg.ended:
		case <-time.After(5 * time.Second):
		}
	}
	return n
}

// Run asks the exec server at addr to run req (its Token is token), waiting at most its
// timeout (plus a margin for the answer). The error is set when no answer came or the server
// refused. The server decides what may run; a client only refuses an empty argv or a path.
func Run(ctx context.Context, addr, token string, argv []string, timeout time.Duration) (Response, error) {
	return Do(ctx, addr, Request{Token: token, Argv: argv, TimeoutNs: int64(timeout)})
}

// Do sends one request (Run's, a background start or a stop) and reads the answer.
func Do(ctx context.Context, addr string, req Request) (Response, error) {
	if !req.Stop && (len(req.Argv) == 0 || strings.ContainsRune(req.Argv[0], '/')) {
		return Response{}, fmt.Errorf("a command names a program of the guest by name (cnperf or a driver's tool), not %q", req.Argv)
	}
	timeout := time.Duration(req.TimeoutNs)
	var d net.Dialer
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := d.DialContext(dctx, "tcp", addr)
	if err != nil {
		return Response{}, fmt.Errorf("guest exec: %w", err)
	}
	defer func() { _ = c.Close() }()
	stop := context.AfterFunc(ctx, func() { _ = c.Close() })
	defer stop()
	b, _ := json.Marshal(req)
	if _, err := c.Write(append(b, '\n')); err != nil {
		return Response{}, fmt.Errorf("guest exec: send: %w", err)
	}
	if timeout > 0 {
		_ = c.SetReadDeadline(time.Now().Add(timeout + 30*time.Second))
	}
	line, err := bufio.NewReaderSize(io.LimitReader(c, 3*MaxOutputBytes), 64<<10).ReadBytes('\n')
	if err != nil && len(line) == 0 {
		if ctx.Err() != nil {
			return Response{}, ctx.Err()
		}
		return Response{}, fmt.Errorf("guest exec %s: no answer: %w", addr, err)
	}
	var resp Response
	if err := json.Unmarshal(line, &resp); err != nil {
		return Response{}, fmt.Errorf("guest exec %s: bad answer: %w", addr, err)
	}
	if resp.Error == ErrRefused.Error() {
		return resp, fmt.Errorf("guest exec %s: %w", addr, ErrRefused)
	}
	return resp, nil
}

// Addr joins a host and port (IPv6 in brackets).
func Addr(host string, port int) string { return net.JoinHostPort(host, strconv.Itoa(port)) }
