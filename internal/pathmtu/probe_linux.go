package pathmtu

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"time"

	"golang.org/x/sys/unix"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

// Probe measures the path MTU towards o.Target (see the package comment). A direction that
// cannot be probed is returned with Error set, never as a size of 0 that reads like a result.
func Probe(ctx context.Context, o Options) api.PathMTUProbe {
	p := api.PathMTUProbe{To: o.Target.String()}
	if err := o.Validate(); err != nil {
		p.Error = err.Error()
		return p
	}
	target := o.Target.Unmap()
	local, ifMTU, err := route(target)
	if err != nil {
		p.Error = err.Error()
		return p
	}
	if target.Is4() && ifMTU > 65535 {
		ifMTU = 65535 // IPv4's total length is 16 bits (loopback's MTU is 65536)
	}
	p.From, p.InterfaceMTUBytes = local.String(), ifMTU
	hi := ifMTU
	_, before, err := routeMTUOf(target)
	if err != nil {
		p.Error = err.Error()
		return p
	}
	if o.MaxBytes > 0 && o.MaxBytes < hi {
		hi = o.MaxBytes
	}
	pg, err := openPinger(target)
	if err != nil {
		p.Error = err.Error()
		return p
	}
	defer pg.close()
	if err := search(ctx, pg, minBytes(target), hi, o.Attempts, o.Timeout, pg.raw, &p); err != nil {
		p.Error = err.Error()
		return p
	}
	// A ping socket does not see the ICMP error itself; the route's MTU, lowered by it
	// during the probe, does.
	if _, after, err := routeMTUOf(target); err == nil && after < before && p.TooBigMTUBytes == 0 {
		p.TooBigMTUBytes = after
	}
	return p
}

// route returns the local address the kernel picks towards target and the MTU of the
// interface that holds it.
func route(target netip.Addr) (netip.Addr, int, error) {
	local, _, err := routeMTUOf(target)
	if err != nil {
		return netip.Addr{}, 0, err
	}
	ifs, err := net.Interfaces()
	if err != nil {
		return netip.Addr{}, 0, fmt.Errorf("list interfaces: %w", err)
	}
	for _, ifc := range ifs {
		addrs, err := ifc.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if pn, ok := a.(*net.IPNet); ok {
				if ip, ok := netip.AddrFromSlice(pn.IP); ok && ip.Unmap() == local {
					return local, ifc.MTU, nil
				}
			}
		}
	}
	return netip.Addr{}, 0, fmt.Errorf("no interface holds %s, the local address towards %s", local, target)
}

// routeMTUOf connects a UDP socket to target (nothing is sent) and returns its local address
// and the route's MTU (IP_MTU: a path MTU learned from ICMP errors lowers it).
func routeMTUOf(target netip.Addr) (netip.Addr, int, error) {
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(netip.AddrPortFrom(target, 9)))
	if err != nil {
		return netip.Addr{}, 0, fmt.Errorf("no route to %s: %w", target, err)
	}
	defer c.Close()
	local := c.LocalAddr().(*net.UDPAddr).AddrPort().Addr().Unmap()
	rc, err := c.SyscallConn()
	if err != nil {
		return local, 0, err
	}
	var mtu int
	var serr error
	if cerr := rc.Control(func(fd uintptr) {
		if target.Is4() {
			mtu, serr = unix.GetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_MTU)
		} else {
			mtu, serr = unix.GetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_MTU)
		}
	}); cerr != nil {
		return local, 0, cerr
	}
	if serr != nil {
		return local, 0, fmt.Errorf("read the route MTU towards %s: %w", target, serr)
	}
	return local, mtu, nil
}

// pinger sends ICMP echo requests with don't-fragment set: on a raw socket when the process
// may (CAP_NET_RAW; it then also sees the "too big" errors), else on an unprivileged ping
// socket (net.ipv4.ping_group_range).
type pinger struct {
	fd     int
	target netip.Addr
	v6     bool
	raw    bool
	id     uint16
	seq    uint16
	buf    []byte
}

