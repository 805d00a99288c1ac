package mesh

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/driver/native"
	"github.com/cnperf/cnperf/internal/meshview"
	"github.com/cnperf/cnperf/internal/platform"
)

// fakeCluster stands in for agent pods (exec needs a kubelet, which cannot run in a unit
// test; test/e2e/mesh_test.go runs the real thing). Client commands are the real native
// driver's argv; the fake answers with a Sample, checks that no node is in two measurements
// at once, and holds each measurement until every pair of its round has started, so a
// schedule that ran a round's pairs one after the other would be caught. /proc reads return
// a bundle whose counters advance by one second of 2 CPUs at 50 % busy per read.
type fakeCluster struct {
	mu       sync.Mutex
	byIP     map[string]string // target IP → server node
	active   map[string]string // node → pair it is busy with
	started  int
	want     int // measurements the current round holds
	release  chan struct{}
	maxConc  int
	overlaps []string
	slow     map[[2]string]float64 // pair → throughput (default 10 Gbit/s)
	reads    map[string]int
	dialed   []string // the hosts the clients dialled
}

func (f *fakeCluster) executor(a Agent) platform.Executor { return fakeExec{f: f, node: a.Node} }

type fakeExec struct {
	f    *fakeCluster
	node string
}

func (e fakeExec) Exec(ctx context.Context, cmd driver.Command) driver.Output {
	out := driver.Output{Argv: cmd.Argv, StartTime: time.Now()}
	defer func() { out.EndTime = time.Now() }()
	if len(cmd.Argv) == 3 && cmd.Argv[0] == "sh" && strings.Contains(cmd.Argv[2], "/proc/stat") {
		e.f.mu.Lock()
		e.f.reads[e.node]++
		n := uint64(e.f.reads[e.node])
		e.f.mu.Unlock()
		// 100 Hz × 2 CPUs × 1 s per read: 100 busy (60 user, 30 system, 10 softirq), 100 idle.
		out.Stdout = []byte(fmt.Sprintf("@@uptime\n%d.00 0\n@@stat\ncpu %d 0 %d %d 0 0 %d 0 0 0\ncpu0 0 0 0 0\ncpu1 0 0 0 0\n@@meminfo\nMemTotal: 1000 kB\nMemAvailable: 600 kB\n",
			n, 60*n, 30*n, 100*n, 10*n))
		return out
	}
	host := ""
	for i, a := range cmd.Argv {
		if a == "--host" && i+1 < len(cmd.Argv) {
			host = cmd.Argv[i+1]
		}
	}
	f := e.f
	f.mu.Lock()
	server := f.byIP[host]
	f.dialed = append(f.dialed, host)
	pair := e.node + "→" + server
	for _, n := range []string{e.node, server} {
		if other, busy := f.active[n]; busy {
			f.overlaps = append(f.overlaps, fmt.Sprintf("%s during %s", pair, other))
		}
		f.active[n] = pair
	}
	f.started++
	f.maxConc = max(f.maxConc, len(f.active)/2)
	if f.started == f.want {
		close(f.release)
	}
	release := f.release
	tp, ok := f.slow[[2]string{e.node, server}]
	if !ok {
		tp = 10e9
	}
	f.mu.Unlock()
	select {
	case <-release:
	case <-time.After(3 * time.Second): // a round that is not run at once never fills up
	case <-ctx.Done():
		out.Err = ctx.Err()
	}
	f.mu.Lock()
	delete(f.active, e.node)
	delete(f.active, server)
	f.mu.Unlock()
	if out.Err == nil {
		b, _ := json.Marshal(api.Sample{DurationSeconds: 1, ThroughputBitsPerSecond: &tp})
		out.Stdout = b
	}
	return out
}

func (f *fakeCluster) startRound(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.started, f.want, f.release = 0, n, make(chan struct{})
}

