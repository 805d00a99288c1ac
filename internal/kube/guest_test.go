package kube

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	utilexec "k8s.io/utils/exec"

	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/guestexec"
)

// TestGuestExecutor: a command for a VM's guest runs as `cnperf agent exec --json` in the relay
// pod, and the Output is the guest command's own (stdout, stderr, exit code), not the relay's; a
// relay that cannot reach the guest is an execution error naming both.
func TestGuestExecutor(t *testing.T) {
	for _, tt := range []struct {
		name      string
		relayCode int
		answer    guestexec.Response
		wantCode  int
		wantOut   string
		wantErr   string
	}{
		{name: "ran", answer: guestexec.Response{ExitCode: 0, Stdout: []byte(`{"sample":1}`)}, wantOut: `{"sample":1}`},
		{name: "command failed", answer: guestexec.Response{ExitCode: 3, Stderr: []byte("refused")}, wantCode: 3},
		{name: "guest refused", answer: guestexec.Response{ExitCode: -1, Error: "refused: wrong or missing token"}, wantCode: -1,
			wantErr: "in VM 10.244.1.7: refused: wrong or missing token"},
		{name: "relay failed", relayCode: 1, wantCode: 1,
			wantErr: "could not reach the agent of VM 10.244.1.7 from pod cnperf-relay-1 (cnperf agent exec exited 1): agent exec: dial tcp: refused"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var argv []string
			stream := func(_ context.Context, _, _, _ string, a []string, stdout, stderr io.Writer) error {
				argv = a
				if tt.relayCode != 0 {
					_, _ = io.WriteString(stderr, pidMarker+"42\nagent exec: dial tcp: refused")
					return utilexec.CodeExitError{Err: io.EOF, Code: tt.relayCode}
				}
				b, _ := json.Marshal(tt.answer)
				_, _ = stdout.Write(append(b, '\n'))
				return nil
			}
			g := &GuestExecutor{Relay: &PodExecutor{Stream: stream, Namespace: "cnperf", Pod: "cnperf-relay-1", Container: "client",
				DefaultTimeout: time.Minute, MaxOutput: 1 << 20}, Host: "10.244.1.7"}
			out := g.Exec(context.Background(), driver.Command{Argv: []string{"cnperf", "agent", "client", "--json"}, Timeout: 20 * time.Second})
			joined := strings.Join(argv, " ")
			if !strings.Contains(joined, "cnperf agent exec --json --host 10.244.1.7 --port 7102 --timeout 20s -- cnperf agent client --json") {
				t.Errorf("relay ran %q", joined)
			}
			if out.ExitCode != tt.wantCode || string(out.Stdout) != tt.wantOut {
				t.Errorf("exit %d stdout %q, want %d %q", out.ExitCode, out.Stdout, tt.wantCode, tt.wantOut)
			}
			if (out.Err == nil) != (tt.wantErr == "") || (out.Err != nil && !strings.Contains(out.Err.Error(), tt.wantErr)) {
				t.Errorf("err %v, want %q", out.Err, tt.wantErr)
			}
			if strings.Join(out.Argv, " ") != "cnperf agent client --json" {
				t.Errorf("Output.Argv %q: the guest's command, not the relay's", out.Argv)
			}
		})
	}
}

// TestGuestExecutorStart: a driver's server starts in the guest in the background, ready by its
// text or else its first TCP port; a server that does not start is an error naming it, with the
// guest's words; Stop asks the guest to end them.
func TestGuestExecutorStart(t *testing.T) {
	netserver := driver.Server{Name: "netperf", Argv: []string{"netserver", "-D", "-p", "12865"},
		Ports: []driver.Port{{Name: "data-0-udp", Port: 12866, Protocol: "UDP"}, {Name: "control", Port: 12865, Protocol: "TCP"}}}
	for _, tt := range []struct {
		name    string
		srv     driver.Server
		answer  guestexec.Response
		wantCmd string
		wantErr string
	}{
		{name: "ready port", srv: netserver, answer: guestexec.Response{},
			wantCmd: "--timeout 1m0s --background --ready-port 12865 -- netserver -D -p 12865"},
		{name: "ready text", srv: driver.Server{Name: "x", Argv: []string{"iperf3", "-s"}, Ready: "Server listening"},
			wantCmd: "--background --ready Server listening -- iperf3 -s"},
		{name: "refused", srv: netserver, answer: guestexec.Response{ExitCode: -1, Stdout: []byte("bind: address in use"),
			Error: "netserver ended before it was ready: exit status 1"}, wantCmd: "--ready-port 12865",
			wantErr: "start server netperf (netserver -D -p 12865): in VM 10.244.1.7: netserver ended before it was ready: " +
				"exit status 1: bind: address in use"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var argv []string
			stream := func(_ context.Context, _, _, _ string, a []string, stdout, _ io.Writer) error {
				argv = a
				b, _ := json.Marshal(tt.answer)
				_, _ = stdout.Write(append(b, '\n'))
				return nil
			}
			g := &GuestExecutor{Relay: &PodExecutor{Stream: stream, Namespace: "cnperf", Pod: "cnperf-relay-1", Container: "client",
				DefaultTimeout: time.Minute, MaxOutput: 1 << 20}, Host: "10.244.1.7"}
			err := g.Start(context.Background(), tt.srv, time.Minute)
			if joined := strings.Join(argv, " "); !strings.Contains(joined, "cnperf agent exec --json --host 10.244.1.7 --port 7102 ") ||
				!strings.Contains(joined, tt.wantCmd) {
				t.Errorf("relay ran %q, want %q in it", joined, tt.wantCmd)
			}
			if (err == nil) != (tt.wantErr == "") || (err != nil && err.Error() != tt.wantErr) {
				t.Errorf("err %v, want %q", err, tt.wantErr)
			}
			if tt.wantErr != "" {
				return
			}
			if err := g.Stop(context.Background()); err != nil || !strings.HasSuffix(strings.Join(argv, " "), "--timeout 30s --stop") {
				t.Errorf("Stop: %v, relay ran %q", err, argv)
			}
		})
	}
}
