package pathmtu

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestReplyReadAfterTheDeadline: a reply the kernel queued is an answer even when the prober
// reads it only after its deadline — it was not running when the deadline came, as happens on
// a busy machine — and with nothing queued a deadline already past gives up at once.
func TestReplyReadAfterTheDeadline(t *testing.T) {
	for _, target := range []string{"127.0.0.1", "::1"} {
		t.Run(target, func(t *testing.T) {
			pg, err := openPinger(netip.MustParseAddr(target))
			if err != nil {
				t.Skipf("no ICMP socket here: %v", err)
			}
			defer pg.close()
			const size = 1000
			if sent, err := pg.send(size); !sent || err != nil {
				t.Fatalf("send: sent %v, %v", sent, err)
			}
			waitQueuedReply(t, pg)
			ok, tooBig, err := pg.receive(context.Background(), size, time.Now().Add(-time.Second))
			if !ok || tooBig != 0 || err != nil {
				t.Errorf("the queued reply, read after the deadline: answered %v, too big %d, %v", ok, tooBig, err)
			}
			start := time.Now()
			ok, _, err = pg.receive(context.Background(), size, time.Now().Add(-time.Second))
			if ok || err != nil || time.Since(start) > time.Second {
				t.Errorf("nothing queued, deadline past: answered %v, %v after %s", ok, err, time.Since(start))
			}
		})
	}
}

// waitQueuedReply waits (5 s at most) until the reply to pg's last request is the first message
// queued on its socket, dropping the messages before it (a raw socket also gets the request
// itself on loopback, and every other ICMP message of the host).
func waitQueuedReply(t *testing.T, pg *pinger) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		fds := []unix.PollFd{{Fd: int32(pg.fd), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, 100); err != nil && !errors.Is(err, unix.EINTR) {
			t.Fatal(err)
		}
		n, from, err := unix.Recvfrom(pg.fd, pg.buf, unix.MSG_PEEK|unix.MSG_DONTWAIT)
		if err != nil {
			continue
		}
		if msg, ok := pg.icmpOf(pg.buf[:n]); ok {
			if reply, _ := pg.parse(msg, from); reply {
				return
			}
		}
		_, _, _ = unix.Recvfrom(pg.fd, pg.buf, unix.MSG_DONTWAIT) // not the reply: drop it
	}
	t.Fatal("no echo reply queued within 5s")
}
