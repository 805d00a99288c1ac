package kube

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// A stopped kubelet never confirms its pods' deletion: the tests below use the fake
// clientset, since no real kubelet can be stopped in a unit test (test/e2e's
// TestFaultClientKubeletStopped does it on the e2e cluster).
func TestUnstickerForcesOnlyPodsOfGoneKubelets(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	node := func(name string, ready corev1.ConditionStatus) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: ready, Reason: "NodeStatusUnknown", Message: "Kubelet stopped posting node status."}}}}
	}
	lease := func(name string, renew time.Time) *coordinationv1.Lease {
		d := int32(40)
		return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: nodeLeaseNamespace},
			Spec: coordinationv1.LeaseSpec{LeaseDurationSeconds: &d, RenewTime: &metav1.MicroTime{Time: renew}}}
	}
	pod := func(nodeName string, deletedAgo time.Duration) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Labels: map[string]string{LabelRun: "r1"}},
			Spec: corev1.PodSpec{NodeName: nodeName}}
		if deletedAgo >= 0 {
			p.DeletionTimestamp = &metav1.Time{Time: t0.Add(-deletedAgo)}
		}
		return p
	}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		node *corev1.Node
		// renews is the node Lease's renew time at each look (the looks are stuckEvery
		// apart, from t0); nil: no Lease.
		renews []time.Time
		looks  int
		forced bool
		why    string
	}{
		{name: "node not Ready", pod: pod("n2", 10*time.Second), node: node("n2", corev1.ConditionUnknown), looks: 1,
			forced: true, why: "node n2 is not Ready (NodeStatusUnknown: Kubelet stopped posting node status.)"},
		{name: "within its grace period", pod: pod("n2", time.Second), node: node("n2", corev1.ConditionUnknown), looks: 1},
		{name: "not being deleted", pod: pod("n2", -1), node: node("n2", corev1.ConditionUnknown), looks: 1},
		{name: "Ready, Lease renewed", pod: pod("n2", 10*time.Second), node: node("n2", corev1.ConditionTrue),
			renews: []time.Time{t0, t0.Add(10 * time.Second), t0.Add(10 * time.Second), t0.Add(20 * time.Second),
				t0.Add(20 * time.Second), t0.Add(30 * time.Second), t0.Add(30 * time.Second), t0.Add(30 * time.Second),
				t0.Add(30 * time.Second), t0.Add(40 * time.Second), t0.Add(40 * time.Second), t0.Add(50 * time.Second)}, looks: 12},
		{name: "Ready, Lease silent for half its duration", pod: pod("n2", 10*time.Second), node: node("n2", corev1.ConditionTrue),
			renews: repeat(t0.Add(-5*time.Second), 11), looks: 11, forced: true,
			why: "its kubelet has not renewed its Lease kube-node-lease/n2 for 20s"},
		{name: "Ready, Lease silent for less", pod: pod("n2", 10*time.Second), node: node("n2", corev1.ConditionTrue),
			renews: repeat(t0.Add(-5*time.Second), 10), looks: 10},
		{name: "Ready, no Lease", pod: pod("n2", 10*time.Second), node: node("n2", corev1.ConditionTrue), looks: 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			cs := fake.NewSimpleClientset(tc.pod, tc.node)
			var log bytes.Buffer
			u := NewUnsticker(cs, "ns", "", &log)
			now := t0
			u.now = func() time.Time { return now }
			u.last = t0.Add(-stuckEvery)
			for i := 0; i < tc.looks; i++ {
				if i < len(tc.renews) {
					l := lease("n2", tc.renews[i])
					if _, err := cs.CoordinationV1().Leases(nodeLeaseNamespace).Update(ctx, l, metav1.UpdateOptions{}); apierrors.IsNotFound(err) {
						if _, err := cs.CoordinationV1().Leases(nodeLeaseNamespace).Create(ctx, l, metav1.CreateOptions{}); err != nil {
							t.Fatal(err)
						}
					}
				}
				u.poll(ctx)
				u.poll(ctx) // a second call within stuckEvery looks at nothing
				now = now.Add(stuckEvery)
			}
			_, err := cs.CoreV1().Pods("ns").Get(ctx, "p", metav1.GetOptions{})
			if forced := apierrors.IsNotFound(err); forced != tc.forced {
				t.Fatalf("force-deleted %v, want %v; log %q", forced, tc.forced, log.String())
			}
			if !tc.forced {
				if log.Len() != 0 {
					t.Errorf("said %q about a pod it left alone", log.String())
				}
				return
			}
			want := "kube: pod ns/p on node n2 was still terminating "
			if got := log.String(); !strings.HasPrefix(got, want) || !strings.Contains(got, "after its grace period and "+tc.why+": force-deleted it") {
				t.Errorf("message %q, want %q…%q", got, want, tc.why)
			}
		})
	}
}

func repeat(t time.Time, n int) []time.Time {
	out := make([]time.Time, n)
	for i := range out {
		out[i] = t
	}
	return out
}

// Only a pod matching the selector is touched when cnperf deletes its objects in a
// namespace it did not create.
func TestUnstickerKeepsToSelector(t *testing.T) {
	ctx := context.Background()
	gone := metav1.NewTime(time.Now().Add(-time.Minute))
	mk := func(name string, labels map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: labels, DeletionTimestamp: &gone},
			Spec: corev1.PodSpec{NodeName: "n2"}}
	}
	cs := fake.NewSimpleClientset(mk("ours", RunLabels("r1")), mk("theirs", nil),
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n2"}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse}}}})
	var log bytes.Buffer
	NewUnsticker(cs, "ns", RunSelector("r1"), &log).poll(ctx)
	left, err := cs.CoreV1().Pods("ns").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(left.Items) != 1 || left.Items[0].Name != "theirs" {
		t.Fatalf("left %v, want only the pod without the run's label", left.Items)
	}
}
