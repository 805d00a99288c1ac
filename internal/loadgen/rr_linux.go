package loadgen

import (
	"fmt"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cnperf/cnperf/internal/stats/hdr"
)

// drainTimeout is how long RR clients wait, after the window, for the responses to the
// requests still in flight.
const drainTimeout = 3 * time.Second

// tcpRRClient keeps burst+1 requests in flight on one connection: each response read lets it
// send as many new requests. Per-transaction round-trip times go into the flow's histogram
// while the phase is "measure" (nil histogram: no clock reads at all).
func tcpRRClient(f *flowState, reqSize, respSize, burst int, phase *atomic.Int32, stop func() bool) error {
	inflight := burst + 1
	req := make([]byte, reqSize*inflight)
	rbufSize := respSize * inflight
	if rbufSize < 64<<10 {
		rbufSize = 64 << 10
	}
	rbuf := make([]byte, rbufSize)
	ring := make([]int64, inflight)
	head, out := 0, 0
	hist := f.hist
	var now int64
	if hist != nil {
		now = nanotime()
	}
	for i := 0; i < inflight; i++ {
		ring[i] = now
	}
	out = inflight
	if err := sendAll(f.fd, req, stop); err != nil {
		return fmt.Errorf("send request: %w", err)
	}
	partial := 0
	var y yielder
	for out > 0 {
		y.tick()
		n, err := recvSock(f.fd, rbuf)
		if err == unix.EINTR || err == unix.EAGAIN {
			continue
		}
		if err == nil && n == 0 {
			err = errEOF
		}
		if err != nil {
			if stop() {
				// after the window the client drains its requests in flight; finishWorkers
				// shuts the connection down when they do not all come back in time
				return fmt.Errorf("%d responses still outstanding after the window (%w)", out, err)
			}
			return fmt.Errorf("receive response: %w", err)
		}
		partial += n
		done := partial / respSize
		partial -= done * respSize
		if done == 0 {
			continue
		}
		if done > out {
			return fmt.Errorf("received %d responses with %d requests outstanding", done, out)
		}
		if hist != nil {
			now = nanotime()
		}
		// send the next requests first: the bookkeeping below then overlaps with their round
		// trip instead of delaying them
		more := !stop()
		if more {
			if err := sendAll(f.fd, req[:done*reqSize], stop); err != nil {
				return fmt.Errorf("send request: %w", err)
			}
		}
		if hist != nil {
			measuring := phase.Load() == phaseMeasure
			for k := 0; k < done; k++ {
				if measuring {
					hist.Record(now - ring[head])
				}
				ring[head] = now // the slot a new request just took (unused when not sending)
				head++
				if head == inflight {
					head = 0
				}
			}
		}
		f.c.tx.Add(int64(done))
		if !more {
			out -= done
		}
	}
	if err := unix.Shutdown(f.fd, unix.SHUT_WR); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// tcpRRServer answers every complete request with a response until the client closes.
func tcpRRServer(f *flowState, reqSize, respSize int, stop func() bool) error {
	rbuf := make([]byte, 64<<10)
	const chunk = 256
	resp := make([]byte, respSize*chunk)
	partial := 0
	var y yielder
	for {
		n, err := recvUntil(f.fd, rbuf, stop, &y)
		if err != nil {
			return fmt.Errorf("receive request: %w", err)
		}
		if n == 0 {
			return nil
		}
		partial += n
		done := partial / reqSize
		partial -= done * reqSize
		for left := done; left > 0; {
			k := left
			if k > chunk {
				k = chunk
			}
			if err := sendAll(f.fd, resp[:k*respSize], stop); err != nil {
				return fmt.Errorf("send response: %w", err)
			}
			left -= k
		}
		if done > 0 {
			f.c.tx.Add(int64(done))
		}
	}
}

// udpRRClient is tcpRRClient for datagrams: one request, one response. A response that does
// not come within the I/O timeout counts the transactions in flight as lost and starts over.
func udpRRClient(f *flowState, reqSize, respSize, burst int, phase *atomic.Int32, stop func() bool) error {
	inflight := burst + 1
	req := make([]byte, reqSize)
	rbuf := make([]byte, respSize+64)
	ring := make([]int64, inflight)
	head, out := 0, 0
	hist := f.hist
	send := func(k int, now int64) error {
		for i := 0; i < k; i++ {
			tail := head + out
			if tail >= inflight {
				tail -= inflight
			}
			ring[tail] = now
			out++
			for {
				_, err := sendSmall(f.fd, req)
				if err == nil {
					break
				}
				if err == unix.EINTR || err == unix.EAGAIN {
					if stop() {
						return errStopped
					}
					continue
				}
				return fmt.Errorf("send request: %w", err)
			}
		}
		return nil
	}
	if err := send(inflight, clock(hist)); err != nil {
		return err
	}
	var drainDeadline int64
	var y yielder
	for out > 0 {
		y.tick()
		n, err := recvSock(f.fd, rbuf)
		if err != nil {
			if err == unix.EINTR {
				continue
			}
			if err == unix.EAGAIN {
				if stop() {
					if drainDeadline == 0 {
						drainDeadline = nanotime() + drainTimeout.Nanoseconds()
						continue
					}
					if nanotime() > drainDeadline {
						f.lostTx += int64(out)
						return nil
					}
					continue
				}
				// the requests or responses in flight were lost: count them, start again
				f.lostTx += int64(out)
				head, out = 0, 0
				if err := send(inflight, clock(hist)); err != nil {
					return err
				}
				continue
			}
			return fmt.Errorf("receive response: %w", err)
		}
		if isUDPHello(rbuf[:n]) {
			continue
		}
		var now, t0 int64
		if hist != nil {
			now, t0 = nanotime(), ring[head]
		}
		head++
		if head == inflight {
			head = 0
		}
		out--
		// the next request goes out before the bookkeeping
		if !stop() {
			if err := send(1, now); err != nil {
				return err
			}
		}
		if hist != nil && phase.Load() == phaseMeasure {
			hist.Record(now - t0)
		}
		f.c.tx.Add(1)
	}
	return nil
}

// udpRRServer answers each request datagram with one response, batching with recvmmsg and
// sendmmsg when several requests are queued.
func udpRRServer(f *flowState, reqSize, respSize, burst int, cookie []byte, stop func() bool) error {
	vlen := burst + 1
	if vlen > 64 {
		vlen = 64
	}
	bufSize := reqSize
	if bufSize < udpHelloBytes {
		bufSize = udpHelloBytes
	}
	if vlen == 1 {
		return udpRRServerSimple(f, bufSize, respSize, cookie, stop)
	}
	rb := newMmsgBatch(vlen, bufSize, false, false)
	sb := newMmsgBatch(vlen, respSize, false, false)
	var y yielder
	for {
		n, err := recvBatch(f.fd, rb, stop, &y)
		if err == errStopped {
			return nil
		}
		if err != nil {
			return fmt.Errorf("receive request: %w", err)
		}
		k := 0
		for i := 0; i < n; i++ {
			m := rb.bufs[i][:rb.hdrs[i].Len]
			if len(m) == 0 && stop() {
				return nil
			}
			if isUDPHello(m) {
				if helloMatches(m, cookie, f.index) {
					_, _ = sendSock(f.fd, m)
				}
				continue
			}
			k++
		}
		for sent := 0; sent < k; {
			m, err := sendmmsg(f.fd, sb.hdrs[:k-sent], 0)
			if err != nil {
				if err == unix.EINTR || err == unix.EAGAIN {
					if stop() {
						return nil
					}
					continue
				}
				if err == unix.ECONNREFUSED {
					break
				}
				return fmt.Errorf("send response: %w", err)
			}
			sent += m
		}
		if k > 0 {
			f.c.tx.Add(int64(k))
		}
	}
}

// udpRRServerSimple is udpRRServer for one transaction in flight: plain read and write are
// cheaper than the mmsg calls for single datagrams.
func udpRRServerSimple(f *flowState, bufSize, respSize int, cookie []byte, stop func() bool) error {
	req := make([]byte, bufSize)
	resp := make([]byte, respSize)
	var y yielder
	for {
		y.tick()
		n, err := recvSock(f.fd, req)
		if err != nil {
			switch err {
			case unix.EINTR, unix.ECONNREFUSED:
				continue
			case unix.EAGAIN:
				if stop() {
					return nil
				}
				continue
			}
			return fmt.Errorf("receive request: %w", err)
		}
		if n == 0 {
			if stop() {
				return nil
			}
			continue // an empty datagram is not a request
		}
		if isUDPHello(req[:n]) {
			if helloMatches(req[:n], cookie, f.index) {
				_, _ = sendSock(f.fd, req[:n])
			}
			continue
		}
		for {
			_, err := sendSmall(f.fd, resp)
			if err == nil || err == unix.ECONNREFUSED {
				break
			}
			if err == unix.EINTR || (err == unix.EAGAIN && !stop()) {
				continue
			}
			if err == unix.EAGAIN {
				return nil
			}
			return fmt.Errorf("send response: %w", err)
		}
		f.c.tx.Add(1)
	}
}

// clock reads the monotonic clock when transactions are timed.
func clock(h *hdr.Histogram) int64 {
	if h == nil {
		return 0
	}
	return nanotime()
}
