package kube

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// A run proves it is alive with a coordination.k8s.io Lease in its namespace, renewed while it
// runs. `cnperf cleanup` without --run removes a run's objects only once its Lease has expired:
// a live run of someone else, on another machine, is never touched.
const (
	// LeaseDuration is how long a Lease stays valid after its last renewal.
	LeaseDuration = 30 * time.Second
	// LeaseRenew is how often a live run renews it.
	LeaseRenew = 10 * time.Second

	// AnnotationClientHost and AnnotationClientPID say which cnperf holds the Lease;
	// AnnotationCommand which command (run, mesh, tiger-bench); AnnotationKeep marks a run
	// whose objects were kept on purpose (--keep): cleanup removes them only when named.
	AnnotationClientHost = "cnperf.dev/client-host"
	AnnotationClientPID  = "cnperf.dev/client-pid"
	AnnotationCommand    = "cnperf.dev/command"
	AnnotationKeep       = "cnperf.dev/keep"
)

// LeaseName is the name of a run's Lease.
func LeaseName(runID string) string { return "cnperf-run-" + ShortID(runID) }

// Lease renews one run's Lease until Stop.
type Lease struct {
	cs        kubernetes.Interface
	ns, name  string
	log       io.Writer
	stop      chan struct{}
	done      chan struct{}
	stopOnce  sync.Once
	renewedMu sync.Mutex
	renewed   time.Time
	uid       types.UID // of the created Lease: objects of the run it owns go with it
}

func buildLease(ns, runID, command string, now time.Time) *coordinationv1.Lease {
	host, _ := os.Hostname()
	holder := host + "/" + strconv.Itoa(os.Getpid())
	secs := int32(LeaseDuration / time.Second)
	t := metav1.NewMicroTime(now)
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: LeaseName(runID), Namespace: ns, Labels: RunLabels(runID),
			Annotations: map[string]string{AnnotationClientHost: host, AnnotationClientPID: strconv.Itoa(os.Getpid()), AnnotationCommand: command}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &secs, AcquireTime: &t, RenewTime: &t},
	}
}

// StartLease creates the run's Lease in ns and renews it every LeaseRenew until Stop. Failed
// renewals are reported on log and retried; the run goes on.
func StartLease(ctx context.Context, cs kubernetes.Interface, ns, runID, command string, log io.Writer) (*Lease, error) {
	if log == nil {
		log = io.Discard
	}
	l := &Lease{cs: cs, ns: ns, name: LeaseName(runID), log: log, stop: make(chan struct{}), done: make(chan struct{})}
	now := time.Now()
	got, err := cs.CoordinationV1().Leases(ns).Create(ctx, buildLease(ns, runID, command, now), metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("create lease %s/%s (the proof that this run is alive): %w", ns, l.name, err)
	}
	l.renewed, l.uid = now, got.UID
	go l.loop()
	return l, nil
}

func (l *Lease) loop() {
	defer close(l.done)
	t := time.NewTicker(LeaseRenew)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), LeaseRenew)
		now := time.Now()
		patch := fmt.Sprintf(`{"spec":{"renewTime":%q}}`, metav1.NewMicroTime(now).UTC().Format(metav1.RFC3339Micro))
		_, err := l.cs.CoordinationV1().Leases(l.ns).Patch(ctx, l.name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		cancel()
		if err != nil {
			fmt.Fprintf(l.log, "kube: renew lease %s/%s: %v (cnperf cleanup may take this run for abandoned once it expires)\n", l.ns, l.name, err)
			continue
		}
		l.renewedMu.Lock()
		l.renewed = now
		l.renewedMu.Unlock()
	}
}

// OwnerReference makes an object of the run a dependent of the Lease, so the garbage collector
// removes it when the Lease is deleted (nil for a nil Lease or one without a UID).
func (l *Lease) OwnerReference() *metav1.OwnerReference {
	if l == nil || l.uid == "" {
		return nil
	}
	return &metav1.OwnerReference{APIVersion: "coordination.k8s.io/v1", Kind: "Lease", Name: l.name, UID: l.uid}
}

