package loadgen

import (
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

// TestTCPRRClientEnd checks how a TCP_RR client flow ends when the peer misbehaves. RR
// connections have no socket timeouts, so a flow blocked in read is ended by the session
// shutting the socket down (abort); the error must say why, not report a bare EOF.
func TestTCPRRClientEnd(t *testing.T) {
	for _, tc := range []struct {
		name      string
		answer    int  // responses the peer sends before it goes quiet
		stopFirst bool // the window closed before the connection went away
		peerClose bool // the peer closes (else: the session shuts the socket down)
		want      string
	}{
		{"responses missing after the window", 5, true, false, "1 responses still outstanding after the window"},
		{"peer closes during the window", 5, false, true, "receive response: connection closed by peer"},
		{"peer closes after the window", 3, true, true, "1 responses still outstanding after the window"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(fds[0])
			peerClosed := false
			defer func() {
				if !peerClosed {
					unix.Close(fds[1])
				}
			}()
			cli := &flowState{fd: fds[0]}
			var phase atomic.Int32
			phase.Store(phaseMeasure)
			var stop atomic.Bool
			done := make(chan error, 1)
			go func() { done <- tcpRRClient(cli, 1, 1, 0, &phase, stop.Load) }()

			// the peer: answer the requests it is told to, then read one more and go quiet
			buf := make([]byte, 1)
			for i := 0; i <= tc.answer; i++ {
				if err := recvFull(fds[1], buf, nil); err != nil {
					t.Fatalf("peer read %d: %v", i, err)
				}
				if i < tc.answer {
					if err := sendAll(fds[1], buf, nil); err != nil {
						t.Fatalf("peer write %d: %v", i, err)
					}
				}
			}
			if tc.stopFirst {
				stop.Store(true)
			}
			if tc.peerClose {
				unix.Close(fds[1])
				peerClosed = true
			} else {
				_ = unix.Shutdown(fds[0], unix.SHUT_RDWR) // what the session's abort does
			}
			err = <-done
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
			if got := cli.c.tx.Load(); got != int64(tc.answer) {
				t.Errorf("client counted %d transactions, peer answered %d", got, tc.answer)
			}
		})
	}
}
