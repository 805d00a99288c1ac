package loadgen

import (
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestCRRClientAbort checks that a TCP_CRR client blocked on a connection that is never
// answered (CRR sockets have no timeouts) is woken by the session's abort and says why.
func TestCRRClientAbort(t *testing.T) {
	lo := netip.MustParseAddr("127.0.0.1")
	lfd, port, err := listenTCP(lo, 0, 16) // the kernel completes handshakes; nobody answers
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(lfd)
	f := &flowState{fd: -1}
	var phase atomic.Int32
	var stop atomic.Bool
	done := make(chan error, 1)
	go func() { done <- crrClient(f, lo, port, 1, 1, false, &phase, stop.Load) }()

	// wait until the flow is blocked on its first connection
	deadline := time.Now().Add(5 * time.Second)
	for {
		f.connMu.Lock()
		open := f.connPlus1 > 0
		f.connMu.Unlock()
		if open {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the client opened no connection")
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case err := <-done:
		t.Fatalf("the client returned before the abort: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	stop.Store(true)
	f.shutdownConn() // what the session's abort does
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "the connection open when the window closed did not complete") {
			t.Fatalf("error %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the abort did not wake the client")
	}
	if n := f.c.tx.Load(); n != 0 {
		t.Errorf("%d transactions counted, none was answered", n)
	}
	f.connMu.Lock()
	defer f.connMu.Unlock()
	if f.connPlus1 != 0 {
		t.Errorf("the connection was left open")
	}
}
