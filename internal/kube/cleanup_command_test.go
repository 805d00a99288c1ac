package kube

import "testing"

func TestCleanupCommand(t *testing.T) {
	for _, tc := range []struct{ kubeconfig, context, want string }{
		{"", "", "cnperf cleanup --run r1"},
		{"/k", "", "cnperf cleanup --run r1 --kubeconfig /k"},
		{"", "c2", "cnperf cleanup --run r1 --context c2"},
		{"/k", "c2", "cnperf cleanup --run r1 --kubeconfig /k --context c2"},
	} {
		if got := CleanupCommand("r1", tc.kubeconfig, tc.context); got != tc.want {
			t.Errorf("CleanupCommand(r1, %q, %q) = %q, want %q", tc.kubeconfig, tc.context, got, tc.want)
		}
	}
}
