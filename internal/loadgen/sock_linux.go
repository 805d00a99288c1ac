package loadgen

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/cnperf/cnperf/internal/loadgen/control"
)

// The data path uses blocking sockets driven by raw system calls on goroutines locked to OS
// threads: no netpoller park/unpark per transaction. Blocking calls are bounded by
// SO_RCVTIMEO/SO_SNDTIMEO so loops notice a stop request, and shutdown(2) wakes them at once.

const ioTimeout = 200 * time.Millisecond

func sockaddr(a netip.Addr, port int) unix.Sockaddr {
	if a.Is4() || a.Is4In6() {
		return &unix.SockaddrInet4{Port: port, Addr: a.Unmap().As4()}
	}
	sa := &unix.SockaddrInet6{Port: port, Addr: a.As16()}
	return sa
}

func family(a netip.Addr) int {
	if a.Is4() || a.Is4In6() {
		return unix.AF_INET
	}
	return unix.AF_INET6
}

func addrOf(sa unix.Sockaddr) (netip.Addr, int) {
	switch s := sa.(type) {
	case *unix.SockaddrInet4:
		return netip.AddrFrom4(s.Addr), s.Port
	case *unix.SockaddrInet6:
		return netip.AddrFrom16(s.Addr), s.Port
	}
	return netip.Addr{}, 0
}

func newSocket(a netip.Addr, typ int) (int, error) {
	fd, err := unix.Socket(family(a), typ|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("socket: %w", err)
	}
	return fd, nil
}

func setTimeouts(fd int, d time.Duration) error {
	tv := unix.NsecToTimeval(d.Nanoseconds())
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return fmt.Errorf("SO_RCVTIMEO: %w", err)
	}
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv); err != nil {
		return fmt.Errorf("SO_SNDTIMEO: %w", err)
	}
	return nil
}

// setBuffers applies SO_SNDBUF/SO_RCVBUF (0 = leave the kernel's default). With force (the
// client, on behalf of the user who runs it) and as root it uses the FORCE variants so that
// net.core.[rw]mem_max does not cap the request; the server never forces on a client's word
// (checkServerLimits refuses what the kernel does not allow).
func setBuffers(fd, snd, rcv int, force bool) error {
	set := func(name string, forced, plain, n int) error {
		if n <= 0 {
			return nil
		}
		if force && unix.SetsockoptInt(fd, unix.SOL_SOCKET, forced, n) == nil {
			return nil
		}
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, plain, n); err != nil {
			return fmt.Errorf("%s %d: %w", name, n, err)
		}
		return nil
	}
	if err := set("SO_SNDBUF", unix.SO_SNDBUFFORCE, unix.SO_SNDBUF, snd); err != nil {
		return err
	}
	return set("SO_RCVBUF", unix.SO_RCVBUFFORCE, unix.SO_RCVBUF, rcv)
}

// checkServerLimits refuses, before anything is set up, what a client may not ask of a
// server: socket buffers beyond what the kernel lets an unprivileged socket have
// (net.core.wmem_max / rmem_max; the server does not force past them on a client's word) and
// pinning to a CPU this agent may not run on. The protocol's own ranges are checked by
// control.Setup.Validate.
func checkServerLimits(st *control.Setup) error {
	for _, b := range []struct {
		field, sysctl string
		n             int
	}{{"sendBufferBytes", "wmem_max", st.SendBufferBytes}, {"recvBufferBytes", "rmem_max", st.RecvBufferBytes}} {
		if b.n <= 0 {
			continue
		}
		max, err := readSysctlInt("/proc/sys/net/core/" + b.sysctl)
		if err != nil {
			continue // not visible (a network namespace without it): setsockopt caps it
		}
		if b.n > max {
			return fmt.Errorf("%s %d is above the server's net.core.%s (%d): the agent does not force past the kernel's limit; raise the sysctl on the server's host or ask for less",
				b.field, b.n, b.sysctl, max)
		}
	}
	if st.ServerCPU >= 0 {
		var set unix.CPUSet
		if err := unix.SchedGetaffinity(0, &set); err != nil {
			return fmt.Errorf("read CPU affinity: %w", err)
		}
		if st.ServerCPU >= 8*int(unsafe.Sizeof(set)) || !set.IsSet(st.ServerCPU) {
			return fmt.Errorf("serverCPU %d is not one this agent may run on (%s)", st.ServerCPU, cpuList(&set))
		}
	}
	return nil
}

