// Package programming measures how fast the network obeys a change, end to end: a ClusterIP
// Service created or deleted, an endpoint added to or removed from a Service, a NetworkPolicy
// that denies, or one that allows under a default deny. A client pod on every node probes the
// target with overlapping TCP connects (`cnperf agent probe`, internal/ttfr.Watch), each timed
// on the node's own clock; once every probe has seen the old state hold, cnperf makes the
// change, and each client reports the first attempt in the new state confirmed by the attempts
// after it. The figure is that attempt's start, on cnperf's clock (the node's clock corrected
// by its offset, measured NTP-style through exec: MeasureClock), minus the moment the change's
// API call returned. Each change is one sample of a result per client node; `cnperf
// programming` (internal/cli/programmingcmd) runs it under the one lifecycle, internal/measure.
package programming

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/text"
	"github.com/cnperf/cnperf/internal/ttfr"
)

// Kind is a group of changes measured together (the --kind values).
type Kind string

// The kinds, and the profiles each measures.
const (
	KindService     Kind = "service"      // SERVICE_CREATE, then SERVICE_DELETE, per change
	KindEndpoint    Kind = "endpoint"     // ENDPOINT_ADD, then ENDPOINT_REMOVE
	KindPolicyDeny  Kind = "policy-deny"  // POLICY_DENY
	KindPolicyAllow Kind = "policy-allow" // POLICY_ALLOW
	KindPod         Kind = "pod"          // POD_CREATE and POD_READY, per change
)

// Kinds lists the kinds in the order they run.
var Kinds = []Kind{KindService, KindEndpoint, KindPolicyDeny, KindPolicyAllow, KindPod}

// IsPolicy says whether the kind changes NetworkPolicies (its figures depend on the standing
// policies, and a CNI that does not enforce them cannot give any).
func (k Kind) IsPolicy() bool { return k == KindPolicyDeny || k == KindPolicyAllow }

// Options are one run's settings.
type Options struct {
	Namespace, RunID string
	Image            string
	PullPolicy       corev1.PullPolicy
	// Nodes get a client each; ServerNode runs the server (default: the first node).
	Nodes      []string
	ServerNode string
	Kinds      []Kind
	// Count is how many changes of each profile are measured.
	Count  int
	Params Params
	// StandingPolicies are the numbers of standing NetworkPolicies the policy kinds are
	// measured under, in order (default: 0 only).
	StandingPolicies []int
	// StandingSettle is the pause after the standing policies change, for the dataplane to
	// take them in before the first measured change (default 5 s).
	StandingSettle time.Duration
	Port           int
	// NodePort makes the service kinds' Services NodePort Services, probed also through each
	// client's node's address of the Service's IP family (NodeIPs: node name → "ipv4"/"ipv6" →
	// its InternalIP, else ExternalIP, of that family; mesh.Node.IPs).
	NodePort bool
	NodeIPs  map[string]map[string]string
	// KubeProxyMetrics reads kube-proxy's own figure (KubeProxyMetric) on every client node
	// around each Service change, through a hostNetwork pod per node; FelixMetrics Felix's
	// (FelixMetric) on the server's node around each policy change, CiliumMetrics Cilium's
	// (CiliumMetric) likewise; of those two, the one the cluster serves.
	KubeProxyMetrics, FelixMetrics, CiliumMetrics bool
	StartTimeout                                  time.Duration
	ClockRounds                                   int
}

// Env is what a run talks to.
type Env struct {
	Client kubernetes.Interface
	// Exec runs commands in a client pod.
	Exec func(pod string) Executor
	// Log gets progress lines.
	Log io.Writer
	// LocalBootID is cnperf's own kernel boot id (ttfr.BootID), to tell a shared clock.
	LocalBootID string
}

// Runner is one run: Prepare, Measure, Close (measure.Unit's three).
type Runner struct {
	o         Options
	env       Env
	obj       objects
	nsCreated bool
	prepared  bool
	clients   []Client
	server    *corev1.Pod
	standing  int
	results   map[string]*api.Result
	order     []string
	// comp sums a component's observations per result (resultKey without the path);
	// lastScrape is each client node's reading before the change being measured.
	comp       map[string]*componentAgg
	lastScrape []scrape
	// chosen is the component read for a kind of several candidates (componentOf); unread
	// holds, for a component chosen though no node served its metric, the others' causes.
	chosen map[Kind]*component
	unread map[*component]string
	// floor is the probe's floor (MeasureFloor), measured at the start of Measure.
	floor *api.ProbeFloor
}

