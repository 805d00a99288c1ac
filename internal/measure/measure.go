// Package measure owns a run's lifecycle from start to end, the same for every command that
// measures (`cnperf run`, tiger-bench, `cnperf mesh`): a run is a list of Units, each with
// set-up (Prepare), work (Measure) and clean-up (Close). Run registers what each unit may leave
// behind for the third Ctrl-C (internal/interrupt), prepares the units in order, measures them
// in order, and always closes every unit whose Prepare ran — in reverse order, on error, Ctrl-C
// and SIGTERM — on one clean-up context (Cleanup: not cancelled with the run, cut short by a
// second signal, bounded by CleanupTimeout unless the unit says otherwise). When a unit's Close
// fails, Run says what may be left and how to remove it; every error is joined into one.
//
// Cleanup and Detached are also the one way any code gets a context for clean-up or result
// shipping after the run's context may have ended.
package measure

import (
	"context"
	"errors"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/interrupt"
)

// CleanupTimeout bounds one unit's Close unless the unit sets its own CloseTimeout.
const CleanupTimeout = 2 * time.Minute

// Unit is one part of a run: what it sets up, measures and removes. Every func may be nil.
type Unit struct {
	// Prepare sets the unit up; an error ends the run before any Measure (the units whose
	// Prepare ran, this one included, are closed).
	Prepare func(ctx context.Context) error
	// Measure does the unit's work, after every unit was prepared.
	Measure func(ctx context.Context) error
	// Close removes what Prepare created. It runs on a clean-up context, also after a failed
	// Prepare, and must be safe then.
	Close func(ctx context.Context) error
	// Leftovers says what may be left (and the command that removes it) when Close fails or
	// is cut short; "" when nothing can be.
	Leftovers func() string
	// CloseTimeout bounds Close (0: CleanupTimeout).
	CloseTimeout time.Duration
}

// Options are how a run reports.
type Options struct {
	// Say prints a line a person must see even with -q (what a failed clean-up may have
	// left); nil is quiet.
	Say func(ctx context.Context, line string)
	// Timing, when set, gets the set-up, measure and tear-down times.
	Timing *api.Timing
}

// Run runs units: Prepare each in order, then Measure each in order, then Close each prepared
// unit in reverse order, whatever happened. The error joins every unit's errors (a unit words
// its own).
func Run(ctx context.Context, o Options, units ...Unit) (err error) {
	var timing api.Timing
	defer func() {
		if o.Timing != nil {
			o.Timing.SetupSeconds, o.Timing.MeasureSeconds, o.Timing.TeardownSeconds =
				timing.SetupSeconds, timing.MeasureSeconds, timing.TeardownSeconds
		}
	}()
	prepared := 0
	var unregister []func()
	defer func() {
		t := time.Now()
		for i := prepared - 1; i >= 0; i-- {
			err = errors.Join(err, closeUnit(ctx, o, units[i]))
		}
		for _, f := range unregister {
			f()
		}
		timing.TeardownSeconds = time.Since(t).Seconds()
	}()
	t := time.Now()
	for _, u := range units {
		if u.Leftovers != nil {
			// A third Ctrl-C exits at once: it prints what the unit may leave.
			unregister = append(unregister, interrupt.Register(ctx, u.Leftovers))
		}
		prepared++
		if u.Prepare == nil {
			continue
		}
		if perr := u.Prepare(ctx); perr != nil {
			timing.SetupSeconds = time.Since(t).Seconds()
			return perr
		}
	}
	timing.SetupSeconds = time.Since(t).Seconds()
	t = time.Now()
	defer func() { timing.MeasureSeconds = time.Since(t).Seconds() }()
	for _, u := range units {
		if u.Measure == nil {
			continue
		}
		if merr := u.Measure(ctx); merr != nil {
			return merr
		}
	}
	return nil
}

// closeUnit closes u on a clean-up context and says what may be left when it fails.
func closeUnit(ctx context.Context, o Options, u Unit) error {
	if u.Close == nil {
		return nil
	}
	cctx, cancel := Cleanup(ctx, u.CloseTimeout)
	defer cancel()
	cerr := u.Close(cctx)
	if cerr == nil {
		return nil
	}
	if u.Leftovers != nil && o.Say != nil {
		if left := u.Leftovers(); left != "" {
			o.Say(cctx, "cnperf: clean-up did not finish; "+left)
		}
	}
	return cerr
}

// Cleanup is a context for clean-up or result shipping that may start after ctx ended: it
// keeps ctx's values, is not cancelled with ctx, ends at the second signal, and is bounded by
// timeout (0: CleanupTimeout).
func Cleanup(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout <= 0 {
		timeout = CleanupTimeout
	}
	return context.WithTimeout(Detached(ctx), timeout)
}

// Detached is Cleanup without a bound of its own: for work whose own timeouts bound it.
func Detached(ctx context.Context) context.Context { return interrupt.Cleanup(ctx) }

// Errors are the errors err joins (err itself when it joins none); nil for nil.
func Errors(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, Errors(e)...)
		}
		return out
	}
	return []error{err}
}