func readSysctlInt(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// cpuList formats a CPU set as "CPUs 0-3,6".
func cpuList(set *unix.CPUSet) string {
	var parts []string
	n := 8 * int(unsafe.Sizeof(*set))
	for i := 0; i < n; i++ {
		if !set.IsSet(i) {
			continue
		}
		j := i
		for j+1 < n && set.IsSet(j+1) {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(i))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", i, j))
		}
		i = j
	}
	return "CPUs " + strings.Join(parts, ",")
}

func listenTCP(a netip.Addr, port, backlog int) (int, int, error) {
	fd, err := bound(a, unix.SOCK_STREAM, "tcp", port)
	if err != nil {
		return -1, 0, err
	}
	if err := unix.Listen(fd, backlog); err != nil {
		unix.Close(fd)
		return -1, 0, fmt.Errorf("listen: %w", err)
	}
	return boundPort(fd)
}

func bindUDP(a netip.Addr, port int) (int, int, error) {
	fd, err := bound(a, unix.SOCK_DGRAM, "udp", port)
	if err != nil {
		return -1, 0, err
	}
	return boundPort(fd)
}

// bound opens a socket of type typ (proto names it in errors) bound to a:port, with address
// reuse on and, for IPv6, IPv4-mapped addresses accepted too.
func bound(a netip.Addr, typ int, proto string, port int) (int, error) {
	fd, err := newSocket(a, typ)
	if err != nil {
		return -1, err
	}
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
	if family(a) == unix.AF_INET6 {
		_ = unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, 0)
	}
	if err := unix.Bind(fd, sockaddr(a, port)); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("bind %s %s: %w", proto, netip.AddrPortFrom(a, uint16(port)), err)
	}
	return fd, nil
}

// boundPort returns fd with the port it is bound to; on error it closes fd.
func boundPort(fd int) (int, int, error) {
	sa, err := unix.Getsockname(fd)
	if err != nil {
		unix.Close(fd)
		return -1, 0, fmt.Errorf("getsockname: %w", err)
	}
	_, p := addrOf(sa)
	return fd, p, nil
}

// dialTCP connects a blocking TCP socket; SO_SNDTIMEO bounds connect(2).
func dialTCP(a netip.Addr, port int, timeout time.Duration, snd, rcv int) (int, error) {
	fd, err := newSocket(a, unix.SOCK_STREAM)
	if err != nil {
		return -1, err
	}
	if err := setBuffers(fd, snd, rcv, true); err != nil {
		unix.Close(fd)
		return -1, err
	}
	if err := setTimeouts(fd, timeout); err != nil {
		unix.Close(fd)
		return -1, err
	}
	for {
		err = unix.Connect(fd, sockaddr(a, port))
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		unix.Close(fd)
		if err == unix.EAGAIN || err == unix.EINPROGRESS {
			err = fmt.Errorf("timed out after %s", timeout)
		}
		return -1, fmt.Errorf("connect %s: %w", netip.AddrPortFrom(a, uint16(port)), err)
	}
	return fd, nil
}

// Data sockets are read and written with recvfrom(2) and sendto(2) without an address rather
// than read(2) and write(2): the socket calls skip the VFS layer (file position, fsnotify
// hooks), which saves about 0.25 µs per call — 3 % of a pinned TCP_RR round trip.

// recvSock reads from a socket into p. On error it returns 0 bytes.
func recvSock(fd int, p []byte) (int, error) {
	r, _, e := unix.Syscall6(unix.SYS_RECVFROM, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)), 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// sendSock writes p to a socket, blocking while its send buffer is full.
func sendSock(fd int, p []byte) (int, error) {
	r, _, e := unix.Syscall6(unix.SYS_SENDTO, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)), unix.MSG_NOSIGNAL, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// sendSockNow tries to write p without blocking, as a raw system call: the Go runtime's
// bookkeeping around a call that may block (entersyscall/exitsyscall) costs more than a small
// send itself. It returns unix.EAGAIN when the send buffer is full; never use it to wait.
func sendSockNow(fd int, p []byte) (int, error) {
	r, _, e := unix.RawSyscall6(unix.SYS_SENDTO, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)), unix.MSG_NOSIGNAL|unix.MSG_DONTWAIT, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// sendSmall sends one small message (a request, a response, a datagram): first without
