package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/text"
)

// What OVN-Kubernetes and the SR-IOV Network Operator leave in a cluster where they run, as the
// preflight looks for it.
const (
	// ovnkubeNodeSelector selects OVN-Kubernetes's node agents (the ovnkube-node DaemonSet's pods,
	// upstream in namespace ovn-kubernetes, on OpenShift in openshift-ovn-kubernetes).
	ovnkubeNodeSelector = "app=ovnkube-node"
	// ovnNodeSubnetsAnnotation is the pod subnet OVN-Kubernetes's cluster manager gives each node
	// (go-controller/pkg/util/subnet_annotations.go): a node without it is not on OVN-Kubernetes's
	// network, whatever CRDs are installed.
	ovnNodeSubnetsAnnotation = "k8s.ovn.org/node-subnets"
	// sriovOperatorSelector selects the operator's pods (deploy/operator.yaml).
	sriovOperatorSelector = "name=sriov-network-operator"
)

// modeCRDs are the custom resources (plural.group) a mode's objects, and the
// NetworkAttachmentDefinition its network appears as, need.
func modeCRDs(m NetworkMode) []string {
	switch m.Kind {
	case ModeUDN:
		return []string{"userdefinednetworks." + ovnGroup}
	case ModeCUDN, ModeLocalnet:
		return []string{"clusteruserdefinednetworks." + ovnGroup, NADResource + "." + NADGroup}
	case ModeSRIOV:
		return []string{"sriovnetworknodepolicies." + sriovGroup, "sriovnetworks." + sriovGroup,
			"sriovoperatorconfigs." + sriovGroup, "sriovnetworknodestates." + sriovGroup, NADResource + "." + NADGroup}
	}
	return nil
}

// missingCRDs are the resources (plural.group, version v1) the API server does not serve.
func missingCRDs(cs kubernetes.Interface, resources []string) []string {
	served := map[string]map[string]bool{} // group -> plural -> served
	var missing []string
	for _, r := range resources {
		plural, group, _ := strings.Cut(r, ".")
		if _, ok := served[group]; !ok {
			served[group] = map[string]bool{}
			if l, err := cs.Discovery().ServerResourcesForGroupVersion(group + "/v1"); err == nil {
				for _, ar := range l.APIResources {
					served[group][ar.Name] = true
				}
			}
		}
		if !served[group][plural] {
			missing = append(missing, r)
		}
	}
	return missing
}

// CheckNetworkMode is the preflight of a k8s-netperf network mode, before anything is created:
// what the mode's network needs and the cluster lacks, each named. OVN-Kubernetes is present
// when its CRDs are served, its node agent (a Ready ovnkube-node pod) runs on every node the
// run places pods on, and its cluster manager gave those nodes a subnet (the node-subnets
// annotation): the CRDs alone (as on a cluster where someone installed them) carry no traffic.
// The SR-IOV Network Operator is present when its CRDs are served, its pod is Ready in its
// namespace, its SriovOperatorConfig "default" exists (k8s-netperf reads it) and a node of the
// run reports the PF in its SriovNetworkNodeState. Everything missing is said at once (exit
// status 2); nil when nothing is (the run then creates the objects and measures on their
// network). --localnet always stops: see below.
// nodes are the nodes the run places pods on; ns and runID the run's namespace and id (in the
// objects the message names); st reads the SR-IOV operator's objects.
func CheckNetworkMode(ctx context.Context, cs kubernetes.Interface, st ObjectStore, m NetworkMode, nodes []*corev1.Node, ns, runID string) error {
	var missing []string
	for _, r := range missingCRDs(cs, modeCRDs(m)) {
		missing = append(missing, fmt.Sprintf("the CRD %s is not installed (the API server does not serve %s/v1)", r, strings.SplitN(r, ".", 2)[1]))
	}
	switch m.Kind {
	case ModeUDN, ModeCUDN, ModeLocalnet:
		missing = append(missing, missingOVNKubernetes(ctx, cs, nodes)...)
		if m.Kind == ModeLocalnet {
			missing = append(missing, fmt.Sprintf("the OVS bridge mapping of physical network %q on the nodes cannot be read through the API; "+
				"k8s-netperf's --localnet is for VMs only (--vm --pod=false), and cnperf's kube platform measures pods", m.PhysicalNetwork))
		}
	case ModeSRIOV:
		missing = append(missing, missingSRIOV(ctx, cs, st, nodes, m.PF)...)
	}
	objs, err := m.Objects(ns, runID)
	if err != nil {
		return &exit.UsageError{Err: err}
	}
	if len(missing) == 0 {
		return nil
	}
	var names []string
	for _, o := range objs {
		names = append(names, o.String())
	}
	// the caller prefixes "set up the kube platform: ", so the first line stays short
	lines := []string{m.Flag + ": stopped before anything was created:"}
	what := "k8s-netperf creates " + strings.Join(names, " and ") + " for it; "
	lines = append(lines, text.Wrap(what+"this cluster lacks what that needs:", modeMessageWidth, "  ", "  ")...)
	for _, s := range missing {
		lines = append(lines, text.Wrap(s, modeMessageWidth, "  - ", "    ")...)
	}
	return &exit.UsageError{Err: errors.New(strings.Join(lines, "\n"))}
}

