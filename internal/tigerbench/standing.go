package tigerbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	appsac "k8s.io/client-go/applyconfigurations/apps/v1"
	coreac "k8s.io/client-go/applyconfigurations/core/v1"
	metaac "k8s.io/client-go/applyconfigurations/meta/v1"
	netac "k8s.io/client-go/applyconfigurations/networking/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/measure"
)

// FieldManager is the server-side apply field manager of everything cnperf applies.
const FieldManager = "cnperf"

// Labels of standing config. Every object carries kube.LabelManagedBy=cnperf and
// LabelStanding=<what it is>.
const (
	LabelStanding = "cnperf.dev/standing"
	// LabelStandingNamespace marks a namespace cnperf created for standing config (it is
	// deleted with the standing config; a namespace cnperf did not create never is).
	LabelStandingNamespace = "cnperf.dev/standing-namespace"
	// LabelApp is the label tiger-bench's pods carry and its policies select on.
	LabelApp = "app"
	// LabelIdleTarget is what idle policies select: no pod carries it.
	LabelIdleTarget = "cnperf.dev/idle-policy-target"
)

// Values of LabelStanding.
const (
	StandingPods        = "pods"         // the numPods deployment and its pods
	StandingBackends    = "backends"     // the 10-pod deployment behind the Services
	StandingService     = "service"      // numServices Services
	StandingPolicy      = "policy"       // numPolicies NetworkPolicies selecting every pod
	StandingIdlePolicy  = "idle-policy"  // numIdlePolicies NetworkPolicies selecting no pod
	StandingAllowPolicy = "allow-policy" // the policy that keeps standing policies from blocking tests
)

// Names of standing objects (tiger-bench's, where it has them).
const (
	PodsDeployment     = "standing-deployment"
	BackendsDeployment = "standing-svc"
	ServicePrefix      = "standing-svc-"
	PolicyPrefix       = "standing-policy-"
	IdlePolicyPrefix   = "standing-idle-policy-"
	// AllowPolicy is applied last by name order ("zzz"), as tiger-bench's zzz-perf-test-policy.
	AllowPolicy = "zzz-cnperf-allow-all"
	// ServiceBackends is the size of the deployment behind the Services (tiger-bench's 10).
	ServiceBackends = 10
	// BackendPort is the port standing Services expose (to ServiceTargetPort on the backends).
	ServicePort       = 80
	ServiceTargetPort = 8080
)

// StandingSpec is the standing config wanted in one namespace.
type StandingSpec struct {
	Namespace    string
	Pods         int
	Services     int
	Policies     int
	IdlePolicies int
	// Nodes are the nodes standing pods may run on (spread evenly); empty means any.
	Nodes []string
	// Image runs the standing pods (an idle shell loop); PullPolicy its pull policy.
	Image      string
	PullPolicy corev1.PullPolicy
	// Parallelism bounds API writes in flight (default DefaultParallelism).
	Parallelism int
	// ReadyTimeout bounds the wait for every standing pod (default 10 minutes).
	ReadyTimeout time.Duration
}

// Validate checks the counts and names.
func (s StandingSpec) Validate() error {
	var errs []error
	for _, c := range []struct {
		name string
		v    int
	}{{"pods", s.Pods}, {"services", s.Services}, {"policies", s.Policies}, {"idle policies", s.IdlePolicies}} {
		if c.v < 0 {
			errs = append(errs, fmt.Errorf("%s must not be negative, got %d", c.name, c.v))
		}
		if c.v > 99999 {
			errs = append(errs, fmt.Errorf("%s: at most 99999, got %d", c.name, c.v))
		}
	}
	if s.Namespace == "" {
		errs = append(errs, errors.New("no namespace"))
	}
	if s.Image == "" {
		errs = append(errs, errors.New("no image for the standing pods"))
	}
	return errors.Join(errs...)
}

