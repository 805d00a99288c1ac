package loadgen

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/cnperf/cnperf/internal/loadgen/control"
)

// Data-connection greetings: a TCP data connection starts with "CNPD", a UDP flow is opened
// with a "CNPU" datagram the server echoes from the flow's own connected socket. Both carry the
// session cookie and the flow index.
const (
	tcpHelloMagic = "CNPD"
	udpHelloMagic = "CNPU"
	helloBytes    = 24
	udpHelloBytes = helloBytes
)

func makeHello(magic string, cookie []byte, flow int) []byte {
	b := make([]byte, helloBytes)
	copy(b, magic)
	copy(b[4:20], cookie)
	binary.BigEndian.PutUint32(b[20:], uint32(flow))
	return b
}

// parseHello returns the flow index of a greeting with the right magic and cookie.
func parseHello(b []byte, magic string, cookie []byte) (int, bool) {
	if len(b) != helloBytes || string(b[:4]) != magic || !bytes.Equal(b[4:20], cookie) {
		return 0, false
	}
	return int(binary.BigEndian.Uint32(b[20:])), true
}

func isUDPHello(b []byte) bool { return len(b) == helloBytes && string(b[:4]) == udpHelloMagic }

func helloMatches(b, cookie []byte, flow int) bool {
	f, ok := parseHello(b, udpHelloMagic, cookie)
	return ok && f == flow
}

// UDP_STREAM datagram header (control.UDPHeaderBytes): flow u32, phase u8, 3 reserved bytes,
// sequence u64, send time u64 (sender's monotonic clock, ns).
func putUDPHeader(b []byte, flow uint32, phase byte, seq uint64, sentNs int64) {
	binary.BigEndian.PutUint32(b[0:], flow)
	b[4] = phase
	binary.BigEndian.PutUint64(b[8:], seq)
	binary.BigEndian.PutUint64(b[16:], uint64(sentNs))
}

// udpSendOptions tune the UDP_STREAM sender.
type udpSendOptions struct {
	size    int
	rateBps float64
	gso     bool // try UDP_SEGMENT
}

// maxGSOSegments is the kernel's UDP_MAX_SEGMENTS.
const maxGSOSegments = 64

// udpStreamSend sends datagrams until the phase turns "stopped". Sequence numbers restart at 1
// when the measured window opens, so the receiver's loss and jitter cover exactly the window;
// f.lastSeq is the last number sent in it. It batches with sendmmsg and, where the kernel has
// it, UDP GSO (one send carries up to 64 datagrams).
func udpStreamSend(f *flowState, o udpSendOptions, phase *atomic.Int32, stop func() bool) (gsoUsed bool, err error) {
	segs := 1
	if o.gso && o.size*2 <= 65000 {
		segs = 65000 / o.size
		if segs > maxGSOSegments {
			segs = maxGSOSegments
		}
		if err := unix.SetsockoptInt(f.fd, unix.SOL_UDP, unix.UDP_SEGMENT, o.size); err != nil {
			segs = 1
		}
	}
	vlen := 16
	if segs > 1 {
		vlen = 4
	}
	if o.rateBps > 0 {
		// keep one send call near a millisecond of traffic so pacing stays smooth
		perMs := int(o.rateBps / 8 / 1000 / float64(o.size))
		if perMs < 1 {
			perMs = 1
		}
		for vlen > 1 && vlen*segs > perMs {
			vlen /= 2
		}
		for segs > 1 && vlen*segs > perMs {
			segs /= 2
		}
		if segs == 1 {
			_ = unix.SetsockoptInt(f.fd, unix.SOL_UDP, unix.UDP_SEGMENT, 0)
		}
	}
	b := newMmsgBatch(vlen, segs*o.size, false, false)
	pace := newPacer(o.rateBps)
	var seq uint64
	var sentBytes int64
	inWindow := false
	refused := 0
	flow := uint32(f.index)
	var y yielder
	for {
		y.tick()
		ph := phase.Load()
		if ph == phaseStopped || stop() {
			if inWindow {
				f.lastSeq = seq
			}
			return segs > 1, nil
		}
		if ph == phaseMeasure && !inWindow {
			inWindow = true
			seq = 0
		}
		now := nanotime()
		s := seq
		for m := 0; m < vlen; m++ {
			buf := b.bufs[m]
			for k := 0; k < segs; k++ {
				s++
				putUDPHeader(buf[k*o.size:], flow, byte(ph), s, now)
			}
		}
		n, err := sendmmsg(f.fd, b.hdrs, 0)
		if err != nil {
			switch err {
			case unix.EAGAIN, unix.ENOBUFS:
				continue
			case unix.ECONNREFUSED:
				if refused++; refused < 100 {
					continue
				}
			case unix.EINVAL, unix.EIO:
				if segs > 1 {
					// GSO refused (segment larger than the path MTU, or no checksum offload)
					segs = 1
					_ = unix.SetsockoptInt(f.fd, unix.SOL_UDP, unix.UDP_SEGMENT, 0)
					b = newMmsgBatch(16, o.size, false, false)
					vlen = 16
					continue
				}
			}
			return segs > 1, fmt.Errorf("send datagrams: %w", err)
		}
		refused = 0
		seq += uint64(n * segs)
		f.c.bytesTx.Add(int64(n * segs * o.size))
		if pace != nil {
			sentBytes += int64(n * segs * o.size)
			pace.wait(sentBytes)
		}
	}
}

// udpStreamRecv receives datagrams with recvmmsg (and UDP GRO when gro is set) and accounts
// the measured ones in f.udp the way iperf3 does. It returns when stop reports true and the
// socket is drained (the server shuts its read side down after the client's finish).
func udpStreamRecv(f *flowState, size int, gro bool, cookie []byte, stop func() bool) error {
	bufSize := size
	vlen := 32
	if gro {
		bufSize = 65536
		vlen = 16
	}
	if bufSize < helloBytes {
		bufSize = helloBytes
	}
	b := newMmsgBatch(vlen, bufSize, gro, false)
	var y yielder
	for {
		n, err := recvBatch(f.fd, b, stop, &y)
		if err == errStopped {
			return nil
		}
		if err != nil {
			return fmt.Errorf("receive datagrams: %w", err)
		}
		now := nanotime()
		var got int64
		for i := 0; i < n; i++ {
			l := int(b.hdrs[i].Len)
			if l == 0 {
				if stop() {
					f.c.bytesRx.Add(got)
					return nil
				}
				continue
			}
			buf := b.bufs[i][:l]
			seg := l
			if gro {
				if g := groSegment(b.ctrl[i*ctrlLen : i*ctrlLen+int(b.hdrs[i].Hdr.Controllen)]); g > 0 {
					seg = g
				}
			}
			for off := 0; off < l; off += seg {
				end := off + seg
				if end > l {
					end = l
				}
				p := buf[off:end]
				if len(p) < control.UDPHeaderBytes {
					if isUDPHello(p) && helloMatches(p, cookie, f.index) {
						_, _ = sendSock(f.fd, p)
					}
					continue
				}
				got += int64(len(p))
				if binary.BigEndian.Uint32(p[0:]) != uint32(f.index) {
					continue
				}
				if p[4] == phaseMeasure {
					f.udp.add(binary.BigEndian.Uint64(p[8:]), len(p), int64(binary.BigEndian.Uint64(p[16:])), now)
				}
			}
		}
		f.c.bytesRx.Add(got)
	}
}
