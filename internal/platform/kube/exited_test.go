package kube

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/kube"
)

// A server whose container exits before it is ready (sockperf 3.7 refusing "-i ::") fails the
// cases it serves with its reason; the run's other servers still measure, and its pod is made
// again with that container idle.
func TestRefusedServerFailsItsCases(t *testing.T) {
	ctx := context.Background()
	c := newCluster(t, node("node1", "zone-a"), node("node2", "zone-a"))
	made := map[string]int{}
	c.podFate = func(p *corev1.Pod) *corev1.PodStatus {
		made[p.Name]++
		if !strings.Contains(p.Name, "iperf3-pod") || made[p.Name] > 1 {
			return nil
		}
		return &corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "iperf3",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}}}}
	}
	p := newTestPlatform(t, c, Options{})
	cases := casesWith([]string{"iperf3", "qperf"}, []api.Path{api.PathPodPodCrossNode, api.PathHostHost})
	if err := p.Prepare(ctx, cases, testDrivers); err != nil {
		t.Fatalf("Prepare: %v (a refused server must not stop the run)", err)
	}
	defer func() { _ = p.Close(ctx) }()
	for _, cs := range cases {
		_, err := p.Pair(ctx, cs)
		refused := cs.Driver == "iperf3" && cs.Path == api.PathPodPodCrossNode
		switch {
		case refused && err == nil:
			t.Errorf("%s %s: paired, but its server exited", cs.Driver, cs.Path)
		case refused && !strings.Contains(err.Error(), `iperf3 server "iperf3" exited before it was ready: fake logs (iperf3 -s -p 5201, exit code 0; pod cnperf-srv-iperf3-pod-`):
			t.Errorf("%s %s: error %q does not say which server exited, what it said and how it ran", cs.Driver, cs.Path, err)
		case !refused && err != nil:
			t.Errorf("%s %s: %v", cs.Driver, cs.Path, err)
		}
	}
	pod, err := c.cs.CoreV1().Pods("cnperf").Get(ctx, serverPodName(testRun, "iperf3", api.NetworkPod), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if made[pod.Name] != 2 || len(pod.Spec.Containers) != 1 || !slices.Equal(pod.Spec.Containers[0].Command, kube.IdleCommand) ||
		pod.Spec.Containers[0].StartupProbe != nil {
		t.Errorf("pod made %d times, containers %+v: want it made again with the exited server idle", made[pod.Name], pod.Spec.Containers)
	}
}

// remakePod waits until the old pod is gone (a graceful delete: the kubelet still stops its
// containers) before it creates the new one, and a failed read is its error, with the cause.
func TestRemakePodWaitsUntilGone(t *testing.T) {
	for _, tc := range []struct {
		name    string
		getErr  error // what a read of the pod answers after the delete (nil: the pod, twice, then gone)
		wantErr string
	}{
		{name: "gone after two reads"},
		{name: "read fails", getErr: apierrors.NewInternalError(errors.New("etcd down")), wantErr: "get pod cnperf/srv: Internal error occurred: etcd down"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t, node("node1", "zone-a"))
			p := newTestPlatform(t, c, Options{})
			e := endpointSpec{Name: "srv", Role: "client", Net: api.NetworkPod}
			ctx := context.Background()
			if _, err := c.cs.CoreV1().Pods("cnperf").Create(ctx, buildPod(p.s, testRun, e), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			reads, deleted := 0, false
			c.cs.PrependReactor("delete", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
				deleted = true
				return false, nil, nil
			})
			c.cs.PrependReactor("get", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
				if !deleted {
					return false, nil, nil
				}
				reads++
				switch {
				case tc.getErr != nil:
					return true, nil, tc.getErr
				case reads <= 2:
					return true, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "srv", Namespace: "cnperf"}}, nil
				}
				return true, nil, apierrors.NewNotFound(corev1.Resource("pods"), "srv")
			})
			c.cs.PrependReactor("create", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
				if tc.getErr == nil && reads < 3 {
					t.Errorf("pod made again after %d reads, before the old one was gone", reads)
				}
				return false, nil, nil
			})
			err := p.remakePod(ctx, e)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
		})
	}
}