func (s StandingSpec) backends() int {
	if s.Services > 0 {
		return ServiceBackends
	}
	return 0
}

// StandingClient is a clientset for standing config whose client-side rate limit does not
// stand in the way of the parallelism (the default 50 QPS would cap creation at ~40 objects/s
// whatever the API server can do): the bound is the writes in flight, and the API server's own
// priority and fairness.
func StandingClient(cfg *rest.Config, parallelism int) (kubernetes.Interface, error) {
	if parallelism <= 0 {
		parallelism = DefaultParallelism
	}
	c := rest.CopyConfig(cfg)
	c.QPS = float32(parallelism * 25)
	c.Burst = parallelism * 50
	cs, err := kubernetes.NewForConfig(c)
	if err != nil {
		return nil, fmt.Errorf("create Kubernetes client for %s: %w", cfg.Host, err)
	}
	return cs, nil
}

// Standing creates, measures and removes standing config with one clientset.
type Standing struct {
	Client kubernetes.Interface
	Log    io.Writer
	// RunID is the run removing the standing config (tiger-bench's own clean-up): its own
	// Lease does not keep the namespace.
	RunID string
}

func (st *Standing) logf(format string, a ...any) {
	if st.Log != nil {
		fmt.Fprintf(st.Log, "standing config: "+format+"\n", a...)
	}
}

func standingLabels(what string) map[string]string {
	return map[string]string{kube.LabelManagedBy: kube.ManagedByValue, LabelStanding: what}
}

func name5(prefix string, i int) string { return fmt.Sprintf("%s%05d", prefix, i) }

// Apply brings the namespace to the wanted standing config: it creates the namespace when
// absent, applies every object (server-side apply, field manager "cnperf", at most
// Parallelism writes in flight), deletes objects beyond the wanted counts, and waits until
// every standing pod is ready. The report carries counts, times and rates, and Error when
// something failed (the error is returned too).
func (st *Standing) Apply(ctx context.Context, spec StandingSpec) (*api.StandingConfig, error) {
	spec = spec.withDefaults()
	rep := &api.StandingConfig{Namespace: spec.Namespace, Pods: spec.Pods, Services: spec.Services, ServiceBackends: spec.backends(),
		Policies: spec.Policies, IdlePolicies: spec.IdlePolicies, Nodes: slices.Clone(spec.Nodes), Parallelism: spec.Parallelism}
	fail := func(err error) (*api.StandingConfig, error) {
		rep.Error = err.Error()
		return rep, err
	}
	if err := spec.Validate(); err != nil {
		return fail(err)
	}
	if _, err := st.ensureNamespace(ctx, spec.Namespace); err != nil {
		return fail(err)
	}
	start := time.Now()
	ns := spec.Namespace
	a := &standingApply{cs: st.Client, spec: spec, ns: ns, opts: metav1.ApplyOptions{FieldManager: FieldManager, Force: true}}
	// The deployments first: their pods take longest.
	if errs := a.deployments(ctx); len(errs) > 0 {
		return fail(errors.Join(errs...))
	}
	var errs []error
	for _, k := range a.kinds() {
		errs = append(errs, a.apply(ctx, k)...)
	}
	rep.ApplySeconds = time.Since(start).Seconds()
	rep.ObjectsApplied, rep.ObjectsDeleted = int(a.applied.Load()), int(a.deleted.Load())
	if rep.ApplySeconds > 0 {
		rep.ObjectsPerSecond = float64(rep.ObjectsApplied) / rep.ApplySeconds
	}
	if len(errs) > 0 {
		return fail(errors.Join(errs...))
	}
	st.logf("%d objects applied in %s in %.2fs (%.1f/s), %d deleted; waiting for %d pods", rep.ObjectsApplied, ns,
		rep.ApplySeconds, rep.ObjectsPerSecond, rep.ObjectsDeleted, spec.Pods+spec.backends())

	if err := st.waitDeployments(ctx, ns, spec.ReadyTimeout, []string{PodsDeployment, BackendsDeployment}); err != nil {
		rep.ReadySeconds = time.Since(start).Seconds()
		return fail(err)
	}
	rep.ReadySeconds = time.Since(start).Seconds()
	if pods := spec.Pods + spec.backends(); pods > 0 && rep.ReadySeconds > 0 {
		rep.PodsPerSecond = float64(pods) / rep.ReadySeconds
	}
	st.logf("ready in %.2fs: %d pods, %d services, %d policies, %d idle policies", rep.ReadySeconds, spec.Pods, spec.Services, spec.Policies, spec.IdlePolicies)
	return rep, nil
}

