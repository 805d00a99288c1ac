package mesh

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/measure"
	"github.com/cnperf/cnperf/internal/meshview"
	"github.com/cnperf/cnperf/internal/noderes"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/platform"
	"github.com/cnperf/cnperf/internal/runner"
	"github.com/cnperf/cnperf/internal/stats"
)

// Options are what a mesh or all-to-one run measures.
type Options struct {
	Profile api.Profile
	Driver  driver.Driver
	// Params are the case parameters of every cell (duration, samples, sizes, options).
	Params api.Params
	Metric meshview.Metric
	// OutlierMADs is k in median ∓ k·MAD.
	OutlierMADs float64
	// NodeResources reads both nodes' /proc around every sample.
	NodeResources bool
	// MaxParallelPairs caps how many pairs of a round run at once (0: the whole round).
	MaxParallelPairs int
	// Attachment is the secondary network (NAMESPACE/NAME) of the api.NetworkAttachment cells:
	// their cases' network (the path table's pod-to-pod rows on it).
	Attachment string
	// Profiler, when set, records CPU profiles around the cells it chooses.
	Profiler Profiler

	// roundStart is a test hook called before each round starts.
	roundStart func(round int)
}

// Profiler records CPU profiles during cells (see flame graphs).
type Profiler interface {
	// Start begins recording for a cell on the client and server nodes. wrap, when not nil,
	// wraps the client's executor (to ask the client for its own profile); stop ends the
	// recording and returns the profiles.
	Start(ctx context.Context, cell CellInfo) (wrap func(platform.Executor) platform.Executor, stop func(ctx context.Context) []api.CPUProfile)
}

// CellInfo says where a cell runs.
type CellInfo struct {
	Network        api.Network
	Client, Server Agent
	Round          int
}

// Env is what a run needs from the cluster: an executor in an agent's client container.
type Env struct {
	Exec func(a Agent) platform.Executor
	// Log gets one line per cell (stderr); nil is quiet.
	Log io.Writer
}

// cellJob is one pair to measure.
type cellJob struct {
	net            api.Network
	client, server Agent
	target         driver.Target
	round          int
	// serverNode is the agent on the server's node that reads its /proc (the server itself
	// when empty; the all-to-one server pod has no client container).
	serverNode *Agent
	// path and via label the result.
	path api.Path
	via  string
	// attachment is the secondary network of an api.NetworkAttachment cell (the matrix's).
	attachment *api.Attachment
	opts       map[string]string // extra case options (ports)
}

// Case is the plan case of one cell.
func (o *Options) Case(path api.Path, net api.Network, extra map[string]string) plan.Case {
	p := o.Params
	p.HostNetwork = net == api.NetworkHost
	if net == api.NetworkAttachment {
		p.Network = o.Attachment
	}
	p.Options = plan.MergeOptions(p.Options, extra)
	return plan.Case{Name: "mesh", Profile: o.Profile, Path: path, Driver: o.Driver.Name(), Params: p}
}

// runCell measures one pair through the runner's case loop (runner.MeasureCase: warm-up,
// confidence target, steady-state and outlier marks, summary), with the node-resource
// windows on both nodes around every sample (nodeWindows).
func (o *Options) runCell(ctx context.Context, env Env, j cellJob) (res api.Result) {
	c := o.Case(j.path, j.net, j.opts)
	res = runner.NewResult(c)
	res.Group = o.networkName(j.net)
	res.Placement = &api.Placement{
		Client: api.Endpoint{Role: "client", Node: j.client.Node, Pod: j.client.Pod, PodIP: j.client.PodIP, HostIP: j.client.HostIP, HostNetwork: j.net == api.NetworkHost},
		Server: api.Endpoint{Role: "server", Node: j.server.Node, Pod: j.server.Pod, PodIP: j.server.PodIP, HostIP: j.server.HostIP, HostNetwork: j.net == api.NetworkHost, Address: j.target.Host},
		Target: j.target.Host,
	}
	if j.attachment != nil {
		a := *j.attachment
		a.Interface, a.ServerIP, a.ClientIP = j.server.AttachInterface, j.server.AttachIP, j.client.AttachIP
		res.Placement.Attachment = &a
	}
	if j.via != "" {
		res.Group += "/" + j.via
	}
	job, err := o.Driver.Job(c)
	if err != nil {
		res.Error = fmt.Sprintf("driver %s: %v", o.Driver.Name(), err)
		runner.Finish(&res, c, false)
		return res
	}
	sp := runner.Sampler{Driver: o.Driver, Job: job, Exec: env.Exec(j.client), Target: j.target}
	var stopProfile func(context.Context) []api.CPUProfile
	if o.Profiler != nil {
		srv := j.server
		if j.serverNode != nil {
			srv = *j.serverNode
		}
		var wrap func(platform.Executor) platform.Executor
		wrap, stopProfile = o.Profiler.Start(ctx, CellInfo{Network: j.net, Client: j.client, Server: srv, Round: j.round})
		if wrap != nil {
			sp.Exec = wrap(sp.Exec)
		}
	}
	if o.NodeResources {
		streams, stop, notes := o.startStreams(ctx, env, j)
		defer stop()
		res.Notes = append(res.Notes, notes...)
		sp.Around = o.nodeWindows(env, j, streams)
	}
	runner.MeasureCase(ctx, c, sp, nil, &res)
	res.NodeResources = meanNodeResources(res.Samples)
	if stopProfile != nil {
		sctx, cancel := measure.Cleanup(ctx, time.Minute)
		res.Profiles = stopProfile(sctx)
		cancel()
	}
	return res
}