// New checks the options and returns a Runner.
func New(o Options, env Env) (*Runner, error) {
	if o.Count < 1 {
		return nil, fmt.Errorf("count must be at least 1, got %d", o.Count)
	}
	if len(o.Nodes) == 0 {
		return nil, errors.New("no nodes for the clients")
	}
	if o.ServerNode == "" {
		o.ServerNode = o.Nodes[0]
	}
	if o.Port == 0 {
		o.Port = ttfr.DefaultPort
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 3 * time.Minute
	}
	if o.ClockRounds <= 0 {
		o.ClockRounds = 7
	}
	if o.StandingSettle <= 0 {
		o.StandingSettle = 5 * time.Second
	}
	if len(o.StandingPolicies) == 0 {
		o.StandingPolicies = []int{0}
	}
	for _, n := range o.StandingPolicies {
		if n < 0 || n > 99999 {
			return nil, fmt.Errorf("standing policies: want 0 to 99999, got %d", n)
		}
	}
	p := o.Params
	if p.Interval <= 0 || p.AttemptTimeout <= 0 || p.Confirm < 1 || p.Settle <= 0 || p.Timeout <= 0 {
		return nil, fmt.Errorf("probe parameters: interval, attempt timeout, settle and timeout must be positive and confirm at least 1, got %+v", p)
	}
	for _, k := range o.Kinds {
		if !slices.Contains(Kinds, k) {
			return nil, fmt.Errorf("kind %q: want one of %s", k, joinKinds(Kinds))
		}
	}
	if o.NodePort {
		for _, n := range o.Nodes {
			if len(o.NodeIPs[n]) == 0 {
				return nil, fmt.Errorf("node %s has no InternalIP to reach its NodePort at", n)
			}
		}
	}
	return &Runner{o: o, env: env, results: map[string]*api.Result{}, comp: map[string]*componentAgg{},
		chosen: map[Kind]*component{}, unread: map[*component]string{},
		obj: objects{ns: o.Namespace, runID: o.RunID, image: o.Image, pull: o.PullPolicy, port: o.Port}}, nil
}

func joinKinds(ks []Kind) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

func (r *Runner) logf(format string, a ...any) {
	if r.env.Log != nil {
		Logf(r.env.Log, format, a...)
	}
}

// Logf writes one of `cnperf programming`'s progress lines, "programming: " and the message,
// wrapped to fit 120 columns (node lists, probe errors and the API server's answers can be
// long).
func Logf(w io.Writer, format string, a ...any) {
	text.Logf(w, "programming: ", format, a...)
}

// Leftovers says what a failed Close may leave.
func (r *Runner) Leftovers() string {
	if r.nsCreated {
		return fmt.Sprintf("namespace %s (delete it with: kubectl delete namespace %s)", r.o.Namespace, r.o.Namespace)
	}
	return fmt.Sprintf("pods, Services and NetworkPolicies labelled %s in namespace %s (kubectl delete pods,services,networkpolicies -n %s -l %s)",
		kube.RunSelector(r.o.RunID), r.o.Namespace, r.o.Namespace, kube.RunSelector(r.o.RunID))
}

