package loadgen

import (
	"fmt"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// streamSend writes the message buffer in a loop until stop; then half-closes the socket so
// the receiver sees every byte and then EOF. mode is "", "sendfile" or "zerocopy".
func streamSend(f *flowState, msgSize int, rateBps float64, mode string, stop func() bool) error {
	buf := make([]byte, msgSize)
	for i := range buf {
		buf[i] = byte(i)
	}
	memfd := -1
	if mode == "sendfile" {
		fd, err := unix.MemfdCreate("cnperf-sendfile", unix.MFD_CLOEXEC)
		if err != nil {
			return fmt.Errorf("memfd_create: %w", err)
		}
		defer unix.Close(fd)
		if err := fillFile(fd, buf); err != nil {
			return fmt.Errorf("fill memfd: %w", err)
		}
		memfd = fd
	}
	if mode == "zerocopy" {
		if err := unix.SetsockoptInt(f.fd, unix.SOL_SOCKET, unix.SO_ZEROCOPY, 1); err != nil {
			return fmt.Errorf("SO_ZEROCOPY: %w", err)
		}
	}
	pace := newPacer(rateBps)
	var sent int64
	var y yielder
	for !stop() {
		y.tick()
		var n int
		var err error
		switch mode {
		case "sendfile":
			off := int64(0)
			n, err = unix.Sendfile(f.fd, memfd, &off, msgSize)
		case "zerocopy":
			n, err = unix.SendmsgN(f.fd, buf, nil, nil, unix.MSG_ZEROCOPY)
			if err == unix.ENOBUFS {
				// too many notifications outstanding: reap them and retry
				f.zc.reap(f.fd, true)
				continue
			}
			if n > 0 {
				f.zc.sends++
				if f.zc.sends-f.zc.completions > 64 {
					f.zc.reap(f.fd, false)
				}
				// the kernel's advice (Documentation/networking/msg_zerocopy.rst): when it
				// copies anyway (loopback, veth, devices without scatter-gather), zero-copy
				// only adds work, so stop asking for it
				if f.zc.completions >= 256 && f.zc.copied == f.zc.completions {
					mode = ""
					f.zc.fellBack = true
				}
			}
		default:
			n, err = sendSock(f.fd, buf)
		}
		if n > 0 {
			f.c.bytesTx.Add(int64(n))
			sent += int64(n)
			if pace != nil {
				pace.wait(sent)
			}
		}
		if err != nil {
			if err == unix.EINTR || err == unix.EAGAIN {
				continue
			}
			return fmt.Errorf("send: %w", err)
		}
	}
	if f.zc.sends > 0 {
		deadline := time.Now().Add(2 * time.Second)
		for f.zc.completions < f.zc.sends && time.Now().Before(deadline) {
			f.zc.reap(f.fd, true)
		}
	}
	if err := unix.Shutdown(f.fd, unix.SHUT_WR); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// reap reads MSG_ZEROCOPY completion notifications from the socket's error queue.
func (z *zeroCopyStats) reap(fd int, wait bool) {
	oob := make([]byte, 128)
	for {
		if wait {
			pfd := []unix.PollFd{{Fd: int32(fd), Events: 0}}
			_, _ = unix.Poll(pfd, 100)
		}
		_, oobn, _, _, err := unix.Recvmsg(fd, nil, oob, unix.MSG_ERRQUEUE|unix.MSG_DONTWAIT)
		if err != nil {
			return
		}
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			return
		}
		for _, m := range msgs {
			if len(m.Data) < int(unsafe.Sizeof(unix.SockExtendedErr{})) {
				continue
			}
			ee := (*unix.SockExtendedErr)(unsafe.Pointer(&m.Data[0]))
			if ee.Origin != unix.SO_EE_ORIGIN_ZEROCOPY {
				continue
			}
			// ee_info..ee_data is the inclusive range of completed sends
			n := int64(ee.Data-ee.Info) + 1
			z.completions += n
			if ee.Code&unix.SO_EE_CODE_ZEROCOPY_COPIED != 0 {
				z.copied += n
			}
		}
		wait = false
	}
}

// streamRecv reads until EOF, stop, or an error.
func streamRecv(f *flowState, bufSize int, stop func() bool) error {
	buf := make([]byte, bufSize)
	var y yielder
	for {
		n, err := recvUntil(f.fd, buf, stop, &y)
		if err != nil {
			return fmt.Errorf("receive: %w", err)
		}
		if n == 0 {
			return nil // EOF, or the flow ended
		}
		f.c.bytesRx.Add(int64(n))
	}
}

// pacer limits a sender to a rate by sleeping when it is ahead.
type pacer struct {
	start       int64
	bytesPerSec float64
}

func newPacer(bitsPerSecond float64) *pacer {
	if bitsPerSecond <= 0 {
		return nil
	}
	return &pacer{start: nanotime(), bytesPerSec: bitsPerSecond / 8}
}

func (p *pacer) wait(sent int64) {
	due := p.start + int64(float64(sent)/p.bytesPerSec*1e9)
	if d := due - nanotime(); d > 0 {
		time.Sleep(time.Duration(d))
	}
}

// fillFile writes p to a file from its current offset.
func fillFile(fd int, p []byte) error {
	for len(p) > 0 {
		n, err := unix.Write(fd, p)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		p = p[n:]
	}
	return nil
}