// withDefaults fills the unset fields of the spec.
func (spec StandingSpec) withDefaults() StandingSpec {
	if spec.Parallelism <= 0 {
		spec.Parallelism = DefaultParallelism
	}
	if spec.ReadyTimeout <= 0 {
		spec.ReadyTimeout = 10 * time.Minute
	}
	if spec.PullPolicy == "" {
		spec.PullPolicy = corev1.PullIfNotPresent
	}
	return spec
}

// standingApply is one Apply of a standing config: what it writes with and what it counts.
type standingApply struct {
	cs               kubernetes.Interface
	spec             StandingSpec
	ns               string
	opts             metav1.ApplyOptions
	applied, deleted atomic.Int64
}

// standingKind is one kind of standing object: n of them named prefix + a 5-digit index.
type standingKind struct {
	what, prefix string
	n            int
	apply        func(ctx context.Context, i int) error
	list         func(ctx context.Context) ([]string, error)
	del          func(ctx context.Context, name string) error
}

// deployments applies the pods' and the backends' Deployments (deleting one wanted with no
// replicas).
func (a *standingApply) deployments(ctx context.Context) []error {
	spec, ns, cs := a.spec, a.ns, a.cs
	deployments := []struct {
		name, what string
		replicas   int
	}{{PodsDeployment, StandingPods, spec.Pods}, {BackendsDeployment, StandingBackends, spec.backends()}}
	var errs []error
	for _, d := range deployments {
		if d.replicas == 0 {
			n, err := deleteIfExists(ctx, func(ctx context.Context) error {
				return cs.AppsV1().Deployments(ns).Delete(ctx, d.name, metav1.DeleteOptions{})
			})
			a.deleted.Add(int64(n))
			if err != nil {
				errs = append(errs, fmt.Errorf("delete deployment %s/%s: %w", ns, d.name, err))
			}
			continue
		}
		if _, err := cs.AppsV1().Deployments(ns).Apply(ctx, standingDeployment(spec, d.name, d.what, d.replicas), a.opts); err != nil {
			errs = append(errs, fmt.Errorf("apply deployment %s/%s: %w", ns, d.name, err))
			continue
		}
		a.applied.Add(1)
	}
	return errs
}

