package tigerbench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/measure"
	tbreport "github.com/cnperf/cnperf/internal/report/tigerbench"
	"github.com/cnperf/cnperf/internal/ttfr"
)

// Labels of TTFR pods.
const (
	LabelTTFR    = "cnperf.dev/ttfr"     // "server" or "client"
	LabelTTFRRun = "cnperf.dev/ttfr-run" // one TTFR test
	// TTFRContainer is the container of every TTFR pod.
	TTFRContainer = "ttfr"
)

// PodTestSpec is what the pods of a TTFR or DNS test share: where they go, how they are named
// and labelled, and what they run.
type PodTestSpec struct {
	Namespace string
	// ID names this test's pods (a DNS label fragment, e.g. the run's short id + test index).
	ID string
	// RunID labels the test's objects with the run (cnperf cleanup --run finds leftovers by it).
	RunID       string
	Nodes       []string
	HostNetwork bool
	Image       string
	PullPolicy  corev1.PullPolicy // default IfNotPresent
	// StartTimeout is how long a pod may take to start (default 2m).
	StartTimeout time.Duration
}

// withDefaults fills the unset fields the pods of every test share.
func (p PodTestSpec) withDefaults() PodTestSpec {
	if p.StartTimeout <= 0 {
		p.StartTimeout = 2 * time.Minute
	}
	if p.PullPolicy == "" {
		p.PullPolicy = corev1.PullIfNotPresent
	}
	return p
}

// labels are the labels of the test's pods and Services of role (testPodLabels).
func (p PodTestSpec) labels(kind, roleLabel, testLabel, role string) map[string]string {
	return testPodLabels(kind, roleLabel, testLabel, p.ID, p.RunID, role)
}

// pod is one of the test's pods: container runs argv once on node (oneShotPod).
func (p PodTestSpec) pod(name, node, container string, labels map[string]string, argv []string) *corev1.Pod {
	return oneShotPod(p.Namespace, name, node, container, p.Image, p.PullPolicy, p.HostNetwork, labels, argv)
}

// TTFRSpec is one time-to-first-response test.
type TTFRSpec struct {
	PodTestSpec
	// Rate is pods created per second (over all nodes); PodsPerNode bounds the client pods that
	// exist at once on each node (starting, running or terminating).
	Rate        float64
	PodsPerNode int
	Duration    time.Duration
	// Port is the servers' port (default 8080).
	Port int
	// ResponseTimeout is how long a client tries before it reports a failure (default 60s).
	ResponseTimeout time.Duration
	// ReportGrace: a client pod gets StartTimeout + ResponseTimeout + ReportGrace (default 30s)
	// to report before it counts as a failure.
	ReportGrace time.Duration
	// MaxCreatesInFlight bounds concurrent pod create calls (default 10): when the API server
	// is slower than the rate, creations are skipped and the warning says so.
	MaxCreatesInFlight int
}

// podTests is what the TTFR and DNS runners are: a client that makes test pods, a log and
// a reader of the pods' logs.
type podTests struct {
	Client kubernetes.Interface
	Log    io.Writer
	// Logs reads a pod's container log (default: the pods/log API). Tests replace it.
	Logs func(ctx context.Context, ns, pod, container string) ([]byte, error)
}

// logf writes one line of test (e.g. "ttfr") to Log.
func (r *podTests) logf(test, format string, a ...any) {
	if r.Log != nil {
		fmt.Fprintf(r.Log, test+": "+format+"\n", a...)
	}
}

func (r *podTests) logs(ctx context.Context, ns, pod, container string) ([]byte, error) {
	if r.Logs != nil {
		return r.Logs(ctx, ns, pod, container)
	}
	return r.Client.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{Container: container}).DoRaw(ctx)
}

// removeAfter is how a test removes what it made when it ends, whatever ended it (deferred):
// remove runs on a clean-up context (measure.Cleanup, so also after Ctrl-C) and its error is
// joined to *err.
func removeAfter(ctx context.Context, err *error, remove func(ctx context.Context) error) {
	cctx, cancel := measure.Cleanup(ctx, measure.CleanupTimeout)
	defer cancel()
	if rerr := remove(cctx); rerr != nil {
		*err = errors.Join(*err, rerr)
	}
}

// TTFRRunner runs TTFR tests.
type TTFRRunner podTests

func (r *TTFRRunner) logf(format string, a ...any) { (*podTests)(r).logf("ttfr", format, a...) }

