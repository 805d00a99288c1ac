package mesh

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/text"
)

// Labels on the mesh's objects (besides the kube platform's managed-by/name/run labels, so
// `cnperf cleanup` finds them).
const (
	LabelComponent = "cnperf.dev/component"
	ComponentAgent = "mesh-agent"
	ComponentOne   = "mesh-server" // the all-to-one server pod
	// ClientContainer is where client commands and /proc reads are exec'ed.
	ClientContainer = kube.ClientContainer
	// HostRoot is where privileged agents mount the node's root filesystem.
	HostRoot = "/host"
)

// AgentOptions say how agents are deployed.
type AgentOptions struct {
	Namespace  string
	RunID      string
	Image      string
	PullPolicy corev1.PullPolicy
	// Tolerations let agents run on tainted nodes.
	Tolerations []corev1.Toleration
	// Privileged runs the agents privileged with the host's PID namespace (for perf).
	Privileged bool
	// Servers run in every agent pod, one container each (the driver's servers).
	Servers []driver.Server
	// Batch is how many nodes get their agent at a time: the DaemonSet's node list grows by
	// Batch once the previous batch is up, so a large cluster does not pull the image on every
	// node at once.
	Batch int
	// StartTimeout bounds the wait for one batch.
	StartTimeout time.Duration
	// Resources are the agent containers' requests and limits.
	Resources corev1.ResourceRequirements
	// Metadata is the user's labels and annotations for every mesh pod (--pod-labels,
	// --pod-annotations).
	Metadata kube.PodMetadata
	// Network is the secondary network the api.NetworkAttachment agents attach to (nil
	// without one): Multus adds its interface, after the networks Metadata asks for.
	Network *SecondaryNetwork
}

// Agent is one node's agent pod.
type Agent struct {
	// PodIP and HostIP are the pod's and its node's first addresses (status.podIP, hostIP),
	// PodIPs and HostIPs all of them, one per IP family on a dual-stack cluster (status.podIPs,
	// hostIPs; empty when the status lists none: then the first address is all there is), from
	// which Target picks the run's family.
	Node, Pod, PodIP, HostIP string
	PodIPs, HostIPs          []string
	Network                  api.Network
	// AttachInterface, AttachIP and AttachMTU are its interface, address and MTU (0: not
	// reported) on the secondary network, from Multus's network status (api.NetworkAttachment).
	AttachInterface, AttachIP string
	AttachMTU                 int
}

// AgentSet is one DaemonSet's agents, by node.
type AgentSet struct {
	Network api.Network
	Name    string
	ByNode  map[string]Agent
	// Failed are the nodes whose agent did not start, with what Kubernetes said.
	Failed []Skipped
	// Attachment is the secondary network of api.NetworkAttachment agents (the definition as
	// read, its MTU from the agents' network status); nil on pod and host.
	Attachment *api.Attachment
	// policiesOut are the NetworkPolicies that select the agents for egress (on the secondary
	// network they do not apply); mtuUnread: no network status gave the MTU (readMTU).
	policiesOut, policiesIn []string
	mtuUnread               bool
}