// nodeWindows is the sample hook (runner.Sampler.Around) that adds both nodes' resources
// to every sample. With streams (the client's and the server's node /proc series), the
// node windows are cut from them at the sample's own edges; without, /proc is read through
// an exec on each node around the client commands.
func (o *Options) nodeWindows(env Env, j cellJob, streams []*noderes.Series) func(context.Context, bool) func(context.Context, *api.Sample) {
	return func(ctx context.Context, warmup bool) func(context.Context, *api.Sample) {
		if warmup {
			return nil
		}
		var nodes []Agent
		var samplers []*noderes.Sampler
		var started sync.WaitGroup
		var startErrs []error
		if streams == nil {
			nodes = []Agent{j.client}
			if j.server.Node != j.client.Node {
				if j.serverNode != nil {
					nodes = append(nodes, *j.serverNode)
				} else {
					nodes = append(nodes, j.server)
				}
			}
			// The windows open while the client command starts (both go through an exec of
			// similar latency), so they hold less of the exec round trips; the client's own
			// start and handshake precede its measured window anyway.
			samplers = make([]*noderes.Sampler, len(nodes))
			startErrs = make([]error, len(nodes))
			for i, a := range nodes {
				samplers[i] = noderes.NewSampler(ProcReader{Exec: env.Exec(a)}, a.Node)
				started.Add(1)
				go func(i int) {
					defer started.Done()
					startErrs[i] = samplers[i].Start(ctx)
				}(i)
			}
		}
		return func(ctx context.Context, s *api.Sample) {
			var resErr []string
			started.Wait()
			for i, err := range startErrs {
				if err != nil {
					resErr = append(resErr, fmt.Sprintf("node resources of %s: %v", nodes[i].Node, err))
					samplers[i] = nil
				}
			}
			var usage []*api.NodeResources
			if len(samplers) > 0 {
				usage = make([]*api.NodeResources, len(samplers))
				var wg sync.WaitGroup
				var mu sync.Mutex
				for i, sm := range samplers {
					if sm == nil {
						continue
					}
					wg.Add(1)
					go func(i int, sm *noderes.Sampler) {
						defer wg.Done()
						r, err := sm.Stop(measure.Detached(ctx))
						mu.Lock()
						defer mu.Unlock()
						if err != nil {
							resErr = append(resErr, fmt.Sprintf("node resources of %s: %v", nodes[i].Node, err))
							return
						}
						usage[i] = &r
					}(i, sm)
				}
				wg.Wait()
			}
			if s == nil { // the sample failed: nothing to add to
				return
			}
			if streams != nil {
				usage = o.windows(ctx, streams, s.StartTime, s.EndTime, &resErr)
			}
			if len(usage) > 0 && s.NodeResources == nil { // a driver that measured them itself knows its window better
				pair := &api.NodeResourcesPair{Client: usage[0]}
				if len(usage) > 1 {
					pair.Server = usage[1]
				} else if usage[0] != nil {
					same := *usage[0]
					pair.Server = &same // same node: one window serves both sides
				}
				if pair.Client != nil || pair.Server != nil {
					s.NodeResources = pair
				}
			}
			s.Notes = append(s.Notes, resErr...)
		}
	}
}

func meanNodeResources(samples []api.Sample) *api.NodeResourcesPair {
	var cl, sv []api.NodeResources
	for i := range samples {
		s := &samples[i]
		if !stats.Successful(s) || s.NodeResources == nil {
			continue
		}
		if s.NodeResources.Client != nil {
			cl = append(cl, *s.NodeResources.Client)
		}
		if s.NodeResources.Server != nil {
			sv = append(sv, *s.NodeResources.Server)
		}
	}
	if len(cl) == 0 && len(sv) == 0 {
		return nil
	}
	return &api.NodeResourcesPair{Client: noderes.Mean(cl), Server: noderes.Mean(sv)}
}

// runRounds runs jobs round by round; the jobs of a round run at once (at most
// MaxParallelPairs of them). It returns the results in job order.
func (o *Options) runRounds(ctx context.Context, env Env, rounds [][]cellJob, onDone func(j cellJob, r *api.Result)) [][]api.Result {
	out := make([][]api.Result, len(rounds))
	for ri, round := range rounds {
		out[ri] = make([]api.Result, len(round))
		if ctx.Err() != nil {
			for i, j := range round {
				out[ri][i] = o.skipped(j, "interrupted before it ran")
			}
			continue
		}
		if o.roundStart != nil {
			o.roundStart(ri)
		}
		limit := o.MaxParallelPairs
		if limit <= 0 || limit > len(round) {
			limit = len(round)
		}
		sem := make(chan struct{}, limit)
		var wg sync.WaitGroup
		for i, j := range round {
			wg.Add(1)
			sem <- struct{}{}
			go func(i int, j cellJob) {
				defer wg.Done()
				defer func() { <-sem }()
				out[ri][i] = o.runCell(ctx, env, j)
			}(i, j)
		}
		wg.Wait()
		if onDone != nil {
			for i, j := range round {
				onDone(j, &out[ri][i])
			}
		}
	}
	return out
}