// blocking, then, if the send buffer is full, waiting for room.
func sendSmall(fd int, p []byte) (int, error) {
	n, err := sendSockNow(fd, p)
	if err == unix.EAGAIN {
		return sendSock(fd, p)
	}
	return n, err
}

// sendAll writes p fully to a socket; it gives up when stop reports true during a timeout.
// Small writes (requests and responses) first try a send that cannot block.
func sendAll(fd int, p []byte, stop func() bool) error {
	if len(p) <= smallSendBytes {
		n, err := sendSockNow(fd, p)
		if err == nil && n == len(p) {
			return nil
		}
		if err != nil && err != unix.EAGAIN && err != unix.EINTR {
			return err
		}
		p = p[n:]
	}
	for len(p) > 0 {
		n, err := sendSock(fd, p)
		p = p[n:]
		if err != nil {
			if err := again(err, stop); err != nil {
				return err
			}
		}
	}
	return nil
}

// again reads the error of a socket call in a loop that runs until stop (nil: never) says the
// flow ended: nil to call again (EINTR, or EAGAIN, a socket timeout, while the flow runs),
// errStopped once it has ended, else err itself.
func again(err error, stop func() bool) error {
	switch err {
	case unix.EINTR:
		return nil
	case unix.EAGAIN:
		if stop != nil && stop() {
			return errStopped
		}
		return nil
	}
	return err
}

// recvUntil receives into p, ticking y before each try and calling again while again says so;
// it returns 0 at the peer's close or once stop says the flow ended.
func recvUntil(fd int, p []byte, stop func() bool, y *yielder) (int, error) {
	for {
		y.tick()
		n, err := recvSock(fd, p)
		if err == nil {
			return n, nil
		}
		if err = again(err, stop); err == errStopped {
			return 0, nil
		} else if err != nil {
			return 0, err
		}
	}
}

// recvBatch receives a batch into b (reset first), ticking y before each try; it calls again
// on EAGAIN until stop says the flow ended (then errStopped) and on ECONNREFUSED, an ICMP error
// from an earlier send (the peer may be gone). recvmmsg retries EINTR itself.
func recvBatch(fd int, b *mmsgBatch, stop func() bool, y *yielder) (int, error) {
	for {
		y.tick()
		b.reset()
		n, err := recvmmsg(fd, b.hdrs, unix.MSG_WAITFORONE)
		if err == nil {
			return n, nil
		}
		if err == unix.ECONNREFUSED {
			continue
		}
		if err = again(err, stop); err != nil {
			return 0, err
		}
	}
}

// smallSendBytes is the largest write sendAll first tries without blocking.
const smallSendBytes = 16 << 10

// recvFull reads exactly len(p) bytes from a socket; the peer's close is errEOF.
func recvFull(fd int, p []byte, stop func() bool) error {
	for len(p) > 0 {
		n, err := recvSock(fd, p)
		if err != nil {
			if err := again(err, stop); err != nil {
				return err
			}
			continue
		}
		if n == 0 {
			return errEOF
		}
		p = p[n:]
	}
	return nil
}

var (
	errStopped = errors.New("stopped")
	errEOF     = errors.New("connection closed by peer")
)

// pinProcess binds every thread of this process to one CPU (like taskset -a) and returns a
// function that restores the previous affinity. Threads the runtime creates later inherit the
// affinity from the thread that creates them, which is pinned too. Data goroutines are not
// locked to threads: a locked goroutine can only be rescheduled by handing its thread a P from
// another thread, which costs two wake-ups each time (see yielder).
func pinProcess(cpu int) (restore func(), err error) {
	var old unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return nil, fmt.Errorf("read CPU affinity: %w", err)
	}
	var set unix.CPUSet
	set.Set(cpu)
	if err := setAllThreads(&set); err != nil {
		_ = setAllThreads(&old)
		return nil, fmt.Errorf("pin to CPU %d: %w", cpu, err)
	}
	return func() { _ = setAllThreads(&old) }, nil
}

func setAllThreads(set *unix.CPUSet) error {
	// twice: a thread created while the first pass ran may have copied the old mask
	for pass := 0; pass < 2; pass++ {
		ents, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return err
		}
		for _, e := range ents {
			tid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			if err := unix.SchedSetaffinity(tid, set); err != nil && err != unix.ESRCH {
				return err
			}
		}
	}
	return nil
}