// EnsureNamespace creates the namespace when it is absent and reports whether it did (only a
// namespace cnperf created is deleted at the end). hostNetwork and privileged agents need the
// privileged Pod Security level.
func EnsureNamespace(ctx context.Context, cs kubernetes.Interface, name, runID string, privileged bool) (created bool, err error) {
	// A namespace still terminating (an earlier run's) takes no new objects: wait it out.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		state, err := kube.CreateNamespace(ctx, cs, kube.BuildNamespace(name, runID, privileged), nil)
		if err != nil {
			return false, err
		}
		if state != kube.NamespaceTerminating {
			return state == kube.NamespaceCreated, nil
		}
		if time.Now().After(deadline) {
			return false, fmt.Errorf("namespace %s is still terminating after 2m; choose another with --namespace", name)
		}
		select {
		case <-ctx.Done():
			return false, context.Cause(ctx)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// DaemonSetName is the agent DaemonSet's name for a network.
func DaemonSetName(runID string, net api.Network) string {
	return fmt.Sprintf("cnperf-mesh-%s-%s", net, kube.ShortID(runID))
}

// BuildDaemonSet is the agent DaemonSet for a network, restricted to nodes. Its pods run the
// servers (one container each) and an idle client container commands are exec'ed in. It uses
// the OnDelete strategy so growing its node list starts new pods without restarting old ones.
func BuildDaemonSet(o AgentOptions, net api.Network, nodes []string) *appsv1.DaemonSet {
	sel := map[string]string{kube.LabelRun: o.RunID, LabelComponent: ComponentAgent, kube.LabelNetwork: string(net)}
	labels := kube.RunLabels(o.RunID)
	for k, v := range sel {
		labels[k] = v
	}
	po := o.podOptions(net, nodes)
	po.HostPID = o.Privileged
	co := o.containerOptions()
	for _, srv := range o.Servers {
		// A startup probe stops after its first success: no probe reaches a server during a
		// measurement.
		po.Containers = append(po.Containers, co.ServerContainer(dnsName(srv.Name), srv, net == api.NetworkHost, true))
	}
	client := co.Container(ClientContainer, kube.IdleCommand)
	if o.Privileged {
		// perf runs from the node's own filesystem (chroot /host perf ...): the agent image
		// need not carry a perf that matches each node's kernel.
		po.Volumes = append(po.Volumes, corev1.Volume{Name: "host-root",
			VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}})
		client.VolumeMounts = append(client.VolumeMounts, corev1.VolumeMount{Name: "host-root", MountPath: HostRoot})
	}
	po.Containers = append(po.Containers, client)
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: DaemonSetName(o.RunID, net), Namespace: o.Namespace, Labels: labels},
		Spec: appsv1.DaemonSetSpec{
			Selector:       &metav1.LabelSelector{MatchLabels: sel},
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: o.objectMeta(net, kube.PodOptions{Labels: labels, Metadata: o.Metadata}.ObjectMeta()),
				Spec:       po.Spec(),
			},
		},
	}
}

// podOptions are what every mesh pod on net shares (a DaemonSet's template: it restarts).
func (o AgentOptions) podOptions(net api.Network, nodes []string) kube.PodOptions {
	return kube.PodOptions{Namespace: o.Namespace, Nodes: nodes, HostNetwork: net == api.NetworkHost,
		Tolerations: o.Tolerations, GraceSeconds: 2, Metadata: o.Metadata}
}

// objectMeta is a mesh pod's metadata on net: on the secondary network, Multus is asked for it.
func (o AgentOptions) objectMeta(net api.Network, meta metav1.ObjectMeta) metav1.ObjectMeta {
	if net == api.NetworkAttachment && o.Network != nil {
		kube.AttachNetwork(&meta, o.Network.Name)
	}
	return meta
}

// containerOptions: the agent image, resources, privilege and the run's agent token from its
// Secret (kube.CreateTokenSecret): never in the DaemonSet or pod spec, never on a command line.
func (o AgentOptions) containerOptions() kube.ContainerOptions {
	return kube.ContainerOptions{Image: o.Image, PullPolicy: o.PullPolicy, Resources: o.Resources, TokenRun: o.RunID, Privileged: o.Privileged}
}

func dnsName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	out := strings.Trim(b.String(), "-")
	if out == "" || out == ClientContainer {
		out = "srv-" + out
	}
	return out
}