func (r *TTFRRunner) logs(ctx context.Context, ns, pod, container string) ([]byte, error) {
	return (*podTests)(r).logs(ctx, ns, pod, container)
}

// clientPod is the orchestrator's view of one client pod.
type clientPod struct {
	seq       int
	name      string
	node      string
	createAt  time.Time // the create call was made
	createdOK bool
	readyAt   time.Time // the watch first showed it Ready
	fetching  bool
	done      bool
	ttfr      *float64
	failure   string
	deleted   bool // a delete was sent
	gone      bool // the watch saw it go (its slot is free)
}

type ttfrState struct {
	mu       sync.Mutex
	spec     TTFRSpec
	pods     map[string]*clientPod
	order    []*clientPod
	slots    map[string]int // per node: client pods that exist (or are being created)
	creating int
	nextNode int // where the round-robin over the nodes goes on
	// Rate misses.
	missedSlots, missedAPI int
	createLatency          []float64
	wake                   chan struct{}
}

func (s *ttfrState) notify() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Run runs one TTFR test: a server pod on each node, then client pods at Rate per second
// (round-robin over the nodes, each targeting the server on its own node) for Duration, then
// it waits for the pods still out and removes every pod it made, also when ctx ends.
func (r *TTFRRunner) Run(ctx context.Context, spec TTFRSpec) (res *api.TTFRResult, err error) {
	spec = spec.withDefaults()
	res = &api.TTFRResult{Nodes: slices.Clone(spec.Nodes), RequestedPodsPerSecond: spec.Rate, PodsPerNode: spec.PodsPerNode,
		HostNetwork: spec.HostNetwork}
	if err := spec.check(); err != nil {
		return res, err
	}
	ns := spec.Namespace
	runSel := LabelTTFRRun + "=" + spec.ID
	// Whatever happens, every pod of this test goes.
	defer removeAfter(ctx, &err, func(ctx context.Context) error { return r.cleanup(ctx, ns, runSel) })

	servers, err := r.startServers(ctx, spec)
	if err != nil {
		return res, err
	}

	st := &ttfrState{spec: spec, pods: map[string]*clientPod{}, slots: map[string]int{}, wake: make(chan struct{}, 1)}
	stop := make(chan struct{})
	defer close(stop)
	if err := r.watchClients(ctx, ns, spec.ID, st, stop); err != nil {
		return res, err
	}
	t := &ttfrLoop{r: r, ctx: ctx, spec: spec, st: st, servers: servers, lastProgress: time.Now()}
	defer t.deleteWG.Wait()
	r.logf("creating client pods at %.3g/s for %s on %s (at most %d per node), each reaching the server on its node",
		spec.Rate, spec.Duration, strings.Join(spec.Nodes, ", "), spec.PodsPerNode)
	t.ticker = time.NewTicker(200 * time.Millisecond)
	defer t.ticker.Stop()
	start, creationEnd, interrupted := t.create()
	if !interrupted {
		interrupted = t.drain()
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	elapsed := creationEnd.Sub(start).Seconds()
	r.summarize(res, spec, st, elapsed, interrupted)
	if interrupted {
		return res, fmt.Errorf("ttfr interrupted after %.1fs: %w", elapsed, context.Cause(ctx))
	}
	return res, nil
}

// withDefaults fills the unset fields of the spec.
func (spec TTFRSpec) withDefaults() TTFRSpec {
	spec.PodTestSpec = spec.PodTestSpec.withDefaults()
	if spec.Port == 0 {
		spec.Port = ttfr.DefaultPort
	}
	if spec.ResponseTimeout <= 0 {
		spec.ResponseTimeout = 60 * time.Second
	}
	if spec.ReportGrace <= 0 {
		spec.ReportGrace = 30 * time.Second
	}
	if spec.MaxCreatesInFlight <= 0 {
		spec.MaxCreatesInFlight = 10
	}
	return spec
}

// check refuses a spec that cannot run: no nodes, no rate, no pod slot or no duration.
func (spec TTFRSpec) check() error {
	switch {
	case len(spec.Nodes) == 0:
		return errors.New("ttfr: no test nodes")
	case spec.Rate <= 0 || math.IsInf(spec.Rate, 0) || math.IsNaN(spec.Rate):
		return fmt.Errorf("ttfr: Rate must be a positive number of pods per second, got %v", spec.Rate)
	case spec.PodsPerNode < 1:
		return fmt.Errorf("ttfr: TestPodsPerNode must be at least 1, got %d", spec.PodsPerNode)
	case spec.Duration <= 0:
		return fmt.Errorf("ttfr: duration must be positive, got %s", spec.Duration)
	}
	return nil
}

// ttfrLoop is one TTFR test while it runs: the creation loop, the wait for the pods still
// out, and the housekeeping between (reading results, timing out and deleting pods).
type ttfrLoop struct {
	r            *TTFRRunner
	ctx          context.Context
	spec         TTFRSpec
	st           *ttfrState
	servers      map[string]string // per node: the address its clients dial
	ticker       *time.Ticker
	deleteWG     sync.WaitGroup
	lastProgress time.Time
}

// handle acts on the state: it times out stuck pods and deletes done ones; and says how far
// the test is every 10 s.
func (t *ttfrLoop) handle(now time.Time) {
	st, spec := t.st, t.spec
	st.mu.Lock()
	defer st.mu.Unlock()
	if now.Sub(t.lastProgress) >= 10*time.Second {
		t.lastProgress = now
		t.progress()
	}
	deadline := spec.StartTimeout + spec.ResponseTimeout + spec.ReportGrace
	for _, p := range st.order {
		if !p.createdOK || p.deleted {
			continue
		}
		if !p.done && !p.fetching && now.Sub(p.createAt) > deadline {
			p.done = true
			p.failure = fmt.Sprintf("no result within %s of creation", deadline.Round(time.Second))
		}
		if p.done {
			p.deleted = true
			t.deleteWG.Add(1)
			go func(name string) {
				defer t.deleteWG.Done()
				t.r.deletePod(measure.Detached(t.ctx), spec.Namespace, name)
			}(p.name)
		}
	}
}

// progress logs the counts so far (st.mu held).
func (t *ttfrLoop) progress() {
	var created, answered, failed int
	for _, p := range t.st.order {
		switch {
		case p.ttfr != nil:
			answered++
		case p.done && p.failure != "":
			failed++
		}
		if p.createdOK {
			created++
		}
	}
	t.r.logf("%d pods created, %d answered, %d failed, %d creations skipped (no slot) and %d (API busy) so far",
		created, answered, failed, t.st.missedSlots, t.st.missedAPI)
}

// create is the creation loop: one pod every 1/Rate seconds for Duration, on the next node
// with a free slot. It returns when it started and ended, and whether ctx ended it.
func (t *ttfrLoop) create() (start, end time.Time, interrupted bool) {
	spec := t.spec
	interval := time.Duration(float64(time.Second) / spec.Rate)
	start = time.Now()
	stopAt := start.Add(spec.Duration)
	var createWG sync.WaitGroup
	defer createWG.Wait()
	due := start
	seq := 0
	for due.Before(stopAt) {
		// Sleep until the next creation is due, doing housekeeping meanwhile.
		if !t.sleepUntil(due) {
			return start, time.Now(), true
		}
		due = due.Add(interval)
		p := t.reserve(seq)
		if p == nil {
			continue
		}
		seq++
		createWG.Add(1)
		go func(p *clientPod) {
			defer createWG.Done()
			t.createPod(p)
		}(p)
	}
	return start, time.Now(), false
}

// sleepUntil handles the state until due; false when ctx ended first.
func (t *ttfrLoop) sleepUntil(due time.Time) bool {
	for wait := time.Until(due); wait > 0; wait = time.Until(due) {
		timer := time.NewTimer(wait)
		select {
		case <-t.ctx.Done():
			timer.Stop()
			return false
		case <-t.st.wake:
			t.handle(time.Now())
		case now := <-t.ticker.C:
			t.handle(now)
		case <-timer.C:
		}
		timer.Stop()
	}
	return true
}

// reserve takes a slot on the next node round-robin for client pod seq, or counts the miss
// (no free slot, or too many creations in flight) and returns nil.
func (t *ttfrLoop) reserve(seq int) *clientPod {
	spec, st := t.spec, t.st
	st.mu.Lock()
	defer st.mu.Unlock()
	node := ""
	for i := range spec.Nodes {
		n := spec.Nodes[(st.nextNode+i)%len(spec.Nodes)]
		if st.slots[n] < spec.PodsPerNode {
			node = n
			st.nextNode = (st.nextNode + i + 1) % len(spec.Nodes)
			break
		}
	}
	switch {
	case node == "":
		st.missedSlots++
		return nil
	case st.creating >= spec.MaxCreatesInFlight:
		st.missedAPI++
		return nil
	}
	st.slots[node]++
	st.creating++
	p := &clientPod{seq: seq, name: fmt.Sprintf("cnperf-ttfr-%s-%05d", spec.ID, seq), node: node, createAt: time.Now()}
	st.pods[p.name] = p
	st.order = append(st.order, p)
	return p
}

// createPod creates client pod p; a failed create frees its slot and is the pod's failure.
func (t *ttfrLoop) createPod(p *clientPod) {
	st := t.st
	pod := clientPodSpec(t.spec, p.name, p.node, t.servers[p.node])
	start := time.Now()
	_, err := t.r.Client.CoreV1().Pods(t.spec.Namespace).Create(t.ctx, pod, metav1.CreateOptions{})
	took := time.Since(start).Seconds()
	st.mu.Lock()
	defer st.mu.Unlock()
	st.creating--
	st.createLatency = append(st.createLatency, took)
	if err != nil {
		p.done, p.deleted, p.gone = true, true, true
		p.failure = "create pod: " + errText(err)
		if t.ctx.Err() != nil {
			p.failure = "interrupted"
		}
		st.slots[p.node]--
		return
	}
	p.createdOK = true
}

// drain waits for the pods still out to report, then times out whatever is still out; true
// when ctx ended first.
func (t *ttfrLoop) drain() (interrupted bool) {
	spec, st := t.spec, t.st
	deadline := time.Now().Add(spec.StartTimeout + spec.ResponseTimeout + spec.ReportGrace + 15*time.Second)
	for time.Now().Before(deadline) {
		t.handle(time.Now())
		st.mu.Lock()
		out := 0
		for _, p := range st.order {
			if !p.gone && !p.done {
				out++
			}
		}
		st.mu.Unlock()
		if out == 0 {
			break
		}
		select {
		case <-t.ctx.Done():
			interrupted = true
		case <-st.wake:
		case <-t.ticker.C:
		}
		if interrupted {
			break
		}
	}
	t.handle(time.Now().Add(24 * time.Hour)) // whatever is still out has timed out
	return interrupted
}

// summarize fills res from the pods' outcomes over the elapsed seconds of creation (st.mu held).
func (r *TTFRRunner) summarize(res *api.TTFRResult, spec TTFRSpec, st *ttfrState, elapsed float64, interrupted bool) {
	res.DurationSeconds = elapsed
	failures := map[string]int{}
	var ready []float64
	for _, p := range st.order {
		if p.failure == "interrupted" {
			continue
		}
		if p.createdOK {
			res.PodsCreated++
		}
		if !p.readyAt.IsZero() {
			ready = append(ready, p.readyAt.Sub(p.createAt).Seconds())
		}
		switch {
		case p.ttfr != nil:
			res.Values = append(res.Values, *p.ttfr)
		case p.done:
			failures[p.failure]++
		case interrupted:
			// Never finished because the run was interrupted: not a failure of the pod.
		default:
			failures["no result"]++
		}
	}
	if elapsed > 0 {
		res.AchievedPodsPerSecond = float64(res.PodsCreated) / elapsed
	}
	res.Datapoints = len(res.Values)
	for _, n := range failures {
		res.Failures += n
	}
	res.FailureReasons = sortedCounts(failures)
	res.TTFRSeconds = tbreport.Distribute(res.Values)
	res.PodCreateToReadySeconds = tbreport.Distribute(ready)
	res.Warnings = rateWarnings(spec, st, res)
	for _, w := range res.Warnings {
		r.logf("warning: %s", w)
	}
	r.logf("%d pods created (%.3g/s), %d datapoints, %d failures", res.PodsCreated, res.AchievedPodsPerSecond, res.Datapoints, res.Failures)
}

// rateWarnings says when the rate was not met, and why.
func rateWarnings(spec TTFRSpec, st *ttfrState, res *api.TTFRResult) []string {
	var w []string
	interval := 1 / spec.Rate
	if st.missedSlots > 0 {
		w = append(w, fmt.Sprintf("unable to keep up with %.3g pods/s: %d creations (%.1fs worth) skipped because all %d pod slots (%d per node x %d nodes) were busy starting, running or terminating; raise TTFRConfig.TestPodsPerNode or label more test nodes",
			spec.Rate, st.missedSlots, float64(st.missedSlots)*interval, spec.PodsPerNode*len(spec.Nodes), spec.PodsPerNode, len(spec.Nodes)))
	}
	if st.missedAPI > 0 {
		lat := tbreport.Distribute(st.createLatency)
		msg := fmt.Sprintf("unable to keep up with %.3g pods/s: %d creations skipped because %d pod creations were already in flight (API server or client throttling)",
			spec.Rate, st.missedAPI, spec.MaxCreatesInFlight)
		if lat != nil {
			msg += fmt.Sprintf("; pod create calls took p50 %.3fs, max %.3fs, against a %.3fs interval", lat.P50, lat.Max, interval)
		}
		w = append(w, msg)
	}
	if res.AchievedPodsPerSecond > 0 && res.AchievedPodsPerSecond < 0.9*spec.Rate && len(w) == 0 {
		w = append(w, fmt.Sprintf("achieved %.3g pods/s of the %.3g asked", res.AchievedPodsPerSecond, spec.Rate))
	}
	return w
}

// errText shortens an API error for grouping.
func errText(err error) string {
	if s, ok := err.(apierrors.APIStatus); ok {
		return fmt.Sprintf("%s (%d)", s.Status().Message, s.Status().Code)
	}
	return err.Error()
}

// startServers creates one server pod per node and returns the address clients on each node dial.
func (r *TTFRRunner) startServers(ctx context.Context, spec TTFRSpec) (map[string]string, error) {
	ns := spec.Namespace
	var names []string
	for i, node := range spec.Nodes {
		name := fmt.Sprintf("cnperf-ttfr-srv-%s-%02d", spec.ID, i)
		names = append(names, name)
		if _, err := r.Client.CoreV1().Pods(ns).Create(ctx, serverPodSpec(spec, name, node), metav1.CreateOptions{}); err != nil {
			return nil, fmt.Errorf("create ttfr server pod %s/%s on %s: %w", ns, name, node, err)
		}
	}
	addrs := map[string]string{}
	wctx, cancel := context.WithTimeout(ctx, spec.StartTimeout)
	defer cancel()
	err := wait.PollUntilContextCancel(wctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		for i, name := range names {
			if _, ok := addrs[spec.Nodes[i]]; ok {
				continue
			}
			p, err := r.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			if podProblem(p) != "" || p.Status.PodIP == "" {
				return false, nil
			}
			ip := p.Status.PodIP
			if spec.HostNetwork && p.Status.HostIP != "" {
				ip = p.Status.HostIP
			}
			addrs[spec.Nodes[i]] = net.JoinHostPort(ip, strconv.Itoa(spec.Port))
		}
		return len(addrs) == len(names), nil
	})
	if err != nil {
		var why []string
		for _, name := range names {
			p, gerr := r.Client.CoreV1().Pods(ns).Get(measure.Detached(ctx), name, metav1.GetOptions{})
			if gerr == nil {
				if pr := podProblem(p); pr != "" {
					why = append(why, name+": "+pr)
				}
			}
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("interrupted while starting ttfr servers: %w", ctx.Err())
		}
		return nil, fmt.Errorf("ttfr server pods not ready after %s: %s", spec.StartTimeout, strings.Join(why, "; "))
	}
	r.logf("servers ready: %s", describeAddrs(spec.Nodes, addrs))
	return addrs, nil
}