// modeMessageWidth is the width checkNetworkMode's lines are wrapped at.
const modeMessageWidth = text.DefaultWidth

// missingOVNKubernetes is what of OVN-Kubernetes is missing on nodes.
func missingOVNKubernetes(ctx context.Context, cs kubernetes.Interface, nodes []*corev1.Node) []string {
	var missing []string
	pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: ovnkubeNodeSelector})
	switch {
	case err != nil:
		missing = append(missing, fmt.Sprintf("cannot tell whether OVN-Kubernetes's node agent runs: list pods labelled %s in all namespaces: %v",
			ovnkubeNodeSelector, err))
	case len(pods.Items) == 0:
		missing = append(missing, fmt.Sprintf("OVN-Kubernetes is not running: no pod labelled %s (its ovnkube-node DaemonSet's) in any namespace",
			ovnkubeNodeSelector))
	default:
		if without := nodesWithoutReadyPod(pods.Items, nodes); len(without) > 0 {
			missing = append(missing, fmt.Sprintf("no Ready ovnkube-node pod (%s) on node %s", ovnkubeNodeSelector, strings.Join(without, ", ")))
		}
	}
	var noSubnet []string
	for _, n := range nodes {
		if n.Annotations[ovnNodeSubnetsAnnotation] == "" {
			noSubnet = append(noSubnet, n.Name)
		}
	}
	if len(noSubnet) > 0 {
		missing = append(missing, fmt.Sprintf("node %s has no %s annotation: OVN-Kubernetes is not the cluster's network there",
			strings.Join(noSubnet, ", "), ovnNodeSubnetsAnnotation))
	}
	return missing
}

// missingSRIOV is what of the SR-IOV Network Operator, and of the PF pf, is missing on nodes.
func missingSRIOV(ctx context.Context, cs kubernetes.Interface, st ObjectStore, nodes []*corev1.Node, pf string) []string {
	var missing []string
	ns := SRIOVOperatorNamespace
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sriovOperatorSelector})
	switch {
	case err != nil:
		missing = append(missing, fmt.Sprintf("cannot tell whether the SR-IOV Network Operator runs: list pods labelled %s in %s: %v", sriovOperatorSelector, ns, err))
	case len(nodesWithReadyPod(pods.Items)) == 0:
		missing = append(missing, fmt.Sprintf("the SR-IOV Network Operator is not running: no Ready pod labelled %s in namespace %s", sriovOperatorSelector, ns))
	}
	base := "/apis/" + sriovGroup + "/v1/namespaces/" + ns
	if _, err := st.Get(ctx, base+"/sriovoperatorconfigs/default"); err != nil {
		if apierrors.IsNotFound(err) {
			missing = append(missing, fmt.Sprintf("no SriovOperatorConfig %s/default (the operator creates it; k8s-netperf reads it)", ns))
		} else {
			missing = append(missing, fmt.Sprintf("cannot read SriovOperatorConfig %s/default: %v", ns, firstLine(err)))
		}
	}
	var without []string
	for _, n := range nodes {
		raw, err := st.Get(ctx, base+"/sriovnetworknodestates/"+n.Name)
		if err != nil {
			without = append(without, n.Name)
			continue
		}
		var st struct {
			Status struct {
				Interfaces []struct {
					Name string `json:"name"`
				} `json:"interfaces"`
			} `json:"status"`
		}
		if json.Unmarshal(raw, &st) != nil || !slices.ContainsFunc(st.Status.Interfaces, func(i struct {
			Name string `json:"name"`
		}) bool {
			return i.Name == pf
		}) {
			without = append(without, n.Name)
		}
	}
	if len(without) > 0 {
		missing = append(missing, fmt.Sprintf("node %s reports no SR-IOV PF %q (its SriovNetworkNodeState %s/NODE lists no such interface)",
			strings.Join(without, ", "), pf, ns))
	}
	return missing
}

// nodesWithReadyPod are the nodes where one of pods is Ready.
func nodesWithReadyPod(pods []corev1.Pod) map[string]bool {
	ready := map[string]bool{}
	for _, pod := range pods {
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				ready[pod.Spec.NodeName] = true
			}
		}
	}
	return ready
}

// nodesWithoutReadyPod are the names of the nodes (of nodes, in order) where none of pods is Ready.
func nodesWithoutReadyPod(pods []corev1.Pod, nodes []*corev1.Node) []string {
	ready := nodesWithReadyPod(pods)
	var out []string
	for _, n := range nodes {
		if !ready[n.Name] {
			out = append(out, n.Name)
		}
	}
	return out
}