// Prepare creates the namespace (when absent), the server and the clients, waits for them,
// and measures every client node's clock.
func (r *Runner) Prepare(ctx context.Context) error {
	cs, o := r.env.Client, r.o
	hosts := r.wantsHosts()
	state, err := kube.CreateNamespace(ctx, cs, kube.BuildNamespace(o.Namespace, o.RunID, hosts), nil)
	if err != nil {
		return err
	}
	switch state {
	case kube.NamespaceCreated:
		r.nsCreated = true
	case kube.NamespaceTerminating:
		return fmt.Errorf("namespace %s is being deleted; wait for it to go or choose another with --namespace", o.Namespace)
	}
	r.prepared = true
	pods := []*corev1.Pod{r.obj.serverPod(o.ServerNode)}
	for i, n := range o.Nodes {
		pods = append(pods, r.obj.clientPod(i, n))
	}
	if hosts {
		for i, n := range o.Nodes {
			pods = append(pods, r.obj.hostPod(i, n))
		}
	}
	var names []string
	for _, p := range pods {
		if _, err := cs.CoreV1().Pods(o.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			if p.Spec.HostNetwork && apierrors.IsForbidden(err) {
				whose, flags := r.hostsFor()
				return fmt.Errorf("create pod %s/%s (hostNetwork, to read %s metrics; %s without): %w", o.Namespace, p.Name, whose, flags, err)
			}
			return fmt.Errorf("create pod %s/%s: %w", o.Namespace, p.Name, err)
		}
		names = append(names, p.Name)
	}
	r.logf("waiting for the server on %s and %d clients (%s)", o.ServerNode, len(o.Nodes), strings.Join(o.Nodes, ", "))
	ready, err := kube.WaitReady(ctx, cs, o.Namespace, kube.RunSelector(o.RunID), names, o.StartTimeout)
	if err != nil {
		return err
	}
	r.server = ready[pods[0].Name]
	if r.server.Status.PodIP == "" {
		return fmt.Errorf("server pod %s has no IP", r.server.Name)
	}
	for i, n := range o.Nodes {
		r.clients = append(r.clients, Client{Node: n, NodeIPs: o.NodeIPs[n], Pod: pods[i+1].Name, Exec: r.env.Exec(pods[i+1].Name)})
		if hosts {
			r.clients[i].Host = r.env.Exec(pods[1+len(o.Nodes)+i].Name)
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, len(r.clients))
	for i := range r.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &r.clients[i]
			c.Clock, errs[i] = MeasureClock(ctx, c.Exec, o.ClockRounds, r.env.LocalBootID)
			if errs[i] != nil {
				errs[i] = fmt.Errorf("client on %s: %w", c.Node, errs[i])
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, c := range r.clients {
		k := c.Clock
		how := fmt.Sprintf("applied %+.1f ms ± %.1f ms", k.OffsetSeconds*1e3, k.UncertaintySeconds*1e3)
		if k.Shared {
			how = "applied 0: same kernel as cnperf, one clock"
		}
		r.logf("clock of %s minus cnperf's: measured between %+.1f and %+.1f ms; %s", c.Node, k.LowSeconds*1e3, k.HighSeconds*1e3, how)
	}
	return nil
}

// wantsHosts says whether the run needs a hostNetwork pod per node (a component's metrics).
func (r *Runner) wantsHosts() bool {
	for _, k := range r.o.Kinds {
		if len(r.componentsOf(k)) > 0 {
			return true
		}
	}
	return false
}

// Close removes what Prepare and Measure created: the namespace when cnperf created it, else
// every object of the run.
func (r *Runner) Close(ctx context.Context) error {
	if !r.prepared {
		return nil
	}
	cs, ns := r.env.Client, r.o.Namespace
	if r.nsCreated {
		return kube.DeleteNamespace(ctx, cs, ns, true)
	}
	sel := metav1.ListOptions{LabelSelector: kube.RunSelector(r.o.RunID)}
	errs := []error{
		cs.NetworkingV1().NetworkPolicies(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, sel),
		cs.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, sel),
	}
	if svcs, err := cs.CoreV1().Services(ns).List(ctx, sel); err != nil {
		errs = append(errs, err)
	} else {
		for _, s := range svcs.Items {
			errs = append(errs, ignoreNotFound(cs.CoreV1().Services(ns).Delete(ctx, s.Name, metav1.DeleteOptions{})))
		}
	}
	// The pods hold the node's resources until they are gone: wait for them.
	errs = append(errs, wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		l, err := cs.CoreV1().Pods(ns).List(ctx, sel)
		return err == nil && len(l.Items) == 0, nil
	}))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("remove run %s's objects from namespace %s: %w", r.o.RunID, ns, err)
	}
	return nil
}

// Results are the results measured so far, in the order they were first measured.
func (r *Runner) Results() []api.Result {
	out := make([]api.Result, 0, len(r.order))
	for _, k := range r.order {
		res := *r.results[k]
		r.finish(&res)
		out = append(out, res)
	}
	return out
}

