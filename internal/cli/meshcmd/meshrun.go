package meshcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/agenttoken"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/mesh"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/platform"
	"github.com/cnperf/cnperf/internal/session"
)

// meshRun is one `cnperf mesh` run: what it chose, created and measured.
type meshRun struct {
	o       *Options
	s       *settings
	log     io.Writer
	runID   string
	cs      kubernetes.Interface
	cfg     *rest.Config
	started time.Time
	sess    *session.Session // the run and its --results file, created before anything runs

	nodes   []mesh.Node
	skipped []mesh.Skipped
	server  *mesh.Node // --all-to-one
	sched   *mesh.Schedule

	run       *api.Run
	nsCreated bool
	lease     *kube.Lease
	mo        *mesh.Options
	agentOpts mesh.AgentOptions
	env       mesh.Env
	sets      []*mesh.AgentSet
}

// choose lists the usable nodes and schedules the pairs (or finds the all-to-one server).
func (m *meshRun) choose(ctx context.Context) error {
	o, s, log := m.o, m.s, m.log
	var err error
	m.nodes, m.skipped, err = mesh.ListNodes(ctx, m.cs, mesh.NodeFilter{LabelSelector: o.NodeSelector, Names: o.Nodes, Tolerations: s.tols})
	if err != nil {
		return err
	}
	for _, sk := range m.skipped {
		fmt.Fprintf(log, "mesh: skipping node %s: %s\n", sk.Node, sk.Reason)
	}
	if o.AllToOne != "" {
		for i := range m.nodes {
			if m.nodes[i].Name == o.AllToOne {
				m.server = &m.nodes[i]
			}
		}
		if m.server == nil {
			return exit.Usage("--all-to-one %s: not a usable node (usable: %s)", o.AllToOne, strings.Join(mesh.Names(m.nodes), ", "))
		}
		if len(m.nodes) == 0 {
			return exit.Usage("no usable nodes")
		}
		return nil
	}
	m.sched, err = mesh.NewSchedule(len(m.nodes), mesh.ScheduleOptions{SamplePairs: o.Pairs, Seed: o.Seed, Self: o.Self})
	if err != nil {
		return exit.Usage("%v (nodes: %d)", err, len(m.nodes))
	}
	fmt.Fprintf(log, "mesh: %d nodes, %d of %d ordered pairs in %d rounds (%s)\n", len(m.nodes), m.sched.Pairs, m.sched.PairsTotal,
		len(m.sched.Rounds), strings.Join(s.networkNames(), " and ")+" network")
	return nil
}

// describe records the nodes and the ones skipped in the run.
func (m *meshRun) describe() {
	m.run.Cluster = &api.ClusterDetails{NodeCount: len(m.nodes)}
	for _, n := range m.nodes {
		m.run.Cluster.Nodes = append(m.run.Cluster.Nodes, api.NodeInfo{Name: n.Name, Zone: n.Zone, InternalIP: n.InternalIP})
	}
	for _, sk := range m.skipped {
		m.run.Notes = append(m.run.Notes, fmt.Sprintf("node %s skipped: %s", sk.Node, sk.Reason))
	}
}

// cleanupCommand is the command that removes what this run left.
func (m *meshRun) cleanupCommand() string {
	return kube.CleanupCommand(m.runID, m.o.Kubeconfig, m.o.Context)
}

func (m *meshRun) leftovers() string {
	out := fmt.Sprintf("may be left in the cluster: run %s's agents in namespace %s; remove them with: %s", m.runID, m.o.Namespace, m.cleanupCommand())
	if n := m.s.network; n != nil && n.Leftovers(m.o.Namespace) != "" {
		out += "; " + n.Leftovers(m.o.Namespace)
	}
	return out
}