func TestRunMeshRoundsConcurrentlyWithoutOverlap(t *testing.T) {
	const n = 6
	var nodes []Node
	set := &AgentSet{Network: api.NetworkPod, ByNode: map[string]Agent{}}
	f := &fakeCluster{byIP: map[string]string{}, active: map[string]string{}, reads: map[string]int{},
		slow: map[[2]string]float64{{"n2", "n4"}: 2e9}}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("n%d", i)
		nodes = append(nodes, Node{Name: name})
		if i == 5 {
			set.Failed = append(set.Failed, Skipped{name, "ImagePullBackOff"})
			continue
		}
		ip := fmt.Sprintf("10.0.0.%d", i)
		set.ByNode[name] = Agent{Node: name, Pod: "agent-" + name, PodIP: ip, Network: api.NetworkPod}
		f.byIP[ip] = name
	}
	sched, err := NewSchedule(n, ScheduleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	metric, _ := meshview.LookupMetric("", api.TCPStream)
	o := &Options{Profile: api.TCPStream, Driver: native.Driver{}, Params: api.Params{DurationSeconds: 1, Samples: 1, Parallel: 1},
		Metric: metric, OutlierMADs: 3, NodeResources: true}
	// Each round holds until its runnable pairs (those without n5) have all started.
	rounds := 0
	env := Env{Exec: func(a Agent) platform.Executor {
		return f.executor(a)
	}}
	var wrapped [][]Pair
	for _, r := range sched.Rounds {
		var ok []Pair
		for _, p := range r {
			if p.Client != 5 && p.Server != 5 {
				ok = append(ok, p)
			}
		}
		wrapped = append(wrapped, ok)
	}
	o.roundStart = func(i int) { rounds++; f.startRound(len(wrapped[i])) }

	m, results := o.RunMesh(context.Background(), env, nodes, sched, []*AgentSet{set})
	if len(f.overlaps) > 0 {
		t.Fatalf("nodes measured twice at once: %v", f.overlaps)
	}
	// 5 nodes with agents: a round has at most 2 runnable pairs, and they must overlap.
	if f.maxConc != 2 {
		t.Fatalf("at most %d pair(s) ran at once, want 2: rounds are not run concurrently", f.maxConc)
	}
	if rounds != len(sched.Rounds) {
		t.Fatalf("%d rounds started, want %d", rounds, len(sched.Rounds))
	}
	if len(m.Matrices) != 1 || len(m.Matrices[0].Cells) != n*(n-1) || len(results) != n*(n-1) {
		t.Fatalf("matrix %d cells, %d results", len(m.Matrices[0].Cells), len(results))
	}
	var failed, outliers []string
	for _, c := range m.Matrices[0].Cells {
		r := results[c.Result]
		if r.Placement.Client.Node != c.Client || r.Placement.Server.Node != c.Server {
			t.Fatalf("cell %s→%s points at result %s→%s", c.Client, c.Server, r.Placement.Client.Node, r.Placement.Server.Node)
		}
		if c.Error != "" {
			failed = append(failed, c.Client+"→"+c.Server)
			if !strings.Contains(c.Error, "ImagePullBackOff") || c.Value != nil {
				t.Fatalf("cell %s→%s: %q %v", c.Client, c.Server, c.Error, c.Value)
			}
			continue
		}
		if c.Outlier {
			outliers = append(outliers, c.Client+"→"+c.Server)
		}
		nr := r.NodeResources
		if nr == nil || nr.Client == nil || nr.Server == nil || nr.Client.Node != c.Client || nr.Server.Node != c.Server {
			t.Fatalf("cell %s→%s: node resources %+v", c.Client, c.Server, nr)
		}
		if nr.Client.CPUTotalPercent != 50 || nr.Client.CPUUserPercent != 30 || nr.Client.CPUSoftIRQPercent != 5 || nr.Client.MemoryUsedEndBytes != 400*1024 {
			t.Fatalf("cell %s→%s: client node %+v", c.Client, c.Server, *nr.Client)
		}
		if r.Path != api.PathPodPodCrossNode || r.Params.Options[native.OptPort] != "" {
			t.Fatalf("cell %s→%s: path %s options %v", c.Client, c.Server, r.Path, r.Params.Options)
		}
	}
	if len(failed) != 2*(n-1) {
		t.Fatalf("failed cells %v, want every pair with n5", failed)
	}
	if fmt.Sprint(outliers) != "[n2→n4]" {
		t.Fatalf("outliers %v, want [n2→n4]", outliers)
	}
}