// skipped is the result of a cell that could not run.
func (o *Options) skipped(j cellJob, why string) api.Result {
	c := o.Case(j.path, j.net, j.opts)
	now := time.Now()
	return api.Result{
		Name: "mesh", Group: o.networkName(j.net), Profile: c.Profile, Driver: c.Driver, Path: c.Path, Params: c.Params,
		StartTime: now, EndTime: now, Samples: []api.Sample{}, Error: why,
		Placement: &api.Placement{
			Client: api.Endpoint{Role: "client", Node: j.client.Node},
			Server: api.Endpoint{Role: "server", Node: j.server.Node},
		},
	}
}

// cellFromResult is the matrix cell of a finished result.
func (o *Options) cellFromResult(j cellJob, r *api.Result, index int) api.MeshCell {
	cell := api.MeshCell{Client: j.client.Node, Server: j.server.Node, Round: j.round, Result: index}
	if r.Error != "" {
		cell.Error = r.Error
		return cell
	}
	if v := o.Metric.Value(&r.Summary); v != nil {
		cell.Value = v
	} else {
		cell.Error = fmt.Sprintf("no %s in the result", o.Metric.Field)
		if r.Summary.SamplesFailed > 0 {
			for _, s := range r.Samples {
				if s.Error != "" {
					cell.Error = s.Error
					break
				}
			}
		}
	}
	return cell
}

// streamInterval is how often the node streams send a /proc snapshot: a window's edges
// are off by at most this much (plus the stream's latency), however slow exec is.
const streamInterval = 100 * time.Millisecond

// startStreams starts a /proc stream on the client's node and on the server's (one when
// they are the same node) for the whole cell, and waits for each stream's first snapshot.
// It returns nil streams when the executors cannot stream (the caller then reads /proc
// around each sample); a node whose stream fails has a nil series and a note.
func (o *Options) startStreams(ctx context.Context, env Env, j cellJob) ([]*noderes.Series, func(), []string) {
	nodes := []Agent{j.client}
	if j.server.Node != j.client.Node {
		if j.serverNode != nil {
			nodes = append(nodes, *j.serverNode)
		} else {
			nodes = append(nodes, j.server)
		}
	}
	for _, a := range nodes {
		if _, ok := env.Exec(a).(StreamExecutor); !ok {
			return nil, func() {}, nil
		}
	}
	sctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	series := make([]*noderes.Series, len(nodes))
	// Long enough for every sample; the stream ends with the cell anyway.
	c := o.Case(j.path, j.net, j.opts)
	bound := time.Duration(max(runner.SampleLimit(c), 1)+1)*c.SampleTimeout() + time.Minute
	for i, a := range nodes {
		s := noderes.NewSeries(a.Node)
		series[i] = s
		pr, pw := io.Pipe()
		sx := env.Exec(a).(StreamExecutor)
		wg.Add(2)
		go func() {
			defer wg.Done()
			_ = noderes.ReadStream(pr, s, time.Now)
			_ = pr.Close() // a stopped reader stops the remote loop (SIGPIPE)
		}()
		go func() {
			defer wg.Done()
			err := sx.ExecStream(sctx, driver.Command{Argv: []string{"sh", "-c", noderes.StreamScript(streamInterval)}, Timeout: bound}, pw)
			if err == nil {
				err = io.EOF
			}
			pw.CloseWithError(err)
		}()
	}
	var notes []string
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	for i, s := range series {
		if err := s.WaitFor(wctx, time.Time{}); err != nil {
			notes = append(notes, fmt.Sprintf("node resources of %s: %v", nodes[i].Node, err))
			series[i] = nil
		}
	}
	stop := func() {
		cancel()
		wg.Wait()
	}
	if len(series) == 1 {
		series = append(series, series[0]) // same node: one stream serves both sides
	}
	return series, stop, notes
}

// windows cuts each node's window [start, end] from its series, waiting (briefly) for the
// snapshot after end.
func (o *Options) windows(ctx context.Context, streams []*noderes.Series, start, end time.Time, notes *[]string) []*api.NodeResources {
	out := make([]*api.NodeResources, len(streams))
	for i, s := range streams {
		if s == nil {
			continue
		}
		wctx, cancel := measure.Cleanup(ctx, 10*time.Second+streamInterval)
		err := s.WaitFor(wctx, end)
		cancel()
		if err == nil {
			var r api.NodeResources
			if r, err = s.Window(start, end); err == nil {
				out[i] = &r
				continue
			}
		}
		*notes = append(*notes, err.Error())
	}
	return out
}