// DeployAgents creates the agent DaemonSet for net on nodes, growing its node list by
// o.Batch nodes at a time once the previous batch is Ready, and returns the agents that
// came up. Nodes whose agent does not start are reported in Failed, not fatal.
func DeployAgents(ctx context.Context, cs kubernetes.Interface, o AgentOptions, net api.Network, nodes []string, log io.Writer) (*AgentSet, error) {
	if len(nodes) == 0 {
		return nil, errors.New("mesh: no nodes for the agents")
	}
	batch := o.Batch
	if batch <= 0 || batch > len(nodes) {
		batch = len(nodes)
	}
	timeout := o.StartTimeout
	if timeout <= 0 {
		timeout = 3 * time.Minute
	}
	set := &AgentSet{Network: net, Name: DaemonSetName(o.RunID, net), ByNode: map[string]Agent{}}
	dsClient := cs.AppsV1().DaemonSets(o.Namespace)
	for start := 0; start < len(nodes); start += batch {
		end := min(start+batch, len(nodes))
		upTo := nodes[:end]
		ds := BuildDaemonSet(o, net, upTo)
		if start == 0 {
			if _, err := dsClient.Create(ctx, ds, metav1.CreateOptions{}); err != nil {
				return set, fmt.Errorf("create DaemonSet %s/%s: %w", o.Namespace, ds.Name, err)
			}
		} else {
			cur, err := dsClient.Get(ctx, ds.Name, metav1.GetOptions{})
			if err != nil {
				return set, fmt.Errorf("get DaemonSet %s/%s: %w", o.Namespace, ds.Name, err)
			}
			cur.Spec.Template.Spec.Affinity = ds.Spec.Template.Spec.Affinity
			if _, err := dsClient.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
				return set, fmt.Errorf("add nodes %d..%d to DaemonSet %s/%s: %w", start+1, end, o.Namespace, ds.Name, err)
			}
		}
		if log != nil && batch < len(nodes) {
			fmt.Fprintf(log, "mesh: %s agents: starting on nodes %d..%d of %d\n", net, start+1, end, len(nodes))
		}
		up, failed, err := waitAgents(ctx, cs, o, net, nodes[start:end], timeout)
		for _, a := range up {
			set.ByNode[a.Node] = a
		}
		set.Failed = append(set.Failed, failed...)
		if err != nil {
			return set, err
		}
	}
	sort.Slice(set.Failed, func(i, j int) bool { return set.Failed[i].Node < set.Failed[j].Node })
	if net == api.NetworkAttachment {
		set.attach(ctx, cs, o, log)
	}
	return set, nil
}

// attach records what the set's secondary network is: the definition, with the MTU the agents'
// network status reports, and the NetworkPolicies that select the agents (asked for, but they
// do not apply on a secondary network: said, never silent).
func (s *AgentSet) attach(ctx context.Context, cs kubernetes.Interface, o AgentOptions, log io.Writer) {
	if o.Network == nil || o.Network.def == nil {
		return
	}
	a := *o.Network.def
	s.Attachment, s.mtuUnread = &a, true
	var probe *Agent
	for _, n := range slices.Sorted(maps.Keys(s.ByNode)) {
		ag := s.ByNode[n]
		if probe == nil {
			probe = &ag
		}
		if ag.AttachMTU > 0 {
			a.MTUBytes, s.mtuUnread = ag.AttachMTU, false
			break
		}
	}
	if probe == nil {
		return
	}
	s.policiesIn = policies(ctx, cs, o.Namespace, probe.Pod, networkingv1.PolicyTypeIngress)
	s.policiesOut = policies(ctx, cs, o.Namespace, probe.Pod, networkingv1.PolicyTypeEgress)
	if pols := union(s.policiesIn, s.policiesOut); len(pols) > 0 && log != nil {
		text.Logf(log, "mesh: ", "warning: NetworkPolicy %s selects the agents but does not apply on secondary network %s",
			strings.Join(pols, ", "), a.Network)
	}
}