// TestRunMeshHostCellsDialTheRunsFamily: on an IPv6 run (every node's pods IPv6 first), a
// host-network cell dials its server's node at its IPv6 address, although the node lists its
// IPv4 address first (status.hostIP, which the cells dialled before); a node without an IPv6
// address is a broken cell that says so, not a dial of its IPv4 address.
func TestRunMeshHostCellsDialTheRunsFamily(t *testing.T) {
	const n = 3
	var nodes []Node
	set := &AgentSet{Network: api.NetworkHost, ByNode: map[string]Agent{}}
	f := &fakeCluster{byIP: map[string]string{}, active: map[string]string{}, reads: map[string]int{}}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("n%d", i)
		nodes = append(nodes, Node{Name: name})
		v4, v6 := fmt.Sprintf("192.168.0.%d", i), fmt.Sprintf("fd00::%d", i)
		a := Agent{Node: name, Pod: "agent-" + name, HostIP: v4, HostIPs: []string{v4, v6}, Network: api.NetworkHost}
		if i == 2 {
			a.HostIPs = []string{v4} // an IPv4-only node
		}
		set.ByNode[name] = a
		f.byIP[v6] = name
	}
	sched, _ := NewSchedule(n, ScheduleOptions{})
	metric, _ := meshview.LookupMetric("", api.TCPStream)
	o := &Options{Profile: api.TCPStream, Driver: native.Driver{}, Params: api.Params{DurationSeconds: 1, Samples: 1, Parallel: 1, IPFamily: "ipv6"},
		Metric: metric, OutlierMADs: 3}
	o.roundStart = func(i int) {
		runnable := 0
		for _, p := range sched.Rounds[i] {
			if p.Server != 2 {
				runnable++
			}
		}
		f.startRound(runnable)
	}
	m, results := o.RunMesh(context.Background(), Env{Exec: f.executor}, nodes, sched, []*AgentSet{set})
	if len(results) != n*(n-1) {
		t.Fatalf("%d results, want %d", len(results), n*(n-1))
	}
	for _, c := range m.Matrices[0].Cells {
		switch {
		case c.Server == "n2" && c.Error != "the host agent on node n2 has no ipv6 address":
			t.Errorf("%s→%s: error %q, want that n2 has no IPv6 address", c.Client, c.Server, c.Error)
		case c.Server != "n2" && c.Error != "":
			t.Errorf("%s→%s: %s", c.Client, c.Server, c.Error)
		}
	}
	if len(f.dialed) != 4 {
		t.Errorf("%d cells dialled, want 4: %v", len(f.dialed), f.dialed)
	}
	for _, h := range f.dialed {
		if f.byIP[h] == "" {
			t.Errorf("a cell dialled %s, not a node's IPv6 address", h)
		}
	}
}

func TestRunMeshInterrupted(t *testing.T) {
	const n = 4
	var nodes []Node
	set := &AgentSet{Network: api.NetworkHost, ByNode: map[string]Agent{}}
	f := &fakeCluster{byIP: map[string]string{}, active: map[string]string{}, reads: map[string]int{}}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("n%d", i)
		nodes = append(nodes, Node{Name: name})
		ip := fmt.Sprintf("192.168.0.%d", i)
		set.ByNode[name] = Agent{Node: name, HostIP: ip, Network: api.NetworkHost}
		f.byIP[ip] = name
	}
	sched, _ := NewSchedule(n, ScheduleOptions{})
	metric, _ := meshview.LookupMetric("", api.TCPStream)
	o := &Options{Profile: api.TCPStream, Driver: native.Driver{}, Params: api.Params{DurationSeconds: 1, Samples: 2, Parallel: 1},
		Metric: metric, OutlierMADs: 3}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o.roundStart = func(i int) {
		if i == 0 {
			f.startRound(2) // both pairs of round 0 run to the end
			return
		}
		f.startRound(1000) // never released: round 1 runs until the interruption
		time.AfterFunc(50*time.Millisecond, cancel)
	}
	m, results := o.RunMesh(ctx, Env{Exec: f.executor}, nodes, sched, []*AgentSet{set})
	if len(results) != n*(n-1) || len(m.Matrices[0].Cells) != n*(n-1) {
		t.Fatalf("%d results: every pair must have one, run or not", len(results))
	}
	var ran, cut, notRun int
	for _, c := range m.Matrices[0].Cells {
		r := results[c.Result]
		switch {
		case c.Round == 0 && c.Error == "" && r.Path == api.PathHostHost && len(r.Samples) == 2:
			ran++
		case c.Round == 1 && strings.HasPrefix(c.Error, "interrupted after 0 of 2 samples"):
			cut++
		case c.Round > 1 && c.Error == "interrupted before it ran":
			notRun++
		default:
			t.Fatalf("round %d %s→%s: error %q, %d samples", c.Round, c.Client, c.Server, c.Error, len(r.Samples))
		}
	}
	if ran != 2 || cut != 2 || notRun != n*(n-1)-4 {
		t.Fatalf("ran %d, cut %d, not run %d", ran, cut, notRun)
	}
}

