package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// pollInterval is how often deletions are checked for completion.
const pollInterval = 250 * time.Millisecond

// DeleteNamespace deletes a namespace and, when wait is true, waits until it is gone (its
// pods have terminated).
func DeleteNamespace(ctx context.Context, cs kubernetes.Interface, name string, waitGone bool) error {
	return DeleteNamespaceWith(ctx, cs, name, waitGone, nil)
}

// DeleteNamespaceWith is DeleteNamespace; while it waits, u (when not nil) force-deletes the
// namespace's pods that a stopped kubelet keeps terminating forever, and says so.
func DeleteNamespaceWith(ctx context.Context, cs kubernetes.Interface, name string, waitGone bool, u *Unsticker) error {
	bg := metav1.DeletePropagationBackground
	err := retryTransient(ctx, u.writer(), "delete namespace "+name, func() error {
		return cs.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &bg})
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("delete namespace %s: %w", name, err)
	}
	if !waitGone {
		return nil
	}
	err = wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		u.poll(ctx)
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("namespace %s is still terminating: %w", name, err)
	}
	return nil
}

// DeleteRunObjects deletes the DaemonSets, pods, Services, ServiceAccounts and Leases matching
// selector in namespace ns and, when wait is true, waits until the pods are gone.
func DeleteRunObjects(ctx context.Context, cs kubernetes.Interface, ns, selector string, waitGone bool) error {
	return DeleteRunObjectsWith(ctx, cs, ns, selector, waitGone, nil)
}

// DeleteRunObjectsWith is DeleteRunObjects; while it waits, u (when not nil) force-deletes the
// pods that a stopped kubelet keeps terminating forever, and says so.
func DeleteRunObjectsWith(ctx context.Context, cs kubernetes.Interface, ns, selector string, waitGone bool, u *Unsticker) error {
	what := fmt.Sprintf("delete the objects labelled %s in %s", selector, ns)
	if err := retryTransient(ctx, u.writer(), what, func() error { return deleteRunObjectsOnce(ctx, cs, ns, selector) }); err != nil || !waitGone {
		return err
	}
	lo := metav1.ListOptions{LabelSelector: selector}
	err := wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
		left, err := cs.CoreV1().Pods(ns).List(ctx, lo)
		if err != nil {
			return false, nil
		}
		if len(left.Items) == 0 {
			return true, nil
		}
		u.poll(ctx)
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("pods labelled %s in %s are still terminating: %w", selector, ns, err)
	}
	return nil
}

// retryTransient calls f until it succeeds, fails for good, or ctx ends: a failure because
// the API server is unreachable, restarting or overloaded is tried again every apiRetryEvery,
// so clean-up outlasts an API server restart. While it retries it says so on log (when not
// nil): what it does, why, and until when, at once and then every retryNoteEvery.
func retryTransient(ctx context.Context, log io.Writer, what string, f func() error) error {
	var noted time.Time
	for {
		err := f()
		if err == nil || !transientAPIError(err) {
			return err
		}
		if log != nil && time.Since(noted) >= retryNoteEvery {
			noted = time.Now()
			until := "it answers"
			if d, ok := ctx.Deadline(); ok {
				until += fmt.Sprintf(" or %s pass", time.Until(d).Round(time.Second))
			}
			fmt.Fprintf(log, "kube: clean-up: %s: the API server does not answer (%v); trying again every %s until %s (a signal cuts it short)\n",
				what, firstLine(err), apiRetryEvery, until)
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(apiRetryEvery):
		}
	}
}

// retryNoteEvery is how often retryTransient repeats that it is still trying.
const retryNoteEvery = 15 * time.Second

// firstLine is the first line of err's text (a joined error holds one per object).
func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// transientAPIError says whether err is the API server being away for a moment.
func transientAPIError(err error) bool {
	return utilnet.IsConnectionRefused(err) || utilnet.IsConnectionReset(err) || utilnet.IsProbableEOF(err) ||
		utilnet.IsHTTP2ConnectionLost(err) || apierrors.IsServiceUnavailable(err) || apierrors.IsServerTimeout(err) ||
		apierrors.IsTimeout(err) || apierrors.IsTooManyRequests(err) ||
		strings.Contains(err.Error(), "connect: connection refused")
}