// prepare creates the namespace, the Lease, the token Secret and the agents, after asking for
// every permission the mesh needs.
func (m *meshRun) prepare(ctx context.Context) error {
	o, s, cs, log := m.o, m.s, m.cs, m.log
	privileged := o.Privileged || contains(s.networks, api.NetworkHost)
	_, nsErr := cs.CoreV1().Namespaces().Get(ctx, o.Namespace, metav1.GetOptions{})
	if err := kube.Preflight(ctx, cs, kube.MeshManifest, kube.MeshAccess(o.Namespace, !apierrors.IsNotFound(nsErr))); err != nil {
		return err
	}
	if n := s.network; n != nil {
		// the secondary network: may be read (or created), and read before anything is created
		if err := kube.Preflight(ctx, cs, kube.NetworksManifest, n.Access(o.Namespace)); err != nil {
			return err
		}
		if err := n.Check(ctx, cs, log); err != nil {
			return err
		}
	}
	var err error
	if m.nsCreated, err = mesh.EnsureNamespace(ctx, cs, o.Namespace, m.runID, privileged); err != nil {
		return err
	}

	// the proof that this run is alive, for cnperf cleanup
	if m.lease, err = kube.StartLease(ctx, cs, o.Namespace, m.runID, "mesh", log); err != nil {
		m.lease = nil
		return err
	}
	if n := s.network; n != nil { // --macvlan's definition, before the agents that attach to it
		if err := n.Prepare(ctx, cs, o.Namespace, m.runID, log); err != nil {
			return err
		}
	}

	m.mo = o.meshOptions(s, mesh.DefaultFamily(m.nodes))
	token, err := agenttoken.ForRun()
	if err != nil {
		return err
	}
	if err := kube.CreateTokenSecret(ctx, cs, o.Namespace, m.runID, token, m.lease); err != nil {
		return err
	}
	m.agentOpts = mesh.AgentOptions{
		Namespace: o.Namespace, RunID: m.runID, Image: o.Image, PullPolicy: s.pull, Tolerations: s.tols,
		Privileged: o.Privileged, Batch: o.AgentBatch, StartTimeout: o.StartTimeout, Metadata: s.podMeta, Network: s.network,
	}
	if m.server == nil {
		m.agentOpts.Servers = driver.Servers(s.drv, []plan.Case{m.mo.Case(api.PathPodPodCrossNode, api.NetworkPod, nil)})
	}
	stream := kube.RemoteStreamer(cs, m.cfg)
	m.env = mesh.Env{
		Log: log,
		Exec: func(a mesh.Agent) platform.Executor {
			return &kube.PodExecutor{Stream: stream, Namespace: o.Namespace, Pod: a.Pod, Container: mesh.ClientContainer,
				DefaultTimeout: 5 * time.Minute, MaxOutput: kube.DefaultMaxOutputBytes}
		},
	}
	if err := m.deployAgents(ctx); err != nil {
		return err
	}
	return nil
}

// meshOptions are the mesh library's options for the settings: the profile, the driver with
// its ports moved to --port where it can, and the parameters of every cell (samples,
// confidence target, ..., and family, the nodes' IP family as cnperf run decides it:
// mesh.DefaultFamily), so that the agents' servers listen on the family their clients dial.
func (o *Options) meshOptions(s *settings, family string) *mesh.Options {
	var meshOpts map[string]string
	if pm, ok := s.drv.(driver.PortMover); ok {
		meshOpts = pm.PortOptions([]int{o.Port, o.Port + 1})
	}
	mo := &mesh.Options{
		Profile: s.profile, Driver: s.drv, Params: s.params, Metric: s.metric, OutlierMADs: o.OutlierMADs,
		NodeResources: o.NodeResources, MaxParallelPairs: o.MaxParallelPairs,
	}
	if s.network != nil {
		mo.Attachment = s.network.Name
	}
	mo.Params.Options = plan.MergeOptions(s.params.Options, meshOpts)
	mo.Params.IPFamily = family
	return mo
}