// kinds are the Services and the policies of the standing config, in the order they are
// applied.
func (a *standingApply) kinds() []standingKind {
	spec, ns, cs, opts := a.spec, a.ns, a.cs, a.opts
	np := cs.NetworkingV1().NetworkPolicies(ns)
	listPolicies := func(what string) func(ctx context.Context) ([]string, error) {
		return func(ctx context.Context) ([]string, error) {
			l, err := np.List(ctx, metav1.ListOptions{LabelSelector: LabelStanding + "=" + what})
			if err != nil {
				return nil, err
			}
			return objectNames(l.Items), nil
		}
	}
	delPolicy := func(ctx context.Context, name string) error { return np.Delete(ctx, name, metav1.DeleteOptions{}) }
	allow := 0
	if spec.Policies > 0 {
		allow = 1
	}
	return []standingKind{
		{StandingService, ServicePrefix, spec.Services,
			func(ctx context.Context, i int) error {
				_, err := cs.CoreV1().Services(ns).Apply(ctx, standingService(ns, name5(ServicePrefix, i)), opts)
				return err
			},
			func(ctx context.Context) ([]string, error) {
				l, err := cs.CoreV1().Services(ns).List(ctx, metav1.ListOptions{LabelSelector: LabelStanding + "=" + StandingService})
				if err != nil {
					return nil, err
				}
				return objectNames(l.Items), nil
			},
			func(ctx context.Context, name string) error {
				return cs.CoreV1().Services(ns).Delete(ctx, name, metav1.DeleteOptions{})
			}},
		{StandingPolicy, PolicyPrefix, spec.Policies,
			func(ctx context.Context, i int) error {
				_, err := np.Apply(ctx, standingPolicy(ns, name5(PolicyPrefix, i)), opts)
				return err
			}, listPolicies(StandingPolicy), delPolicy},
		{StandingIdlePolicy, IdlePolicyPrefix, spec.IdlePolicies,
			func(ctx context.Context, i int) error {
				_, err := np.Apply(ctx, idlePolicy(ns, name5(IdlePolicyPrefix, i)), opts)
				return err
			}, listPolicies(StandingIdlePolicy), delPolicy},
		{StandingAllowPolicy, AllowPolicy, allow,
			func(ctx context.Context, _ int) error {
				_, err := np.Apply(ctx, allowPolicy(ns), opts)
				return err
			}, listPolicies(StandingAllowPolicy), delPolicy},
	}
}

// apply applies the wanted objects of kind k (at most Parallelism writes in flight) and
// removes what a previous test left beyond the wanted count.
func (a *standingApply) apply(ctx context.Context, k standingKind) []error {
	spec, ns := a.spec, a.ns
	err := forEach(ctx, k.n, spec.Parallelism, func(ctx context.Context, i int) error {
		if err := k.apply(ctx, i); err != nil {
			return fmt.Errorf("apply %s %d in %s: %w", k.what, i, ns, err)
		}
		a.applied.Add(1)
		return nil
	})
	if err != nil {
		return []error{err}
	}
	names, err := k.list(ctx)
	if err != nil {
		return []error{fmt.Errorf("list %s objects in %s: %w", k.what, ns, err)}
	}
	var extra []string
	for _, n := range names {
		if !wanted(n, k.prefix, k.n) {
			extra = append(extra, n)
		}
	}
	slices.Sort(extra)
	err = forEach(ctx, len(extra), spec.Parallelism, func(ctx context.Context, i int) error {
		n, err := deleteIfExists(ctx, func(ctx context.Context) error { return k.del(ctx, extra[i]) })
		a.deleted.Add(int64(n))
		if err != nil {
			return fmt.Errorf("delete %s %s/%s: %w", k.what, ns, extra[i], err)
		}
		return nil
	})
	if err != nil {
		return []error{err}
	}
	return nil
}

// wanted reports whether name is prefix + a 5-digit index below n.
func wanted(name, prefix string, n int) bool {
	if prefix == AllowPolicy {
		return name == AllowPolicy && n > 0
	}
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok || len(rest) != 5 {
		return false
	}
	i, err := strconv.Atoi(rest)
	return err == nil && i >= 0 && i < n
}

// objectNames are the names of a list's items (nil for none).
func objectNames[T any, P interface {
	*T
	GetName() string
}](items []T) []string {
	var names []string
	for i := range items {
		names = append(names, P(&items[i]).GetName())
	}
	return names
}

// deleteEach deletes each of items with del, parallelism at a time; one already gone is fine.
func deleteEach[T any](ctx context.Context, items []T, parallelism int, del func(context.Context, *T) error) error {
	return forEach(ctx, len(items), parallelism, func(ctx context.Context, i int) error {
		_, err := deleteIfExists(ctx, func(ctx context.Context) error { return del(ctx, &items[i]) })
		return err
	})
}

