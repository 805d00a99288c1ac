package programming

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/hostport"
	"github.com/cnperf/cnperf/internal/ttfr"
)

// FloorWhere says where the probe's floor is measured.
const FloorWhere = "cnperf's own machine: the probe (internal/ttfr.Watch) against a loopback listener cnperf closes and opens itself"

// MinFloorChanges is the fewest changes the probe's floor is measured with: a figure of 0 is
// real now and then (a connect issued just before the change and answered just after it: 4 %
// of the floor's figures at a load of 11 on 2 cores, 2026-11-29), so a floor of 3 changes had a
// median of 0 in 0.7 % of runs; 12 take about half a second.
const MinFloorChanges = 12

// FloorChanges is how many changes the floor of a run making count changes is measured with:
// count, and at least MinFloorChanges.
func FloorChanges(count int) int { return max(count, MinFloorChanges) }

// MeasureFloor measures the probe's own floor: n changes with no latency at all, each made at
// a known moment — a loopback listener closed (the probe waits for closed, as for a deny) and
// opened again on the same port (open, as for an allow), alternately, at a random moment
// between two attempts — probed by the same probe (ttfr.Watch) with the same parameters, each
// figure taken as Observe takes a client's (observed). What a figure holds is the method's own
// share: the wait for the next attempt (0 to one interval), the attempts' scheduling on a busy
// machine, and the change's own system call. It runs on cnperf's machine, not in the client
// pods (whose probes run the same code under their node's load), and needs no cluster.
func MeasureFloor(ctx context.Context, n int, p Params) ([]Observation, error) {
	// a port outside the ephemeral range: closed for the length of a watch, one from
	// listen(":0") could be another program's by the time it opens again (hostport)
	port, err := hostport.Block(1)
	if err != nil {
		return nil, fmt.Errorf("probe floor: %w", err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("probe floor: listen on loopback: %w", err)
	}
	defer func() {
		if ln != nil {
			_ = ln.Close()
		}
	}()
	obs := make([]Observation, 0, n)
	for i := range n {
		expect, change := ttfr.Closed, func() error {
			err := ln.Close()
			ln = nil
			return err
		}
		if ln == nil {
			expect, change = ttfr.Open, func() (err error) {
				ln, err = net.Listen("tcp", addr)
				return err
			}
		}
		ready := make(chan struct{})
		reports := make(chan ttfr.WatchReport, 1)
		go func() {
			reports <- ttfr.Watch(ctx, ttfr.WatchConfig{Target: addr, Expect: expect, Interval: p.Interval,
				AttemptTimeout: p.AttemptTimeout, Confirm: p.Confirm, Settle: p.Settle, Timeout: p.Timeout,
				Ready: func(time.Time) { close(ready) }})
		}()
		var rep ttfr.WatchReport
		select {
		case <-ready:
		case rep = <-reports:
			if ctx.Err() != nil {
				return obs, context.Cause(ctx)
			}
			return obs, fmt.Errorf("probe floor: change %d of %d (%s): the probe never got ready: %s", i+1, n, expect, rep.Error)
		}
		// at a random moment between two attempts, as a change of the network comes: the
		// ready line is printed just after an attempt, so at once would always be a whole
		// interval before the next
		time.Sleep(rand.N(p.Interval))
		sent := time.Now()
		cerr := change()
		at := time.Now()
		rep = <-reports
		switch {
		case cerr != nil:
			return obs, fmt.Errorf("probe floor: change %d of %d (%s): %w", i+1, n, expect, cerr)
		case !rep.OK || rep.ChangeAt == nil:
			if ctx.Err() != nil {
				return obs, context.Cause(ctx)
			}
			return obs, fmt.Errorf("probe floor: change %d of %d (%s): %s", i+1, n, expect, rep.Error)
		}
		obs = append(obs, observed(rep, 0, sent, at, "the change's system call"))
	}
	return obs, nil
}

// floor is the run's ProbeFloor from MeasureFloor's observations (and its error).
func floor(obs []Observation, err error) *api.ProbeFloor {
	f := &api.ProbeFloor{Where: FloorWhere}
	samples := make([]api.Sample, 0, len(obs))
	for i, o := range obs {
		samples = append(samples, api.Sample{Index: i, ProgrammingSeconds: o.Seconds})
		f.Changes++
		f.MeanSeconds += *o.Seconds
	}
	if f.Changes > 0 {
		f.MeanSeconds /= float64(f.Changes)
	}
	f.Percentiles = Percentiles(samples)
	if err != nil {
		f.Error = err.Error()
	}
	if errors.Is(err, context.Canceled) {
		f.Error = "interrupted"
	}
	return f
}

// floorSaid is the floor in a progress line: its median and maximum over the changes.
func floorSaid(f *api.ProbeFloor) string {
	s := fmt.Sprintf("%d changes with no latency (a loopback listener closed and opened) seen after", f.Changes)
	for _, q := range f.Percentiles {
		switch q.Quantile {
		case 0.5:
			s += fmt.Sprintf(" %.2f ms (median)", q.Seconds*1e3)
		case 1:
			s += fmt.Sprintf(", at most %.2f ms", q.Seconds*1e3)
		}
	}
	if f.Error != "" {
		s += "; " + f.Error
	}
	return s
}