func describeAddrs(nodes []string, addrs map[string]string) string {
	var parts []string
	for _, n := range nodes {
		parts = append(parts, n+"="+addrs[n])
	}
	return strings.Join(parts, ", ")
}

func ttfrLabels(spec TTFRSpec, role string) map[string]string {
	return spec.labels("ttfr", LabelTTFR, LabelTTFRRun, role)
}

// testPodLabels are the labels of a TTFR or DNS test's pods and Services: cnperf's, the
// role under roleLabel, the test's id under testLabel, app "KIND-ROLE" (tiger-bench's policies
// select pods with an app label) and, when known, the run.
func testPodLabels(kind, roleLabel, testLabel, id, runID, role string) map[string]string {
	l := map[string]string{kube.LabelManagedBy: kube.ManagedByValue, roleLabel: role, testLabel: id, LabelApp: kind + "-" + role}
	if runID != "" {
		l[kube.LabelRun] = runID
	}
	return l
}

func basePod(spec TTFRSpec, name, node, role string, argv []string) *corev1.Pod {
	return spec.pod(name, node, TTFRContainer, ttfrLabels(spec, role), argv)
}

// oneShotPod is a pod of one container that runs argv once on node (no restart, a 1 s grace
// period, no service account token or service links); on the host network it keeps cluster DNS.
func oneShotPod(ns, name, node, container, image string, pull corev1.PullPolicy, hostNetwork bool, labels map[string]string, argv []string) *corev1.Pod {
	return kube.PodOptions{
		Name: name, Namespace: ns, Labels: labels, Nodes: []string{node}, HostNetwork: hostNetwork,
		GraceSeconds: 1, RunOnce: true,
		Containers: []corev1.Container{kube.ContainerOptions{Image: image, PullPolicy: pull}.Container(container, argv)},
	}.Pod()
}

