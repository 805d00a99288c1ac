// Package runner runs cases in order on a platform: warm-up, then N samples, each bounded
// by a timeout; failed samples are recorded with their cause and the run goes on. With a
// confidence target (Params.Confidence) a case takes samples until the confidence interval of
// its headline figure is within the target, between Params.Samples and Params.MaxSamples.
// Every finished case is checked for outliers (median ± 3·MAD), a trend across samples
// (Spearman) and ramp-ups inside samples, and handed to OnResult at once so nothing finished
// is lost on interruption.
package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/platform"
)

// Runner runs cases.
type Runner struct {
	Platform platform.Platform
	Drivers  map[string]driver.Driver
	// OnResult receives every finished case, in order. An error stops the run.
	OnResult func(api.Result) error
	// Progress, when set, is told when cases and samples start and end.
	Progress Progress
}

// Progress receives progress events.
type Progress interface {
	CaseStarted(i, n int, c plan.Case, eta time.Duration)
	SampleDone(c plan.Case, s api.Sample)
	CaseDone(i, n int, r api.Result)
}

// ErrInterrupted is returned when the context ended before every case ran.
var ErrInterrupted = errors.New("run interrupted")

// Run runs the cases in order and returns the finished results. When ctx ends, the case in
// progress is recorded with the samples it finished (marked interrupted) and Run returns
// ErrInterrupted with everything finished so far.
func (r *Runner) Run(ctx context.Context, cases []plan.Case) ([]api.Result, error) {
	var results []api.Result
	start := time.Now()
	for i, c := range cases {
		if ctx.Err() != nil {
			return results, ErrInterrupted
		}
		if r.Progress != nil {
			r.Progress.CaseStarted(i, len(cases), c, eta(start, i, cases))
		}
		res := r.runCase(ctx, c)
		interrupted := ctx.Err() != nil
		if interrupted && len(res.Samples) == 0 {
			return results, ErrInterrupted
		}
		results = append(results, res)
		if r.Progress != nil {
			r.Progress.CaseDone(i, len(cases), res)
		}
		if r.OnResult != nil {
			if err := r.OnResult(res); err != nil {
				return results, fmt.Errorf("record result of case %d (%s): %w", i+1, c, err)
			}
		}
		if interrupted {
			return results, ErrInterrupted
		}
	}
	return results, nil
}

// eta estimates the time left from the planned durations of the remaining cases, scaled by
// how the finished cases compared with their plan.
func eta(start time.Time, i int, cases []plan.Case) time.Duration {
	planned := func(c plan.Case) time.Duration {
		return time.Duration(c.Params.Samples)*c.Duration() + c.Warmup()
	}
	var done, left time.Duration
	for j, c := range cases {
		if j < i {
			done += planned(c)
		} else {
			left += planned(c)
		}
	}
	if done > 0 {
		scale := float64(time.Since(start)) / float64(done)
		return time.Duration(float64(left) * scale)
	}
	return left
}

func (r *Runner) runCase(ctx context.Context, c plan.Case) api.Result {
	res := NewResult(c)
	d, ok := r.Drivers[c.Driver]
	if !ok {
		res.Error = fmt.Sprintf("driver %q is not loaded", c.Driver)
		Finish(&res, c, false)
		return res
	}
	job, err := d.Job(c)
	if err != nil {
		res.Error = fmt.Sprintf("driver %s: %v", d.Name(), err)
		Finish(&res, c, false)
		return res
	}
	pair, err := r.Platform.Pair(ctx, c)
	if err != nil {
		res.Error = fmt.Sprintf("place endpoints: %v", err)
		Finish(&res, c, false)
		return res
	}
	res.Placement, res.Topology = pair.Placement, pair.Topology
	sp := Sampler{Driver: d, Job: job, Exec: pair.Client, Target: pair.Target, Explain: pair.Explain}
	MeasureCase(ctx, c, sp, r.Progress, &res)
	return res
}

// NewResult is c's result as it starts: the case's header, its start time, no samples yet.
func NewResult(c plan.Case) api.Result {
	return api.Result{Name: c.Name, Group: c.Group, Profile: c.Profile, Driver: c.Driver, Path: c.Path,
		Params: c.Params, StartTime: time.Now(), Samples: []api.Sample{}}
}

// MeasureCase is the case loop, the same for every command that measures (run, tiger-bench,
// mesh cells): c's warm-up on sp (unless the driver warms up inline), then samples until
// SampleLimit — with a confidence target until its interval is met or out of reach — each
// marked for steady state and handed to progress (nil: none); then Finish. res holds the
// case's header (name, placement, ...) and gets the samples, commands, notes and summary.
func MeasureCase(ctx context.Context, c plan.Case, sp Sampler, progress Progress, res *api.Result) {
	gaveUp := false
	defer func() { Finish(res, c, gaveUp) }()
	if c.Params.WarmupSeconds > 0 && !sp.Driver.Capabilities().InlineWarmup {
		w := sp.Sample(ctx, c, -1, true)
		if w.Error != "" && ctx.Err() == nil {
			res.Notes = append(res.Notes, "warm-up failed: "+w.Error)
		}
	}
	limit := SampleLimit(c)
	for i := 0; i < limit; i++ {
		if ctx.Err() != nil {
			res.Error = Interrupted(len(res.Samples), limit)
			return
		}
		s := sp.Sample(ctx, c, i, false)
		if ctx.Err() != nil && s.Error != "" {
			// The sample was cut short by the interruption: it measured nothing.
			res.Error = Interrupted(len(res.Samples), limit)
			return
		}
		if i == 0 {
			res.Commands = s.Commands
		}
		setSteadyState(&s.Sample)
		res.Samples = append(res.Samples, s.Sample)
		if progress != nil {
			progress.SampleDone(c, s.Sample)
		}
		if c.Params.Confidence != nil {
			why := Stop(res.Samples, &c.Params, c.Profile, limit, DefaultFutility)
			if why == GaveUp {
				gaveUp = true
				res.Notes = append(res.Notes, fmt.Sprintf("confidence target given up after %d samples: the spread so far needs more than %d samples (the maximum is %d)",
					len(res.Samples), DefaultFutility.Factor*limit, limit))
			}
			if why != Continue {
				break
			}
		}
	}
}

// Finish ends a case's result: its end time, outliers marked (and excluded when the case
// asks), the summary, and the stability and confidence assessment (gaveUp: the confidence
// target was given up as out of reach).
func Finish(res *api.Result, c plan.Case, gaveUp bool) {
	res.EndTime = time.Now()
	markOutliers(res.Samples, res.Profile, c.Params.ExcludeOutliers)
	Summarize(res)
	assess(res)
	if gaveUp && res.Confidence != nil && !res.Confidence.Met {
		res.Confidence.GaveUp = true
	}
}

// SampleLimit is the most samples a case takes: Params.MaxSamples with a confidence target
// (never fewer than Params.Samples), Params.Samples without.
func SampleLimit(c plan.Case) int {
	if c.Params.Confidence != nil && c.Params.MaxSamples > c.Params.Samples {
		return c.Params.MaxSamples
	}
	return c.Params.Samples
}

// hopeless reports that adaptive sampling should give up early: the minimum number of
// samples has run and every one of them failed, so more samples would only repeat the failure.
func hopeless(samples []api.Sample, minN int) bool {
	if len(samples) < minN {
		return false
	}
	for i := range samples {
		if samples[i].Error == "" {
			return false
		}
	}
	return true
}
