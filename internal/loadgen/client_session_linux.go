package loadgen

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/loadgen/control"
	"github.com/cnperf/cnperf/internal/stats/hdr"
)

// clientSession is the client's side of one test.
type clientSession struct {
	cfg      ClientConfig
	st       control.Setup
	addr     netip.Addr
	conn     net.Conn
	cookie   []byte
	dataPort int
	offload  []string

	flowWorkers
	phase   atomic.Int32
	gsoUsed atomic.Bool

	cpuA, cpuB   cpuSnap
	snapA, snapB []snap
	wallA, wallB time.Time
	// mids are the counters read at the inner edges of the window's intervals.
	mids []edge
}

// edge is every flow's counters at one moment of the monotonic clock.
type edge struct {
	mono int64
	s    []snap
}

func (cs *clientSession) addFlow(f *flowState) {
	cs.mu.Lock()
	cs.flows = append(cs.flows, f)
	cs.mu.Unlock()
}

func (cs *clientSession) openFlows() error {
	st := cs.st
	kind := kindOf(st.Profile)
	for i := 0; i < flowCount(st); i++ {
		switch kind {
		case kindCRR:
			cs.addFlow(&flowState{index: i, fd: -1})
		case kindUDPStream, kindUDPRR:
			fd, err := cs.openUDPFlow(i)
			if err != nil {
				return fmt.Errorf("flow %d: %w", i, err)
			}
			cs.addFlow(&flowState{index: i, fd: fd})
		default:
			fd, err := dialTCP(cs.addr, cs.dataPort, cs.cfg.ConnectTimeout, st.SendBufferBytes, st.RecvBufferBytes)
			if err != nil {
				return fmt.Errorf("flow %d: %w", i, err)
			}
			cs.addFlow(&flowState{index: i, fd: fd})
			if kind == kindTCPRR || isProbe(st, i) {
				// no socket timeouts on RR connections (dialTCP's connect timeout is cleared
				// too): every blocking call would arm and cancel a kernel timer (~0.2 µs per
				// transaction); finishWorkers bounds the drain
				_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
				if err := setTimeouts(fd, 0); err != nil {
					return fmt.Errorf("flow %d: %w", i, err)
				}
			} else if err := setTimeouts(fd, ioTimeout); err != nil {
				return err
			}
			if err := sendAll(fd, makeHello(tcpHelloMagic, cs.cookie, i), nil); err != nil {
				return fmt.Errorf("flow %d: greeting: %w", i, err)
			}
		}
	}
	return nil
}

// openUDPFlow connects a UDP socket to the data port and greets the server until it answers
// from the flow's own connected socket.
func (cs *clientSession) openUDPFlow(i int) (int, error) {
	fd, err := newSocket(cs.addr, unix.SOCK_DGRAM)
	if err != nil {
		return -1, err
	}
	ok := false
	defer func() {
		if !ok {
			closeFd(fd)
		}
	}()
	if err := setBuffers(fd, cs.st.SendBufferBytes, cs.st.RecvBufferBytes, true); err != nil {
		return -1, err
	}
	if err := setTimeouts(fd, 100*time.Millisecond); err != nil {
		return -1, err
	}
	if err := unix.Connect(fd, sockaddr(cs.addr, cs.dataPort)); err != nil {
		return -1, fmt.Errorf("connect: %w", err)
	}
	hello := makeHello(udpHelloMagic, cs.cookie, i)
	buf := make([]byte, 64)
	deadline := time.Now().Add(cs.cfg.ConnectTimeout)
	var lastErr error
	for time.Now().Before(deadline) && !cs.stopFlag.Load() {
		if _, err := sendSock(fd, hello); err != nil {
			lastErr = err
			time.Sleep(50 * time.Millisecond)
			continue
		}
		n, err := recvSock(fd, buf)
		if err != nil {
			lastErr = err
			continue
		}
		if n == len(hello) && string(buf[:n]) == string(hello) {
			if err := setTimeouts(fd, ioTimeout); err != nil {
				return -1, err
			}
			ok = true
			return fd, nil
		}
	}
	if lastErr == nil || lastErr == unix.EAGAIN {
		lastErr = errors.New("no answer")
	}
	return -1, fmt.Errorf("UDP greeting not answered within %s: %w", cs.cfg.ConnectTimeout, lastErr)
}