// ensureProcs raises GOMAXPROCS so that every data thread (each locked to its goroutine and
// mostly blocked in system calls) keeps its own P: with fewer Ps than locked threads, a thread
// returning from a system call finds no P and the runtime hands one over with extra futex
// wake-ups and context switches on every transaction. It never lowers GOMAXPROCS.
func ensureProcs(threads int) {
	want := threads + 2
	if n := runtime.NumCPU(); want < n {
		want = n
	}
	procsMu.Lock()
	defer procsMu.Unlock()
	if runtime.GOMAXPROCS(0) < want {
		runtime.GOMAXPROCS(want)
	}
}

var procsMu sync.Mutex

// tcpRetransmits returns tcpi_total_retrans of a TCP socket, or 0 when it cannot be read.
func tcpRetransmits(fd int) int64 {
	info, err := unix.GetsockoptTCPInfo(fd, unix.IPPROTO_TCP, unix.TCP_INFO)
	if err != nil {
		return 0
	}
	return int64(info.Total_retrans)
}

// mmsg batches for sendmmsg/recvmmsg (x/sys/unix has the types but not the calls).
type mmsgBatch struct {
	hdrs  []unix.Mmsghdr
	iovs  []unix.Iovec
	bufs  [][]byte
	ctrl  []byte // per-message control buffers, ctrlLen each
	names []unix.RawSockaddrInet6
}

const ctrlLen = 64

func newMmsgBatch(n, bufSize int, withCtrl, withNames bool) *mmsgBatch {
	b := &mmsgBatch{hdrs: make([]unix.Mmsghdr, n), iovs: make([]unix.Iovec, n), bufs: make([][]byte, n)}
	mem := make([]byte, n*bufSize)
	if withCtrl {
		b.ctrl = make([]byte, n*ctrlLen)
	}
	if withNames {
		b.names = make([]unix.RawSockaddrInet6, n)
	}
	for i := 0; i < n; i++ {
		b.bufs[i] = mem[i*bufSize : (i+1)*bufSize : (i+1)*bufSize]
		b.iovs[i].Base = &b.bufs[i][0]
		b.iovs[i].SetLen(bufSize)
		b.hdrs[i].Hdr.Iov = &b.iovs[i]
		b.hdrs[i].Hdr.Iovlen = 1
	}
	b.reset()
	return b
}

// reset restores lengths clobbered by the kernel before the next recvmmsg.
func (b *mmsgBatch) reset() {
	for i := range b.hdrs {
		h := &b.hdrs[i].Hdr
		if b.ctrl != nil {
			h.Control = &b.ctrl[i*ctrlLen]
			h.SetControllen(ctrlLen)
		}
		if b.names != nil {
			h.Name = (*byte)(unsafe.Pointer(&b.names[i]))
			h.Namelen = uint32(unsafe.Sizeof(b.names[i]))
		}
		h.Flags = 0
		b.hdrs[i].Len = 0
	}
}

func recvmmsg(fd int, hdrs []unix.Mmsghdr, flags int) (int, error) {
	return mmsg(unix.SYS_RECVMMSG, fd, hdrs, flags)
}

func sendmmsg(fd int, hdrs []unix.Mmsghdr, flags int) (int, error) {
	return mmsg(unix.SYS_SENDMMSG, fd, hdrs, flags)
}

// mmsg makes the recvmmsg or sendmmsg system call (trap), retrying EINTR.
func mmsg(trap uintptr, fd int, hdrs []unix.Mmsghdr, flags int) (int, error) {
	for {
		n, _, e := unix.Syscall6(trap, uintptr(fd), uintptr(unsafe.Pointer(&hdrs[0])), uintptr(len(hdrs)), uintptr(flags), 0, 0)
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return 0, e
		}
		return int(n), nil
	}
}

// groSegment returns the UDP_GRO segment size from a received message's control data, or 0.
func groSegment(ctrl []byte) int {
	msgs, err := unix.ParseSocketControlMessage(ctrl)
	if err != nil {
		return 0
	}
	for _, m := range msgs {
		if m.Header.Level == unix.SOL_UDP && m.Header.Type == unix.UDP_GRO && len(m.Data) >= 4 {
			return int(*(*int32)(unsafe.Pointer(&m.Data[0])))
		}
	}
	return 0
}
