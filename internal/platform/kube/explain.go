package kube

import (
	"context"
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/kube"
)

// explainer returns the platform.Pair.Explain of a pair: after a failed sample it looks at the
// pair's pods and their nodes, so the sample's error names what happened to them (a network
// error alone — "connection closed by peer", "no route to host" — does not say that the
// server pod was deleted or that a node's kubelet is gone).
func (p *Platform) explainer(pl *api.Placement) func(context.Context, error) string {
	return func(ctx context.Context, err error) string {
		var why []string
		for _, ep := range []api.Endpoint{pl.Server, pl.Client} {
			if ep.Pod == "" || ep.Node == "local" {
				continue
			}
			if w := p.endpointTrouble(ctx, ep); w != "" {
				why = append(why, w)
			}
		}
		// Exec goes API server -> kubelet of the client's node -> container.
		podClient := pl.Client.Pod != "" && pl.Client.Node != "" && pl.Client.Node != "local"
		if podClient && len(why) == 0 && !kubeletUnreachable(err) && p.stream != nil {
			// Nothing seen in the API: can the client pod still be reached? (A kubelet that
			// died during the exec ends the stream without an error or an exit code.)
			perr := p.stream(ctx, p.namespaceOfEndpoint(pl.Client), pl.Client.Pod, kube.ClientContainer, []string{"true"}, io.Discard, io.Discard)
			if kubeletUnreachable(perr) {
				err = perr
			}
		}
		if podClient && kubeletUnreachable(err) {
			why = append(why, fmt.Sprintf("the API server could not reach the kubelet of node %s, where client pod %s runs", pl.Client.Node, pl.Client.Pod))
		}
		// (on a secondary network NetworkPolicy does not apply: it is not a cause there)
		if len(why) == 0 && unreachable(err) && pl.Attachment == nil {
			why = append(why, p.policyTrouble(ctx, pl)...)
		}
		return strings.Join(why, "; ")
	}
}

// endpointTrouble says what is wrong with an endpoint's pod or node, "" when nothing is (or
// the API server cannot tell).
func (p *Platform) endpointTrouble(ctx context.Context, ep api.Endpoint) string {
	ns := p.namespaceOfEndpoint(ep)
	pod, err := p.cs.CoreV1().Pods(ns).Get(ctx, ep.Pod, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Sprintf("%s pod %s/%s is gone: it was deleted", ep.Role, ns, ep.Pod)
	case err != nil:
		return ""
	case pod.DeletionTimestamp != nil:
		return fmt.Sprintf("%s pod %s/%s is being deleted", ep.Role, ns, ep.Pod)
	case pod.Spec.NodeName != ep.Node && ep.Node != "":
		return fmt.Sprintf("%s pod %s/%s was replaced (now on node %s, was on %s)", ep.Role, ns, ep.Pod, pod.Spec.NodeName, ep.Node)
	}
	var notes []string
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.RestartCount > 0 {
			notes = append(notes, fmt.Sprintf("container %s restarted %d times", cs.Name, cs.RestartCount))
		}
	}
	if !kube.PodReady(pod) {
		notes = append(notes, "not ready")
	}
	if n, err := p.cs.CoreV1().Nodes().Get(ctx, pod.Spec.NodeName, metav1.GetOptions{}); err == nil {
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status != corev1.ConditionTrue {
				notes = append(notes, fmt.Sprintf("its node %s is not Ready (%s)", n.Name, c.Reason))
			}
		}
	}
	if len(notes) == 0 {
		return ""
	}
	return fmt.Sprintf("%s pod %s/%s: %s", ep.Role, ns, ep.Pod, strings.Join(notes, ", "))
}