// Measure measures the probe's floor, then every kind.
func (r *Runner) Measure(ctx context.Context) error {
	obs, err := MeasureFloor(ctx, FloorChanges(r.o.Count), r.o.Params)
	r.floor = floor(obs, err)
	r.logf("probe floor: %s", floorSaid(r.floor))
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	for _, k := range r.o.Kinds {
		var err error
		switch k {
		case KindService:
			err = r.measureService(ctx)
		case KindEndpoint:
			err = r.measureEndpoint(ctx)
		case KindPod:
			err = r.measurePod(ctx)
		case KindPolicyDeny, KindPolicyAllow:
			for _, n := range r.o.StandingPolicies {
				if err = r.setStanding(ctx, n); err != nil {
					break
				}
				if err = r.measurePolicy(ctx, k, n); err != nil {
					break
				}
			}
		}
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
	}
	return nil
}

// step is one profile's change within a kind.
type step struct {
	profile api.Profile
	change  string
	ch      Change
	// targets are what every client probes for the change (each its own result).
	targets []target
	// after runs after the change's observation (unmeasured reverts).
	after func(ctx context.Context) error
}

// target is one of a step's targets: the path it measures and each client's address.
type target struct {
	path api.Path
	addr func(c Client) string
	// family is the IP family a Service's target is probed on ("ipv4", "ipv6"; its results'
	// params.ipFamily): the Service's (kube.ServiceFamily) at its ClusterIP, the address's at a
	// node's port; "" for a pod's own IP.
	family func(c Client) string
}

// fixed is a target every client probes at the same address.
func fixed(path api.Path, addr string) target {
	return target{path: path, addr: func(Client) string { return addr }}
}

// stepProbe is one probe of a step: a client and one of the step's targets.
type stepProbe struct {
	c Client
	t target
}

// probes are the step's probes: every client for every target, target after target.
func (r *Runner) probes(s step) ([]stepProbe, []Probe) {
	var sp []stepProbe
	var ps []Probe
	for _, t := range s.targets {
		for _, c := range r.clients {
			sp = append(sp, stepProbe{c, t})
			ps = append(ps, Probe{Client: c, Target: t.addr(c)})
		}
	}
	return sp, ps
}

// repeat measures the steps Count times. When the first round shows no change on any client
// for a step, the kind stops there: its results carry the cause (hint says what may be
// missing) instead of Count timeouts.
func (r *Runner) repeat(ctx context.Context, kind Kind, standing int, hint string, steps []step) error {
	comp := r.componentOf(ctx, kind)
	for t := range r.o.Count {
		for _, s := range steps {
			sp, ps := r.probes(s)
			ch := s.ch
			r.lastScrape = nil
			if comp != nil {
				// the component's reading just before the change: the window holds this
				// change's work, not an unmeasured revert's (s.after) before it
				ch.Before = func(ctx context.Context) { r.lastScrape = r.scrape(ctx, comp) }
			}
			obs := Observe(ctx, ps, r.o.Params, ch)
			if comp != nil && r.lastScrape != nil {
				r.readComponent(ctx, comp, s, standing)
			}
			r.record(kind, s, standing, t, sp, obs)
			if s.after != nil {
				if err := s.after(ctx); err != nil {
					return err
				}
			}
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			if t == 0 && noneSeen(obs) {
				cause := fmt.Sprintf("%s: the first change was seen by no client (%s); the other %d not made", hint, obs[0].Error, r.o.Count-1)
				for _, s := range steps {
					sp, _ := r.probes(s)
					for _, p := range sp {
						r.result(kind, s, standing, p).Error = cause
					}
				}
				r.logf("%s: %s", s.profile, cause)
				return nil
			}
		}
		r.logf("%s: change %d of %d done", kind, t+1, r.o.Count)
	}
	return nil
}

func noneSeen(obs []Observation) bool {
	for _, o := range obs {
		if o.Seconds != nil {
			return false
		}
	}
	return true
}

