package session

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/driver/all"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/figure"
	"github.com/cnperf/cnperf/internal/interrupt"
	"github.com/cnperf/cnperf/internal/logging"
	"github.com/cnperf/cnperf/internal/measure"
	"github.com/cnperf/cnperf/internal/pathmtu"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/platform"
	"github.com/cnperf/cnperf/internal/runner"
	"github.com/cnperf/cnperf/internal/text"
)

// Measure runs the cases on plat as one unit of a run (internal/measure: prepared, measured,
// always closed — on error, Ctrl-C and SIGTERM too): set-up records the cluster plat
// describes, the cases go through the runner (every finished case recorded at once). The
// run's Timing (which Header.Timing asked for) gets the setup, measure and teardown times; an
// interruption marks the run interrupted and keeps every finished case.
func (s *Session) Measure(ctx context.Context, plat platform.Platform, drivers map[string]driver.Driver, cases []plan.Case,
	progress runner.Progress) error {
	run := s.Run
	if run.Timing == nil {
		run.Timing = &api.Timing{}
	}
	// the IPv6 servers of iperf2 and sockperf kept off the ports of the run's other servers
	cases = driver.AllocatePorts(cases, drivers)
	u := platform.Unit(plat, cases, drivers)
	prepare := u.Prepare
	u.Prepare = func(ctx context.Context) error {
		if err := prepare(ctx); err != nil {
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
		if s.CheckPathMTU != nil {
			if err := s.checkPathMTU(ctx, plat, cases); err != nil {
				return err
			}
		}
		if err := s.Update(); err != nil {
			return exit.Failure("record run details in the results file: %w", err)
		}
		return nil
	}
	u.Measure = func(ctx context.Context) error {
		r := &runner.Runner{
			Platform: plat,
			Drivers:  drivers,
			OnResult: func(res api.Result) error { return s.Record(ctx, res) },
			Progress: progress,
		}
		_, rerr := r.Run(ctx, cases)
		if errors.Is(rerr, runner.ErrInterrupted) {
			run.Interrupted = true
			return interruptedError(run.Results, len(cases))
		}
		if rerr != nil {
			return exit.Failure("%w", rerr)
		}
		return nil
	}
	return s.Units(ctx, u)
}

// Units runs units (internal/measure: prepared in order, measured, always closed in reverse
// order on one clean-up context, on error, Ctrl-C and SIGTERM too) as this run's work: what a
// unit whose Close failed may have left is said on the session's log even with -q, and the
// run's Timing, when it has one, gets the set-up, measure and tear-down times.
func (s *Session) Units(ctx context.Context, units ...measure.Unit) error {
	return measure.Run(ctx, measure.Options{Say: s.Say, Timing: s.Run.Timing}, units...)
}

// interruptedError says how many of the cases finished; a case the interruption cut short is
// kept with its samples, but is not counted as finished.
func interruptedError(results []api.Result, cases int) error {
	if n := len(results); n > 0 && runner.CutShort(results[n-1]) {
		return exit.Failure("interrupted: %d of %d cases finished and were kept, and the case cut short (%s)",
			n-1, cases, results[n-1].Error)
	}
	return exit.Failure("interrupted: %d of %d cases finished and were kept", len(results), cases)
}

// Say prints a line a person must see, even with -q (what a failed clean-up may have left):
// the one wording of that line for every unit of the run (Units, and tiger-bench's own).
func (s *Session) Say(ctx context.Context, line string) { s.Log.Log(ctx, logging.Always, line) }

// checkPathMTU checks the path MTU of each path (and lab topology) of the cases once, in the
// cases' order, records the checks in the run and says each on stderr: a finding as a
// warning, a path that carries full-size packets both ways as one info line.
func (s *Session) checkPathMTU(ctx context.Context, plat platform.Platform, cases []plan.Case) error {
	seen := map[string]bool{}
	for _, c := range cases {
		key := figure.PathMTUName(api.PathMTU{Path: c.Path, Topology: c.Topology})
		if seen[key] {
			continue
		}
		seen[key] = true
		pair, err := plat.Pair(ctx, c)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			s.Log.Warn(fmt.Sprintf("path MTU of %s not checked: %v", key, err))
			continue
		}
		m := pathmtu.Check(ctx, c.Path, pair, *s.CheckPathMTU)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		s.Run.PathMTU = append(s.Run.PathMTU, m)
		// wrapped to fit 120 columns after the logger's "warning: "
		line := strings.Join(text.Wrap(figure.PathMTULine(m), 108, "", "  "), "\n")
		if m.Finding != "" || m.Forward.Error != "" || m.Reverse.Error != "" {
			s.Log.Warn(line)
		} else {
			s.Log.Info(line)
		}
	}
	return s.Update()
}

