package guestexec

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// serve starts a Server whose "cnperf" is self on a loopback port and returns its address.
func serve(t *testing.T, self string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- (&Server{Token: "tok", Self: self}).Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return l.Addr().String()
}

func TestRun(t *testing.T) {
	addr := serve(t, "/bin/sh")
	ctx := context.Background()
	cases := []struct {
		name     string
		token    string
		argv     []string
		timeout  time.Duration
		code     int
		stdout   string
		stderr   string
		errText  string // of Run
		respText string // of Response.Error
	}{
		{name: "runs", token: "tok", argv: []string{"cnperf", "-c", "echo out; echo err >&2; exit 3"}, code: 3, stdout: "out\n", stderr: "err\n"},
		{name: "token env", token: "tok", argv: []string{"cnperf", "-c", "printf %s \"$CNPERF_AGENT_TOKEN\""}, stdout: "tok"},
		{name: "wrong token", token: "nope", argv: []string{"cnperf", "-c", "echo no"}, errText: "refused: wrong or missing token"},
		{name: "timeout", token: "tok", argv: []string{"cnperf", "-c", "sleep 5"}, timeout: 200 * time.Millisecond, code: -1, respText: "timed out after 200ms"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, err := Run(ctx, addr, c.token, c.argv, c.timeout)
			if c.errText != "" {
				if err == nil || !strings.Contains(err.Error(), c.errText) || !errors.Is(err, ErrRefused) {
					t.Fatalf("err = %v, want %q", err, c.errText)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if resp.ExitCode != c.code || string(resp.Stdout) != c.stdout || string(resp.Stderr) != c.stderr || resp.Error != c.respText {
				t.Errorf("got %+v (stdout %q, stderr %q), want code %d stdout %q stderr %q error %q",
					resp, resp.Stdout, resp.Stderr, c.code, c.stdout, c.stderr, c.respText)
			}
		})
	}
}

func TestOnlyCnperfAndToolsRun(t *testing.T) {
	// the client refuses only what cannot name a guest program; the server decides
	for _, argv := range [][]string{nil, {}, {"/usr/local/bin/cnperf", "version"}, {"/bin/sh", "-c", "id"}} {
		if _, err := Run(context.Background(), "127.0.0.1:1", "tok", argv, 0); err == nil || !strings.Contains(err.Error(), "by name") {
			t.Errorf("Run(%q) = %v, want refused before dialing", argv, err)
		}
	}
	cases := []struct {
		name  string
		tools []string
		argv  string
		ran   bool
	}{
		{"cnperf", nil, `["cnperf","-c","exit 0"]`, true},
		{"cnperf without a subcommand", nil, `["cnperf"]`, false},
		{"a shell", nil, `["sh","-c","id"]`, false},
		{"a shell, tools listed", []string{"true", "echo"}, `["sh","-c","id"]`, false},
		{"a listed tool", []string{"true", "echo"}, `["echo","hi"]`, true},
		{"a listed tool, bare", []string{"true"}, `["true"]`, true},
		{"a path to a listed tool", []string{"echo"}, `["/bin/echo","hi"]`, false},
		{"a listed tool not on PATH", []string{"cnperf-no-such-tool"}, `["cnperf-no-such-tool"]`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := &Server{Token: "tok", Self: "/bin/sh", Tools: c.tools}
			resp := s.run(context.Background(), []byte(`{"token":"tok","argv":`+c.argv+`}`), nil)
			if ran := resp.Error == ""; ran != c.ran {
				t.Errorf("ran %v (%+v), want %v", ran, resp, c.ran)
			}
			if !c.ran && !strings.Contains(resp.Error, "only cnperf's own commands") && !strings.Contains(resp.Error, "not in this guest") {
				t.Errorf("refusal %q does not say what runs", resp.Error)
			}
		})
	}
}

// TestBackground: a background command answers when ready (its text, its port), or with its
// output when it ends first, or fails after its timeout; Stop ends the ones still running.
func TestBackground(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// sh stands for a tool; "listen" is a python3 one-liner holding a port (python3 is on the
	// machines that run these tests, as on the e2e hosts)
	s := &Server{Token: "tok", Self: "/bin/sh", Tools: []string{"sleep", "python3"}}
	cases := []struct {
		name    string
		req     Request
		errText string
		stdout  string
	}{
		{name: "ready text", req: Request{Argv: []string{"cnperf", "-c", "echo listening; sleep 30"}, Ready: "listening"}, stdout: "listening\n"},
		{name: "started", req: Request{Argv: []string{"sleep", "30"}}},
		{name: "ready port", req: Request{Argv: []string{"python3", "-c", "import socket,time;s=socket.socket();" +
			"s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1);s.bind(('127.0.0.1'," + strconv.Itoa(port) + "));s.listen();time.sleep(30)"},
			ReadyPort: port}},
		{name: "ended first", req: Request{Argv: []string{"cnperf", "-c", "echo bad flag; exit 2"}, Ready: "never"},
			errText: "ended before it was ready", stdout: "bad flag\n"},
		{name: "not ready in time", req: Request{Argv: []string{"sleep", "30"}, Ready: "never", TimeoutNs: int64(300 * time.Millisecond)},
			errText: "was not ready after 300ms"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.req.Token, c.req.Background = "tok", true
			b, _ := json.Marshal(c.req)
			resp := s.run(ctx, b, nil)
			if (resp.Error == "") != (c.errText == "") || !strings.Contains(resp.Error, c.errText) || string(resp.Stdout) != c.stdout {
				t.Errorf("got %+v (stdout %q), want error %q stdout %q", resp, resp.Stdout, c.errText, c.stdout)
			}
		})
	}
	resp := s.run(ctx, []byte(`{"token":"tok","stop":true}`), nil)
	if resp.Error != "" || string(resp.Stdout) != "3 background command(s) ended\n" {
		t.Errorf("stop: %+v (%q), want the three still running ended", resp, resp.Stdout)
	}
	if c, err := net.DialTimeout("tcp", Addr("127.0.0.1", port), time.Second); err == nil {
		_ = c.Close()
		t.Error("the background listener still accepts after stop")
	}
	if resp := s.run(ctx, []byte(`{"token":"nope","stop":true}`), nil); resp.Error != ErrRefused.Error() {
		t.Errorf("stop with a wrong token: %+v", resp)
	}
}
