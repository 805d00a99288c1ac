package kube

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// A container the kubelet cannot create yet because its cache of the run's Secret has not
// synced (seen on the e2e cluster: "failed to sync secret cache: timed out waiting for the
// condition") is retried by the kubelet; any other CreateContainerConfigError is fatal.
func TestPodFatalWaiting(t *testing.T) {
	for _, tc := range []struct{ reason, message, want string }{
		{"CreateContainerConfigError", "failed to sync secret cache: timed out waiting for the condition", ""},
		{"CreateContainerConfigError", `secret "cnperf-token-0b5c3e2a" not found`, "CreateContainerConfigError"},
		{"ErrImagePull", "pull access denied", "ErrImagePull"},
		{"ContainerCreating", "", ""},
	} {
		p := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{Name: "c",
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: tc.reason, Message: tc.message}}}}}}
		if got := podFatal(p); got != tc.want {
			t.Errorf("%s %q: podFatal = %q, want %q", tc.reason, tc.message, got, tc.want)
		}
	}
}
