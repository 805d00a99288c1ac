package kube

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// A mesh run's agent DaemonSet must go with the run's other objects, or its controller
// would recreate the agent pods that cleanup deletes.
func TestDeleteRunObjectsRemovesDaemonSets(t *testing.T) {
	labels := map[string]string{"cnperf.dev/run": "r1"}
	cs := fake.NewSimpleClientset(
		&appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agents", Namespace: "ns", Labels: labels}},
		&appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: "ns"}},
	)
	if err := DeleteRunObjects(context.Background(), cs, "ns", "cnperf.dev/run=r1", false); err != nil {
		t.Fatal(err)
	}
	left, err := cs.AppsV1().DaemonSets("ns").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(left.Items) != 1 || left.Items[0].Name != "other" {
		t.Fatalf("want only the unlabelled DaemonSet left, got %+v", left.Items)
	}
}
