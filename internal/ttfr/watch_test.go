package ttfr

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestWatchRealListener opens (then closes) a real listener after the probe is ready: the
// change it reports lies after the moment the listener changed and within a few intervals.
func TestWatchRealListener(t *testing.T) {
	for _, expect := range []State{Open, Closed} {
		t.Run(string(expect), func(t *testing.T) {
			addr := freePort(t)
			var ln net.Listener
			var mu sync.Mutex
			listen := func() {
				l, err := net.Listen("tcp", addr)
				if err != nil {
					t.Error(err)
					return
				}
				go func() {
					for {
						c, err := l.Accept()
						if err != nil {
							return
						}
						_ = c.Close()
					}
				}()
				mu.Lock()
				ln = l
				mu.Unlock()
			}
			if expect == Closed {
				listen()
			}
			defer func() {
				mu.Lock()
				defer mu.Unlock()
				if ln != nil {
					_ = ln.Close()
				}
			}()
			changedc := make(chan time.Time, 1)
			rep := Watch(context.Background(), WatchConfig{Target: addr, Expect: expect, Interval: 2 * time.Millisecond,
				Settle: 5 * time.Second, Timeout: 5 * time.Second,
				Ready: func(time.Time) {
					go func() {
						time.Sleep(50 * time.Millisecond) // the change comes after some attempts in the old state: the subject, not a wait
						if expect == Open {
							listen()
						} else {
							mu.Lock()
							_ = ln.Close()
							ln = nil
							mu.Unlock()
						}
						changedc <- time.Now()
					}()
				}})
			if !rep.OK || rep.ChangeAt == nil || rep.LastOtherAt == nil || rep.ReadyAt == nil {
				t.Fatalf("report %+v", rep)
			}
			changed := <-changedc
			// The change is made between the last old-state attempt and the first new one
			// (allowing the time.Now() after the change), and a loopback change is seen at once.
			if rep.LastOtherAt.After(changed) {
				t.Errorf("last %s attempt at %s, after the change at %s", expect.Other(), rep.LastOtherAt, changed)
			}
			if d := rep.ChangeAt.Sub(changed); d < -time.Millisecond || d > 200*time.Millisecond {
				t.Errorf("change seen %s after it was made", d)
			}
			if rep.Attempts < 10 {
				t.Errorf("only %d attempts", rep.Attempts)
			}
		})
	}
}

// TestWatchNeverChanges: an old state that stays is a failure with that cause, not a figure.
func TestWatchNeverChanges(t *testing.T) {
	rep := Watch(context.Background(), WatchConfig{Target: freePort(t), Expect: Open, Interval: 2 * time.Millisecond,
		Settle: 2 * time.Second, Timeout: 200 * time.Millisecond})
	if rep.OK || rep.ChangeAt != nil || rep.ReadyAt == nil || !strings.Contains(rep.Error, "still closed 200ms after the probe was ready") {
		t.Fatalf("report %+v", rep)
	}
	if !strings.Contains(rep.LastError, "refused") {
		t.Errorf("last error %q: want the connects' own cause", rep.LastError)
	}
}

// TestWatchOldStateNeverHolds: the target already in the expected state is refused: nothing
// could be timed.
func TestWatchOldStateNeverHolds(t *testing.T) {
	ok := func(context.Context) error { return nil }
	rep := Watch(context.Background(), WatchConfig{Expect: Open, Interval: time.Millisecond, Settle: 100 * time.Millisecond,
		Timeout: time.Second, attempt: ok})
	if rep.OK || rep.ReadyAt != nil || !strings.Contains(rep.Error, "the closed state never held for 4 attempts in a row within 100ms (the target was open)") {
		t.Fatalf("report %+v", rep)
	}
}

