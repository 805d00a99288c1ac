package programming

import (
	"fmt"
	"strconv"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/runner"
	"github.com/cnperf/cnperf/internal/stats"
)

// Quantiles are the percentiles each result states, with their intervals (1: the maximum).
var Quantiles = []float64{0.5, 0.9, 0.99, 1}

// CILevel is the percentiles' confidence level.
const CILevel = 0.95

// Option keys of a programming result's params: they keep one client node's (and one
// standing-policy count's) results apart in compare, which matches cases on their options.
const (
	OptNode             = "node"
	OptStandingPolicies = "standingPolicies"
)

func resultKey(p api.Profile, standing int, node string, path api.Path) string {
	return fmt.Sprintf("%s|%d|%s|%s", p, standing, node, path)
}

// result is the result of one step's profile seen by one probe (a client and a target),
// created on first use.
func (r *Runner) result(k Kind, s step, standing int, sp stepProbe) *api.Result {
	c, path, addr := sp.c, sp.t.path, sp.t.addr(sp.c)
	key := resultKey(s.profile, standing, c.Node, path)
	if res, ok := r.results[key]; ok {
		return res
	}
	opts := map[string]string{OptNode: c.Node}
	if k.IsPolicy() || k == KindPod {
		path = api.PathPodPodCrossNode
		if c.Node == r.o.ServerNode {
			path = api.PathPodPodSameNode
		}
	}
	if k.IsPolicy() {
		opts[OptStandingPolicies] = strconv.Itoa(standing)
	}
	family := ""
	if sp.t.family != nil {
		family = sp.t.family(c)
	}
	p := r.o.Params
	res := &api.Result{
		Profile: s.profile, Driver: api.ProgrammingDriver, Path: path,
		Params: api.Params{Samples: r.o.Count, TimeoutSeconds: p.Timeout.Seconds(), IPFamily: family, Options: opts},
		Placement: &api.Placement{
			Client: api.Endpoint{Role: "client", Node: c.Node, Pod: c.Pod, Namespace: r.o.Namespace},
			Server: api.Endpoint{Role: "server", Node: r.o.ServerNode, Pod: r.server.Name, Namespace: r.o.Namespace, PodIP: r.server.Status.PodIP},
			Target: addr,
		},
		StartTime: time.Now().UTC(),
		Samples:   []api.Sample{},
		Programming: &api.Programming{
			Change: s.change, Expect: string(s.ch.Expect), Target: addr, StandingPolicies: standing,
			ProbeIntervalSeconds: p.Interval.Seconds(), AttemptTimeoutSeconds: p.AttemptTimeout.Seconds(), Confirm: p.Confirm,
			MeasuredOffsetLowSeconds: c.Clock.LowSeconds, MeasuredOffsetHighSeconds: c.Clock.HighSeconds,
			ClockOffsetSeconds: c.Clock.OffsetSeconds, ClockUncertaintySeconds: c.Clock.UncertaintySeconds, SharedClock: c.Clock.Shared,
			ErrorBoundSeconds: p.Interval.Seconds() + c.Clock.UncertaintySeconds,
		},
	}
	r.results[key] = res
	r.order = append(r.order, key)
	return res
}

// record adds one change's observations, one sample per probe.
func (r *Runner) record(k Kind, s step, standing, index int, sp []stepProbe, obs []Observation) {
	for i, p := range sp {
		res := r.result(k, s, standing, p)
		o := obs[i]
		// the sample's window: from the change's API call to the client seeing its effect
		smp := api.Sample{Index: index, StartTime: o.Sent.UTC(), EndTime: o.At.UTC(), Error: o.Error, ProgrammingSeconds: o.Seconds}
		if o.Seconds != nil {
			smp.EndTime = o.SeenAt.UTC()
			smp.DurationSeconds = *o.Seconds
		}
		if o.Note != "" {
			smp.Notes = []string{o.Note}
		}
		res.Samples = append(res.Samples, smp)
		res.EndTime = time.Now().UTC()
	}
}

// finish summarises a result: the samples' summary (runner.Summarize) and the percentiles with
// their intervals.
func (r *Runner) finish(res *api.Result) {
	res.Samples = append([]api.Sample(nil), res.Samples...)
	if res.Programming != nil {
		pr := *res.Programming
		res.Programming = &pr
	}
	runner.Summarize(res)
	res.Programming.Percentiles = Percentiles(res.Samples)
	res.Programming.Component = r.component(res)
	res.Programming.ProbeFloor = r.floor
}

// Percentiles are Quantiles of the successful samples' figures with CILevel intervals.
func Percentiles(samples []api.Sample) []api.Percentile {
	var xs []float64
	for i := range samples {
		if s := &samples[i]; stats.Successful(s) && s.ProgrammingSeconds != nil {
			xs = append(xs, *s.ProgrammingSeconds)
		}
	}
	var out []api.Percentile
	for _, q := range Quantiles {
		e, ok := stats.QuantileCI(xs, q, CILevel)
		if !ok {
			continue
		}
		p := api.Percentile{Quantile: q, Seconds: e.Value}
		if q < 1 {
			p.Level = CILevel * 100
		}
		if e.HasLow {
			p.CILow = &e.Low
		}
		if e.HasHigh {
			p.CIHigh = &e.High
		}
		out = append(out, p)
	}
	return out
}