// kubeletUnreachable says whether err is the API server failing to reach a kubelet for an
// exec: "error dialing backend: …" (up to Kubernetes 1.33), "Internal error occurred: error
// sending request: Post "https://NODE:10250/exec/…": dial tcp …" (1.34).
func kubeletUnreachable(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "error dialing backend") ||
		(strings.Contains(msg, "error sending request") && strings.Contains(msg, "/exec/") && strings.Contains(msg, "dial tcp"))
}

// unreachable says whether err looks like traffic that got no answer or was refused (what a
// NetworkPolicy that denies it looks like to the client: dropped packets time out, a REJECT
// refuses), as opposed to e.g. a tool's bad output.
func unreachable(err error) bool {
	if err == nil {
		return false
	}
	msg := strings.ToLower(err.Error())
	for _, s := range []string{"timeout", "timed out", "connection refused", "no route to host", "unreachable", "deadline exceeded", "connect:"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// policyTrouble names the NetworkPolicies of their namespaces that select the server pod for
// ingress or the client pod for egress: when traffic between them gets no answer, one of them
// (or its absence of an allow rule) is the likely cause. Pods on the host network are not
// subject to NetworkPolicy. Nil when none select them, or when they cannot be listed.
func (p *Platform) policyTrouble(ctx context.Context, pl *api.Placement) []string {
	if pl.Server.Pod == "" && pl.Client.Pod == "" {
		return nil
	}
	var why []string
	for _, side := range []struct {
		ep  api.Endpoint
		typ networkingv1.PolicyType
		dir string
	}{{pl.Server, networkingv1.PolicyTypeIngress, "ingress"}, {pl.Client, networkingv1.PolicyTypeEgress, "egress"}} {
		if side.ep.Pod == "" || side.ep.Node == "local" {
			continue
		}
		names := p.selectingPolicies(ctx, side.ep, side.typ)
		if len(names) == 0 {
			continue
		}
		list := strings.Join(names, ", ")
		if len(names) > 3 {
			list = fmt.Sprintf("%s and %d more", strings.Join(names[:3], ", "), len(names)-3)
		}
		why = append(why, fmt.Sprintf("%s pod %s/%s is selected for %s by NetworkPolicy %s: traffic they do not allow is dropped (a likely cause)",
			side.ep.Role, p.namespaceOfEndpoint(side.ep), side.ep.Pod, side.dir, list))
	}
	return why
}

// selectingPolicies are the names of the NetworkPolicies of an endpoint's namespace that select
// its pod for traffic of type t (kube.SelectingPolicies).
func (p *Platform) selectingPolicies(ctx context.Context, ep api.Endpoint, t networkingv1.PolicyType) []string {
	pod, err := p.cs.CoreV1().Pods(p.namespaceOfEndpoint(ep)).Get(ctx, ep.Pod, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return kube.SelectingPolicies(ctx, p.cs, pod, t)
}

// policiesNotApplied are the NetworkPolicies that select a secondary-network case's server pod
// (ingress) or client pod (egress), NAMESPACE/NAME: NetworkPolicy covers the cluster's own
// network, not a Multus attachment, so on the attachment they do not apply.
func (p *Platform) policiesNotApplied(ctx context.Context, pl *api.Placement) []string {
	var out []string
	for _, side := range []struct {
		ep  api.Endpoint
		typ networkingv1.PolicyType
	}{{pl.Server, networkingv1.PolicyTypeIngress}, {pl.Client, networkingv1.PolicyTypeEgress}} {
		if side.ep.Pod == "" {
			continue
		}
		for _, n := range p.selectingPolicies(ctx, side.ep, side.typ) {
			if q := p.namespaceOfEndpoint(side.ep) + "/" + n; !contains(out, q) {
				out = append(out, q)
			}
		}
	}
	return out
}

// namespaceOfEndpoint is the namespace of an endpoint's pod: the placement's, or the one of
// its role.
func (p *Platform) namespaceOfEndpoint(ep api.Endpoint) string {
	if ep.Namespace != "" {
		return ep.Namespace
	}
	return p.s.namespaceOf(ep.Role)
}
