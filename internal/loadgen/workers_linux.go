package loadgen

import (
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// flowWorkers is what both sides of a test share: its flows, the workers that drive them and
// their first error, and how the flows are woken (shutdownFlows) and released (release).
type flowWorkers struct {
	mu       sync.Mutex // guards flows (the acceptor fills them; abort comes from the context watcher)
	flows    []*flowState
	stopFlag atomic.Bool // workers: stop
	wg       sync.WaitGroup
	errMu    sync.Mutex
	firstErr error
	unpin    func()
	closed   bool
}

// setErr keeps the first error a worker met.
func (w *flowWorkers) setErr(err error) {
	if err == nil {
		return
	}
	w.errMu.Lock()
	if w.firstErr == nil {
		w.firstErr = err
	}
	w.errMu.Unlock()
}

// workerErr is the first error a worker met, or nil.
func (w *flowWorkers) workerErr() error {
	w.errMu.Lock()
	defer w.errMu.Unlock()
	return w.firstErr
}

// shutdownFlows wakes every call blocked on a flow's socket (shutdown(2)).
func (w *flowWorkers) shutdownFlows() {
	w.mu.Lock()
	for _, f := range w.flows {
		if f == nil {
			continue
		}
		if f.fd >= 0 {
			_ = unix.Shutdown(f.fd, unix.SHUT_RDWR)
		}
		f.shutdownConn()
	}
	w.mu.Unlock()
}

// closeOnce, the first time only, marks the workers closed, runs abort (which stops them) and
// waits for them; it says whether it did.
func (w *flowWorkers) closeOnce(abort func()) bool {
	if w.closed {
		return false
	}
	w.closed = true
	abort()
	w.wait()
	return true
}

// wait waits for the workers (already told to stop) and gives back the CPUs they were pinned to.
func (w *flowWorkers) wait() {
	w.wg.Wait()
	if w.unpin != nil {
		w.unpin()
	}
}

// closeFlows closes every flow's socket.
func (w *flowWorkers) closeFlows() {
	w.mu.Lock()
	for _, f := range w.flows {
		if f != nil {
			closeFd(f.fd)
			f.fd = -1
		}
	}
	w.mu.Unlock()
}