// deleteIfExists runs del and returns 1 when it deleted something, 0 when it was already gone.
func deleteIfExists(ctx context.Context, del func(context.Context) error) (int, error) {
	err := del(ctx)
	switch {
	case err == nil:
		return 1, nil
	case apierrors.IsNotFound(err):
		return 0, nil
	}
	return 0, err
}

// ensureNamespace creates ns when absent (labelled as cnperf's) and says whether it did.
func (st *Standing) ensureNamespace(ctx context.Context, ns string) (created bool, err error) {
	l := standingLabels("namespace")
	l[LabelStandingNamespace] = "true"
	state, err := kube.CreateNamespace(ctx, st.Client, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: l}}, nil)
	switch {
	case err != nil:
		return false, err
	case state == kube.NamespaceTerminating:
		return false, fmt.Errorf("namespace %s is being deleted; wait for it to go", ns)
	case state != kube.NamespaceCreated:
		return false, nil
	}
	st.logf("created namespace %s", ns)
	return true, nil
}

func standingPodLabels(what string) map[string]string {
	l := standingLabels(what)
	l[LabelApp] = "standing-" + what
	return l
}

func standingDeployment(spec StandingSpec, name, what string, replicas int) *appsac.DeploymentApplyConfiguration {
	podLabels := standingPodLabels(what)
	sel := map[string]string{LabelStanding: what}
	grace := int64(2)
	no := false
	c := coreac.Container().WithName("standing").WithImage(spec.Image).WithImagePullPolicy(spec.PullPolicy).
		WithCommand(kube.IdleCommand...)
	if what == StandingBackends {
		c = c.WithPorts(coreac.ContainerPort().WithName("http").WithContainerPort(ServiceTargetPort).WithProtocol(corev1.ProtocolTCP))
	}
	ps := coreac.PodSpec().WithContainers(c).WithTerminationGracePeriodSeconds(grace).
		WithAutomountServiceAccountToken(no).WithEnableServiceLinks(no).
		WithTopologySpreadConstraints(coreac.TopologySpreadConstraint().WithMaxSkew(1).
			WithTopologyKey(corev1.LabelHostname).WithWhenUnsatisfiable(corev1.ScheduleAnyway).
			WithLabelSelector(metaac.LabelSelector().WithMatchLabels(sel)))
	if len(spec.Nodes) > 0 {
		// One term per node: terms are ORed, and a metadata.name field selector takes one value.
		ns := coreac.NodeSelector()
		for _, n := range spec.Nodes {
			ns = ns.WithNodeSelectorTerms(coreac.NodeSelectorTerm().WithMatchFields(coreac.NodeSelectorRequirement().
				WithKey("metadata.name").WithOperator(corev1.NodeSelectorOpIn).WithValues(n)))
		}
		ps = ps.WithAffinity(coreac.Affinity().WithNodeAffinity(coreac.NodeAffinity().
			WithRequiredDuringSchedulingIgnoredDuringExecution(ns)))
	}
	return appsac.Deployment(name, spec.Namespace).WithLabels(standingLabels(what)).
		WithSpec(appsac.DeploymentSpec().WithReplicas(int32(replicas)).
			WithSelector(metaac.LabelSelector().WithMatchLabels(sel)).
			WithStrategy(appsac.DeploymentStrategy().WithType(appsv1.RecreateDeploymentStrategyType)).
			WithTemplate(coreac.PodTemplateSpec().WithLabels(podLabels).WithSpec(ps)))
}

func standingService(ns, name string) *coreac.ServiceApplyConfiguration {
	return coreac.Service(name, ns).WithLabels(standingLabels(StandingService)).
		WithSpec(coreac.ServiceSpec().WithType(corev1.ServiceTypeClusterIP).
			WithSelector(map[string]string{LabelStanding: StandingBackends}).
			WithPorts(coreac.ServicePort().WithName("http").WithProtocol(corev1.ProtocolTCP).
				WithPort(ServicePort).WithTargetPort(intstr.FromInt32(ServiceTargetPort))))
}

