package meshcmd

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/mesh"
	"github.com/cnperf/cnperf/internal/platform"
)

// --samples and --confidence reach the cells' parameters as `cnperf run` takes them (the same
// parser, range checks and defaults), and a bad value is refused naming its flag.
func TestSamplingFlagsReachParams(t *testing.T) {
	target := func(level, half float64) *api.ConfidenceTarget {
		return &api.ConfidenceTarget{Level: level, HalfWidthPercent: half}
	}
	for _, tc := range []struct {
		args     []string
		min, max int
		target   *api.ConfidenceTarget
		err      string // the error names this flag and says this
	}{
		{args: nil, min: 1},
		{args: []string{"--samples", "5"}, min: 5},
		{args: []string{"--confidence", "95,5"}, min: 3, max: 30, target: target(95, 5)},
		{args: []string{"--confidence", "90,2.5", "--samples", "4,12"}, min: 4, max: 12, target: target(90, 2.5)},
		{args: []string{"--confidence", "99%,5%", "--samples", "40"}, min: 40, max: 40, target: target(99, 5)},
		{args: []string{"--samples", "3,30"}, err: "--samples: maxSamples applies only with a confidence target"},
		{args: []string{"--samples", "0"}, err: "--samples: samples must be at least 1"},
		{args: []string{"--samples", "1001"}, err: "--samples"},
		{args: []string{"--samples", "three"}, err: `--samples: "three" is not an integer`},
		{args: []string{"--samples", "1,2,3", "--confidence", "95,5"}, err: "--samples"},
		{args: []string{"--confidence", "95,5", "--samples", "10,5"}, err: "--samples: maxSamples 5 is smaller than samples 10"},
		{args: []string{"--confidence", "95,5", "--samples", "3,1001"}, err: "--samples"},
		{args: []string{"--confidence", "95"}, err: "--confidence: \"95\": want LEVEL,HALFWIDTH"},
		{args: []string{"--confidence", "100,5"}, err: "--confidence: confidence level must be a percentage from 50 to below 100"},
		{args: []string{"--confidence", "95,0"}, err: "--confidence: halfWidthPercent must be above 0"},
		{args: []string{"--confidence", "x,5"}, err: "--confidence: \"x\" is not a number"},
	} {
		_, s, err := parse(t, tc.args...)
		if tc.err != "" {
			var ue *exit.UsageError
			if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.As(err, &ue) {
				t.Errorf("%v: error %v, want a usage error with %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", tc.args, err)
			continue
		}
		p := s.params
		if p.Samples != tc.min || p.MaxSamples != tc.max || (p.Confidence == nil) != (tc.target == nil) ||
			(p.Confidence != nil && *p.Confidence != *tc.target) {
			t.Errorf("%v: samples %d, max %d, target %+v; want %d, %d, %+v", tc.args, p.Samples, p.MaxSamples, p.Confidence,
				tc.min, tc.max, tc.target)
		}
	}
}

// A mesh run with --confidence takes samples of each pair until the interval is within the
// target, and no more, or up to the --samples maximum; without it, --samples. The cells run
// through the mesh library on an executor that answers the native driver's client with
// throughputs from a sequence: spread at first, then steady, so the 95 % interval is within
// ±5 % of the mean from the 8th sample on.
func TestMeshRunWithConfidenceStopsAtTarget(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		samples int
		met     bool
		gaveUp  bool
	}{
		{args: []string{"--samples", "3"}, samples: 3},
		{args: []string{"--confidence", "95,5", "--samples", "3,20"}, samples: 8, met: true},
		{args: []string{"--confidence", "95,5"}, samples: 8, met: true},
		// after 4 samples the spread needs more than the 5 allowed: given up, as in a run
		{args: []string{"--confidence", "95,5", "--samples", "3,5"}, samples: 4, gaveUp: true},
		{args: []string{"--confidence", "95,30", "--samples", "3,20"}, samples: 3, met: true},
	} {
		args := append([]string{"--duration", "1s", "--node-resources=false"}, tc.args...)
		o, s, err := parse(t, args...)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		nodes := []mesh.Node{{Name: "n0"}, {Name: "n1"}}
		set := &mesh.AgentSet{Network: api.NetworkPod, ByNode: map[string]mesh.Agent{
			"n0": {Node: "n0", Pod: "agent-n0", PodIP: "10.0.0.1", Network: api.NetworkPod},
			"n1": {Node: "n1", Pod: "agent-n1", PodIP: "10.0.0.2", Network: api.NetworkPod},
		}}
		sched, err := mesh.NewSchedule(len(nodes), mesh.ScheduleOptions{})
		if err != nil {
			t.Fatal(err)
		}
		counts := map[string]int{}
		var mu sync.Mutex
		env := mesh.Env{Exec: func(a mesh.Agent) platform.Executor {
			return seqExec{mu: &mu, n: counts, node: a.Node, gbit: []float64{9, 11, 10}}
		}}
		_, results := o.meshOptions(s, "").RunMesh(context.Background(), env, nodes, sched, []*mesh.AgentSet{set})
		if len(results) != 2 {
			t.Fatalf("%v: %d results, want 2", tc.args, len(results))
		}
		for _, r := range results {
			c := r.Placement.Client.Node
			if r.Error != "" || len(r.Samples) != tc.samples || counts[c] != tc.samples {
				t.Errorf("%v: %s→%s: %d samples (%d run), error %q; want %d", tc.args, c, r.Placement.Server.Node,
					len(r.Samples), counts[c], r.Error, tc.samples)
			}
			if strings.Contains(strings.Join(tc.args, " "), "--confidence") &&
				(r.Confidence == nil || r.Confidence.Met != tc.met || r.Confidence.GaveUp != tc.gaveUp) {
				t.Errorf("%v: %s: confidence outcome %+v, want met %t, given up %t", tc.args, c, r.Confidence, tc.met, tc.gaveUp)
			}
		}
	}
}

// seqExec answers the native driver's client commands with throughputs (Gbit/s) from a
// sequence, per client node (the last repeated), and counts them.
type seqExec struct {
	mu   *sync.Mutex
	n    map[string]int
	node string
	gbit []float64
}

func (e seqExec) Exec(_ context.Context, cmd driver.Command) driver.Output {
	out := driver.Output{Argv: cmd.Argv, StartTime: time.Now()}
	e.mu.Lock()
	i := e.n[e.node]
	e.n[e.node]++
	e.mu.Unlock()
	tp := e.gbit[min(i, len(e.gbit)-1)] * 1e9
	b, err := json.Marshal(api.Sample{DurationSeconds: 1, ThroughputBitsPerSecond: &tp})
	if err != nil {
		out.Err = err
	}
	out.Stdout, out.EndTime = b, time.Now()
	return out
}
