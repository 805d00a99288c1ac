package programming

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/ttfr"
)

// Executor runs commands in one client pod (kube.PodExecutor): Exec for the clock, ExecStream
// for a probe, whose ready line must be seen before the change is made.
type Executor interface {
	Exec(ctx context.Context, cmd driver.Command) driver.Output
	ExecStream(ctx context.Context, cmd driver.Command, stdout io.Writer) error
}

// Params are how the probes probe.
type Params struct {
	// Interval between two connect attempts' starts; AttemptTimeout bounds one connect.
	Interval, AttemptTimeout time.Duration
	// Confirm is how many attempts after the first in the new state must show it too.
	Confirm int
	// Settle bounds the wait for the old state before a change; Timeout the wait for the
	// change after it.
	Settle, Timeout time.Duration
	// FromStart: the probes do not wait for the old state (a target that did not exist
	// before: a new pod's IP); ttfr.WatchConfig.FromStart.
	FromStart bool
}

// Client is one probing pod.
type Client struct {
	Node, Pod string
	// NodeIPs are the node's addresses by IP family ("ipv4", "ipv6": its InternalIP, else
	// ExternalIP, of each), where its NodePorts answer (a Service's on its family's).
	NodeIPs map[string]string
	Exec    Executor
	Clock   Clock
	// Host runs commands in the node's network namespace (a hostNetwork pod), when
	// Options.KubeProxyMetrics or FelixMetrics asks for one.
	Host Executor
}

// Probe is one client probing one target (HOST:PORT) for a change: a client may probe more
// than one (a Service's ClusterIP and its node's NodePort).
type Probe struct {
	Client
	Target string
}

// Clock is a client node's clock against cnperf's.
type Clock struct {
	// Low and High bound the measured offset (the node's clock minus cnperf's).
	LowSeconds, HighSeconds float64
	// Shared is set when the node runs on cnperf's own kernel (same boot id).
	Shared bool
	// OffsetSeconds is the offset applied (Applied); UncertaintySeconds bounds its error.
	OffsetSeconds, UncertaintySeconds float64
}

// applied picks the offset to apply from the measured bounds: none for one shared clock
// (exact), none when the bounds hold 0 (the clocks agree as far as an exec can tell, as
// synchronised clocks do: the middle of the bounds would only add the exec's asymmetry,
// process start-up on the way in), else the middle of the bounds.
func (c Clock) applied() Clock {
	switch {
	case c.Shared:
		c.OffsetSeconds, c.UncertaintySeconds = 0, 0
	case c.LowSeconds <= 0 && c.HighSeconds >= 0:
		c.OffsetSeconds, c.UncertaintySeconds = 0, max(-c.LowSeconds, c.HighSeconds)
	default:
		c.OffsetSeconds = (c.LowSeconds + c.HighSeconds) / 2
		c.UncertaintySeconds = (c.HighSeconds - c.LowSeconds) / 2
	}
	return c
}

// MeasureClock measures a client's clock offset NTP-style: rounds execs of `cnperf agent probe
// --clock`; the node read its clock at some moment of the round trip, so with the least
// round trip the offset lies between its reading minus the trip's end and its reading minus
// the trip's start. The Clock returned has the offset to apply chosen (applied).
func MeasureClock(ctx context.Context, ex Executor, rounds int, localBootID string) (Clock, error) {
	var best Clock
	bestRTT := time.Duration(math.MaxInt64)
	var lastErr error
	for range rounds {
		t0 := time.Now()
		out := ex.Exec(ctx, driver.Command{Argv: clockArgv, Timeout: 30 * time.Second})
		t1 := time.Now()
		if out.Err != nil || out.ExitCode != 0 {
			lastErr = fmt.Errorf("read the node's clock: %s", describe(out))
			continue
		}
		var r ttfr.ClockReport
		if err := json.Unmarshal(bytes.TrimSpace(out.Stdout), &r); err != nil {
			lastErr = fmt.Errorf("read the node's clock: unexpected output %q: %w", strings.TrimSpace(string(out.Stdout)), err)
			continue
		}
		if r.Now.IsZero() {
			lastErr = fmt.Errorf("read the node's clock: unexpected output %q (no time)", strings.TrimSpace(string(out.Stdout)))
			continue
		}
		if rtt := t1.Sub(t0); rtt < bestRTT {
			bestRTT = rtt
			// the wall clock: the node's reading has no monotonic part
			best = Clock{LowSeconds: r.Now.Sub(t1.Round(0)).Seconds(), HighSeconds: r.Now.Sub(t0.Round(0)).Seconds(),
				Shared: localBootID != "" && r.BootID == localBootID}
		}
		if ctx.Err() != nil {
			break
		}
	}
	if bestRTT == time.Duration(math.MaxInt64) {
		if lastErr == nil {
			lastErr = fmt.Errorf("read the node's clock: %w", context.Cause(ctx))
		}
		return Clock{}, lastErr
	}
	return best.applied(), nil
}

func describe(o driver.Output) string {
	msg := fmt.Sprintf("exit code %d", o.ExitCode)
	if o.Err != nil {
		msg = o.Err.Error()
	}
	if s := strings.TrimSpace(string(o.Stderr)); s != "" {
		msg += ": " + lastLine(s)
	}
	return msg
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 300 {
		s = s[:300]
	}
	return s
}

// Change is one change to the cluster whose effect the probes wait for.
type Change struct {
	Expect ttfr.State
	// Do makes the change; the moment it returns is the change's time.
	Do func(ctx context.Context) error
	// Before, when set, runs once every probe is ready, just before Do (not timed: a
	// component's reading before the change).
	Before func(ctx context.Context)
}

