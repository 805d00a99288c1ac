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