// waitAgents polls the DaemonSet's pods until every node of the batch has a Ready agent or
// a hopeless one, or the timeout passes.
func waitAgents(ctx context.Context, cs kubernetes.Interface, o AgentOptions, net api.Network, nodes []string, timeout time.Duration) ([]Agent, []Skipped, error) {
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	selector := fmt.Sprintf("%s=%s,%s=%s,%s=%s", kube.LabelRun, o.RunID, LabelComponent, ComponentAgent, kube.LabelNetwork, net)
	want := map[string]bool{}
	for _, n := range nodes {
		want[n] = true
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		pods, err := cs.CoreV1().Pods(o.Namespace).List(wctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil && wctx.Err() == nil {
			return nil, nil, fmt.Errorf("list agent pods (%s): %w", selector, err)
		}
		var up []Agent
		var failed []Skipped
		state := map[string]string{}
		if pods != nil {
			for i := range pods.Items {
				p := &pods.Items[i]
				node := p.Spec.NodeName
				if !want[node] || p.DeletionTimestamp != nil {
					continue
				}
				if why := podHopeless(p); why != "" {
					failed = append(failed, Skipped{node, fmt.Sprintf("agent pod %s: %s", p.Name, why)})
					state[node] = "failed"
					continue
				}
				if kube.PodReady(p) {
					a := agentOf(p, net)
					if net == api.NetworkAttachment && o.Network != nil {
						if err := attachAgent(&a, p, o.Network.Name); err != nil {
							failed = append(failed, Skipped{node, fmt.Sprintf("agent pod %s: %v", p.Name, err)})
							state[node] = "failed"
							continue
						}
					}
					up = append(up, a)
					state[node] = "up"
				} else if state[node] == "" {
					state[node] = "pending: " + podPhase(p)
				}
			}
		}
		if len(up)+len(failed) == len(nodes) {
			return up, failed, nil
		}
		select {
		case <-tick.C:
		case <-wctx.Done():
			if ctx.Err() != nil {
				return up, failed, fmt.Errorf("waiting for %s agents: %w", net, context.Cause(ctx))
			}
			for _, n := range nodes {
				switch s := state[n]; {
				case s == "":
					failed = append(failed, Skipped{n, fmt.Sprintf("no agent pod within %s (the DaemonSet did not place one: taint, resources or a node selector)", timeout)})
				case strings.HasPrefix(s, "pending"):
					failed = append(failed, Skipped{n, fmt.Sprintf("agent not Ready within %s (%s)", timeout, s)})
				}
			}
			return up, failed, nil
		}
	}
}

func podHopeless(p *corev1.Pod) string {
	if p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded {
		return fmt.Sprintf("phase %s %s", p.Status.Phase, p.Status.Message)
	}
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; kube.HopelessWaiting(w) {
			return fmt.Sprintf("container %s: %s: %s", cs.Name, w.Reason, w.Message)
		}
		if t := cs.State.Terminated; t != nil {
			return fmt.Sprintf("container %s exited %d (%s): %s", cs.Name, t.ExitCode, t.Reason, t.Message)
		}
	}
	return ""
}

func podPhase(p *corev1.Pod) string {
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && w.Reason != "" {
			return fmt.Sprintf("%s, container %s %s", p.Status.Phase, cs.Name, w.Reason)
		}
	}
	return string(p.Status.Phase)
}

// Cleanup deletes what a mesh run created: the namespace when it created it, else every
// object labelled with the run (DaemonSets, pods, services).
func Cleanup(ctx context.Context, cs kubernetes.Interface, ns, runID string, namespaceCreated bool) error {
	if namespaceCreated {
		return kube.DeleteNamespace(ctx, cs, ns, false)
	}
	// the token's Secret by name (no right to list Secrets is needed); then DaemonSets, or
	// their controller recreates the pods deleted next.
	errs := []error{kube.DeleteTokenSecret(ctx, cs, ns, runID)}
	bg := metav1.DeletePropagationBackground
	err := cs.AppsV1().DaemonSets(ns).DeleteCollection(ctx, metav1.DeleteOptions{PropagationPolicy: &bg},
		metav1.ListOptions{LabelSelector: kube.RunSelector(runID)})
	if err != nil && !apierrors.IsNotFound(err) {
		errs = append(errs, fmt.Errorf("delete DaemonSets of run %s in %s: %w", runID, ns, err))
	}
	errs = append(errs, kube.DeleteRunObjects(ctx, cs, ns, kube.RunSelector(runID), false))
	return errors.Join(errs...)
}

// agentOf is the Agent of the ready pod p on the network net.
func agentOf(p *corev1.Pod, net api.Network) Agent {
	a := Agent{Node: p.Spec.NodeName, Pod: p.Name, PodIP: p.Status.PodIP, HostIP: p.Status.HostIP, Network: net}
	for _, ip := range p.Status.PodIPs {
		a.PodIPs = append(a.PodIPs, ip.IP)
	}
	for _, ip := range p.Status.HostIPs {
		a.HostIPs = append(a.HostIPs, ip.IP)
	}
	return a
}
