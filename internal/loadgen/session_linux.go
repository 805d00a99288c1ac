package loadgen

import (
	"errors"
	"fmt"
	"net/netip"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cnperf/cnperf/internal/loadgen/control"
)

const flowSetupTimeout = 15 * time.Second

func closeFd(fd int) {
	if fd >= 0 {
		_ = unix.Close(fd)
	}
}

// serverSession is the server's side of one test.
type serverSession struct {
	st      control.Setup
	addr    netip.Addr
	port    int
	cookie  []byte
	offload string
	gro     bool

	lfd, ufd int // TCP listener, UDP "listener" (flow greetings)

	flowWorkers

	acceptDone    chan error
	acceptPending bool        // the acceptor's answer has not been read yet
	sendStop      atomic.Bool // TCP_MAERTS senders: stop sending

	cpuA, cpuB   cpuSnap
	snapA, snapB []snap
	lastSeq      []uint64
}

func (p profileKind) isTCPFlows() bool {
	return p == kindStream || p == kindMaerts || p == kindTCPRR || p == kindStreamLat
}

func newServerSession(st control.Setup, addr netip.Addr, dataPort int) (*serverSession, error) {
	ss := &serverSession{st: st, addr: addr, cookie: newCookie(), lfd: -1, ufd: -1, acceptDone: make(chan error, 1)}
	kind := kindOf(st.Profile)
	var err error
	switch {
	case kind == kindCRR || kind.isTCPFlows():
		backlog := 128
		if kind == kindCRR {
			backlog = 4096
		}
		ss.lfd, ss.port, err = listenTCP(addr, dataPort, backlog)
		if err != nil {
			return nil, err
		}
		// accepted sockets inherit timeouts and buffer sizes from the listener; CRR sockets
		// have no timeouts (see crrClient), its listener is shut down to end the flows
		if kind != kindCRR {
			if err := setTimeouts(ss.lfd, ioTimeout); err != nil {
				ss.close()
				return nil, err
			}
		}
		if err := setBuffers(ss.lfd, st.SendBufferBytes, st.RecvBufferBytes, false); err != nil {
			ss.close()
			return nil, err
		}
		if kind != kindCRR {
			ss.acceptPending = true
			go ss.acceptTCPFlows()
		}
	default: // UDP
		ss.ufd, ss.port, err = bindUDP(addr, dataPort)
		if err != nil {
			return nil, err
		}
		if err := setTimeouts(ss.ufd, ioTimeout); err != nil {
			ss.close()
			return nil, err
		}
		ss.gro = kind == kindUDPStream && !st.NoOffload
		if ss.gro {
			ss.offload = "udp-gro"
		}
		ss.acceptPending = true
		go ss.acceptUDPFlows()
	}
	return ss, nil
}

func (ss *serverSession) acceptTCPFlows() {
	n := flowCount(ss.st)
	flows := make([]*flowState, n)
	got := 0
	deadline := time.Now().Add(flowSetupTimeout)
	hello := make([]byte, helloBytes)
	for got < n {
		if ss.stopFlag.Load() || time.Now().After(deadline) {
			for _, f := range flows {
				if f != nil {
					closeFd(f.fd)
				}
			}
			ss.acceptDone <- fmt.Errorf("only %d of %d data connections arrived within %s", got, n, flowSetupTimeout)
			return
		}
		r, _, e := unix.Syscall6(unix.SYS_ACCEPT4, uintptr(ss.lfd), 0, 0, unix.SOCK_CLOEXEC, 0, 0)
		if e != 0 {
			if e == unix.EAGAIN || e == unix.EINTR || e == unix.ECONNABORTED {
				continue
			}
			ss.acceptDone <- fmt.Errorf("accept data connection: %w", e)
			return
		}
		fd := int(r)
		helloDeadline := time.Now().Add(2 * time.Second)
		if err := recvFull(fd, hello, func() bool { return time.Now().After(helloDeadline) }); err != nil {
			closeFd(fd)
			continue
		}
		idx, ok := parseHello(hello, tcpHelloMagic, ss.cookie)
		if !ok || idx < 0 || idx >= n || flows[idx] != nil {
			closeFd(fd) // a stranger or a duplicate
			continue
		}
		if kindOf(ss.st.Profile) == kindTCPRR || isProbe(ss.st, idx) {
			_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
			// no timeouts on RR connections (see openFlows): the client's shutdown ends the
			// flow, and finish aborts it if the client vanishes
			if err := setTimeouts(fd, 0); err != nil {
				closeFd(fd)
				for _, f := range flows {
					if f != nil {
						closeFd(f.fd)
					}
				}
				ss.acceptDone <- fmt.Errorf("data connection: %w", err)
				return
			}
		}
		flows[idx] = &flowState{index: idx, fd: fd}
		got++
	}
	ss.mu.Lock()
	ss.flows = flows
	ss.mu.Unlock()
	ss.acceptDone <- nil
}