// TestWatchIgnoresFlaps: a lone success after ready is not the change; the confirmed run is.
// The fake hands out outcomes in the order the attempts run: the third is a success (the flap),
// the 20th and later are. Each attempt runs in its own goroutine, stamped when it is issued,
// 1 ms apart; on a loaded machine one issued before the 20th may run after it and succeed,
// between failures in issue order: another unconfirmed success, which Watch rightly counts as a
// flap too (seen: Flaps 2 under two busy loops). So: at least the one flap, and the change is
// the confirmed run, issued after the flap ran.
func TestWatchIgnoresFlaps(t *testing.T) {
	var mu sync.Mutex
	n := 0
	var ready bool
	var flapRan time.Time
	attempt := func(context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		if !ready {
			return errors.New("refused")
		}
		n++
		if n == 3 {
			flapRan = time.Now()
		}
		if n == 3 || n >= 20 { // one flap, then open for good
			return nil
		}
		return errors.New("refused")
	}
	rep := Watch(context.Background(), WatchConfig{Expect: Open, Interval: time.Millisecond, Settle: time.Second, Timeout: 5 * time.Second,
		attempt: attempt, Ready: func(time.Time) { mu.Lock(); ready = true; mu.Unlock() }})
	mu.Lock()
	defer mu.Unlock()
	if !rep.OK || rep.Flaps < 1 || rep.ChangeAt == nil || !rep.ChangeAt.After(flapRan) {
		t.Fatalf("report %+v (the flap ran at %s): want the change after it, the flap counted", rep, flapRan)
	}
}

// TestWatchFromStart: with FromStart the old state need not hold first: a target open from the
// first attempt is the change at that attempt (no LastOtherAt), one that opens later is seen
// after the closed attempts (LastOtherAt set), and without FromStart the first is refused.
func TestWatchFromStart(t *testing.T) {
	for _, c := range []struct {
		name      string
		closedFor int // attempts refused before the target opens
		fromStart bool
		ok        bool
		lastOther bool
	}{
		{"open at once", 0, true, true, false},
		{"opens later", 10, true, true, true},
		{"open at once, old state required", 0, false, false, false},
	} {
		var mu sync.Mutex
		n := 0
		attempt := func(context.Context) error {
			mu.Lock()
			defer mu.Unlock()
			n++
			if n <= c.closedFor {
				return errors.New("refused")
			}
			return nil
		}
		readies := 0
		rep := Watch(context.Background(), WatchConfig{Expect: Open, Interval: time.Millisecond, Settle: 100 * time.Millisecond,
			Timeout: 2 * time.Second, FromStart: c.fromStart, attempt: attempt, Ready: func(time.Time) { readies++ }})
		if rep.OK != c.ok || (rep.LastOtherAt != nil) != c.lastOther || (c.ok && (rep.ChangeAt == nil || rep.ReadyAt == nil || readies != 1)) {
			t.Errorf("%s: report %+v (ready called %d times)", c.name, rep, readies)
		}
	}
}

// TestAttemptStampsItsConnect: a TCP or HTTP attempt stamps the moment it issues its connect
// system call, whether the target answers or refuses, and Watch takes that stamp as the
// attempt's start (not the moment before the attempt's socket was made: under load, time
// enough for a change to come, which the attempt then seemed to see before it was made).
func TestAttemptStampsItsConnect(t *testing.T) {
	for _, c := range []struct {
		name, proto, target string
		refused             bool
	}{
		{"tcp, open", "tcp", startServer(t), false},
		{"tcp, refused", "tcp", freePort(t), true},
		{"http, open", "http", startServer(t), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			attempt := attemptFunc(ClientConfig{Target: c.target, Protocol: c.proto, AttemptTimeout: 5 * time.Second})
			var at atomic.Pointer[time.Time]
			before := time.Now()
			err := attempt(withConnectStamp(context.Background(), &at))
			after := time.Now()
			if (err != nil) != c.refused {
				t.Fatalf("attempt: %v", err)
			}
			if p := at.Load(); p == nil || p.Before(before) || p.After(after) {
				t.Errorf("connect stamped at %v, want within the attempt (%v .. %v)", p, before, after)
			}
		})
	}
	// Watch's attempts: each record's start is its stamp
	stamp := time.Now().Add(time.Hour)
	n := 0
	attempt := func(ctx context.Context) error {
		ctx.Value(connectStampKey{}).(*atomic.Pointer[time.Time]).Store(&stamp)
		if n++; n <= 4 {
			return errors.New("refused")
		}
		return nil
	}
	rep := Watch(context.Background(), WatchConfig{Expect: Open, Interval: time.Millisecond, Settle: time.Second, Timeout: 5 * time.Second,
		MaxInFlight: 1, attempt: attempt})
	if !rep.OK || rep.ChangeAt == nil || !rep.ChangeAt.Equal(stamp) || rep.LastOtherAt == nil || !rep.LastOtherAt.Equal(stamp) {
		t.Errorf("report %+v, want the change and the last closed attempt at the attempts' stamp %v", rep, stamp)
	}
}