// standingPolicy selects every pod of the namespace (standing and test pods, as tiger-bench's
// policies select every pod with an "app" label) and allows ingress on port 80 from pods with
// an "app" label: work for the dataplane, not a restriction (AllowPolicy allows the rest).
func standingPolicy(ns, name string) *netac.NetworkPolicyApplyConfiguration {
	return netac.NetworkPolicy(name, ns).WithLabels(standingLabels(StandingPolicy)).
		WithSpec(netac.NetworkPolicySpec().WithPodSelector(metaac.LabelSelector()).
			WithPolicyTypes(networkingv1.PolicyTypeIngress).
			WithIngress(netac.NetworkPolicyIngressRule().
				WithFrom(netac.NetworkPolicyPeer().WithPodSelector(metaac.LabelSelector().
					WithMatchExpressions(metaac.LabelSelectorRequirement().WithKey(LabelApp).WithOperator(metav1.LabelSelectorOpExists)))).
				WithPorts(netac.NetworkPolicyPort().WithProtocol(corev1.ProtocolTCP).WithPort(intstr.FromInt32(ServicePort)))))
}

// idlePolicy selects no pod: it only loads the policy store.
func idlePolicy(ns, name string) *netac.NetworkPolicyApplyConfiguration {
	return netac.NetworkPolicy(name, ns).WithLabels(standingLabels(StandingIdlePolicy)).
		WithSpec(netac.NetworkPolicySpec().WithPodSelector(metaac.LabelSelector().WithMatchLabels(map[string]string{LabelIdleTarget: "none"})).
			WithPolicyTypes(networkingv1.PolicyTypeIngress).
			WithIngress(netac.NetworkPolicyIngressRule().
				WithPorts(netac.NetworkPolicyPort().WithProtocol(corev1.ProtocolTCP).WithPort(intstr.FromInt32(ServicePort)))))
}

// allowPolicy allows all ingress to every pod of the namespace, so the standing policies never
// block a test (tiger-bench's zzz-perf-test-policy).
func allowPolicy(ns string) *netac.NetworkPolicyApplyConfiguration {
	return netac.NetworkPolicy(AllowPolicy, ns).WithLabels(standingLabels(StandingAllowPolicy)).
		WithSpec(netac.NetworkPolicySpec().WithPodSelector(metaac.LabelSelector()).
			WithPolicyTypes(networkingv1.PolicyTypeIngress).
			WithIngress(netac.NetworkPolicyIngressRule()))
}

// waitDeployments waits until each named deployment that exists has all its replicas ready
// and updated, polling; on timeout it says which pods are not ready and why.
func (st *Standing) waitDeployments(ctx context.Context, ns string, timeout time.Duration, names []string) error {
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	last := map[string]string{}
	err := wait.PollUntilContextCancel(wctx, 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		done := true
		for _, n := range names {
			d, err := st.Client.AppsV1().Deployments(ns).Get(ctx, n, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				continue
			}
			if err != nil {
				return false, nil // transient: try again
			}
			if !deploymentReady(d) {
				done = false
				last[n] = fmt.Sprintf("%d of %d ready", d.Status.ReadyReplicas, replicas(d))
			}
		}
		return done, nil
	})
	if err == nil {
		return nil
	}
	why := st.podProblems(measure.Detached(ctx), ns)
	var state []string
	for _, n := range names {
		if s, ok := last[n]; ok {
			state = append(state, n+": "+s)
		}
	}
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted while waiting for standing pods in %s (%s)", ns, strings.Join(state, ", "))
	}
	return fmt.Errorf("standing pods in %s not ready after %s (%s)%s", ns, timeout, strings.Join(state, ", "), why)
}

func replicas(d *appsv1.Deployment) int32 {
	if d.Spec.Replicas == nil {
		return 1
	}
	return *d.Spec.Replicas
}