func openPinger(target netip.Addr) (*pinger, error) {
	pg := &pinger{target: target, v6: !target.Is4(), id: uint16(os.Getpid()), buf: make([]byte, 70000)}
	family, proto := unix.AF_INET, unix.IPPROTO_ICMP
	if pg.v6 {
		family, proto = unix.AF_INET6, unix.IPPROTO_ICMPV6
	}
	fd, err := unix.Socket(family, unix.SOCK_RAW|unix.SOCK_CLOEXEC, proto)
	pg.raw = err == nil
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
		fd, err = unix.Socket(family, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, proto)
	}
	if err != nil {
		return nil, fmt.Errorf("open an ICMP socket (a raw one needs CAP_NET_RAW, a ping socket a group in "+
			"net.ipv4.ping_group_range): %w", err)
	}
	pg.fd = fd
	if pg.v6 {
		err = unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_MTU_DISCOVER, unix.IPV6_PMTUDISC_PROBE)
		if err == nil {
			err = unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_DONTFRAG, 1)
		}
	} else {
		err = unix.SetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_MTU_DISCOVER, unix.IP_PMTUDISC_PROBE)
	}
	if err != nil {
		pg.close()
		return nil, fmt.Errorf("set don't-fragment on the ICMP socket: %w", err)
	}
	return pg, nil
}

func (pg *pinger) close() { _ = unix.Close(pg.fd) }

func (pg *pinger) sockaddr() unix.Sockaddr {
	if pg.v6 {
		return &unix.SockaddrInet6{Addr: pg.target.As16()}
	}
	return &unix.SockaddrInet4{Addr: pg.target.As4()}
}

// echo implements echoer.
func (pg *pinger) echo(ctx context.Context, size int, timeout time.Duration) (bool, int, error) {
	sent, err := pg.send(size)
	if !sent || err != nil {
		return false, 0, err
	}
	return pg.receive(ctx, size, time.Now().Add(timeout))
}

// send sends one echo request of size bytes (whole IP packet); sent is false when the local
// route does not let it out (larger than its MTU: it does not pass).
func (pg *pinger) send(size int) (sent bool, err error) {
	hdr := ipv4Header
	if pg.v6 {
		hdr = ipv6Header
	}
	if size < hdr+icmpHeader {
		return false, fmt.Errorf("echo request of %d bytes is smaller than its headers", size)
	}
	pg.seq++
	req := make([]byte, size-hdr)
	req[0] = 8 // echo request
	if pg.v6 {
		req[0] = 128
	}
	binary.BigEndian.PutUint16(req[4:], pg.id)
	binary.BigEndian.PutUint16(req[6:], pg.seq)
	for i := icmpHeader; i < len(req); i++ {
		req[i] = byte(i)
	}
	if !pg.v6 {
		binary.BigEndian.PutUint16(req[2:], checksum(req)) // the kernel fills in ICMPv6's
	}
	if err := unix.Sendto(pg.fd, req, 0, pg.sockaddr()); err != nil {
		if errors.Is(err, unix.EMSGSIZE) {
			return false, nil // larger than the local route allows: does not pass
		}
		return false, fmt.Errorf("send a %d-byte echo request to %s: %w", size, pg.target, err)
	}
	return true, nil
}

// lateReads bounds the messages receive still reads once its deadline has passed.
const lateReads = 64