// measureService creates the Service at one ClusterIP and deletes it, Count times.
func (r *Runner) measureService(ctx context.Context) error {
	allocated, err := r.allocateIP(ctx)
	if err != nil {
		return err
	}
	ip, nodePort := allocated.Spec.ClusterIP, nodePortOf(allocated)
	targets, err := r.serviceTargets(allocated)
	if err != nil {
		return err
	}
	target := targets[0].addr(Client{})
	svcs := r.env.Client.CoreV1().Services(r.o.Namespace)
	name := "cnperf-prog-svc-" + r.obj.id()
	r.logf("service: %d creations and deletions of Service %s at %s%s, probed from %d nodes", r.o.Count, name, target, r.nodePortSaid(nodePort), len(r.clients))
	create := func(ctx context.Context) error {
		svc := r.obj.service(name, ip, r.obj.serverSelector(), r.o.NodePort)
		if r.o.NodePort {
			svc.Spec.Ports[0].NodePort = nodePort
		}
		// The address may still be held for a moment after the previous deletion.
		return wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			_, err := svcs.Create(ctx, svc, metav1.CreateOptions{})
			if err != nil && (apierrors.IsInvalid(err) || apierrors.IsAlreadyExists(err)) && strings.Contains(err.Error(), "allocated") {
				return false, nil
			}
			return err == nil, err
		})
	}
	remove := func(ctx context.Context) error { return svcs.Delete(ctx, name, metav1.DeleteOptions{}) }
	return r.repeat(ctx, KindService, 0, "is kube-proxy (or the CNI's replacement) programming Services?", []step{
		{profile: api.ServiceCreate, change: "create a " + r.serviceType() + " Service", ch: Change{Expect: ttfr.Open, Do: create}, targets: targets},
		{profile: api.ServiceDelete, change: "delete the Service", ch: Change{Expect: ttfr.Closed, Do: remove}, targets: targets},
	})
}

// allocateIP has the API server pick a ClusterIP (and, with NodePort, a node port): a Service
// created and deleted at once, so that the clients can probe them before the measured Service
// exists. It returns that Service as the API server answered (its ClusterIP, IP families and
// node port are the measured Service's).
func (r *Runner) allocateIP(ctx context.Context) (*corev1.Service, error) {
	svcs := r.env.Client.CoreV1().Services(r.o.Namespace)
	svc, err := svcs.Create(ctx, r.obj.service("cnperf-prog-ip-"+r.obj.id(), "", nil, r.o.NodePort), metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("create a Service to get a ClusterIP: %w", err)
	}
	if err := svcs.Delete(ctx, svc.Name, metav1.DeleteOptions{}); err != nil {
		return nil, fmt.Errorf("delete Service %s: %w", svc.Name, err)
	}
	if svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == corev1.ClusterIPNone {
		return nil, errors.New("the API server gave the Service no ClusterIP")
	}
	if r.o.NodePort && nodePortOf(svc) == 0 {
		return nil, errNoNodePort
	}
	return svc, nil
}

// errNoNodePort: a NodePort Service came back without its node port.
var errNoNodePort = errors.New("the API server gave the NodePort Service no node port")

// nodePortOf is svc's (first and only) port's node port, 0 when it has none.
func nodePortOf(svc *corev1.Service) int32 {
	if len(svc.Spec.Ports) == 0 {
		return 0
	}
	return svc.Spec.Ports[0].NodePort
}

func (r *Runner) nodePortSaid(port int32) string {
	if !r.o.NodePort {
		return ""
	}
	return fmt.Sprintf(" and each node's port %d", port)
}

func (r *Runner) serviceType() string {
	if r.o.NodePort {
		return string(corev1.ServiceTypeNodePort)
	}
	return string(corev1.ServiceTypeClusterIP)
}

