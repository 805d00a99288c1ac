package loadgen

import (
	"fmt"
	"net/netip"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// crrClient opens a connection per transaction: connect, send the request, read the response,
// close. Graceful (netperf 2.7.1's TCP_CRR): the server closes as soon as it has sent the
// response, so it is the active closer and keeps TIME_WAIT; the client shuts its side down,
// waits for the server's FIN and closes. The client's network namespace then holds no TIME_WAIT
// socket, so its connects never search for a free local port among tens of thousands of them
// (outside loopback, where tcp_tw_reuse=2 does not reuse them, that search cut the rate of a
// Kubernetes pod's second sample from 6 k to 300 conn/s). rst sets SO_LINGER 0 so close sends
// RST at once and no side keeps TIME_WAIT.
//
// CRR sockets have no timeouts: a socket timeout arms and cancels a kernel timer in every
// blocking call, and together with the Go runtime's bookkeeping around socket() and close()
// (made raw system calls here: they do not block) that cost 10 % of the connection rate with
// 8 flows on loopback. A connection still open 3 s after the window is shut down by the
// session's abort (flowState.shutdownConn).
func crrClient(f *flowState, a netip.Addr, port, reqSize, respSize int, rst bool, phase *atomic.Int32, stop func() bool) error {
	sa := sockaddr(a, port)
	fam := uintptr(family(a))
	req := make([]byte, reqSize)
	resp := make([]byte, respSize)
	hist := f.hist
	var y yielder
	for !stop() {
		y.tick()
		var t0 int64
		if hist != nil {
			t0 = nanotime()
		}
		r, _, e := unix.RawSyscall(unix.SYS_SOCKET, fam, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if e != 0 {
			return fmt.Errorf("socket: %w", e)
		}
		f.openConn(int(r))
		err := crrTransaction(int(r), sa, req, resp, rst)
		f.closeConn()
		if err != nil {
			if stop() {
				return fmt.Errorf("the connection open when the window closed did not complete: %w", err)
			}
			return err
		}
		if hist != nil && phase.Load() == phaseMeasure {
			hist.Record(nanotime() - t0)
		}
		f.c.tx.Add(1)
	}
	return nil
}

// crrTransaction is one CRR transaction on a new socket, up to (not including) its close.
func crrTransaction(fd int, sa unix.Sockaddr, req, resp []byte, rst bool) error {
	if rst {
		if err := unix.SetsockoptLinger(fd, unix.SOL_SOCKET, unix.SO_LINGER, &unix.Linger{Onoff: 1, Linger: 0}); err != nil {
			return fmt.Errorf("SO_LINGER: %w", err)
		}
	}
	var err error
	for interrupted := false; ; interrupted = true {
		err = unix.Connect(fd, sa)
		if err == unix.EINTR {
			continue // a blocking connect goes on in the kernel; calling again waits for it
		}
		if err == unix.EISCONN && interrupted {
			err = nil
		}
		break
	}
	if err == unix.EADDRNOTAVAIL {
		return fmt.Errorf("connect: %w (local ports exhausted, probably by TIME_WAIT: use --crr-close rst, "+
			"or set net.ipv4.tcp_tw_reuse=1 / widen net.ipv4.ip_local_port_range)", err)
	}
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	if err := sendAll(fd, req, nil); err != nil {
		return fmt.Errorf("send request: %w", err)
	}
	if err := recvFull(fd, resp, nil); err != nil {
		return fmt.Errorf("receive response: %w", err)
	}
	if rst {
		return nil
	}
	// Wait for the server's FIN (it closes right after its response), then close: the client
	// ends in LAST_ACK and the server keeps TIME_WAIT. netperf half-closes first instead
	// (shutdown(SHUT_WR), then recv until 0); when its FIN crosses the server's (a simultaneous
	// close, every connection on the e2e cluster's Cilium, whose server FIN came after the
	// response) both sides keep TIME_WAIT, and after ~14 k connections every connect searches
	// the port range: 4 k conn/s in the first sample, 450 in the next. The peer is always
	// crrServer, which closes first; the session's abort ends this wait otherwise.
	var tail [64]byte
	for {
		n, err := recvSock(fd, tail[:])
		switch {
		case n > 0 || err == unix.EINTR:
			continue
		case err != nil:
			return fmt.Errorf("wait for the server's close: %w", err)
		}
		return nil
	}
}

// crrServer accepts connections on the shared listening socket (several servers block in
// accept on it), answers one request each and closes at once, as netperf's netserver does: the
// server is the active closer and keeps TIME_WAIT (see crrClient). The session ends it by
// shutting the listening socket down (accept then fails with EINVAL).
func crrServer(f *flowState, lfd, reqSize, respSize int, stop func() bool) error {
	req := make([]byte, reqSize)
	resp := make([]byte, respSize)
	var y yielder
	for {
		y.tick()
		r, _, e := unix.Syscall6(unix.SYS_ACCEPT4, uintptr(lfd), 0, 0, unix.SOCK_CLOEXEC, 0, 0)
		if e != 0 {
			switch e {
			case unix.EINTR, unix.ECONNABORTED:
				continue
			case unix.EINVAL:
				return nil // listener shut down
			case unix.EMFILE, unix.ENFILE, unix.ENOBUFS, unix.ENOMEM:
				if stop() {
					return nil
				}
				continue
			}
			if stop() {
				return nil
			}
			return fmt.Errorf("accept: %w", e)
		}
		fd := int(r)
		f.openConn(fd)
		if recvFull(fd, req, nil) == nil && sendAll(fd, resp, nil) == nil {
			f.c.tx.Add(1)
		} // else the client is gone or reset: not a transaction
		f.closeConn()
	}
}
