package kube

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestNodeBlockWhy: what keeps pods off a node, as Schedulable finds it and Why words it (the
// platform, mesh and tiger-bench all say it so; a taint each words for its own flags).
func TestNodeBlockWhy(t *testing.T) {
	ready := []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	tests := []struct {
		name      string
		node      corev1.Node
		wantBlock NodeBlock
		want      string
	}{
		{"usable", corev1.Node{Status: corev1.NodeStatus{Conditions: ready}}, NodeUsable, ""},
		{"not ready", corev1.Node{}, NodeNotReady, "not Ready"},
		{"cordoned", corev1.Node{Spec: corev1.NodeSpec{Unschedulable: true}, Status: corev1.NodeStatus{Conditions: ready}},
			NodeCordoned, "cordoned (unschedulable)"},
		{"windows", corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{LabelOS: "windows"}},
			Status: corev1.NodeStatus{Conditions: ready}}, NodeNotLinux, "kubernetes.io/os=windows (agents need Linux)"},
		{"tainted", corev1.Node{Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}},
			Status: corev1.NodeStatus{Conditions: ready}}, NodeTainted, ""},
	}
	for _, tt := range tests {
		block, _ := Schedulable(&tt.node, nil)
		if block != tt.wantBlock {
			t.Errorf("%s: block %d, want %d", tt.name, block, tt.wantBlock)
		}
		if got := block.Why(&tt.node, "agents"); got != tt.want {
			t.Errorf("%s: Why %q, want %q", tt.name, got, tt.want)
		}
	}
}