// serviceTargets are the targets of svc (as the API server answered): its ClusterIP, on the
// Service's IP family, and, with NodePort, the node port on each client's own node (that
// node's kube-proxy programs it) at the node's address of the Service's family: a single-stack
// Service's node port is open on the node's addresses of its family only, so a probe of
// another family would never see it open. A client node without an address of that family is
// an error that says so (a dual-stack cluster whose Services are IPv6 first, a node with an
// IPv4 InternalIP only): its probe could not measure the Service.
func (r *Runner) serviceTargets(svc *corev1.Service) ([]target, error) {
	clusterIP := fixed(api.PathPodClusterIP, net.JoinHostPort(svc.Spec.ClusterIP, strconv.Itoa(r.o.Port)))
	family := kube.ServiceFamily(svc)
	clusterIP.family = func(Client) string { return family }
	ts := []target{clusterIP}
	if !r.o.NodePort {
		return ts, nil
	}
	var missing []string
	for _, c := range r.clients {
		if c.NodeIPs[family] == "" {
			missing = append(missing, c.Node)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("the NodePort Service %s is %s (ClusterIP %s): its node port is open on the nodes' %s addresses only, "+
			"and node %s has no %s InternalIP or ExternalIP to probe it at (--nodeport=false probes the ClusterIP only)",
			svc.Name, family, svc.Spec.ClusterIP, family, strings.Join(missing, ", "), family)
	}
	nodePort := strconv.Itoa(int(nodePortOf(svc)))
	return append(ts, target{path: api.PathPodNodePort, addr: func(c Client) string { return net.JoinHostPort(c.NodeIPs[family], nodePort) },
		family: func(Client) string { return family }}), nil
}

// measureEndpoint adds the server to a Service without endpoints and takes it away, Count
// times (by its label, which the Service selects).
func (r *Runner) measureEndpoint(ctx context.Context) error {
	svcs := r.env.Client.CoreV1().Services(r.o.Namespace)
	name := "cnperf-prog-ep-" + r.obj.id()
	svc, err := svcs.Create(ctx, r.obj.service(name, "", map[string]string{LabelBackend: r.obj.id()}, r.o.NodePort), metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create Service %s: %w", name, err)
	}
	if r.o.NodePort && nodePortOf(svc) == 0 {
		return errors.Join(errNoNodePort, ignoreNotFound(svcs.Delete(ctx, name, metav1.DeleteOptions{})))
	}
	targets, err := r.serviceTargets(svc)
	if err != nil {
		return errors.Join(err, ignoreNotFound(svcs.Delete(ctx, name, metav1.DeleteOptions{})))
	}
	target := targets[0].addr(Client{})
	pods := r.env.Client.CoreV1().Pods(r.o.Namespace)
	label := func(v any) func(ctx context.Context) error {
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{LabelBackend: v}}})
		return func(ctx context.Context) error {
			_, err := pods.Patch(ctx, r.server.Name, types.MergePatchType, patch, metav1.PatchOptions{})
			return err
		}
	}
	r.logf("endpoint: %d times the server joins and leaves Service %s (%s%s), probed from %d nodes", r.o.Count, name, target, r.nodePortSaid(nodePortOf(svc)), len(r.clients))
	err = r.repeat(ctx, KindEndpoint, 0, "is kube-proxy (or the CNI's replacement) programming Services?", []step{
		{profile: api.EndpointAdd, change: "add the Service's only endpoint (label a ready pod)", ch: Change{Expect: ttfr.Open, Do: label(r.obj.id())}, targets: targets},
		{profile: api.EndpointRemove, change: "remove the Service's only endpoint (unlabel the pod)", ch: Change{Expect: ttfr.Closed, Do: label(nil)}, targets: targets},
	})
	return errors.Join(err, ignoreNotFound(svcs.Delete(ctx, name, metav1.DeleteOptions{})))
}

// measurePolicy measures POLICY_DENY (a policy isolating the server, created, then deleted
// unmeasured) or POLICY_ALLOW (under a standing default deny, a policy allowing the clients,
// created, then deleted unmeasured), Count times, with standing policies in place.
func (r *Runner) measurePolicy(ctx context.Context, k Kind, standing int) error {
	pols := r.env.Client.NetworkingV1().NetworkPolicies(r.o.Namespace)
	addr := net.JoinHostPort(r.server.Status.PodIP, strconv.Itoa(r.o.Port))
	hint := "NetworkPolicy is not enforced here (does the CNI implement it?)"
	r.logf("%s: %d changes with %d standing policies, probing %s from %d nodes", k, r.o.Count, standing, addr, len(r.clients))
	if k == KindPolicyDeny {
		name := "cnperf-prog-deny-" + r.obj.id()
		create := func(ctx context.Context) error {
			_, err := pols.Create(ctx, r.obj.denyPolicy(name), metav1.CreateOptions{})
			return err
		}
		remove := func(ctx context.Context) error { return ignoreNotFound(pols.Delete(ctx, name, metav1.DeleteOptions{})) }
		return r.repeat(ctx, k, standing, hint, []step{{profile: api.PolicyDeny, change: "create a NetworkPolicy that isolates the server",
			ch: Change{Expect: ttfr.Closed, Do: create}, targets: []target{fixed(api.PathPodPodCrossNode, addr)}, after: remove}})
	}
	deny, allow := "cnperf-prog-default-deny-"+r.obj.id(), "cnperf-prog-allow-"+r.obj.id()
	if _, err := pols.Create(ctx, r.obj.denyPolicy(deny), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create the default-deny policy: %w", err)
	}
	create := func(ctx context.Context) error {
		_, err := pols.Create(ctx, r.obj.allowPolicy(allow), metav1.CreateOptions{})
		return err
	}
	remove := func(ctx context.Context) error {
		return ignoreNotFound(pols.Delete(ctx, allow, metav1.DeleteOptions{}))
	}
	err := r.repeat(ctx, k, standing, hint, []step{{profile: api.PolicyAllow, change: "create a NetworkPolicy that allows the clients under a default deny",
		ch: Change{Expect: ttfr.Open, Do: create}, targets: []target{fixed(api.PathPodPodCrossNode, addr)}, after: remove}})
	return errors.Join(err, ignoreNotFound(pols.Delete(ctx, deny, metav1.DeleteOptions{})))
}