// streamExec adds the /proc stream to the fake agents: a snapshot every 5 ms whose counters
// advance as 2 CPUs at 25 % busy.
type streamExec struct{ fakeExec }

func (e streamExec) ExecStream(ctx context.Context, cmd driver.Command, stdout io.Writer) error {
	if !strings.Contains(strings.Join(cmd.Argv, " "), "@@end") {
		return fmt.Errorf("unexpected stream command %v", cmd.Argv)
	}
	for i := uint64(1); ; i++ {
		b := fmt.Sprintf("@@uptime\n%d.00 0\n@@stat\ncpu %d 0 0 %d 0 0 0 0 0 0\ncpu0 0\ncpu1 0\n@@meminfo\nMemTotal: 1000 kB\nMemAvailable: 900 kB\n@@end\n",
			i, 5*i, 15*i)
		if _, err := io.WriteString(stdout, b); err != nil {
			return nil // the reader went away: the cell ended
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func TestRunMeshStreamsNodeResources(t *testing.T) {
	const n = 3
	var nodes []Node
	set := &AgentSet{Network: api.NetworkPod, ByNode: map[string]Agent{}}
	f := &fakeCluster{byIP: map[string]string{}, active: map[string]string{}, reads: map[string]int{}}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("n%d", i)
		nodes = append(nodes, Node{Name: name})
		ip := fmt.Sprintf("10.0.0.%d", i)
		set.ByNode[name] = Agent{Node: name, PodIP: ip, Network: api.NetworkPod}
		f.byIP[ip] = name
	}
	sched, _ := NewSchedule(n, ScheduleOptions{Self: true})
	metric, _ := meshview.LookupMetric("", api.TCPStream)
	o := &Options{Profile: api.TCPStream, Driver: native.Driver{}, Params: api.Params{DurationSeconds: 1, Samples: 2, Parallel: 1},
		Metric: metric, OutlierMADs: 3, NodeResources: true}
	o.roundStart = func(i int) { f.startRound(len(sched.Rounds[i])) }
	env := Env{Exec: func(a Agent) platform.Executor { return streamExec{fakeExec{f: f, node: a.Node}} }}
	m, results := o.RunMesh(context.Background(), env, nodes, sched, []*AgentSet{set})
	if len(m.Matrices[0].Cells) != n*n {
		t.Fatalf("%d cells", len(m.Matrices[0].Cells))
	}
	for _, c := range m.Matrices[0].Cells {
		r := results[c.Result]
		if c.Error != "" || len(r.Samples) != 2 {
			t.Fatalf("%s→%s: %q, %d samples", c.Client, c.Server, c.Error, len(r.Samples))
		}
		if c.Client == c.Server && r.Path != api.PathLoopback {
			t.Fatalf("diagonal %s: path %s", c.Client, r.Path)
		}
		for _, s := range r.Samples {
			nr := s.NodeResources
			if nr == nil || nr.Client == nil || nr.Server == nil || len(s.Notes) > 0 {
				t.Fatalf("%s→%s sample %d: %+v notes %v", c.Client, c.Server, s.Index, nr, s.Notes)
			}
			if nr.Client.CPUTotalPercent != 25 || nr.Server.Node != c.Server || nr.Client.MemoryUsedEndBytes != 100*1024 {
				t.Fatalf("%s→%s: client %+v server %+v", c.Client, c.Server, *nr.Client, *nr.Server)
			}
		}
	}
	if len(f.reads) != 0 {
		t.Fatalf("/proc read by exec %v times although the agents stream", f.reads)
	}
}

// seqExec answers the native driver's client commands with throughputs from a sequence,
// per client node, and counts them.
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
	s := api.Sample{DurationSeconds: 1, ThroughputBitsPerSecond: &tp}
	for range 6 { // enough intervals for a steady-state mark
		s.Intervals = append(s.Intervals, api.SampleInterval{BitsPerSecond: &tp})
	}
	b, _ := json.Marshal(s)
	out.Stdout, out.EndTime = b, time.Now()
	return out
}

// A mesh cell goes through the runner's case loop: with a confidence target it takes samples
// beyond --samples until the interval is within the target (and no more), up to the maximum;
// without one it takes --samples. Every sample gets its steady-state mark and the result its
// confidence outcome.
func TestRunMeshHonoursConfidenceTarget(t *testing.T) {
	// Spread at first, then steady: the 95 % interval is within ±5 % of the mean from the
	// 8th sample on (9, 11, 10, 10, 10, 10, 10, 10).
	seq := []float64{9, 11, 10}
	tests := []struct {
		name        string
		confidence  *api.ConfidenceTarget
		maxSamples  int
		wantSamples int
		wantMet     bool
		wantGaveUp  bool
	}{
		{name: "no target: --samples", wantSamples: 3},
		{name: "target met after 8", confidence: &api.ConfidenceTarget{Level: 95, HalfWidthPercent: 5}, maxSamples: 20, wantSamples: 8, wantMet: true},
		// after 4 samples the spread needs more than the 5 allowed: given up, as in a run
		{name: "target out of reach of the maximum", confidence: &api.ConfidenceTarget{Level: 95, HalfWidthPercent: 5}, maxSamples: 5, wantSamples: 4,
			wantGaveUp: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nodes := []Node{{Name: "n0"}, {Name: "n1"}}
			set := &AgentSet{Network: api.NetworkPod, ByNode: map[string]Agent{
				"n0": {Node: "n0", Pod: "agent-n0", PodIP: "10.0.0.1", Network: api.NetworkPod},
				"n1": {Node: "n1", Pod: "agent-n1", PodIP: "10.0.0.2", Network: api.NetworkPod},
			}}
			sched, err := NewSchedule(len(nodes), ScheduleOptions{})
			if err != nil {
				t.Fatal(err)
			}
			metric, _ := meshview.LookupMetric("", api.TCPStream)
			o := &Options{Profile: api.TCPStream, Driver: native.Driver{}, Metric: metric, OutlierMADs: 3,
				Params: api.Params{DurationSeconds: 1, Samples: 3, MaxSamples: tt.maxSamples, Confidence: tt.confidence, Parallel: 1}}
			var mu sync.Mutex
			counts := map[string]int{}
			env := Env{Exec: func(a Agent) platform.Executor { return seqExec{mu: &mu, n: counts, node: a.Node, gbit: seq} }}
			_, results := o.RunMesh(context.Background(), env, nodes, sched, []*AgentSet{set})
			if len(results) != 2 {
				t.Fatalf("%d results, want 2", len(results))
			}
			for _, r := range results {
				if r.Error != "" || len(r.Samples) != tt.wantSamples || counts[r.Placement.Client.Node] != tt.wantSamples {
					t.Errorf("%s→%s: %d samples (%d run), error %q; want %d", r.Placement.Client.Node, r.Placement.Server.Node,
						len(r.Samples), counts[r.Placement.Client.Node], r.Error, tt.wantSamples)
				}
				if tt.confidence != nil && (r.Confidence == nil || r.Confidence.Met != tt.wantMet || r.Confidence.GaveUp != tt.wantGaveUp) {
					t.Errorf("%s→%s: confidence outcome %+v, want met %t, given up %t", r.Placement.Client.Node, r.Placement.Server.Node, r.Confidence,
						tt.wantMet, tt.wantGaveUp)
				}
				for _, s := range r.Samples {
					if s.SteadyState == nil {
						t.Errorf("%s→%s: sample %d has no steady-state mark", r.Placement.Client.Node, r.Placement.Server.Node, s.Index)
						break
					}
				}
			}
		})
	}
}
