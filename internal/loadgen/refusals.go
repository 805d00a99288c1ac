package loadgen

import (
	"fmt"
	"io"
	"net"
	"sort"
	"strings"
	"sync"
	"time"
)

// refusals logs refused control connections rate-limited: the first at once, with its peer
// and reason; the rest as one line per interval with counts, so that peers that keep
// reconnecting without the token cannot fill the agent's log.
type refusals struct {
	log   io.Writer
	every time.Duration

	mu      sync.Mutex
	logged  bool           // the first refusal was logged
	pending bool           // a summary is scheduled
	since   time.Time      // start of the interval being counted
	n       int            // refusals in it
	reasons map[string]int // by reason
	peers   map[string]struct{}
	timer   *time.Timer
}

// add counts one refused connection from peer.
func (r *refusals) add(peer net.Addr, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.logged {
		r.logged = true
		fmt.Fprintf(r.log, "refused control connection from %s: %s (further refusals are summed up every %s)\n",
			peer, reason, r.every)
		return
	}
	if r.reasons == nil {
		r.reasons, r.peers = map[string]int{}, map[string]struct{}{}
	}
	if r.n == 0 {
		r.since = time.Now()
	}
	r.n++
	r.reasons[reason]++
	r.peers[hostOf(peer)] = struct{}{}
	if !r.pending {
		r.pending = true
		r.timer = time.AfterFunc(r.every, r.flush)
	}
}

// flush logs the counted refusals, if any (at the end of an interval and when Serve returns).
func (r *refusals) flush() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.timer != nil {
		r.timer.Stop()
	}
	r.pending = false
	if r.n == 0 {
		return
	}
	why := make([]string, 0, len(r.reasons))
	for k, v := range r.reasons {
		why = append(why, fmt.Sprintf("%d %s", v, k))
	}
	sort.Strings(why)
	fmt.Fprintf(r.log, "refused %d control connections from %d addresses in %s: %s\n", r.n, len(r.peers),
		time.Since(r.since).Round(time.Second), strings.Join(why, ", "))
	r.n = 0
	clear(r.reasons)
	clear(r.peers)
}

// hostOf is a peer's address without its port.
func hostOf(a net.Addr) string {
	if a == nil {
		return "?"
	}
	if h, _, err := net.SplitHostPort(a.String()); err == nil {
		return h
	}
	return a.String()
}
