package loadgen

import (
	"fmt"
	"net/netip"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// crrClient opens a connection per transaction: connect, send the request, read the response,
// close. Graceful close sends FIN (the client is the active closer and keeps TIME_WAIT, like
// netperf's TCP_CRR); rst sets SO_LINGER 0 so close sends RST and leaves no TIME_WAIT.
func crrClient(f *flowState, a netip.Addr, port, reqSize, respSize int, rst bool, phase *atomic.Int32, stop func() bool) error {
	sa := sockaddr(a, port)
	fam := family(a)
	req := make([]byte, reqSize)
	resp := make([]byte, respSize)
	linger := &unix.Linger{Onoff: 1, Linger: 0}
	hist := f.hist
	tv := unix.NsecToTimeval(int64(2 * ioTimeout))
	var y yielder
	for !stop() {
		y.tick()
		var t0 int64
		if hist != nil {
			t0 = nanotime()
		}
		fd, err := unix.Socket(fam, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("socket: %w", err)
		}
		if rst {
			if err := unix.SetsockoptLinger(fd, unix.SOL_SOCKET, unix.SO_LINGER, linger); err != nil {
				unix.Close(fd)
				return fmt.Errorf("SO_LINGER: %w", err)
			}
		}
		// bounds connect, send and receive so a dead server cannot hang the client
		_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv)
		_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
		for {
			err = unix.Connect(fd, sa)
			if err != unix.EINTR {
				break
			}
		}
		if err != nil {
			unix.Close(fd)
			if err == unix.EADDRNOTAVAIL {
				return fmt.Errorf("connect: %w (local ports exhausted, probably by TIME_WAIT: use --crr-close rst, "+
					"or set net.ipv4.tcp_tw_reuse=1 / widen net.ipv4.ip_local_port_range)", err)
			}
			if err == unix.EAGAIN || err == unix.EINPROGRESS {
				if stop() {
					return nil
				}
				return fmt.Errorf("connect: timed out")
			}
			return fmt.Errorf("connect: %w", err)
		}
		if err := sendAll(fd, req, stop); err != nil {
			unix.Close(fd)
			return fmt.Errorf("send request: %w", err)
		}
		if err := recvFull(fd, resp, stop); err != nil {
			unix.Close(fd)
			if err == errStopped {
				return nil
			}
			return fmt.Errorf("receive response: %w", err)
		}
		unix.Close(fd)
		if hist != nil && phase.Load() == phaseMeasure {
			hist.Record(nanotime() - t0)
		}
		f.c.tx.Add(1)
	}
	return nil
}

// crrServer accepts connections on the shared listening socket (several servers block in
// accept on it), answers one request each and closes after the client has.
func crrServer(f *flowState, lfd, reqSize, respSize int, stop func() bool) error {
	req := make([]byte, reqSize)
	resp := make([]byte, respSize)
	var tail [64]byte
	var y yielder
	for {
		y.tick()
		r, _, e := unix.Syscall6(unix.SYS_ACCEPT4, uintptr(lfd), 0, 0, unix.SOCK_CLOEXEC, 0, 0)
		if e != 0 {
			switch e {
			case unix.EINTR, unix.ECONNABORTED:
				continue
			case unix.EAGAIN:
				if stop() {
					return nil
				}
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
		// accepted sockets inherit the listener's SO_RCVTIMEO/SO_SNDTIMEO
		if err := recvFull(fd, req, stop); err != nil {
			unix.Close(fd)
			continue // client gone or reset: not a transaction
		}
		if err := sendAll(fd, resp, stop); err != nil {
			unix.Close(fd)
			continue
		}
		f.c.tx.Add(1)
		// wait for the client's FIN (graceful) or RST, so the client is the active closer
		for {
			n, err := recvSock(fd, tail[:])
			if n > 0 || err == unix.EINTR || (err == unix.EAGAIN && !stop()) {
				continue
			}
			break
		}
		unix.Close(fd)
	}
}