func deploymentReady(d *appsv1.Deployment) bool {
	want := replicas(d)
	return d.Status.ObservedGeneration >= d.Generation && d.Status.ReadyReplicas == want &&
		d.Status.UpdatedReplicas == want && d.Status.Replicas == want
}

// podProblems summarises why standing pods are not ready: ": 3× Pending: 0/2 nodes are available: ...".
func (st *Standing) podProblems(ctx context.Context, ns string) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	pods, err := st.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: LabelStanding})
	if err != nil {
		return ""
	}
	counts := map[string]int{}
	for i := range pods.Items {
		if r := podProblem(&pods.Items[i]); r != "" {
			counts[r]++
		}
	}
	return ": " + countsText(counts)
}

// podProblem says why a pod is not ready, or "" when it is.
func podProblem(p *corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return ""
		}
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return "unschedulable: " + c.Message
		}
	}
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && w.Reason != "" {
			return w.Reason + ": " + w.Message
		}
		if t := cs.State.Terminated; t != nil {
			return fmt.Sprintf("container exited %d (%s)", t.ExitCode, t.Reason)
		}
	}
	return string(p.Status.Phase)
}

// countsText lists counts by decreasing count, then text: "3× a; 1× b".
func countsText(counts map[string]int) string {
	cs := sortedCounts(counts)
	if len(cs) == 0 {
		return "no pods found"
	}
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = fmt.Sprintf("%d× %s", c.Count, c.What)
	}
	return strings.Join(parts, "; ")
}

// sortedCounts orders counts by decreasing count, then text (never by map order).
func sortedCounts(counts map[string]int) []api.Count {
	out := make([]api.Count, 0, len(counts))
	for k, v := range counts {
		out = append(out, api.Count{What: k, Count: v})
	}
	slices.SortFunc(out, func(a, b api.Count) int {
		if a.Count != b.Count {
			return b.Count - a.Count
		}
		return strings.Compare(a.What, b.What)
	})
	return out
}

// Counts are the standing objects found in a namespace.
type Counts struct {
	Namespace      string `json:"namespace"`
	Pods           int    `json:"pods"`
	PodsReady      int    `json:"podsReady"`
	Backends       int    `json:"serviceBackends"`
	BackendsReady  int    `json:"serviceBackendsReady"`
	Services       int    `json:"services"`
	Policies       int    `json:"policies"`
	IdlePolicies   int    `json:"idlePolicies"`
	AllowPolicy    bool   `json:"allowPolicy"`
	OwnedNamespace bool   `json:"namespaceCreatedByCnperf"`
}

// Count lists the standing config in ns.
func (st *Standing) Count(ctx context.Context, ns string) (*Counts, error) {
	c := &Counts{Namespace: ns}
	nsObj, err := st.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get namespace %s: %w", ns, err)
	}
	c.OwnedNamespace = nsObj.Labels[LabelStandingNamespace] == "true"
	pods, err := st.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: LabelStanding})
	if err != nil {
		return nil, fmt.Errorf("list standing pods in %s: %w", ns, err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		ready := podProblem(p) == ""
		switch p.Labels[LabelStanding] {
		case StandingPods:
			c.Pods++
			if ready {
				c.PodsReady++
			}
		case StandingBackends:
			c.Backends++
			if ready {
				c.BackendsReady++
			}
		}
	}
	svcs, err := st.Client.CoreV1().Services(ns).List(ctx, metav1.ListOptions{LabelSelector: LabelStanding + "=" + StandingService})
	if err != nil {
		return nil, fmt.Errorf("list standing services in %s: %w", ns, err)
	}
	c.Services = len(svcs.Items)
	pols, err := st.Client.NetworkingV1().NetworkPolicies(ns).List(ctx, metav1.ListOptions{LabelSelector: LabelStanding})
	if err != nil {
		return nil, fmt.Errorf("list standing policies in %s: %w", ns, err)
	}
	for _, p := range pols.Items {
		switch p.Labels[LabelStanding] {
		case StandingPolicy:
			c.Policies++
		case StandingIdlePolicy:
			c.IdlePolicies++
		case StandingAllowPolicy:
			c.AllowPolicy = true
		}
	}
	return c, nil
}

