package ttfr

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// State is what a TCP connect to a target shows: Open (it completed) or Closed (refused,
// reset, unreachable or timed out).
type State string

// The states Watch tells apart.
const (
	Open   State = "open"
	Closed State = "closed"
)

// Valid reports whether s is Open or Closed.
func (s State) Valid() bool { return s == Open || s == Closed }

// Other is the state s is not.
func (s State) Other() State {
	if s == Open {
		return Closed
	}
	return Open
}

// WatchReadyLine starts the line Watch's Ready hook prints in `cnperf agent probe`: the old
// state is established and probing goes on, so the change may be made now.
const WatchReadyLine = "cnperf probe ready"

// WatchConfig configures Watch.
type WatchConfig struct {
	Target string // HOST:PORT
	// Expect is the state to wait for; the other state must be seen first.
	Expect State
	// Interval is the time between the starts of two attempts (default 5 ms); attempts overlap.
	Interval time.Duration
	// AttemptTimeout bounds one connect (default 500 ms): a connect still pending then counts
	// as Closed (a dropped SYN).
	AttemptTimeout time.Duration
	// Confirm is how many attempts following the first one in the expected state must also
	// show it for the change to count (default 3): a lone success (or a lone timeout) is not
	// a change.
	Confirm int
	// Settle bounds the wait for the old state (Confirm+1 attempts in a row showing it) before
	// Ready; Timeout bounds the wait for the change after Ready.
	Settle, Timeout time.Duration
	// FromStart skips the wait for the old state: the probe is ready at its first attempt and
	// reports the first confirmed attempt in Expect, whatever came before (a target that did
	// not exist before the probe started: a new pod's IP). When that is the very first
	// attempt, LastOtherAt is absent: the change happened before the probe started.
	FromStart bool
	// Ready is called once the old state is established, with the start of the first attempt
	// of the run that established it; the caller makes its change after this.
	Ready func(since time.Time)
	// MaxInFlight bounds the attempts pending at once (default 1024); starts beyond it are
	// skipped and counted.
	MaxInFlight int
	// attempt replaces the TCP connect in tests.
	attempt func(context.Context) error
}

// WatchReport is `cnperf agent probe`'s JSON line. Times are the probe's own wall clock.
type WatchReport struct {
	OK              bool    `json:"ok"`
	Target          string  `json:"target"`
	Expect          State   `json:"expect"`
	IntervalSeconds float64 `json:"intervalSeconds"`
	Confirm         int     `json:"confirm"`
	Attempts        int     `json:"attempts"`
	// Skipped counts attempts not started because MaxInFlight were pending.
	Skipped int `json:"skipped,omitempty"`
	// ReadyAt is when the old state was established (the Ready hook ran).
	ReadyAt *time.Time `json:"readyAt,omitempty"`
	// ChangeAt is the start of the first attempt that showed Expect, confirmed by the Confirm
	// attempts after it; LastOtherAt the start of the last attempt before it that showed the
	// old state: the change happened between the two.
	ChangeAt    *time.Time `json:"changeAt,omitempty"`
	LastOtherAt *time.Time `json:"lastOtherAt,omitempty"`
	// Flaps counts attempts after Ready that showed Expect without the confirmation.
	Flaps int `json:"flaps,omitempty"`
	// LastError is the error of the last Closed attempt (why connects failed).
	LastError string `json:"lastError,omitempty"`
	Error     string `json:"error,omitempty"`
}

type attemptOutcome struct {
	seq   int
	start time.Time // when the attempt's connect was issued
	err   error
}

type attemptRec struct {
	start time.Time // when its connect was issued (attemptOutcome); read only once done
	done  bool
	state State
}

// watcher judges a Watch's attempts in the order they started, as far as they are done.
type watcher struct {
	cfg       WatchConfig
	rep       *WatchReport
	recs      []attemptRec
	old       State
	ready     bool
	run       int // attempts in a row showing the old state, before Ready
	runStart  int // the first of them
	scan      int // the first attempt not yet judged
	lastOther int // the last attempt that showed the old state
	onReady   func()
}

// judge moves over the finished attempts: before Ready it counts the old state's run (and
// calls onReady once it is long enough), after it looks for the confirmed change. It returns
// true once the change is found (rep is then complete).
func (w *watcher) judge() bool {
	for w.scan < len(w.recs) && w.recs[w.scan].done {
		st := w.recs[w.scan].state
		if !w.ready {
			if st == w.old {
				if w.run == 0 {
					w.runStart = w.scan
				}
				w.run++
				w.lastOther = w.scan
			} else {
				w.run = 0
			}
			w.scan++
			if w.run > w.cfg.Confirm {
				w.ready = true
				t := time.Now()
				w.rep.ReadyAt = &t
				if w.cfg.Ready != nil {
					w.cfg.Ready(w.recs[w.runStart].start)
				}
				w.onReady()
			}
			continue
		}
		if st == w.old {
			w.lastOther = w.scan
			w.scan++
			continue
		}
		// The expected state: confirmed by the following attempts?
		switch confirmed(w.recs, w.scan, w.cfg.Confirm, w.cfg.Expect) {
		case 0:
			return false // wait for more attempts to finish
		case -1:
			w.rep.Flaps++
			w.scan++
			continue
		}
		at := w.recs[w.scan].start
		w.rep.ChangeAt = &at
		if w.lastOther >= 0 {
			lo := w.recs[w.lastOther].start
			w.rep.LastOtherAt = &lo
		}
		w.rep.OK = true
		return true
	}
	return false
}