func serverPodSpec(spec TTFRSpec, name, node string) *corev1.Pod {
	p := basePod(spec, name, node, "server", []string{"cnperf", "agent", "ttfr", "--listen", ":" + strconv.Itoa(spec.Port)})
	kube.ServeTCP(&p.Spec.Containers[0], "http", spec.Port)
	return p
}

// clientLinger keeps a client alive after it printed, so that the watch sees it Ready.
const clientLinger = 2 * time.Second

func clientPodSpec(spec TTFRSpec, name, node, target string) *corev1.Pod {
	return basePod(spec, name, node, "client", []string{"cnperf", "agent", "ttfr", "--target", target,
		"--timeout", spec.ResponseTimeout.String(), "--linger", clientLinger.String()})
}

// watchClients follows this test's client pods: when one is Ready it notes the time; when its
// container has ended it reads the result from its log; when it is gone its slot is free.
func (r *TTFRRunner) watchClients(ctx context.Context, ns, id string, st *ttfrState, stop <-chan struct{}) error {
	f := informers.NewSharedInformerFactoryWithOptions(r.Client, 0, informers.WithNamespace(ns),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.LabelSelector = LabelTTFR + "=client," + LabelTTFRRun + "=" + id
		}))
	inf := f.Core().V1().Pods().Informer()
	w := &clientWatch{r: r, ctx: ctx, ns: ns, st: st, fetchSem: make(chan struct{}, 10)}
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.onPod(obj.(*corev1.Pod)) },
		UpdateFunc: func(_, obj any) { w.onPod(obj.(*corev1.Pod)) },
		DeleteFunc: w.onDelete,
	})
	if err != nil {
		return fmt.Errorf("watch ttfr pods: %w", err)
	}
	f.Start(stop)
	for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
		if !ok {
			if ctx.Err() != nil {
				return fmt.Errorf("ttfr interrupted while starting: %w", context.Cause(ctx))
			}
			return fmt.Errorf("watch ttfr pods: %v cache did not sync", typ)
		}
	}
	return nil
}