func (cs *clientSession) startWorkers() {
	st := cs.st
	kind := kindOf(st.Profile)
	stop := func() bool { return cs.stopFlag.Load() }
	perFlowRate := st.RateBitsPerSecond / float64(st.Parallel)
	ensureProcs(len(cs.flows))
	if cs.cfg.ClientCPU >= 0 {
		restore, err := pinProcess(cs.cfg.ClientCPU)
		if err != nil {
			cs.setErr(err)
			return
		}
		cs.unpin = restore
	}
	for _, f := range cs.flows {
		f := f
		if !cs.cfg.NoHistogram && (kind == kindTCPRR || kind == kindUDPRR || kind == kindCRR || isProbe(st, f.index)) {
			f.hist = hdr.New()
		}
		cs.wg.Add(1)
		go func() {
			defer cs.wg.Done()
			var err error
			switch kind {
			case kindStream:
				mode := ""
				if st.Profile == "TCP_SENDFILE" {
					mode = "sendfile"
				} else if st.ZeroCopy {
					mode = "zerocopy"
				}
				err = streamSend(f, st.MessageBytes, perFlowRate, mode, stop)
			case kindMaerts:
				err = streamRecv(f, recvBufSize(st.MessageBytes), func() bool { return false })
			case kindTCPRR:
				err = tcpRRClient(f, st.MessageBytes, st.ResponseBytes, st.Burst, &cs.phase, stop)
			case kindStreamLat:
				if isProbe(st, f.index) {
					err = tcpRRClient(f, st.ResponseBytes, st.ResponseBytes, 0, &cs.phase, stop)
				} else {
					err = streamSend(f, st.MessageBytes, perFlowRate, "", stop)
				}
			case kindUDPRR:
				err = udpRRClient(f, st.MessageBytes, st.ResponseBytes, st.Burst, &cs.phase, stop)
			case kindUDPStream:
				var gso bool
				gso, err = udpStreamSend(f, udpSendOptions{size: st.MessageBytes, rateBps: perFlowRate, gso: !st.NoOffload}, &cs.phase, stop)
				if gso {
					cs.gsoUsed.Store(true)
				}
			case kindCRR:
				err = crrClient(f, cs.addr, cs.dataPort, st.MessageBytes, st.ResponseBytes, st.CRRClose == control.CloseRST, &cs.phase, stop)
			}
			if err != nil && err != errStopped {
				cs.setErr(fmt.Errorf("flow %d: %w", f.index, err))
			}
		}()
	}
}

func (cs *clientSession) measure() {
	cs.cpuA = takeCPU()
	cs.wallA = time.Now()
	// the phase changes right after the counters are read, before the TCP_INFO system calls:
	// a controller descheduled between the two would let the histograms miss transactions the
	// window counts
	cs.snapA = snapCounters(cs.flows)
	cs.phase.Store(phaseMeasure)
	if kindOf(cs.st.Profile).isTCPFlows() {
		addRetransmits(cs.snapA, cs.flows)
	}
}

func (cs *clientSession) stopWindow() {
	cs.phase.Store(phaseStopped)
	cs.snapB = snapFlows(cs.flows, kindOf(cs.st.Profile).isTCPFlows())
	cs.cpuB = takeCPU()
	cs.wallB = time.Now()
	cs.stopFlag.Store(true)
}

// Intervals: the measured window is cut into maxIntervals equal slices, fewer when they would
// be shorter than minIntervalNs; with fewer than minIntervals the sample reports none.
const (
	maxIntervals  = 10
	minIntervals  = 6
	minIntervalNs = 100e6
)

func intervalCount(windowNs int64) int {
	n := maxIntervals
	if windowNs/int64(n) < minIntervalNs {
		n = int(windowNs / minIntervalNs)
	}
	if n < minIntervals {
		return 0
	}
	return n
}

// sliceWindow waits out the measured window, reading the flows' counters at the inner edges of
// its intervals (atomic loads only, no system call, so the flows do not notice).
func (cs *clientSession) sliceWindow(ctx context.Context) error {
	dur := cs.st.DurationNs
	n := intervalCount(dur)
	start := cs.cpuA.mono
	for i := 1; i < n; i++ {
		at := start + dur*int64(i)/int64(n)
		if err := sleepCtx(ctx, time.Duration(at-nanotime())); err != nil {
			return err
		}
		cs.mids = append(cs.mids, edge{mono: nanotime(), s: snapCounters(cs.flows)})
	}
	return sleepCtx(ctx, time.Duration(start+dur-nanotime()))
}

