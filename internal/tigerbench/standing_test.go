package tigerbench

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/cnperf/cnperf/internal/kube"
)

// The fake clientset stands in for the API server here: it applies, lists and deletes like
// one (with server-side apply field management), but runs no controllers, so tests mark
// deployments ready themselves. The real API server is exercised by test/e2e.

func names[T any](items []T, name func(T) string) []string {
	var out []string
	for _, it := range items {
		out = append(out, name(it))
	}
	slices.Sort(out)
	return out
}

// markReady plays the deployment controller: it reports every deployment of ns as ready, until ctx ends.
func markReady(ctx context.Context, cs kubernetes.Interface, ns string) {
	for ctx.Err() == nil {
		ds, err := cs.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
		if err == nil {
			for i := range ds.Items {
				d := &ds.Items[i]
				n := *d.Spec.Replicas
				if d.Status.ReadyReplicas != n || d.Status.ObservedGeneration < d.Generation {
					d.Status.Replicas, d.Status.ReadyReplicas, d.Status.UpdatedReplicas = n, n, n
					d.Status.ObservedGeneration = d.Generation
					_, _ = cs.AppsV1().Deployments(ns).UpdateStatus(ctx, d, metav1.UpdateOptions{})
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestStandingApplyReconcilesAndRemoves(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs := fake.NewClientset()
	go markReady(ctx, cs, "testns")
	st := &Standing{Client: cs}
	spec := StandingSpec{Namespace: "testns", Pods: 7, Services: 12, Policies: 5, IdlePolicies: 3, Nodes: []string{"node1", "node2"},
		Image: "img:v1", Parallelism: 4, ReadyTimeout: 10 * time.Second}
	rep, err := st.Apply(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	// 2 deployments + 12 services + 5 policies + 3 idle + 1 allow.
	if rep.ObjectsApplied != 23 || rep.ObjectsDeleted != 0 || rep.ServiceBackends != 10 || rep.Error != "" {
		t.Errorf("report %+v", rep)
	}
	ns, err := cs.CoreV1().Namespaces().Get(ctx, "testns", metav1.GetOptions{})
	if err != nil || ns.Labels[LabelStandingNamespace] != "true" {
		t.Fatalf("namespace %v %v", ns, err)
	}
	dep, err := cs.AppsV1().Deployments("testns").Get(ctx, PodsDeployment, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var pinned []string
	if a := dep.Spec.Template.Spec.Affinity; a != nil {
		for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			if len(term.MatchFields) == 1 && len(term.MatchFields[0].Values) == 1 {
				pinned = append(pinned, term.MatchFields[0].Values[0])
			}
		}
	}
	// One term per node: the API server takes a single value per metadata.name selector.
	if *dep.Spec.Replicas != 7 || !slices.Equal(pinned, []string{"node1", "node2"}) {
		t.Errorf("standing deployment: replicas %d, nodes %v", *dep.Spec.Replicas, pinned)
	}
	if got := dep.ManagedFields; len(got) == 0 || got[0].Manager != FieldManager || got[0].Operation != metav1.ManagedFieldsOperationApply {
		t.Errorf("not server-side applied by %q: %+v", FieldManager, got)
	}
	svcs, _ := cs.CoreV1().Services("testns").List(ctx, metav1.ListOptions{})
	if got := names(svcs.Items, func(s corev1.Service) string { return s.Name }); len(got) != 12 || got[0] != "standing-svc-00000" || got[11] != "standing-svc-00011" {
		t.Errorf("services %v", got)
	}
	pols, _ := cs.NetworkingV1().NetworkPolicies("testns").List(ctx, metav1.ListOptions{})
	if len(pols.Items) != 9 {
		t.Errorf("%d policies, want 5 + 3 idle + 1 allow", len(pols.Items))
	}

	// A second test wants less: the extra objects go, the rest stays.
	spec.Services, spec.Policies, spec.IdlePolicies, spec.Pods = 2, 0, 1, 3
	rep, err = st.Apply(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	// Deleted: 10 services, 5 policies, 2 idle policies, the allow policy.
	if rep.ObjectsDeleted != 18 {
		t.Errorf("deleted %d, want 18: %+v", rep.ObjectsDeleted, rep)
	}
	c, err := st.Count(ctx, "testns")
	if err != nil {
		t.Fatal(err)
	}
	if c.Services != 2 || c.Policies != 0 || c.IdlePolicies != 1 || c.AllowPolicy || !c.OwnedNamespace {
		t.Errorf("counts %+v", c)
	}
	dep, _ = cs.AppsV1().Deployments("testns").Get(ctx, PodsDeployment, metav1.GetOptions{})
	if *dep.Spec.Replicas != 3 {
		t.Errorf("replicas %d, want 3", *dep.Spec.Replicas)
	}

	// No services: the backends deployment goes too.
	spec.Services = 0
	if _, err := st.Apply(ctx, spec); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.AppsV1().Deployments("testns").Get(ctx, BackendsDeployment, metav1.GetOptions{}); err == nil {
		t.Error("backends deployment kept without services")
	}

	// Removing deletes the namespace cnperf created.
	if _, err := st.Remove(ctx, "testns", true, 4); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Namespaces().Get(ctx, "testns", metav1.GetOptions{}); err == nil {
		t.Error("namespace cnperf created is still there")
	}
}

func TestStandingRemoveKeepsForeignNamespace(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs := fake.NewClientset(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "theirs"}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "their-svc", Namespace: "theirs"}})
	go markReady(ctx, cs, "theirs")
	st := &Standing{Client: cs}
	if _, err := st.Apply(ctx, StandingSpec{Namespace: "theirs", Services: 3, Policies: 2, Image: "img"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Remove(ctx, "theirs", true, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Namespaces().Get(ctx, "theirs", metav1.GetOptions{}); err != nil {
		t.Errorf("a namespace cnperf did not create was deleted: %v", err)
	}
	svcs, _ := cs.CoreV1().Services("theirs").List(ctx, metav1.ListOptions{})
	if got := names(svcs.Items, func(s corev1.Service) string { return s.Name }); !slices.Equal(got, []string{"their-svc"}) {
		t.Errorf("services left %v, want only theirs", got)
	}
	pols, _ := cs.NetworkingV1().NetworkPolicies("theirs").List(ctx, metav1.ListOptions{})
	if len(pols.Items) != 0 {
		t.Errorf("%d policies left", len(pols.Items))
	}
}

// A namespace cnperf created for standing config is not deleted while a run other than the
// remover holds a live Lease in it (cnperf cleanup's rule): only the standing objects go.
func TestStandingRemoveSparesALiveRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs := fake.NewClientset()
	go markReady(ctx, cs, "perf")
	st := &Standing{Client: cs, RunID: "tiger-run"}
	if _, err := st.Apply(ctx, StandingSpec{Namespace: "perf", Services: 2, Image: "img"}); err != nil {
		t.Fatal(err)
	}
	own, err := kube.StartLease(ctx, cs, "perf", "tiger-run", "tiger-bench", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer own.Stop()
	other, err := kube.StartLease(ctx, cs, "perf", "someone-else", "run", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Remove(ctx, "perf", true, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Namespaces().Get(ctx, "perf", metav1.GetOptions{}); err != nil {
		t.Fatalf("the namespace of a live run was deleted: %v", err)
	}
	if svcs, _ := cs.CoreV1().Services("perf").List(ctx, metav1.ListOptions{}); len(svcs.Items) != 0 {
		t.Errorf("%d standing services left", len(svcs.Items))
	}
	// once the other run is gone, the namespace goes (the remover's own Lease does not keep it)
	other.Stop()
	if err := cs.CoordinationV1().Leases("perf").Delete(ctx, kube.LeaseName("someone-else"), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Remove(ctx, "perf", true, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Namespaces().Get(ctx, "perf", metav1.GetOptions{}); err == nil {
		t.Error("the standing namespace survived with no live run in it")
	}
}

func TestStandingNotReadySaysWhy(t *testing.T) {
	ctx := context.Background()
	pending := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "standing-deployment-x", Namespace: "ns", Labels: standingPodLabels(StandingPods)},
		Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
			Message: "0/2 nodes are available: 2 Too many pods."}}}}
	cs := fake.NewClientset(pending)
	st := &Standing{Client: cs}
	rep, err := st.Apply(ctx, StandingSpec{Namespace: "ns", Pods: 1, Image: "img", ReadyTimeout: 300 * time.Millisecond})
	if err == nil {
		t.Fatal("no error although the deployment never became ready")
	}
	for _, want := range []string{"not ready after 300ms", "standing-deployment: 0 of 1 ready", "1× unschedulable: 0/2 nodes are available: 2 Too many pods."} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if rep.Error != err.Error() || rep.ObjectsApplied != 1 {
		t.Errorf("report %+v", rep)
	}
}

func TestStandingValidate(t *testing.T) {
	err := StandingSpec{Namespace: "", Pods: -1, Image: ""}.Validate()
	for _, want := range []string{"pods must not be negative", "no namespace", "no image"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
}

func TestWanted(t *testing.T) {
	tests := []struct {
		name, prefix string
		n            int
		want         bool
	}{
		{"standing-svc-00000", ServicePrefix, 1, true},
		{"standing-svc-00001", ServicePrefix, 1, false},
		{"standing-svc-1", ServicePrefix, 5, false},
		{"standing-svc-abcde", ServicePrefix, 5, false},
		{AllowPolicy, AllowPolicy, 1, true},
		{AllowPolicy, AllowPolicy, 0, false},
	}
	for _, tt := range tests {
		if got := wanted(tt.name, tt.prefix, tt.n); got != tt.want {
			t.Errorf("wanted(%q, %q, %d) = %v", tt.name, tt.prefix, tt.n, got)
		}
	}
}