// clientWatch follows the client pods of one TTFR test.
type clientWatch struct {
	r        *TTFRRunner
	ctx      context.Context
	ns       string
	st       *ttfrState
	fetchSem chan struct{} // bounds the log reads in flight
}

// onPod notes when a client pod is Ready, fails it when it cannot run, and reads its result
// from its log once its container has ended.
func (w *clientWatch) onPod(pod *corev1.Pod) {
	st := w.st
	now := time.Now()
	st.mu.Lock()
	p := st.pods[pod.Name]
	if p == nil {
		st.mu.Unlock()
		return
	}
	if p.readyAt.IsZero() && podProblem(pod) == "" {
		p.readyAt = now
	}
	ended, why := containerEnded(pod)
	if fatal := podFatal(pod); fatal != "" && !p.done && !p.fetching {
		p.done, p.failure = true, fatal
		st.mu.Unlock()
		st.notify()
		return
	}
	if !ended || p.done || p.fetching {
		st.mu.Unlock()
		return
	}
	p.fetching = true
	st.mu.Unlock()
	go func() {
		w.fetchSem <- struct{}{}
		defer func() { <-w.fetchSem }()
		lctx, cancel := measure.Cleanup(w.ctx, 20*time.Second)
		out, err := w.r.logs(lctx, w.ns, pod.Name, TTFRContainer)
		cancel()
		v, failure := parseClientLog(out, err, why)
		st.mu.Lock()
		p.fetching, p.done = false, true
		p.ttfr, p.failure = v, failure
		st.mu.Unlock()
		st.notify()
	}()
}