// deleteRunObjectsOnce deletes the run's objects (one pass, no waiting).
func deleteRunObjectsOnce(ctx context.Context, cs kubernetes.Interface, ns, selector string) error {
	var errs []error
	lo := metav1.ListOptions{LabelSelector: selector}
	for _, k := range runKinds(cs, ns) {
		ms, err := k.list(ctx, lo)
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("list %s in %s: %w", k.nouns, ns, err))
		}
		for _, m := range ms {
			if err := k.del(ctx, m.Name, k.opts); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("delete %s %s/%s: %w", k.noun, ns, m.Name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// runKind is one kind of namespaced object a run creates: how a Leftover (Kind) and a message
// (noun, nouns) name it, and its List and Delete in one namespace ("" lists every namespace).
type runKind struct {
	kind, noun, nouns string
	list              func(context.Context, metav1.ListOptions) ([]metav1.ObjectMeta, error)
	del               func(context.Context, string, metav1.DeleteOptions) error
	opts              metav1.DeleteOptions
}

// runKinds are the kinds of namespaced objects runs create, in the order they are deleted:
// VirtualMachineInstances (when the clientset can reach them), DaemonSets first (cnperf mesh's agents), or their controller recreates the pods; the Lease
// last: until the objects are gone, the run is not abandoned.
func runKinds(cs kubernetes.Interface, ns string) []runKind {
	grace := TerminationGraceSeconds
	none, graceful := metav1.DeleteOptions{}, metav1.DeleteOptions{GracePeriodSeconds: &grace}
	var kinds []runKind
	if vmis := (RESTVMIs{CS: cs}); vmis.reachable() {
		// VirtualMachineInstances (--vm) first: KubeVirt stops each guest and its launcher pod
		kinds = append(kinds, runKind{kind: "VirtualMachineInstance", noun: "virtual machine instance", nouns: "virtual machine instances",
			list: func(ctx context.Context, lo metav1.ListOptions) ([]metav1.ObjectMeta, error) {
				ms, err := vmis.List(ctx, ns, lo.LabelSelector)
				if noVMIsFor(err) {
					return nil, nil
				}
				return ms, err
			},
			del: func(ctx context.Context, name string, _ metav1.DeleteOptions) error {
				return vmis.Delete(ctx, ns, name)
			},
		})
	}
	return append(kinds, []runKind{
		{"DaemonSet", "daemonset", "daemonsets", metasOf(cs.AppsV1().DaemonSets(ns).List), cs.AppsV1().DaemonSets(ns).Delete, none},
		{"Pod", "pod", "pods", metasOf(cs.CoreV1().Pods(ns).List), cs.CoreV1().Pods(ns).Delete, graceful},
		{"Service", "service", "services", metasOf(cs.CoreV1().Services(ns).List), cs.CoreV1().Services(ns).Delete, none},
		{"ServiceAccount", "service account", "service accounts", metasOf(cs.CoreV1().ServiceAccounts(ns).List),
			cs.CoreV1().ServiceAccounts(ns).Delete, none},
		{"Lease", "lease", "leases", metasOf(cs.CoordinationV1().Leases(ns).List), cs.CoordinationV1().Leases(ns).Delete, none},
	}...)
}

// cleanupKinds are runKinds and, before the Lease, the NetworkAttachmentDefinitions runs create
// (k8s-netperf's --macvlan), reached through nads, and the objects of k8s-netperf's network modes
// (--udnl2, --cudn, --sriov: modeKinds), reached through objs: `cnperf cleanup` removes them; a
// run's own teardown deletes them itself once its pods are gone.
func cleanupKinds(cs kubernetes.Interface, nads NADStore, objs ObjectStore, ns string) []runKind {
	kinds := runKinds(cs, ns)
	nad := runKind{kind: "NetworkAttachmentDefinition", noun: "network attachment definition", nouns: "network attachment definitions",
		list: func(ctx context.Context, lo metav1.ListOptions) ([]metav1.ObjectMeta, error) {
			return nads.List(ctx, ns, lo.LabelSelector)
		},
		del: func(ctx context.Context, name string, _ metav1.DeleteOptions) error {
			return nads.Delete(ctx, ns, name)
		},
	}
	return slices.Concat(kinds[:len(kinds)-1], []runKind{nad}, modeKinds(objs, ns), kinds[len(kinds)-1:])
}

// metasOf turns a typed List into one that returns each object's name, namespace and labels.
func metasOf[L runtime.Object](list func(context.Context, metav1.ListOptions) (L, error)) func(context.Context, metav1.ListOptions) ([]metav1.ObjectMeta, error) {
	return func(ctx context.Context, lo metav1.ListOptions) ([]metav1.ObjectMeta, error) {
		l, err := list(ctx, lo)
		if err != nil {
			return nil, err
		}
		items, err := meta.ExtractList(l)
		if err != nil {
			return nil, err
		}
		out := make([]metav1.ObjectMeta, 0, len(items))
		for _, it := range items {
			a, err := meta.Accessor(it)
			if err != nil {
				return nil, err
			}
			out = append(out, metav1.ObjectMeta{Name: a.GetName(), Namespace: a.GetNamespace(), Labels: a.GetLabels()})
		}
		return out, nil
	}
}

// CleanupOptions select what `cnperf cleanup` removes.
type CleanupOptions struct {
	// RunID names one run: its objects are removed whatever its Lease says. Empty: every run
	// whose Lease has expired.
	RunID string
	// Namespace limits the search to one namespace; empty means all namespaces.
	Namespace string
	// DryRun lists without deleting.
	DryRun bool
	// Wait waits until everything is gone.
	Wait bool
	// Now is the time Leases are judged at (zero: time.Now()).
	Now time.Time
	// NADs reaches NetworkAttachmentDefinitions (nil: through the clientset's REST client).
	NADs NADStore
	// Objects reaches the network modes' objects (nil: through the clientset's REST client).
	Objects ObjectStore
}

// Leftover is one object cleanup found, what it does with it and why.
type Leftover struct {
	Kind      string // Namespace, DaemonSet, Pod, Service, ServiceAccount, NetworkAttachmentDefinition, a network mode's kind, Lease
	Namespace string
	Name      string
	RunID     string
	Remove    bool
	Why       string
}

// CleanupCommand is the command that removes run runID's objects from the cluster that
// kubeconfig and kubeContext ("" each: the default) name.
func CleanupCommand(runID, kubeconfig, kubeContext string) string {
	cmd := "cnperf cleanup --run " + runID
	if kubeconfig != "" {
		cmd += " --kubeconfig " + kubeconfig
	}
	if kubeContext != "" {
		cmd += " --context " + kubeContext
	}
	return cmd
}

// Cleanup removes what cnperf runs left behind, but only what is provably abandoned:
//
//   - a run's objects (labelled with its run id) when the run is named (RunID), or when its
//     Lease — which a live run renews every LeaseRenew — has expired and was not kept on
//     purpose (--keep); a run without a Lease is not provably cnperf's or abandoned and is
//     kept until named;
//   - a namespace only when a run created it (labelled with the run id) and that run's
//     Lease, inside it, has expired (or the run is named); a namespace cnperf did not create
//     is never deleted, only cnperf's objects in it;
//   - never standing config (labelled cnperf.dev/standing, without a run): that is removed
//     only when named (cnperf cleanup --standing NAMESPACE, cnperf load remove).
//
// Every object found is returned with its verdict and the reason, kept ones too.
func Cleanup(ctx context.Context, cs kubernetes.Interface, o CleanupOptions, log io.Writer) ([]Leftover, error) {
	if log == nil {
		log = io.Discard
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	selector := ManagedSelector()
	if o.RunID != "" {
		selector = RunSelector(o.RunID)
	}
	lo := metav1.ListOptions{LabelSelector: selector}
	scope := o.Namespace // "" = all namespaces
	states, err := RunStates(ctx, cs, scope, now)
	if err != nil {
		return nil, err
	}
	if o.Namespace != "" {
		// a run of this namespace may hold its Lease elsewhere: look everywhere, if allowed
		if all, err := RunStates(ctx, cs, "", now); err == nil {
			for k, v := range all {
				if _, ok := states[k]; !ok {
					states[k] = v
				}
			}
		}
	}
	// verdict decides for an object of run (or standing config when run is "").
	verdict := func(m metav1.ObjectMeta, kind string) (bool, string) {
		run := m.Labels[LabelRun]
		if run == "" {
			if m.Labels["cnperf.dev/standing"] != "" || m.Labels["cnperf.dev/standing-namespace"] != "" {
				ns := m.Namespace
				if kind == "Namespace" {
					ns = m.Name
				}
				return false, "standing config: removed only when named (cnperf cleanup --standing " + ns + ", or cnperf load remove -n " + ns + ")"
			}
			return false, "no run label: not created by a cnperf run"
		}
		if o.RunID != "" {
			return true, "run named with --run"
		}
		st, ok := states[run]
		switch {
		case !ok:
			return false, "no Lease proves run " + run + " abandoned (name it with --run " + run + ")"
		case st.Kept:
			return false, st.Describe(now) + "; name it with --run " + run
		case st.Alive:
			return false, "run " + st.Describe(now)
		}
		if kind == "Namespace" && st.Namespace != m.Name {
			return false, fmt.Sprintf("the run's Lease is in %s, not in this namespace: not provably created by it (name it with --run %s)", st.Namespace, run)
		}
		return true, "run " + st.Describe(now)
	}

	var found []Leftover
	var errs []error
	ownNS := map[string]bool{} // namespaces to delete whole
	nss, err := cs.CoreV1().Namespaces().List(ctx, lo)
	if err != nil {
		return nil, fmt.Errorf("list namespaces labelled %s: %w", selector, err)
	}
	for _, ns := range nss.Items {
		if o.Namespace != "" && ns.Name != o.Namespace {
			continue
		}
		rm, why := verdict(ns.ObjectMeta, "Namespace")
		if ns.Labels[LabelRun] == "" && ns.Labels["cnperf.dev/standing-namespace"] == "" && !rm {
			why = "not created by cnperf: never deleted (only cnperf's objects in it)"
		}
		ownNS[ns.Name] = rm
		found = append(found, Leftover{Kind: "Namespace", Name: ns.Name, RunID: ns.Labels[LabelRun], Remove: rm, Why: why})
	}
	add := func(kind string, items []metav1.ObjectMeta) {
		for _, m := range items {
			if ownNS[m.Namespace] {
				continue // goes with its namespace
			}
			rm, why := verdict(m, kind)
			if m.Labels[LabelRun] == "" {
				continue // standing config: `cnperf load count` lists it; reported per namespace
			}
			found = append(found, Leftover{Kind: kind, Namespace: m.Namespace, Name: m.Name, RunID: m.Labels[LabelRun], Remove: rm, Why: why})
		}
	}
	nads := o.NADs
	if nads == nil {
		nads = RESTNADs{cs}
	}
	objs := o.Objects
	if objs == nil {
		objs = RESTObjects{cs}
	}
	for _, k := range cleanupKinds(cs, nads, objs, scope) {
		ms, err := k.list(ctx, lo)
		if err != nil {
			errs = append(errs, fmt.Errorf("list %s: %w", k.nouns, err))
			continue
		}
		add(k.kind, ms)
	}
	if o.DryRun {
		return found, errors.Join(errs...)
	}

	if len(errs) == 0 {
		errs = removeLeftovers(ctx, cs, nads, objs, found, o.Wait, log)
	} else {
		// what could not be listed is not waited for
		errs = append(errs, removeLeftovers(ctx, cs, nads, objs, found, false, log)...)
	}
	return found, errors.Join(errs...)
}

func (l Leftover) where() string {
	if l.Namespace == "" {
		return l.Name
	}
	return l.Namespace + "/" + l.Name
}

// removeLeftovers deletes the leftovers Cleanup judged removable and, with wait and when every
// delete was accepted, waits until they are gone (finishing what a dead kubelet cannot).
func removeLeftovers(ctx context.Context, cs kubernetes.Interface, nads NADStore, objs ObjectStore, found []Leftover, wait bool, log io.Writer) []error {
	var errs []error
	nsTouched := map[string]string{} // namespace -> run
	for _, l := range found {
		if !l.Remove {
			continue
		}
		var err error
		fmt.Fprintf(log, "deleting %s %s (%s)\n", strings.ToLower(l.Kind), l.where(), l.Why)
		if l.Kind == "Namespace" {
			err = DeleteNamespace(ctx, cs, l.Name, false)
		} else if k, ok := runKindOf(cs, nads, objs, l.Namespace, l.Kind); ok {
			err = k.del(ctx, l.Name, k.opts)
		}
		if l.Kind == "Pod" {
			nsTouched[l.Namespace] = l.RunID
		}
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete %s %s: %w", l.Kind, l.where(), err))
		}
	}
	if wait && len(errs) == 0 {
		for _, l := range found {
			if l.Kind == "Namespace" && l.Remove {
				if err := DeleteNamespaceWith(ctx, cs, l.Name, true, NewUnsticker(cs, l.Name, "", log)); err != nil {
					errs = append(errs, err)
				}
			}
		}
		for _, ns := range slices.Sorted(maps.Keys(nsTouched)) {
			sel := RunSelector(nsTouched[ns])
			if err := DeleteRunObjectsWith(ctx, cs, ns, sel, true, NewUnsticker(cs, ns, sel, log)); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errs
}

// runKindOf is the kind of object `cnperf cleanup` removes named kind, in namespace ns.
func runKindOf(cs kubernetes.Interface, nads NADStore, objs ObjectStore, ns, kind string) (runKind, bool) {
	for _, k := range cleanupKinds(cs, nads, objs, ns) {
		if k.kind == kind {
			return k, true
		}
	}
	return runKind{}, false
}
