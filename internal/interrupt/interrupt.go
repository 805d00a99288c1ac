// Package interrupt turns SIGINT and SIGTERM (the same to cnperf) into an exit at once or,
// for a command that has something to clean up, into three escalating stops.
//
// Until a command arms the handler (Arm, or Register), a signal ends the process at once
// with 128 + the signal's number (130 for SIGINT, 143 for SIGTERM) and prints nothing: a
// command blocked reading a file, a FIFO or standard input has nothing to stop gracefully.
// Once armed (a run that creates things, from just before it creates the first):
//
//  1. the first cancels the run's context: the case in progress stops, finished cases are
//     kept, and clean-up and result shipping run (on Cleanup contexts, which the first
//     signal does not cancel);
//  2. the second cancels the Cleanup contexts: clean-up and shipping are cut short, and the
//     code that ran them says what may be left and the command that removes it (see
//     Leftovers);
//  3. the third exits at once, after printing what the registered Leftovers say.
//
// Only main installs it (Notify); commands use Arm, Cleanup and Register from the context.
package interrupt

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/cnperf/cnperf/internal/iostreams"
)

// Signals is the state of one process's interruption.
type Signals struct {
	w        io.Writer
	exit     func(int)
	cancel   context.CancelFunc // the run's context
	abortCtx context.Context    // done at the second signal
	abort    context.CancelFunc

	mu        sync.Mutex
	armed     bool
	n         int
	nextID    int
	leftovers map[int]func() string
}

type key struct{}

// Notify installs the handler: until Arm, a SIGINT or SIGTERM calls exit (os.Exit in main)
// with 128 + the signal's number at once; once armed, the returned context ends at the first
// signal, messages go to w, and the third signal calls exit. stop uninstalls it.
func Notify(parent context.Context, w io.Writer, exit func(int)) (ctx context.Context, stop func()) {
	s := &Signals{w: w, exit: exit, leftovers: map[int]func() string{}}
	s.abortCtx, s.abort = context.WithCancel(context.Background())
	ctx, s.cancel = context.WithCancel(context.WithValue(parent, key{}, s))
	ch := make(chan os.Signal, 3)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case sig := <-ch:
				s.handle(sig)
			case <-done:
				return
			}
		}
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			signal.Stop(ch)
			close(done)
			s.cancel()
			s.abort()
		})
	}
}

func name(sig os.Signal) string {
	if sig == os.Interrupt {
		return "SIGINT"
	}
	if sig == syscall.SIGTERM {
		return "SIGTERM"
	}
	return sig.String()
}

// code is the exit code for a process ended by sig: 128 + its number, as a shell reports it.
func code(sig os.Signal) int {
	if ss, ok := sig.(syscall.Signal); ok {
		return 128 + int(ss)
	}
	return 130
}

func (s *Signals) handle(sig os.Signal) {
	s.mu.Lock()
	if !s.armed {
		s.mu.Unlock()
		s.exit(code(sig))
		return
	}
	s.n++
	n := s.n
	var left []string
	if n >= 3 {
		for id := 0; id < s.nextID; id++ {
			if f := s.leftovers[id]; f != nil {
				if m := f(); m != "" {
					left = append(left, m)
				}
			}
		}
	}
	s.mu.Unlock()
	switch n {
	case 1:
		s.say("\ncnperf: %s: stopping; finished cases are kept; cleaning up (signal again to cut clean-up short)", name(sig))
		s.cancel()
	case 2:
		s.say("cnperf: second signal (%s): cutting clean-up and result shipping short (signal again to exit at once)", name(sig))
		s.abort()
	default:
		s.say("cnperf: third signal (%s): exiting now", name(sig))
		for _, m := range left {
			s.say("cnperf: %s", m)
		}
		s.exit(code(sig))
	}
}

// say prints a line for the person who sent the signal, wrapped to the width they read
// (iostreams.Wrap, as every line cnperf prints on stderr).
func (s *Signals) say(format string, args ...any) {
	fmt.Fprintln(s.w, iostreams.Wrap(s.w, fmt.Sprintf(format, args...)))
}

func from(ctx context.Context) *Signals {
	s, _ := ctx.Value(key{}).(*Signals)
	return s
}

// cleanupCtx keeps ctx's values, ignores its cancellation, and ends at the second signal.
type cleanupCtx struct {
	context.Context // for Value
	abort           context.Context
}

func (c cleanupCtx) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c cleanupCtx) Done() <-chan struct{}       { return c.abort.Done() }
func (c cleanupCtx) Err() error {
	if c.abort.Err() != nil {
		return ErrCutShort
	}
	return nil
}

// ErrCutShort is the error of a Cleanup context ended by the second signal.
var ErrCutShort = fmt.Errorf("cut short by a second signal: %w", context.Canceled)

// Cleanup returns a context for clean-up and result shipping after ctx may have been
// cancelled: it keeps ctx's values, is not cancelled with ctx, and ends at the second signal.
// Without Notify (tests, a library caller) it is context.WithoutCancel(ctx).
func Cleanup(ctx context.Context) context.Context {
	s := from(ctx)
	if s == nil {
		return context.WithoutCancel(ctx)
	}
	return cleanupCtx{Context: context.WithoutCancel(ctx), abort: s.abortCtx}
}

// CutShort reports whether the second signal came.
func CutShort(ctx context.Context) bool {
	s := from(ctx)
	return s != nil && s.abortCtx.Err() != nil
}

// Arm makes the signals graceful for the rest of the command (see the package comment): a
// command calls it just before it starts what must be cleaned up or finished on a signal
// (a run's results file, cluster objects, lab namespaces). Without Notify it does nothing.
func Arm(ctx context.Context) {
	if s := from(ctx); s != nil {
		s.mu.Lock()
		s.armed = true
		s.mu.Unlock()
	}
}

// Register arms the handler (Arm) and adds f, which says what may be left in the cluster or
// on the host and how to remove it ("" when nothing is), to what the third signal prints
// before exiting; the returned function removes it (call it once clean-up has finished).
func Register(ctx context.Context, f func() string) (unregister func()) {
	s := from(ctx)
	if s == nil {
		return func() {}
	}
	s.mu.Lock()
	s.armed = true
	id := s.nextID
	s.nextID++
	s.leftovers[id] = f
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(s.leftovers, id)
		s.mu.Unlock()
	}
}