// A watch's defaults: the unset fields of a WatchConfig, and the flags of `cnperf agent probe`
// and `cnperf programming`, which hands them to its probes.
const (
	DefaultWatchInterval       = 5 * time.Millisecond
	DefaultWatchAttemptTimeout = 500 * time.Millisecond
	DefaultWatchConfirm        = 3
)

// withDefaults fills the unset fields: DefaultWatchInterval, DefaultWatchAttemptTimeout,
// DefaultWatchConfirm, 1024 in flight at the most.
func (cfg WatchConfig) withDefaults() WatchConfig {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultWatchInterval
	}
	if cfg.AttemptTimeout <= 0 {
		cfg.AttemptTimeout = DefaultWatchAttemptTimeout
	}
	if cfg.Confirm <= 0 {
		cfg.Confirm = DefaultWatchConfirm
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = 1024
	}
	return cfg
}

// timedOut is the error of a watch whose deadline passed: the old state never settled within
// settle, or the change never came within the timeout after it did.
func (w *watcher) timedOut(settle time.Duration) string {
	if w.ready {
		return fmt.Sprintf("still %s %s after the probe was ready", w.old, w.cfg.Timeout)
	}
	why := fmt.Sprintf("the %s state never held for %d attempts in a row within %s", w.old, w.cfg.Confirm+1, settle)
	if w.run == 0 && w.scan > 0 && w.recs[w.scan-1].state == w.cfg.Expect {
		why += fmt.Sprintf(" (the target was %s)", w.cfg.Expect)
	}
	return why
}

// Watch probes Target with overlapping TCP connects, each with its own start time, until the
// old state is established (then Ready runs) and then until the first attempt showing Expect,
// confirmed by the following attempts. It never returns an error: a failure is a report with
// OK false and the cause.
func Watch(ctx context.Context, cfg WatchConfig) WatchReport {
	cfg = cfg.withDefaults()
	rep := WatchReport{Target: cfg.Target, Expect: cfg.Expect, IntervalSeconds: cfg.Interval.Seconds(), Confirm: cfg.Confirm}
	if !cfg.Expect.Valid() {
		rep.Error = fmt.Sprintf("expect %q: want open or closed", cfg.Expect)
		return rep
	}
	attempt := cfg.attempt
	if attempt == nil {
		attempt = attemptFunc(ClientConfig{Target: cfg.Target, Protocol: "tcp", AttemptTimeout: cfg.AttemptTimeout})
	}
	pool := newAttempts[attemptOutcome](ctx, 256)
	defer pool.stop()

	settle := cfg.Settle
	if settle <= 0 {
		settle = cfg.Timeout
	}
	if cfg.FromStart {
		settle = cfg.Timeout
	}
	deadline := time.NewTimer(settle)
	defer deadline.Stop()
	w := &watcher{cfg: cfg, rep: &rep, old: cfg.Expect.Other(), lastOther: -1,
		onReady: func() { deadline.Reset(cfg.Timeout) }}
	if cfg.FromStart {
		t := time.Now()
		w.ready, rep.ReadyAt = true, &t
		if cfg.Ready != nil {
			cfg.Ready(t)
		}
	}
	ticker := time.NewTicker(cfg.Interval)
	defer ticker.Stop()
	start := func() {
		if pool.inFlight >= cfg.MaxInFlight {
			rep.Skipped++
			return
		}
		seq := len(w.recs)
		w.recs = append(w.recs, attemptRec{}) // its start comes with its outcome
		rep.Attempts++
		pool.start(func(ctx context.Context) attemptOutcome {
			actx, acancel := context.WithTimeout(ctx, cfg.AttemptTimeout)
			defer acancel()
			// the attempt's start is when its connect is issued, not when it was scheduled: on
			// a busy node the goroutine may run milliseconds later, after a change it would
			// then seem to have seen before it happened; the connect system call's own moment
			// when the attempt stamps it (a TCP connect does), else the call's
			var connect atomic.Pointer[time.Time]
			began := time.Now()
			err := attempt(withConnectStamp(actx, &connect))
			if at := connect.Load(); at != nil {
				began = *at
			}
			return attemptOutcome{seq: seq, start: began, err: err}
		})
	}
	start()
	for {
		select {
		case <-ticker.C:
			start()
		case o := <-pool.out:
			pool.received()
			if ctx.Err() != nil {
				continue
			}
			r := &w.recs[o.seq]
			r.start, r.done, r.state = o.start, true, Open
			if o.err != nil {
				r.state = Closed
				rep.LastError = errText(o.err)
			}
			if w.judge() {
				return rep
			}
		case <-deadline.C:
			rep.Error = w.timedOut(settle)
			return rep
		case <-ctx.Done():
			rep.Error = "interrupted"
			if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
				rep.Error += ": " + err.Error()
			}
			return rep
		}
	}
}

// confirmed says whether attempt i (in state want) is followed by confirm attempts in the same
// state: 1 yes, -1 no (one of them differs), 0 not known yet.
func confirmed(recs []attemptRec, i, confirm int, want State) int {
	for k := i + 1; k <= i+confirm; k++ {
		if k >= len(recs) || !recs[k].done {
			return 0
		}
		if recs[k].state != want {
			return -1
		}
	}
	return 1
}