// measurePod creates a pod on the server node Count times. The clients probe its IP from the
// moment the API server shows one (probes that do not wait for an old state: the IP did not
// exist before) until it answers; POD_CREATE counts from the create call's return, POD_READY
// from the moment cnperf saw the pod Ready (the Ready condition's timestamp has whole
// seconds). Each pod is deleted, unmeasured, before the next.
func (r *Runner) measurePod(ctx context.Context) error {
	pods := r.env.Client.CoreV1().Pods(r.o.Namespace)
	p := r.o.Params
	p.FromStart = true
	created := step{profile: api.PodCreate, change: "create a pod (a TCP server) on " + r.o.ServerNode, ch: Change{Expect: ttfr.Open}}
	ready := step{profile: api.PodReady, change: "the created pod turns Ready", ch: Change{Expect: ttfr.Open}}
	r.logf("pod: %d pods created on %s, each probed from %d nodes from the moment it has an IP", r.o.Count, r.o.ServerNode, len(r.clients))
	for t := range r.o.Count {
		pod := r.obj.targetPod(t, r.o.ServerNode)
		w, err := pods.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + pod.Name})
		if err != nil {
			return fmt.Errorf("watch pod %s: %w", pod.Name, err)
		}
		sent := time.Now()
		_, err = pods.Create(ctx, pod, metav1.CreateOptions{})
		at := time.Now()
		if err != nil {
			w.Stop()
			return fmt.Errorf("create pod %s/%s: %w", r.o.Namespace, pod.Name, err)
		}
		f := followPod(w)
		var ip string
		var obs []Observation
		var sp []stepProbe
		select {
		case ip = <-f.ip:
		case <-time.After(p.Timeout):
		case <-ctx.Done():
		}
		if ip != "" {
			created.targets = []target{fixed(api.PathPodPodCrossNode, net.JoinHostPort(ip, strconv.Itoa(r.o.Port)))}
			ready.targets = created.targets
			var ps []Probe
			sp, ps = r.probes(created)
			obs = Observe(ctx, ps, p, Change{Expect: ttfr.Open, Do: func(context.Context) error { return nil }})
		} else {
			if created.targets == nil {
				created.targets = []target{fixed(api.PathPodPodCrossNode, "")}
				ready.targets = created.targets
			}
			sp, _ = r.probes(created)
			obs = make([]Observation, len(sp))
			for i := range obs {
				obs[i].Error = fmt.Sprintf("the pod had no IP %s after its creation", p.Timeout)
				if ctx.Err() != nil {
					obs[i].Error = "interrupted"
				}
			}
		}
		var readyAt time.Time
		select {
		case readyAt = <-f.ready:
		case <-time.After(p.Timeout):
		case <-ctx.Done():
		}
		w.Stop()
		r.record(KindPod, created, 0, t, sp, sinceEach(obs, sent, at, "the create call returned"))
		readyObs := sinceEach(obs, readyAt, readyAt, "cnperf saw the pod Ready")
		if readyAt.IsZero() {
			for i := range readyObs {
				readyObs[i] = Observation{Error: fmt.Sprintf("the pod was not Ready %s after its creation", p.Timeout)}
			}
		}
		r.record(KindPod, ready, 0, t, sp, readyObs)
		if t == 0 && noneSeen(obs) {
			cause := fmt.Sprintf("the first pod was seen answering by no client (%s); the other %d not made", obs[0].Error, r.o.Count-1)
			for _, s := range []step{created, ready} {
				for _, p := range sp {
					r.result(KindPod, s, 0, p).Error = cause
				}
			}
			r.logf("pod: %s", cause)
			return errors.Join(context.Cause(ctx), ignoreNotFound(pods.Delete(ctx, pod.Name, metav1.DeleteOptions{})))
		}
		zero := int64(0)
		if err := ignoreNotFound(pods.Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})); err != nil {
			return fmt.Errorf("delete pod %s: %w", pod.Name, err)
		}
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		r.logf("pod: change %d of %d done", t+1, r.o.Count)
	}
	return nil
}

