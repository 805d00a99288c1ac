package loadgen

import (
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/cnperf/cnperf/internal/stats/hdr"
)

// counters are one flow's running totals, updated by its worker and read by the controller
// at the window's edges. Each sits on its own cache lines.
type counters struct {
	_       [64]byte
	bytesTx atomic.Int64
	bytesRx atomic.Int64
	tx      atomic.Int64 // transactions (RR, CRR)
	_       [64]byte
}

// snap is a reading of a flow's counters.
type snap struct {
	bytesTx, bytesRx, tx, retrans int64
}

func (c *counters) read() snap {
	return snap{bytesTx: c.bytesTx.Load(), bytesRx: c.bytesRx.Load(), tx: c.tx.Load()}
}

// snapFlows reads the counters of every flow first, with no system call between two flows, and
// then each TCP flow's retransmits (TCP_INFO): the counters are then taken within nanoseconds
// of each other and of the phase change next to the call.
func snapFlows(flows []*flowState, tcp bool) []snap {
	out := snapCounters(flows)
	if tcp {
		addRetransmits(out, flows)
	}
	return out
}

// snapCounters reads the counters of every flow, with no system call between two flows.
func snapCounters(flows []*flowState) []snap {
	out := make([]snap, len(flows))
	for i, f := range flows {
		out[i] = f.c.read()
	}
	return out
}

// addRetransmits reads each TCP flow's retransmits (TCP_INFO, a system call per flow) into a
// snapshot taken by snapCounters.
func addRetransmits(out []snap, flows []*flowState) {
	for i, f := range flows {
		out[i].retrans = tcpRetransmits(f.fd)
	}
}

func (a snap) sub(b snap) snap {
	return snap{bytesTx: a.bytesTx - b.bytesTx, bytesRx: a.bytesRx - b.bytesRx, tx: a.tx - b.tx, retrans: a.retrans - b.retrans}
}

// Phases of a test as the workers see them.
const (
	phaseWarmup  = 0
	phaseMeasure = 1
	phaseStopped = 2
)

// flowState is what one worker owns; the controller reads fd and counters, and the worker's
// private results (histogram, UDP accounting) only after the worker has exited.
type flowState struct {
	index int
	fd    int
	c     counters
	// results owned by the worker until it exits
	hist    *hdr.Histogram
	udp     udpAcct
	lastSeq uint64 // UDP_STREAM client: last sequence number sent in the measured window
	lostTx  int64  // UDP_RR client: transactions given up after a receive timeout
	zc      zeroCopyStats
	// connPlus1 is a TCP_CRR flow's connection of the moment plus one (0: none), so that an
	// abort can shut it down: CRR sockets have no timeouts. connMu keeps the descriptor from
	// being closed (and its number reused) while an abort shuts it down.
	connMu    sync.Mutex
	connPlus1 int
}

// openConn records fd as the flow's connection of the moment.
func (f *flowState) openConn(fd int) {
	f.connMu.Lock()
	f.connPlus1 = fd + 1
	f.connMu.Unlock()
}

// closeConn closes the flow's connection of the moment, as a raw system call: closing a socket
// without a lingering timeout does not block.
func (f *flowState) closeConn() {
	f.connMu.Lock()
	if f.connPlus1 > 0 {
		_, _, _ = unix.RawSyscall(unix.SYS_CLOSE, uintptr(f.connPlus1-1), 0, 0)
		f.connPlus1 = 0
	}
	f.connMu.Unlock()
}

// shutdownConn wakes a call blocked on the flow's connection of the moment (abort).
func (f *flowState) shutdownConn() {
	f.connMu.Lock()
	if f.connPlus1 > 0 {
		_ = unix.Shutdown(f.connPlus1-1, unix.SHUT_RDWR)
	}
	f.connMu.Unlock()
}

type zeroCopyStats struct {
	sends, completions, copied int64
	fellBack                   bool // every completed send was copied: switched to plain sends
}
