package session

import (
	"context"
	"errors"
	"fmt"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/interrupt"
	"github.com/cnperf/cnperf/internal/logging"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/platform"
	"github.com/cnperf/cnperf/internal/runner"
)

// Measure prepares plat, records the cluster it describes, runs the cases through the runner
// (every finished case recorded at once) and always closes plat — on error, Ctrl-C and
// SIGTERM too. The run's Timing (which Header.Timing asked for) gets the setup, measure and
// teardown times; an interruption marks the run interrupted and keeps every finished case.
func (s *Session) Measure(ctx context.Context, plat platform.Platform, drivers map[string]driver.Driver, cases []plan.Case,
	progress runner.Progress) (err error) {
	run := s.Run
	if run.Timing == nil {
		run.Timing = &api.Timing{}
	}
	setup := time.Now()
	// A third Ctrl-C exits at once: it prints what the platform may leave.
	unregister := interrupt.Register(ctx, func() string { return platform.Leftovers(plat) })
	defer func() {
		t := time.Now()
		// Cleanup must run even when ctx was cancelled by Ctrl-C; a second Ctrl-C cuts it short.
		cctx, cancel := context.WithTimeout(interrupt.Cleanup(ctx), 2*time.Minute)
		defer cancel()
		if cerr := plat.Close(cctx); cerr != nil {
			err = errors.Join(err, fmt.Errorf("cleanup: %w", cerr))
			if left := platform.Leftovers(plat); left != "" {
				s.Log.Log(cctx, logging.Always, "cnperf: clean-up did not finish; "+left)
			}
		}
		unregister()
		run.Timing.TeardownSeconds = time.Since(t).Seconds()
	}()
	if err := plat.Prepare(ctx, cases, drivers); err != nil {
		run.Timing.SetupSeconds = time.Since(setup).Seconds()
		if ctx.Err() != nil {
			run.Interrupted = true
			return exit.Failure("interrupted during setup: %v", err)
		}
		return exit.Failure("set up the %s platform: %w", plat.Name(), err)
	}
	if d, ok := plat.(platform.ClusterDescriber); ok {
		if cd, derr := d.Describe(ctx); derr == nil {
			run.Cluster = cd
		} else {
			s.Log.Warn(fmt.Sprintf("could not describe the cluster: %v", derr))
		}
	}
	if err := s.Update(); err != nil {
		return exit.Failure("record run details in the results file: %w", err)
	}
	run.Timing.SetupSeconds = time.Since(setup).Seconds()
	measure := time.Now()
	r := &runner.Runner{
		Platform: plat,
		Drivers:  drivers,
		OnResult: func(res api.Result) error { return s.Record(ctx, res) },
		Progress: progress,
	}
	_, rerr := r.Run(ctx, cases)
	run.Timing.MeasureSeconds = time.Since(measure).Seconds()
	if errors.Is(rerr, runner.ErrInterrupted) {
		run.Interrupted = true
		return exit.Failure("interrupted: %d of %d cases finished and were kept", len(run.Results), len(cases))
	}
	if rerr != nil {
		return exit.Failure("%w", rerr)
	}
	return nil
}