// Stop ends the renewals (the Lease then expires unless it is deleted). It is idempotent.
func (l *Lease) Stop() {
	if l == nil {
		return
	}
	l.stopOnce.Do(func() { close(l.stop) })
	<-l.done
}

// Keep stops the renewals and marks the Lease as kept on purpose (--keep): `cnperf cleanup`
// then removes the run only when it is named with --run.
func (l *Lease) Keep(ctx context.Context) error {
	if l == nil {
		return nil
	}
	l.Stop()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"true"}}}`, AnnotationKeep)
	_, err := l.cs.CoordinationV1().Leases(l.ns).Patch(ctx, l.name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("mark lease %s/%s as kept: %w", l.ns, l.name, err)
	}
	return nil
}

// RunState is what a run's Lease says about it.
type RunState struct {
	RunID     string
	Namespace string // where its Lease is
	Lease     string
	Holder    string
	Command   string
	Alive     bool // renewed within its duration
	Kept      bool // --keep
	Expires   time.Time
}

// Describe says in a few words what the state means for cleanup.
func (s RunState) Describe(now time.Time) string {
	switch {
	case s.Kept:
		return fmt.Sprintf("kept on purpose (--keep; lease %s/%s held by %s)", s.Namespace, s.Lease, s.Holder)
	case s.Alive:
		return fmt.Sprintf("alive: lease %s/%s renewed by %s, valid for %s more", s.Namespace, s.Lease, s.Holder,
			s.Expires.Sub(now).Round(time.Second))
	default:
		return fmt.Sprintf("abandoned: lease %s/%s (held by %s) expired %s ago", s.Namespace, s.Lease, s.Holder,
			now.Sub(s.Expires).Round(time.Second))
	}
}

// RunStates reads the Leases of cnperf runs in ns ("" = every namespace), by run id.
func RunStates(ctx context.Context, cs kubernetes.Interface, ns string, now time.Time) (map[string]RunState, error) {
	leases, err := cs.CoordinationV1().Leases(ns).List(ctx, metav1.ListOptions{LabelSelector: ManagedSelector()})
	if err != nil {
		return nil, fmt.Errorf("list cnperf leases: %w", err)
	}
	out := map[string]RunState{}
	for _, le := range leases.Items {
		run := le.Labels[LabelRun]
		if run == "" || le.Name != LeaseName(run) {
			continue
		}
		st := RunState{RunID: run, Namespace: le.Namespace, Lease: le.Name, Command: le.Annotations[AnnotationCommand],
			Kept: le.Annotations[AnnotationKeep] == "true"}
		if le.Spec.HolderIdentity != nil {
			st.Holder = *le.Spec.HolderIdentity
		}
		renew := le.CreationTimestamp.Time
		if le.Spec.RenewTime != nil {
			renew = le.Spec.RenewTime.Time
		}
		d := LeaseDuration
		if le.Spec.LeaseDurationSeconds != nil {
			d = time.Duration(*le.Spec.LeaseDurationSeconds) * time.Second
		}
		st.Expires = renew.Add(d)
		st.Alive = now.Before(st.Expires)
		if old, ok := out[run]; ok && (old.Alive || old.Kept) {
			continue // a run with a live Lease anywhere is alive
		}
		out[run] = st
	}
	return out, nil
}

// LiveRunsIn lists the runs other than except whose Lease in ns is alive or kept: a namespace
// holding one must not be deleted as a whole.
func LiveRunsIn(ctx context.Context, cs kubernetes.Interface, ns, except string) ([]RunState, error) {
	states, err := RunStates(ctx, cs, ns, time.Now())
	if err != nil {
		return nil, err
	}
	var out []RunState
	for _, run := range slices.Sorted(maps.Keys(states)) {
		if st := states[run]; run != except && (st.Alive || st.Kept) {
			out = append(out, st)
		}
	}
	return out, nil
}