// receive waits until deadline for the reply to the last request (or a "too big" error about
// it). Once the deadline has passed it still reads, without waiting, what the kernel has
// queued: a reply that came in time is not lost because this process was not running when
// the deadline came (on a busy machine, or a loaded node, it may not run for longer than the
// timeout).
func (pg *pinger) receive(ctx context.Context, size int, deadline time.Time) (bool, int, error) {
	tooBig := 0
	late := 0
	for {
		if ctx.Err() != nil {
			return false, tooBig, nil
		}
		flags := 0
		if left := time.Until(deadline); left > 0 {
			tv := unix.NsecToTimeval(left.Nanoseconds())
			if err := unix.SetsockoptTimeval(pg.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
				return false, 0, fmt.Errorf("set the receive timeout: %w", err)
			}
		} else {
			if late == lateReads {
				return false, tooBig, nil
			}
			late++
			flags = unix.MSG_DONTWAIT
		}
		n, from, err := unix.Recvfrom(pg.fd, pg.buf, flags)
		if errors.Is(err, unix.EAGAIN) && flags != 0 {
			return false, tooBig, nil // nothing more was queued
		}
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			if errors.Is(err, unix.EMSGSIZE) || errors.Is(err, unix.EHOSTUNREACH) || errors.Is(err, unix.ECONNREFUSED) {
				continue // a queued ICMP error on a ping socket: the route's MTU tells the rest
			}
			return false, 0, fmt.Errorf("receive echo replies: %w", err)
		}
		msg, ok := pg.icmpOf(pg.buf[:n])
		if !ok {
			continue
		}
		reply, mtu := pg.parse(msg, from)
		if mtu > 0 {
			tooBig = mtu
			if mtu < size {
				return false, tooBig, nil
			}
		}
		if reply {
			return true, tooBig, nil
		}
	}
}

// icmpOf is a received message's ICMP part: a raw IPv4 socket's messages start with the IP
// header; ok is false when it is cut short.
func (pg *pinger) icmpOf(msg []byte) (icmp []byte, ok bool) {
	if !pg.raw || pg.v6 {
		return msg, true
	}
	if len(msg) < 20 || int(msg[0]&0x0f)*4 > len(msg) {
		return nil, false
	}
	return msg[int(msg[0]&0x0f)*4:], true
}

// parse reads one received ICMP message (without its IP header): whether it is the reply to
// the last request, or the MTU of a "too big" error about one of ours.
func (pg *pinger) parse(msg []byte, from unix.Sockaddr) (reply bool, tooBigMTU int) {
	if len(msg) < icmpHeader {
		return false, 0
	}
	replyType, seq := byte(0), binary.BigEndian.Uint16(msg[6:])
	if pg.v6 {
		replyType = 129
	}
	if msg[0] == replyType && seq == pg.seq && fromTarget(from, pg.target) {
		// a ping socket's kernel rewrites the identifier and delivers only its own replies
		return !pg.raw || binary.BigEndian.Uint16(msg[4:]) == pg.id, 0
	}
	if !pg.raw {
		return false, 0
	}
	switch {
	case !pg.v6 && msg[0] == 3 && msg[1] == 4: // destination unreachable, fragmentation needed
		inner := msg[icmpHeader:]
		if len(inner) < 20 {
			return false, 0
		}
		ihl := int(inner[0]&0x0f) * 4
		if len(inner) < ihl+8 || inner[9] != unix.IPPROTO_ICMP || netip.AddrFrom4([4]byte(inner[16:20])) != pg.target ||
			binary.BigEndian.Uint16(inner[ihl+4:]) != pg.id {
			return false, 0
		}
		return false, int(binary.BigEndian.Uint16(msg[6:]))
	case pg.v6 && msg[0] == 2: // packet too big
		inner := msg[icmpHeader:]
		if len(inner) < 48 || inner[6] != unix.IPPROTO_ICMPV6 || netip.AddrFrom16([16]byte(inner[24:40])) != pg.target ||
			binary.BigEndian.Uint16(inner[44:]) != pg.id {
			return false, 0
		}
		return false, int(binary.BigEndian.Uint32(msg[4:]))
	}
	return false, 0
}

func fromTarget(from unix.Sockaddr, target netip.Addr) bool {
	switch a := from.(type) {
	case *unix.SockaddrInet4:
		return netip.AddrFrom4(a.Addr) == target
	case *unix.SockaddrInet6:
		return netip.AddrFrom16(a.Addr).Unmap() == target
	}
	return false
}

// checksum is the Internet checksum (RFC 1071) of b.
func checksum(b []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		sum += uint32(b[len(b)-1]) << 8
	}
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}