// Remove deletes the standing config of ns and waits until its pods are gone. A namespace
// cnperf created for standing config is deleted as a whole (with whatever else is in it) when
// deleteNamespace is true; otherwise only standing objects are. It returns the time taken.
func (st *Standing) Remove(ctx context.Context, ns string, deleteNamespace bool, parallelism int) (time.Duration, error) {
	start := time.Now()
	nsObj, err := st.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("get namespace %s: %w", ns, err)
	}
	if deleteNamespace && nsObj.Labels[LabelStandingNamespace] == "true" {
		// the same rule as cnperf cleanup: a namespace where a run is alive (or was kept on
		// purpose) is not deleted under it; only the standing objects go
		live, err := kube.LiveRunsIn(ctx, st.Client, ns, st.RunID)
		if err != nil {
			return 0, err
		}
		if len(live) > 0 {
			st.logf("namespace %s holds run %s (%s): removing only the standing config, not the namespace", ns, live[0].RunID, live[0].Describe(time.Now()))
			deleteNamespace = false
		}
	}
	if deleteNamespace && nsObj.Labels[LabelStandingNamespace] == "true" {
		if err := kube.DeleteNamespace(ctx, st.Client, ns, true); err != nil {
			return time.Since(start), err
		}
		st.logf("deleted namespace %s in %.1fs", ns, time.Since(start).Seconds())
		return time.Since(start), nil
	}
	if parallelism <= 0 {
		parallelism = DefaultParallelism
	}
	var errs []error
	sel := metav1.ListOptions{LabelSelector: LabelStanding}
	for _, d := range []string{PodsDeployment, BackendsDeployment} {
		bg := metav1.DeletePropagationBackground
		if _, err := deleteIfExists(ctx, func(ctx context.Context) error {
			return st.Client.AppsV1().Deployments(ns).Delete(ctx, d, metav1.DeleteOptions{PropagationPolicy: &bg})
		}); err != nil {
			errs = append(errs, fmt.Errorf("delete deployment %s/%s: %w", ns, d, err))
		}
	}
	if svcs, err := st.Client.CoreV1().Services(ns).List(ctx, sel); err != nil {
		errs = append(errs, fmt.Errorf("list standing services in %s: %w", ns, err))
	} else {
		errs = append(errs, deleteEach(ctx, svcs.Items, parallelism, func(ctx context.Context, s *corev1.Service) error {
			return st.Client.CoreV1().Services(ns).Delete(ctx, s.Name, metav1.DeleteOptions{})
		}))
	}
	if pols, err := st.Client.NetworkingV1().NetworkPolicies(ns).List(ctx, sel); err != nil {
		errs = append(errs, fmt.Errorf("list standing policies in %s: %w", ns, err))
	} else {
		errs = append(errs, deleteEach(ctx, pols.Items, parallelism, func(ctx context.Context, p *networkingv1.NetworkPolicy) error {
			return st.Client.NetworkingV1().NetworkPolicies(ns).Delete(ctx, p.Name, metav1.DeleteOptions{})
		}))
	}
	if err := errors.Join(errs...); err != nil {
		return time.Since(start), err
	}
	// Wait for the pods (deleted by the deployments' garbage collection) to go.
	err = wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		pods, err := st.Client.CoreV1().Pods(ns).List(ctx, sel)
		if err != nil {
			return false, nil
		}
		return len(pods.Items) == 0, nil
	})
	if err != nil {
		return time.Since(start), fmt.Errorf("standing pods in %s still terminating: %w", ns, err)
	}
	st.logf("removed from %s in %.1fs", ns, time.Since(start).Seconds())
	return time.Since(start), nil
}