// intervals turns the counters at the window's edges and inner edges into per-interval rates
// of the client's own counters: bits sent (streams), bits received (TCP_MAERTS), or
// transactions (RR, CRR).
func (cs *clientSession) intervals() []api.SampleInterval {
	if len(cs.mids) == 0 {
		return nil
	}
	edges := append(append([]edge{{mono: cs.cpuA.mono, s: cs.snapA}}, cs.mids...), edge{mono: cs.cpuB.mono, s: cs.snapB})
	kind := kindOf(cs.st.Profile)
	out := make([]api.SampleInterval, 0, len(edges)-1)
	for i := 1; i < len(edges); i++ {
		a, b := edges[i-1], edges[i]
		sec := float64(b.mono-a.mono) / 1e9
		if sec <= 0 {
			return nil
		}
		var d snap
		for k := range b.s {
			if isProbe(cs.st, k) {
				continue // the stream's rate, without the probe's few bytes
			}
			w := b.s[k].sub(a.s[k])
			d.bytesTx += w.bytesTx
			d.bytesRx += w.bytesRx
			d.tx += w.tx
		}
		iv := api.SampleInterval{StartSeconds: float64(a.mono-cs.cpuA.mono) / 1e9, DurationSeconds: sec}
		switch kind {
		case kindStream, kindUDPStream, kindStreamLat:
			iv.BitsPerSecond = new(float64(d.bytesTx) * 8 / sec)
		case kindMaerts:
			iv.BitsPerSecond = new(float64(d.bytesRx) * 8 / sec)
		default:
			iv.TransactionsPerSecond = new(float64(d.tx) / sec)
		}
		out = append(out, iv)
	}
	return out
}

func (cs *clientSession) finishWorkers() error {
	done := make(chan struct{})
	go func() { cs.wg.Wait(); close(done) }()
	limit := 15 * time.Second
	if k := kindOf(cs.st.Profile); k == kindTCPRR || k == kindCRR || k == kindStreamLat {
		// RR and CRR flows block without a timeout while their last transactions complete
		limit = drainTimeout
	}
	select {
	case <-done:
	case <-time.After(limit):
		cs.abort()
		<-done
		if err := cs.workerErr(); err != nil {
			return err
		}
		return fmt.Errorf("data flows did not finish within %s after the window", limit)
	}
	return cs.workerErr()
}

func (cs *clientSession) abort() {
	cs.stopFlag.Store(true)
	cs.phase.Store(phaseStopped)
	cs.shutdownFlows()
}

func (cs *clientSession) close() {
	if cs.closeOnce(cs.abort) {
		cs.closeFlows()
	}
}

func (cs *clientSession) report(srv *control.ServerResult) (*Report, error) {
	rep := &Report{Setup: cs.st, Server: srv, ClientCPU: cpuDiff(cs.cpuA, cs.cpuB), WindowNs: cs.cpuB.mono - cs.cpuA.mono}
	if rep.WindowNs <= 0 {
		rep.WindowNs = 1
	}
	rep.Offload = append(rep.Offload, cs.offload...)
	if cs.gsoUsed.Load() {
		rep.Offload = append(rep.Offload, "client: udp-gso")
	}
	hist := hdr.New()
	var zc zeroCopyStats
	for i, f := range cs.flows {
		w := cs.snapB[i].sub(cs.snapA[i])
		tot := f.c.read()
		rep.ClientFlows = append(rep.ClientFlows, ClientFlow{
			WindowBytesTx: w.bytesTx, WindowBytesRx: w.bytesRx, WindowTransactions: w.tx, Retransmits: max(w.retrans, 0),
			TotalBytesTx: tot.bytesTx, TotalBytesRx: tot.bytesRx, TotalTransactions: tot.tx,
			LastSeq: f.lastSeq, LostTransactions: f.lostTx,
		})
		if f.hist != nil {
			hist.Merge(f.hist)
		}
		zc.sends += f.zc.sends
		zc.completions += f.zc.completions
		zc.copied += f.zc.copied
		zc.fellBack = zc.fellBack || f.zc.fellBack
	}
	var err error
	rep.Sample, err = buildSample(rep, cs.wallA, cs.wallB, hist, !cs.cfg.NoHistogram, zc)
	rep.Sample.Intervals = cs.intervals()
	return rep, err
}
