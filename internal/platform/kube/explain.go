package kube

import (
	"context"
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/cnperf/cnperf/api/v1alpha1"
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
			perr := p.stream(ctx, p.s.Namespace, pl.Client.Pod, ClientContainer, []string{"true"}, io.Discard, io.Discard)
			if kubeletUnreachable(perr) {
				err = perr
			}
		}
		if podClient && kubeletUnreachable(err) {
			why = append(why, fmt.Sprintf("the API server could not reach the kubelet of node %s, where client pod %s runs", pl.Client.Node, pl.Client.Pod))
		}
		return strings.Join(why, "; ")
	}
}

// endpointTrouble says what is wrong with an endpoint's pod or node, "" when nothing is (or
// the API server cannot tell).
func (p *Platform) endpointTrouble(ctx context.Context, ep api.Endpoint) string {
	pod, err := p.cs.CoreV1().Pods(p.s.Namespace).Get(ctx, ep.Pod, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Sprintf("%s pod %s/%s is gone: it was deleted", ep.Role, p.s.Namespace, ep.Pod)
	case err != nil:
		return ""
	case pod.DeletionTimestamp != nil:
		return fmt.Sprintf("%s pod %s/%s is being deleted", ep.Role, p.s.Namespace, ep.Pod)
	case pod.Spec.NodeName != ep.Node && ep.Node != "":
		return fmt.Sprintf("%s pod %s/%s was replaced (now on node %s, was on %s)", ep.Role, p.s.Namespace, ep.Pod, pod.Spec.NodeName, ep.Node)
	}
	var notes []string
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.RestartCount > 0 {
			notes = append(notes, fmt.Sprintf("container %s restarted %d times", cs.Name, cs.RestartCount))
		}
	}
	if !PodReady(pod) {
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
	return fmt.Sprintf("%s pod %s/%s: %s", ep.Role, p.s.Namespace, ep.Pod, strings.Join(notes, ", "))
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
