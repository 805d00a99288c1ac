package kube

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Well-known node labels.
const (
	LabelZone            = "topology.kubernetes.io/zone"
	LabelZoneBeta        = "failure-domain.beta.kubernetes.io/zone"
	LabelRegion          = "topology.kubernetes.io/region"
	LabelInstanceType    = "node.kubernetes.io/instance-type"
	LabelInstanceTypeOld = "beta.kubernetes.io/instance-type"
	LabelOS              = "kubernetes.io/os"
	LabelControlPlane    = "node-role.kubernetes.io/control-plane"
	LabelMaster          = "node-role.kubernetes.io/master"
	// LabelNetperfRole is k8s-netperf's node hint: netperf=server or netperf=client.
	LabelNetperfRole = "netperf"
)

// Zone is a node's zone label (the beta label when the GA one is not set).
func Zone(n *corev1.Node) string {
	if z := n.Labels[LabelZone]; z != "" {
		return z
	}
	return n.Labels[LabelZoneBeta]
}

// NodeBlock is what keeps pods off a node (Schedulable).
type NodeBlock int

// What keeps pods off a node, in the order Schedulable checks.
const (
	NodeUsable   NodeBlock = iota
	NodeNotReady           // its Ready condition is not True
	NodeCordoned           // spec.unschedulable
	NodeNotLinux           // labelled kubernetes.io/os other than linux
	NodeTainted            // a NoSchedule or NoExecute taint the pods do not tolerate
)

// Why says in words what keeps pods off n when b is one of the blocks every caller words
// alike: "not Ready", "cordoned (unschedulable)", "kubernetes.io/os=windows (WHO need
// Linux)", with who naming the pods ("endpoints", "agents"). It is "" for NodeUsable and for
// NodeTainted, whose words name the caller's own flag (--tolerations, or none).
func (b NodeBlock) Why(n *corev1.Node, who string) string {
	switch b {
	case NodeNotReady:
		return "not Ready"
	case NodeCordoned:
		return "cordoned (unschedulable)"
	case NodeNotLinux:
		return fmt.Sprintf("%s=%s (%s need Linux)", LabelOS, n.Labels[LabelOS], who)
	}
	return ""
}

// Schedulable says whether pods that tolerate tols can run on n, and if not, what stops them
// (the taint, for NodeTainted): the one node check of the platform, mesh and tiger-bench, worded
// by NodeBlock.Why (a taint by each for its own flags).
func Schedulable(n *corev1.Node, tols []corev1.Toleration) (NodeBlock, *corev1.Taint) {
	ready := false
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
			ready = true
		}
	}
	if !ready {
		return NodeNotReady, nil
	}
	if n.Spec.Unschedulable {
		return NodeCordoned, nil
	}
	if os, ok := n.Labels[LabelOS]; ok && os != "linux" {
		return NodeNotLinux, nil
	}
	for i := range n.Spec.Taints {
		t := &n.Spec.Taints[i]
		if t.Effect == corev1.TaintEffectPreferNoSchedule {
			continue
		}
		tolerated := false
		for j := range tols {
			if tols[j].ToleratesTaint(t) {
				tolerated = true
				break
			}
		}
		if !tolerated {
			return NodeTainted, t
		}
	}
	return NodeUsable, nil
}

// TaintString writes a taint as --tolerations takes it: KEY[=VALUE]:EFFECT.
func TaintString(t *corev1.Taint) string {
	if t.Value != "" {
		return fmt.Sprintf("%s=%s:%s", t.Key, t.Value, t.Effect)
	}
	return fmt.Sprintf("%s:%s", t.Key, t.Effect)
}

// ParseTolerations reads --tolerations items, KEY[=VALUE][:EFFECT]; "*" tolerates everything.
// cnperf run and cnperf mesh share it.
func ParseTolerations(in []string) ([]corev1.Toleration, error) {
	var out []corev1.Toleration
	for _, t := range in {
		t = strings.TrimSpace(t)
		if t == "" {
			continue
		}
		if t == "*" {
			out = append(out, corev1.Toleration{Operator: corev1.TolerationOpExists})
			continue
		}
		kv, effect, hasEffect := strings.Cut(t, ":")
		tol := corev1.Toleration{}
		if hasEffect {
			switch corev1.TaintEffect(effect) {
			case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
				tol.Effect = corev1.TaintEffect(effect)
			default:
				return nil, fmt.Errorf("--tolerations: %q: effect %q is not NoSchedule, PreferNoSchedule or NoExecute", t, effect)
			}
		}
		k, v, hasValue := strings.Cut(kv, "=")
		if k == "" {
			return nil, fmt.Errorf("--tolerations: %q has no key (KEY[=VALUE][:EFFECT], or * for all)", t)
		}
		tol.Key = k
		if hasValue {
			tol.Operator, tol.Value = corev1.TolerationOpEqual, v
		} else {
			tol.Operator = corev1.TolerationOpExists
		}
		out = append(out, tol)
	}
	return out, nil
}