// onDelete frees a client pod's slot when it is gone (a failure when it had not reported).
func (w *clientWatch) onDelete(obj any) {
	st := w.st
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			pod, _ = d.Obj.(*corev1.Pod)
		}
	}
	if pod == nil {
		return
	}
	st.mu.Lock()
	if p := st.pods[pod.Name]; p != nil && !p.gone {
		p.gone = true
		st.slots[p.node]--
		if !p.done {
			p.done, p.failure = true, "pod deleted before it reported"
		}
	}
	st.mu.Unlock()
	st.notify()
}

// containerExited reports whether the pod's container has terminated, and its exit.
func containerExited(p *corev1.Pod, container string) (bool, string) {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name == container && cs.State.Terminated != nil {
			t := cs.State.Terminated
			return true, fmt.Sprintf("exit code %d (%s)", t.ExitCode, t.Reason)
		}
	}
	return false, ""
}

// containerEnded reports whether the TTFR container (or its pod) has ended, and how.
func containerEnded(p *corev1.Pod) (bool, string) {
	if ended, why := containerExited(p, TTFRContainer); ended {
		return true, why
	}
	if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return true, string(p.Status.Phase)
	}
	return false, ""
}

// podFatal is a reason the pod will never run (image pull, bad config, rejected).
func podFatal(p *corev1.Pod) string {
	if p.Status.Phase == corev1.PodFailed && p.Status.Reason != "" {
		return "pod failed: " + p.Status.Reason + ": " + p.Status.Message
	}
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; kube.HopelessWaiting(w) {
			return w.Reason + ": " + w.Message
		}
	}
	return ""
}

