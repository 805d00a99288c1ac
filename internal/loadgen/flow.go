package loadgen

import (
	"sync/atomic"

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
	err     error
}

type zeroCopyStats struct {
	sends, completions, copied int64
	fellBack                   bool // every completed send was copied: switched to plain sends
}