// Spec is what a run of cases needs besides the platform and the cases: the run's header,
// what a plan file says of it (metadata.name and labels, docs/plan.md), the results file, and
// where it logs, annotates and shows progress.
type Spec struct {
	Header      Header
	PlanName    string
	PlanLabels  map[string]string
	ResultsFile string
	Log         *slog.Logger
	// Annotator, when set, annotates every finished case (Session.Annotator).
	Annotator Annotator
	Progress  runner.Progress
	// CheckPathMTU, when set, checks the path MTU of every path first (Session.CheckPathMTU).
	CheckPathMTU *pathmtu.Options
}

// RunCases is one run of cases on plat from its start to its end: each case's driver looked up,
// a signal made to stop the run gracefully from then on (finished cases kept, clean-up), the run
// started (its results file opened), the cases measured (Measure) and the run finished. The run
// comes back with every finished case, also with an error; it is nil only when a driver is
// unknown (a usage error) or the results file cannot be opened.
func RunCases(ctx context.Context, plat platform.Platform, cases []plan.Case, spec Spec) (*api.Run, error) {
	drivers := map[string]driver.Driver{}
	for _, c := range cases {
		if _, ok := drivers[c.Driver]; !ok {
			d, err := all.Get(c.Driver)
			if err != nil {
				return nil, &exit.UsageError{Err: err}
			}
			drivers[c.Driver] = d
		}
	}
	run := NewRun(spec.Header)
	run.Plan = spec.PlanName
	if spec.PlanLabels != nil {
		if run.Labels == nil {
			run.Labels = map[string]string{}
		}
		for k, v := range spec.PlanLabels {
			if _, set := run.Labels[k]; !set {
				run.Labels[k] = v
			}
		}
	}
	started := false
	err := Do(ctx, run, spec.ResultsFile, func(sess *Session) error {
		started = true
		sess.Log = spec.Log
		sess.Annotator = spec.Annotator
		sess.CheckPathMTU = spec.CheckPathMTU
		return sess.Measure(ctx, plat, drivers, cases, spec.Progress)
	})
	if !started {
		return nil, err
	}
	return run, err
}

// Do is one run from its start to its end, the same for `cnperf run` (RunCases), tiger-bench,
// `cnperf mesh` and `cnperf programming` (whose work hands its units to Session.Units): a
// signal stops the run gracefully from then on (finished work kept, clean-up; before, while a
// plan is read from a FIFO or standard input and checked, or the cluster is looked at, it ends
// cnperf at once), the session is started (its results file opened), work measures, and the
// run is finished (its end time set, the results file closed) whatever work returned. The
// error joins work's and Finish's; a results file that cannot be opened is returned before
// work runs.
func Do(ctx context.Context, run *api.Run, resultsFile string, work func(*Session) error) error {
	interrupt.Arm(ctx)
	sess, err := Start(run, resultsFile)
	if err != nil {
		return err
	}
	runErr := work(sess)
	if err := sess.Finish(); err != nil {
		runErr = errors.Join(runErr, err)
	}
	return runErr
}