// Observation is what one probe saw of one change.
type Observation struct {
	// Seconds is the time from the change's API call returning to the first attempt in the
	// new state (the node's clock corrected by its offset); nil when Error is set.
	Seconds *float64
	Error   string
	// Note says something about a successful observation (flaps; seen before the call returned).
	Note string
	// Sent is when the change's API call was made and At when it returned (cnperf's clock);
	// SeenAt when the client saw the change (cnperf's clock, corrected).
	Sent, At, SeenAt time.Time
	// Flaps counts unconfirmed attempts in the new state before it; FirstAttempt is set when
	// the probe's very first attempt showed the new state (Params.FromStart).
	Flaps        int
	FirstAttempt bool
}

// lines hands a probe's stdout over line by line: the ready line as it comes, the rest kept.
type lines struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	ready chan struct{}
	once  sync.Once
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	if bytes.Contains(l.buf.Bytes(), []byte(ttfr.WatchReadyLine)) {
		l.once.Do(func() { close(l.ready) })
	}
	return len(p), nil
}

func (l *lines) report() (ttfr.WatchReport, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var last string
	for _, line := range strings.Split(l.buf.String(), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		last = line
		if line[0] != '{' {
			continue
		}
		var r ttfr.WatchReport
		if err := json.Unmarshal([]byte(line), &r); err == nil {
			return r, nil
		}
	}
	if last == "" {
		return ttfr.WatchReport{}, errors.New("the probe printed nothing")
	}
	return ttfr.WatchReport{}, fmt.Errorf("the probe printed no report; last line: %s", lastLine(last))
}

// Observe makes one change while every probe watches for its effect: each probe starts, the
// change is made once every probe is ready (the old state established; a probe that never
// gets ready fails on its own), and each probe then reports the first attempt in the new
// state. With no probe ready the change is not made.
func Observe(ctx context.Context, clients []Probe, p Params, ch Change) []Observation {
	obs := make([]Observation, len(clients))
	outs := make([]*lines, len(clients))
	errs := make([]error, len(clients))
	ended := make([]chan struct{}, len(clients))
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for i, c := range clients {
		outs[i] = &lines{ready: make(chan struct{})}
		ended[i] = make(chan struct{})
		argv := probeArgv(c.Target, ch.Expect, p)
		go func() {
			defer close(ended[i])
			// The probe ends by itself within Settle + Timeout (+ the last attempts).
			errs[i] = c.Exec.ExecStream(pctx, driver.Command{Argv: argv, Timeout: p.Settle + p.Timeout + p.AttemptTimeout + 30*time.Second}, outs[i])
		}()
	}
	// Wait until every probe is ready or has ended.
	ready := 0
	for i := range clients {
		select {
		case <-outs[i].ready:
			ready++
		case <-ended[i]:
		case <-ctx.Done():
		}
	}
	var sent, at time.Time
	var doErr error
	if ready > 0 && ctx.Err() == nil {
		if ch.Before != nil {
			ch.Before(ctx)
		}
		sent = time.Now()
		doErr = ch.Do(ctx)
		at = time.Now()
	}
	if ready == 0 || doErr != nil {
		cancel() // the probes need not wait for a change that will not come
	}
	for i := range clients {
		<-ended[i]
		o := &obs[i]
		o.Sent, o.At = sent, at
		rep, perr := outs[i].report()
		switch {
		case ctx.Err() != nil:
			o.Error = "interrupted"
		case doErr != nil:
			o.Error = "the change failed: " + doErr.Error()
		case ready == 0 && perr == nil && rep.Error != "":
			o.Error = "no probe got ready, the change was not made; this one: " + rep.Error
		case ready == 0:
			o.Error = "no probe got ready, the change was not made"
		case perr != nil && errs[i] != nil:
			o.Error = fmt.Sprintf("probe: %v (%v)", errs[i], perr)
		case perr != nil:
			o.Error = "probe: " + perr.Error()
		case !rep.OK:
			o.Error = rep.Error
			if rep.LastError != "" && rep.Expect == ttfr.Open {
				o.Error += " (last connect: " + rep.LastError + ")"
			}
		case rep.ChangeAt == nil:
			o.Error = "the probe reported no change time"
		default:
			*o = observed(rep, clients[i].Clock.OffsetSeconds, sent, at, "the API call")
		}
	}
	return obs
}

// observed is a probe's figure from its report: the first attempt in the new state (the
// node's clock, corrected by offset) minus the moment the change's call returned (at); a
// change seen before that counts as 0 and the note says by how much and how long the call
// (what) took.
func observed(rep ttfr.WatchReport, offsetSeconds float64, sent, at time.Time, what string) Observation {
	seen := rep.ChangeAt.Add(-time.Duration(offsetSeconds * float64(time.Second)))
	o := Observation{Sent: sent, At: at, SeenAt: seen, Flaps: rep.Flaps, FirstAttempt: rep.LastOtherAt == nil}
	v := seen.Sub(at.Round(0)).Seconds()
	var notes []string
	if v < 0 {
		notes = append(notes, fmt.Sprintf("seen %.1f ms before %s returned (it took %.1f ms): counted as 0",
			-v*1e3, what, at.Sub(sent).Seconds()*1e3))
		v = 0
	}
	if rep.Flaps > 0 {
		notes = append(notes, fmt.Sprintf("%d unconfirmed attempt(s) in the new state before it", rep.Flaps))
	}
	o.Seconds, o.Note = &v, strings.Join(notes, "; ")
	return o
}