func (ss *serverSession) acceptUDPFlows() {
	n := ss.st.Parallel
	flows := make([]*flowState, n)
	got := 0
	deadline := time.Now().Add(flowSetupTimeout)
	buf := make([]byte, 2048)
	fail := func(err error) {
		for _, f := range flows {
			if f != nil {
				closeFd(f.fd)
			}
		}
		ss.acceptDone <- err
	}
	for got < n {
		if ss.stopFlag.Load() || time.Now().After(deadline) {
			fail(fmt.Errorf("only %d of %d UDP flows greeted within %s", got, n, flowSetupTimeout))
			return
		}
		m, from, err := unix.Recvfrom(ss.ufd, buf, 0)
		if err != nil {
			if err == unix.EAGAIN || err == unix.EINTR || err == unix.ECONNREFUSED {
				continue
			}
			fail(fmt.Errorf("receive UDP greeting: %w", err))
			return
		}
		idx, ok := parseHello(buf[:m], udpHelloMagic, ss.cookie)
		if !ok || idx < 0 || idx >= n {
			continue
		}
		if flows[idx] != nil {
			_, _ = sendSock(flows[idx].fd, buf[:m]) // our answer was lost: answer again
			continue
		}
		fd, _, err := bindUDP(ss.addr, ss.port)
		if err != nil {
			fail(err)
			return
		}
		if err := unix.Connect(fd, from); err != nil {
			closeFd(fd)
			fail(fmt.Errorf("connect UDP flow %d: %w", idx, err))
			return
		}
		if err := ss.udpFlowOptions(fd); err != nil {
			closeFd(fd)
			fail(err)
			return
		}
		flows[idx] = &flowState{index: idx, fd: fd}
		got++
		_, _ = sendSock(fd, buf[:m])
	}
	ss.mu.Lock()
	ss.flows = flows
	ss.mu.Unlock()
	ss.acceptDone <- nil
}

func (ss *serverSession) udpFlowOptions(fd int) error {
	if err := setTimeouts(fd, ioTimeout); err != nil {
		return err
	}
	if err := setBuffers(fd, ss.st.SendBufferBytes, ss.st.RecvBufferBytes, false); err != nil {
		return err
	}
	if ss.gro {
		if err := unix.SetsockoptInt(fd, unix.SOL_UDP, unix.UDP_GRO, 1); err != nil {
			ss.gro = false
			ss.offload = ""
		}
	}
	return nil
}

// start waits for the data flows and starts the workers.
func (ss *serverSession) start() error {
	kind := kindOf(ss.st.Profile)
	if kind == kindCRR {
		// one server thread per client flow: a thread with nothing to do would sit in
		// accept(2) long enough for the runtime to take its P away every 10ms
		k := ss.st.Parallel
		ss.flows = make([]*flowState, k)
		for i := range ss.flows {
			ss.flows[i] = &flowState{index: i, fd: -1}
		}
	} else {
		select {
		case err := <-ss.acceptDone:
			ss.acceptPending = false
			if err != nil {
				return err
			}
		case <-time.After(flowSetupTimeout + 5*time.Second):
			return errors.New("data flows not set up in time")
		}
	}
	st := ss.st
	ensureProcs(len(ss.flows))
	if st.ServerCPU >= 0 {
		restore, err := pinProcess(st.ServerCPU)
		if err != nil {
			return err
		}
		ss.unpin = restore
	}
	stop := func() bool { return ss.stopFlag.Load() }
	sendStop := func() bool { return ss.sendStop.Load() || ss.stopFlag.Load() }
	for _, f := range ss.flows {
		f := f
		ss.wg.Add(1)
		go func() {
			defer ss.wg.Done()
			var err error
			switch kind {
			case kindStream:
				err = streamRecv(f, recvBufSize(st.MessageBytes), stop)
			case kindMaerts:
				mode := ""
				if st.ZeroCopy {
					mode = "zerocopy"
				}
				err = streamSend(f, st.MessageBytes, st.RateBitsPerSecond/float64(st.Parallel), mode, sendStop)
			case kindTCPRR:
				err = tcpRRServer(f, st.MessageBytes, st.ResponseBytes, stop)
			case kindStreamLat:
				if isProbe(st, f.index) {
					err = tcpRRServer(f, st.ResponseBytes, st.ResponseBytes, stop)
				} else {
					err = streamRecv(f, recvBufSize(st.MessageBytes), stop)
				}
			case kindUDPRR:
				err = udpRRServer(f, st.MessageBytes, st.ResponseBytes, st.Burst, ss.cookie, stop)
			case kindUDPStream:
				err = udpStreamRecv(f, st.MessageBytes, ss.gro, ss.cookie, stop)
			case kindCRR:
				err = crrServer(f, ss.lfd, st.MessageBytes, st.ResponseBytes, stop)
			}
			if err != nil {
				ss.setErr(fmt.Errorf("flow %d: %w", f.index, err))
			}
		}()
	}
	return nil
}