// deployAgents starts the agents of every network and the CPU profiler.
func (m *meshRun) deployAgents(ctx context.Context) error {
	o, log := m.o, m.log
	names := mesh.Names(m.nodes)
	for _, net := range m.s.networks {
		t0 := time.Now()
		set, err := mesh.DeployAgents(ctx, m.cs, m.agentOpts, net, names, log)
		if err != nil {
			return err
		}
		name := m.s.networkName(net)
		for _, f := range set.Failed {
			fmt.Fprintf(log, "mesh: %s agent on %s did not start: %s\n", name, f.Node, f.Reason)
			m.run.Notes = append(m.run.Notes, fmt.Sprintf("%s agent on node %s did not start: %s", name, f.Node, f.Reason))
		}
		fmt.Fprintf(log, "mesh: %d of %d %s agents up in %.1fs\n", len(set.ByNode), len(names), name, time.Since(t0).Seconds())
		if len(set.ByNode) == 0 {
			return exit.Failure("no %s agent started", name)
		}
		m.sets = append(m.sets, set)
	}
	if o.CPUProfile == "" {
		return nil
	}
	var probe *mesh.Agent
	for _, n := range names {
		if a, ok := m.sets[0].ByNode[n]; ok {
			probe = &a
			break
		}
	}
	// the least samples of a cell (with --confidence a cell may take more)
	window := time.Duration(float64(m.s.params.Samples) * float64(o.Duration+o.Warmup))
	prof, err := newProfiler(ctx, o.CPUProfile, o.Privileged, m.env, probe, window, log)
	if err != nil {
		return exit.Usage("%v", err)
	}
	m.mo.Profiler = prof
	return nil
}

// close removes the agents, the Lease and the namespace cnperf created, or keeps them
// (--keep, once the Lease exists).
func (m *meshRun) close(ctx context.Context) error {
	o, log := m.o, m.log
	if m.lease == nil {
		if m.nsCreated {
			return mesh.Cleanup(ctx, m.cs, o.Namespace, m.runID, m.nsCreated)
		}
		return nil
	}
	if o.Keep {
		fmt.Fprintf(log, "mesh: --keep: agents left in namespace %s (run %s); remove them with: %s\n", o.Namespace, m.runID, m.cleanupCommand())
		if n := m.s.network; n != nil && n.Leftovers(o.Namespace) != "" {
			fmt.Fprintf(log, "mesh: --keep: and %s\n", n.Leftovers(o.Namespace))
		}
		if err := m.lease.Keep(ctx); err != nil {
			fmt.Fprintf(log, "mesh: %v\n", err)
		}
		return nil
	}
	m.lease.Stop()
	err := mesh.Cleanup(ctx, m.cs, o.Namespace, m.runID, m.nsCreated)
	if n := m.s.network; n != nil {
		err = errors.Join(err, n.Close(ctx, m.cs, o.Namespace, m.runID, m.nsCreated))
	}
	if err != nil {
		fmt.Fprintf(log, "mesh: cleanup: %v\n", err)
	}
	return err
}

// measure runs the mesh (or all-to-one) and says which pairs failed; the run is written after
// the clean-up (Options.measureAndWrite).
func (m *meshRun) measure(ctx context.Context) error {
	o, s, run := m.o, m.s, m.run
	if m.server == nil {
		run.Mesh, run.Results = m.mo.RunMesh(ctx, m.env, m.nodes, m.sched, m.sets)
	} else {
		var a2o []mesh.AllToOne
		for i, net := range s.networks {
			n := 1
			if o.Concurrent {
				n = len(m.nodes)
			}
			opts, err := mesh.ServerPortOptions(s.drv, o.Port+100, n)
			if err != nil {
				return exit.Usage("%v", err)
			}
			srv, err := mesh.DeployOneServer(ctx, m.cs, m.agentOpts, net, m.server.Name, m.mo.Case(api.PathPodPodCrossNode, net, nil), s.drv, opts, o.StartTimeout)
			if err != nil {
				return err
			}
			for _, via := range s.vias {
				a2o = append(a2o, mesh.AllToOne{Server: srv, Clients: m.sets[i], Via: via, Concurrent: o.Concurrent})
			}
		}
		run.Mesh, run.Results = m.mo.RunAllToOne(ctx, m.env, m.nodes, *m.server, a2o)
	}
	run.EndTime = time.Now().UTC()
	run.Interrupted = ctx.Err() != nil

	for _, r := range run.Results {
		if err := m.sess.Save(r); err != nil {
			return fmt.Errorf("--results %s: %w", o.ResultsFile, err)
		}
	}
	failed := 0
	for _, mx := range run.Mesh.Matrices {
		for _, c := range mx.Cells {
			if c.Error != "" {
				failed++
			}
		}
	}
	if run.Interrupted {
		return exit.Failure("interrupted")
	}
	if failed > 0 {
		return exit.Failure("%d pair(s) failed", failed)
	}
	return nil
}