// parseClientLog reads the client's JSON line: the TTFR, or the failure and its cause.
func parseClientLog(out []byte, err error, exitWhy string) (*float64, string) {
	if err != nil {
		return nil, "read pod log: " + errText(err)
	}
	var last string
	for _, line := range bytes.Split(out, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		last = string(line)
		if line[0] != '{' {
			continue
		}
		var res ttfr.Result
		if json.Unmarshal(line, &res) != nil {
			continue
		}
		if res.OK && res.TTFRSeconds != nil {
			return res.TTFRSeconds, ""
		}
		if res.Error != "" {
			return nil, genericError(res.Error)
		}
	}
	if last == "" {
		return nil, "no result line in the log (" + exitWhy + ")"
	}
	if len(last) > 200 {
		last = last[:200]
	}
	return nil, fmt.Sprintf("no result line in the log (%s); last line: %s", exitWhy, last)
}

// genericError drops the per-pod address from a client's error so failures group by cause:
// "no response within 1m0s: dial tcp 10.244.1.9:8080: connect: connection refused" →
// "no response within 1m0s: dial tcp: connect: connection refused".
func genericError(s string) string {
	fields := strings.Fields(s)
	out := fields[:0]
	for _, f := range fields {
		host := strings.TrimSuffix(f, ":")
		if i := strings.LastIndex(host, ":"); i > 0 {
			if _, err := strconv.Atoi(host[i+1:]); err == nil && strings.ContainsAny(host[:i], ".:") {
				continue
			}
		}
		out = append(out, f)
	}
	return strings.Join(out, " ")
}

// deletePod deletes a pod with a 1 s grace period: the pod object stays (and holds its slot)
// until the kubelet has stopped it, as tiger-bench counts terminating pods.
func (r *TTFRRunner) deletePod(ctx context.Context, ns, name string) {
	grace := int64(1)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err := r.Client.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &grace})
	if err != nil && !apierrors.IsNotFound(err) {
		r.logf("warning: delete pod %s/%s: %v", ns, name, err)
	}
}

// cleanup deletes every pod of the test and waits until they are gone.
func (r *TTFRRunner) cleanup(ctx context.Context, ns, sel string) error {
	pods, err := r.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return fmt.Errorf("ttfr cleanup: list pods: %w", err)
	}
	_ = forEach(ctx, len(pods.Items), DefaultParallelism, func(ctx context.Context, i int) error {
		r.deletePod(ctx, ns, pods.Items[i].Name)
		return nil
	})
	err = wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		l, err := r.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
		return err == nil && len(l.Items) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("ttfr cleanup: pods %s in %s still there: %w", sel, ns, err)
	}
	return nil
}