// podEvents are the moments cnperf saw a pod get its IP and turn Ready.
type podEvents struct {
	ip    chan string
	ready chan time.Time
}

// followPod reads a pod's watch until it is Ready (or the watch ends): its first IP and the
// moment it was seen Ready, each sent once.
func followPod(w watch.Interface) podEvents {
	e := podEvents{ip: make(chan string, 1), ready: make(chan time.Time, 1)}
	go func() {
		gotIP := false
		for ev := range w.ResultChan() {
			now := time.Now()
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			if !gotIP && p.Status.PodIP != "" {
				gotIP = true
				e.ip <- p.Status.PodIP
			}
			if kube.PodReady(p) {
				e.ready <- now
				return
			}
		}
	}()
	return e
}

// sinceEach re-bases observations of a new pod: each figure from a moment (from, on cnperf's
// clock) to the moment the probe saw the pod answer; an answer before that moment counts as
// 0 and says by how much. Sent and At are the sample's window start.
func sinceEach(obs []Observation, sent, from time.Time, what string) []Observation {
	out := make([]Observation, len(obs))
	for i, o := range obs {
		o.Sent, o.At, o.Note = sent, from, ""
		if o.Seconds != nil && !from.IsZero() {
			v := o.SeenAt.Sub(from.Round(0)).Seconds()
			var notes []string
			if v < 0 {
				notes = append(notes, fmt.Sprintf("answered %.1f ms before %s: counted as 0", -v*1e3, what))
				v = 0
			}
			if o.FirstAttempt {
				notes = append(notes, "answered at the probe's first attempt: an upper bound")
			}
			if o.Flaps > 0 {
				notes = append(notes, fmt.Sprintf("%d unconfirmed attempt(s) in the new state before it", o.Flaps))
			}
			o.Seconds, o.Note = &v, strings.Join(notes, "; ")
		}
		out[i] = o
	}
	return out
}

// setStanding brings the standing policies to n (created or deleted 8 at a time), then pauses
// StandingSettle for the dataplane to take them in.
func (r *Runner) setStanding(ctx context.Context, n int) error {
	if n == r.standing {
		return nil
	}
	pols := r.env.Client.NetworkingV1().NetworkPolicies(r.o.Namespace)
	from, to := r.standing, n
	op := func(ctx context.Context, i int) error {
		_, err := pols.Create(ctx, r.obj.standingPolicy(i), metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	}
	if n < r.standing {
		from, to = n, r.standing
		op = func(ctx context.Context, i int) error {
			return ignoreNotFound(pols.Delete(ctx, r.obj.standingPolicy(i).Name, metav1.DeleteOptions{}))
		}
	}
	r.logf("standing policies: %d → %d", r.standing, n)
	t := time.Now()
	if err := forEach(ctx, from, to, 8, op); err != nil {
		return fmt.Errorf("standing policies %d → %d: %w", r.standing, n, err)
	}
	r.standing = n
	r.logf("standing policies: %d in %.1fs; %s for the dataplane to take them in", n, time.Since(t).Seconds(), r.o.StandingSettle)
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-time.After(r.o.StandingSettle):
	}
	return nil
}

// forEach runs f for i in [from, to) with at most par at once; the first error stops it.
func forEach(ctx context.Context, from, to, par int, f func(context.Context, int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, par)
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	for i := from; i < to && ctx.Err() == nil; i++ {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := f(ctx, i); err != nil {
				mu.Lock()
				if first == nil {
					first = err
					cancel()
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return first
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
