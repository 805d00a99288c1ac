package guestexec

import (
	"context"
	"errors"
	"net"
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

func TestOnlyCnperfRuns(t *testing.T) {
	for _, argv := range [][]string{nil, {"cnperf"}, {"sh", "-c", "id"}, {"/usr/local/bin/cnperf", "version"}} {
		if _, err := Run(context.Background(), "127.0.0.1:1", "tok", argv, 0); err == nil || !strings.Contains(err.Error(), "only cnperf's own commands") {
			t.Errorf("Run(%q) = %v, want refused before dialing", argv, err)
		}
	}
	// and the server refuses it too, whatever a client sends
	s := &Server{Token: "tok", Self: "/bin/sh"}
	resp := s.run(context.Background(), []byte(`{"token":"tok","argv":["sh","-c","id"]}`), nil)
	if resp.ExitCode != -1 || !strings.Contains(resp.Error, "only cnperf's own commands") {
		t.Errorf("server ran %+v", resp)
	}
}
