// Package guestexec runs cnperf's own commands inside a virtual machine's guest for the
// Kubernetes platform's VM endpoints: there is no exec API into a guest, and cnperf keeps no
// SSH keys. The guest's /init runs `cnperf agent serve --exec-port N`; a client that presents
// the run's token (the agent token, compared in constant time) asks it to run one `cnperf ...`
// command and gets its exit code and capped output back. Nothing but the cnperf binary itself
// can be run: argv[0] must be "cnperf".
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
	"strconv"
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

// Request is what a client asks: one cnperf command.
type Request struct {
	Token     string   `json:"token"`
	Argv      []string `json:"argv"`
	TimeoutNs int64    `json:"timeoutNs,omitempty"`
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
	// Log receives one line per command (nil: none).
	Log io.Writer
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
	if err := checkArgv(req.Argv); err != nil {
		return Response{ExitCode: -1, Error: err.Error()}
	}
	timeout := time.Duration(req.TimeoutNs)
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	timeout = min(timeout, MaxTimeout)
	self := s.Self
	if self == "" {
		var err error
		if self, err = os.Executable(); err != nil {
			return Response{ExitCode: -1, Error: "cannot find the cnperf executable: " + err.Error()}
		}
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, self, req.Argv[1:]...)
	cmd.Env = append(os.Environ(), "CNPERF_AGENT_TOKEN="+s.Token)
	stdout, stderr := &capbuf.Buffer{Max: MaxOutputBytes}, &capbuf.Buffer{Max: MaxOutputBytes}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = time.Second // a child that keeps the pipes open does not hold the answer
	err := cmd.Run()
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

// checkArgv refuses anything but a cnperf command.
func checkArgv(argv []string) error {
	if len(argv) < 2 || argv[0] != "cnperf" {
		return fmt.Errorf("only cnperf's own commands run here (argv[0] must be \"cnperf\", with a subcommand), not %q", argv)
	}
	return nil
}

// Run asks the exec server at addr to run argv with token, waiting at most timeout (plus a
// margin for the answer). The error is set when no answer came or the server refused.
func Run(ctx context.Context, addr, token string, argv []string, timeout time.Duration) (Response, error) {
	if err := checkArgv(argv); err != nil {
		return Response{}, err
	}
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
	b, _ := json.Marshal(Request{Token: token, Argv: argv, TimeoutNs: int64(timeout)})
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
