package runner

import (
	"context"
	"fmt"
	"strings"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/platform"
	"github.com/cnperf/cnperf/internal/stats"
)

// MaxRawBytes is how much of a tool's raw output a sample keeps for audits.
const MaxRawBytes = 4096

// explainTimeout bounds the platform's look at the endpoints after a failed sample (the API
// server may be the thing that is down).
const explainTimeout = 5 * time.Second

// Retries of a sample the driver says its tool refused for a moment (driver.Retrier).
const (
	maxRetries = 10
	retryDelay = 200 * time.Millisecond
)

// Sampler takes the samples of a case: the one sample attempt of `cnperf run`, tiger-bench
// (both through Runner) and `cnperf mesh`. It builds the job's client commands, runs them at
// once on Exec (bounded by the case's sample timeout, or the warm-up's), parses their outputs
// with the job, retries a sample the driver calls refused for a moment (driver.Retrier), and
// records a failed sample with its cause and the tools' raw output (capped at MaxRawBytes).
type Sampler struct {
	Driver driver.Driver
	// Job is the case's job (Driver.Job), built once for all its samples.
	Job    driver.Job
	Exec   platform.Executor
	Target driver.Target
	// Explain, when set, says what happened to the endpoints after a failed sample
	// (platform.Pair.Explain); its answer is added to the sample's error.
	Explain func(ctx context.Context, err error) string
	// Around, when set, is called just before the client commands of every attempt run. The
	// function it returns (nil: nothing to do) is called once they ended, with the parsed
	// sample to add to (mesh: the nodes' resources over the sample), or with nil when the
	// attempt failed.
	Around func(ctx context.Context, warmup bool) func(ctx context.Context, s *api.Sample)
}

// SampleRun is one sample and the client commands that took it.
type SampleRun struct {
	api.Sample
	Commands [][]string
}

// Sample takes sample index of c (index -1 and warmup for the warm-up).
func (sp Sampler) Sample(ctx context.Context, c plan.Case, index int, warmup bool) SampleRun {
	return sp.attempt(ctx, c, index, warmup, 0)
}

func (sp Sampler) attempt(ctx context.Context, c plan.Case, index int, warmup bool, attempt int) SampleRun {
	var sr SampleRun
	d := sp.Driver
	start := time.Now()
	fail := func(err error) SampleRun {
		sr.Sample = api.Sample{Index: index, Warmup: warmup, StartTime: start, EndTime: time.Now(), Error: err.Error()}
		return sr
	}
	cmds, err := sp.Job.Client(sp.Target, warmup)
	if err != nil {
		return fail(fmt.Errorf("build %s client command: %w", d.Name(), err))
	}
	if len(cmds) == 0 {
		return fail(fmt.Errorf("driver %s built no client command", d.Name()))
	}
	for _, cmd := range cmds {
		sr.Commands = append(sr.Commands, cmd.Argv)
	}
	timeout := c.SampleTimeout()
	if warmup {
		timeout = c.Warmup() + 30*time.Second
	}
	var done func(context.Context, *api.Sample)
	if sp.Around != nil {
		done = sp.Around(ctx, warmup)
	}
	outs := platform.ExecAll(ctx, sp.Exec, cmds, timeout)
	s, err := sp.Job.Parse(outs)
	if err == nil {
		// A tool that prints garbage (a rate of 1e300) must not become a figure: it would
		// overflow the statistics. The sample fails with the reason; its raw output is kept.
		if ferr := stats.CheckFigures(s, "sample"); ferr != nil {
			err = fmt.Errorf("%s output not believed: %w", d.Name(), ferr)
		}
	}
	if err != nil {
		if done != nil {
			done(ctx, nil)
		}
		if rt, ok := d.(driver.Retrier); ok && rt.Retryable(err) && attempt < maxRetries && ctx.Err() == nil {
			select {
			case <-ctx.Done():
			case <-time.After(retryDelay):
				return sp.attempt(ctx, c, index, warmup, attempt+1)
			}
		}
		err = describeFailure(err, outs)
		if sp.Explain != nil && ctx.Err() == nil {
			ectx, cancel := context.WithTimeout(ctx, explainTimeout)
			if why := sp.Explain(ectx, err); why != "" {
				err = fmt.Errorf("%w (%s)", err, why)
			}
			cancel()
		}
		sr = fail(err)
		sr.Raw = failedRaw(outs)
		return sr
	}
	s.Index, s.Warmup = index, warmup
	if s.StartTime.IsZero() {
		s.StartTime = start
	}
	if s.EndTime.IsZero() {
		s.EndTime = time.Now()
	}
	if done != nil {
		done(ctx, &s)
	}
	if s.Raw == "" && len(outs) == 1 && len(outs[0].Stdout) <= MaxRawBytes && d.Capabilities().RawOutput {
		s.Raw = string(outs[0].Stdout)
	}
	sr.Sample = s
	return sr
}

// Summarize fills a finished case's summary from its samples and, when every sample failed,
// its error with the first sample's cause.
func Summarize(res *api.Result) {
	res.Summary = stats.Summarize(res.Samples)
	if res.Error == "" && res.Summary.SamplesTotal > 0 && res.Summary.SamplesFailed == res.Summary.SamplesTotal {
		res.Error = fmt.Sprintf("all %d samples failed; first: %s", res.Summary.SamplesTotal, res.Samples[0].Error)
	}
}

// Interrupted is the error of a case the interruption cut short after done of limit samples.
func Interrupted(done, limit int) string {
	return fmt.Sprintf("%s%d of %d samples", interruptedPrefix, done, limit)
}

const interruptedPrefix = "interrupted after "

// CutShort says whether res is a case the interruption cut short (its error is Interrupted's).
func CutShort(res api.Result) bool { return strings.HasPrefix(res.Error, interruptedPrefix) }

// failedRaw keeps what the tools printed in a failed sample, so the results file can tell
// why: each command's stdout and stderr, the last MaxRawBytes/2 bytes of each (a tool's
// error comes last), with the argv when there were several commands (parallel flows).
func failedRaw(outs []driver.Output) string {
	var b strings.Builder
	tail := func(label string, data []byte) {
		if len(data) == 0 {
			return
		}
		fmt.Fprintf(&b, "--- %s", label)
		if n := len(data) - MaxRawBytes/2; n > 0 {
			fmt.Fprintf(&b, " (first %d bytes cut)", n)
			data = data[n:]
		}
		b.WriteString(" ---\n")
		b.Write(data)
		if data[len(data)-1] != '\n' {
			b.WriteByte('\n')
		}
	}
	for i, o := range outs {
		prefix := ""
		if len(outs) > 1 {
			prefix = fmt.Sprintf("command %d (%s) ", i+1, strings.Join(o.Argv, " "))
		}
		tail(prefix+"stdout", o.Stdout)
		tail(prefix+"stderr", o.Stderr)
	}
	return b.String()
}

// describeFailure adds the execution error of the commands to a parse error when the
// parser did not already mention it, so the cause is never lost.
func describeFailure(err error, outs []driver.Output) error {
	msg := err.Error()
	for _, o := range outs {
		if o.Err != nil && !strings.Contains(msg, o.Err.Error()) {
			return fmt.Errorf("%w (%s: %v)", err, strings.Join(o.Argv, " "), o.Err)
		}
	}
	return err
}
