package kube

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestParsePullPolicy(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want corev1.PullPolicy
		err  bool
	}{
		{"IfNotPresent", corev1.PullIfNotPresent, false},
		{"Always", corev1.PullAlways, false},
		{"Never", corev1.PullNever, false},
		{"always", "", true}, // Kubernetes' spelling only
		{"", "", true},
		{"Sometimes", "", true},
	} {
		got, err := ParsePullPolicy(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParsePullPolicy(%q) = %q, %v", tc.in, got, err)
		}
		if err != nil && !strings.Contains(err.Error(), "--image-pull-policy") {
			t.Errorf("ParsePullPolicy(%q): error %q does not name the flag", tc.in, err)
		}
	}
}