func recvBufSize(msg int) int {
	if msg < 256<<10 {
		return 256 << 10
	}
	return msg
}

func (ss *serverSession) measure() {
	ss.cpuA = takeCPU()
	ss.snapA = snapFlows(ss.flows, kindOf(ss.st.Profile).isTCPFlows())
}

func (ss *serverSession) stopWindow() {
	ss.snapB = snapFlows(ss.flows, kindOf(ss.st.Profile).isTCPFlows())
	ss.cpuB = takeCPU()
	ss.sendStop.Store(true)
}

// finish ends the workers (UDP after a grace period for packets in flight) and builds the result.
func (ss *serverSession) finish() (*control.ServerResult, error) {
	kind := kindOf(ss.st.Profile)
	switch kind {
	case kindUDPStream, kindUDPRR:
		time.Sleep(50 * time.Millisecond)
		ss.stopFlag.Store(true)
		for _, f := range ss.flows {
			_ = unix.Shutdown(f.fd, unix.SHUT_RD)
		}
	case kindCRR:
		ss.stopFlag.Store(true)
		_ = unix.Shutdown(ss.lfd, unix.SHUT_RD)
	}
	done := make(chan struct{})
	go func() { ss.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		ss.abort()
		<-done
		return nil, errors.New("data flows did not finish within 10s of the client's finish")
	}
	if err := ss.workerErr(); err != nil {
		return nil, err
	}
	res := &control.ServerResult{WindowNs: ss.cpuB.mono - ss.cpuA.mono, CPU: cpuDiff(ss.cpuA, ss.cpuB)}
	if res.WindowNs <= 0 {
		res.WindowNs = 1
	}
	if ss.offload != "" {
		res.Notes = append(res.Notes, "server offload: "+ss.offload)
	}
	var zc zeroCopyStats
	for _, f := range ss.flows {
		zc.sends += f.zc.sends
		zc.completions += f.zc.completions
		zc.copied += f.zc.copied
		zc.fellBack = zc.fellBack || f.zc.fellBack
	}
	if zc.sends > 0 {
		n := fmt.Sprintf("server zero-copy: %d sends, %d completed, %d of them copied by the kernel", zc.sends, zc.completions, zc.copied)
		if zc.fellBack {
			n += "; switched to plain sends"
		}
		res.Notes = append(res.Notes, n)
	}
	for i, f := range ss.flows {
		w := ss.snapB[i].sub(ss.snapA[i])
		tot := f.c.read()
		fc := control.FlowCounters{Flow: i,
			WindowBytesRx: w.bytesRx, WindowBytesTx: w.bytesTx, WindowTransactions: w.tx, WindowRetransmits: max(w.retrans, 0),
			TotalBytesRx: tot.bytesRx, TotalBytesTx: tot.bytesTx, TotalTransactions: tot.tx}
		if kind == kindUDPStream {
			if i < len(ss.lastSeq) {
				f.udp.finish(ss.lastSeq[i])
			}
			fc.PacketsRx, fc.HighestSeq, fc.Lost, fc.OutOfOrder, fc.JitterNs = f.udp.packets, f.udp.highest, f.udp.lost, f.udp.outOfOrder, f.udp.jitterNs
		}
		res.Flows = append(res.Flows, fc)
	}
	return res, nil
}

// abort stops every worker at once: shutdown(2) wakes blocked calls.
func (ss *serverSession) abort() {
	ss.stopFlag.Store(true)
	ss.sendStop.Store(true)
	if ss.lfd >= 0 {
		_ = unix.Shutdown(ss.lfd, unix.SHUT_RDWR)
	}
	if ss.ufd >= 0 {
		_ = unix.Shutdown(ss.ufd, unix.SHUT_RDWR)
	}
	ss.shutdownFlows()
}

// close aborts what still runs, waits for the workers and closes every socket.
func (ss *serverSession) close() {
	if !ss.closeOnce(ss.abort) {
		return
	}
	// the acceptor may still be running (setup failed before start): drain its answer
	if ss.acceptPending {
		select {
		case <-ss.acceptDone: //nolint:errcheck // closing: what the acceptor met no longer matters
		case <-time.After(flowSetupTimeout + time.Second):
		}
	}
	ss.closeFlows()
	closeFd(ss.lfd)
	closeFd(ss.ufd)
}
