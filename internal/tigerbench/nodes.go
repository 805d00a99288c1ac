package tigerbench

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"

	"github.com/cnperf/cnperf/internal/kube"
)

// DefaultTestNodeSelector is the label tiger-bench runs its pods on.
const DefaultTestNodeSelector = "tigera.io/test-nodepool=default-pool"

// TestNodes are the nodes tests and standing config are placed on.
type TestNodes struct {
	Names []string
	// Selector is the label selector that chose them; empty when no node carried it and every
	// schedulable node was taken instead (Note says so).
	Selector string
	Note     string
}

// FindTestNodes lists the Ready, schedulable Linux nodes matching selector (default
// tigera.io/test-nodepool=default-pool). When no node matches the default selector, every
// Ready schedulable node is used, and Note says so; when no node matches a selector the user
// gave, it is an error. Names are sorted.
func FindTestNodes(ctx context.Context, cs kubernetes.Interface, selector string) (*TestNodes, error) {
	userSelector := selector != ""
	if selector == "" {
		selector = DefaultTestNodeSelector
	}
	sel, err := labels.Parse(selector)
	if err != nil {
		return nil, fmt.Errorf("test node selector %q: %w", selector, err)
	}
	list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	var matching, usable []string
	var refused []string
	for i := range list.Items {
		n := &list.Items[i]
		ok, why := schedulable(n)
		if !ok {
			refused = append(refused, n.Name+": "+why)
			continue
		}
		usable = append(usable, n.Name)
		if sel.Matches(labels.Set(n.Labels)) {
			matching = append(matching, n.Name)
		}
	}
	slices.Sort(matching)
	slices.Sort(usable)
	slices.Sort(refused)
	switch {
	case len(matching) > 0:
		return &TestNodes{Names: matching, Selector: selector}, nil
	case userSelector:
		return nil, fmt.Errorf("no Ready, schedulable node matches the test node selector %q (nodes: %s)", selector, describeNodes(usable, refused))
	case len(usable) == 0:
		return nil, fmt.Errorf("no Ready, schedulable node (%s)", describeNodes(usable, refused))
	}
	return &TestNodes{Names: usable, Note: fmt.Sprintf("no node is labelled %s: using every Ready, schedulable node (%s); label the test nodes, as tiger-bench asks, to choose them",
		DefaultTestNodeSelector, strings.Join(usable, ", "))}, nil
}

func describeNodes(usable, refused []string) string {
	var parts []string
	if len(usable) > 0 {
		parts = append(parts, "usable: "+strings.Join(usable, ", "))
	}
	if len(refused) > 0 {
		parts = append(parts, "not usable: "+strings.Join(refused, "; "))
	}
	if len(parts) == 0 {
		return "the cluster has no nodes"
	}
	return strings.Join(parts, "; ")
}

// schedulable says whether pods can run on n (kube.Schedulable): Ready, not cordoned, Linux,
// no NoSchedule or NoExecute taint (test pods carry no tolerations).
func schedulable(n *corev1.Node) (bool, string) {
	block, taint := kube.Schedulable(n, nil)
	if block == kube.NodeTainted {
		return false, "tainted " + taint.Key + ":" + string(taint.Effect)
	}
	if why := block.Why(n, "test pods"); why != "" {
		return false, why
	}
	return true, ""
}
