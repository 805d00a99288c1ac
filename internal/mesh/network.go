package mesh

import (
	"context"
	"fmt"
	"io"
	"slices"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/text"
)

// SecondaryNetwork is the secondary network (a Multus NetworkAttachmentDefinition) a mesh
// measures on beside, or instead of, the pod and host networks: its agents (api.NetworkAttachment)
// attach to it and the cells dial the server's address on it, read from Multus's network status
// (the same code `cnperf run --network` uses, internal/kube). One per run.
type SecondaryNetwork struct {
	// Name is NAMESPACE/NAME.
	Name string
	// Create, when set, is the definition the run creates in its namespace before the agents
	// and deletes at the end (k8s-netperf's --macvlan); Name is then NAMESPACE/Create.Name.
	Create *kube.NetworkDefinition
	// NADs reaches the definitions (nil: the API, through the clientset's REST client).
	NADs kube.NADStore

	// def is the definition as read (its CNI plugin, MTU, master); created: the run created it.
	def     *api.Attachment
	created bool
}

func (n *SecondaryNetwork) nads(cs kubernetes.Interface) kube.NADStore {
	if n.NADs == nil {
		return kube.RESTNADs{CS: cs}
	}
	return n.NADs
}

// Access is what the network needs beside the mesh's own permissions (the preflight's list).
func (n *SecondaryNetwork) Access(ns string) []kube.Access {
	if n.Create != nil {
		return kube.NetworkCreateAccess(ns)
	}
	return kube.NetworkAccess(n.Name)
}

// Check reads a network the run does not create, before anything is created: a missing or
// unreadable definition, or one without a CNI plugin, stops the run there.
func (n *SecondaryNetwork) Check(ctx context.Context, cs kubernetes.Interface, log io.Writer) error {
	if n.Create != nil {
		return nil
	}
	return n.read(ctx, cs, log)
}

func (n *SecondaryNetwork) read(ctx context.Context, cs kubernetes.Interface, log io.Writer) error {
	a, err := kube.ReadAttachment(ctx, n.nads(cs), n.Name)
	if err != nil {
		return err
	}
	n.def = a
	if log != nil {
		fmt.Fprintf(log, "mesh: secondary network %s: %s\n", n.Name, kube.DescribeAttachment(a))
	}
	return nil
}

// Prepare creates the run's own definition in namespace ns (after the namespace, before the
// agents) and reads it.
func (n *SecondaryNetwork) Prepare(ctx context.Context, cs kubernetes.Interface, ns, runID string, log io.Writer) error {
	if n.Create == nil {
		return nil
	}
	if err := kube.CreateNetworkDefinition(ctx, n.nads(cs), ns, runID, n.Create); err != nil {
		return err
	}
	n.created = true
	if log != nil {
		// wrapped: the configuration alone is about 150 columns
		text.Logf(log, "mesh: ", "created NetworkAttachmentDefinition %s/%s (deleted at the end of the run): %s", ns, n.Create.Name, n.Create.Config)
	}
	return n.read(ctx, cs, log)
}

// Close deletes the definition the run created, once no agent is attached to it (in a
// namespace cnperf created it goes with the namespace). Nothing the run found is touched.
func (n *SecondaryNetwork) Close(ctx context.Context, cs kubernetes.Interface, ns, runID string, namespaceCreated bool) error {
	if !n.created || namespaceCreated {
		return nil
	}
	// Multus reads the definition when it detaches a pod: the pods go first
	if err := kube.DeleteRunObjects(ctx, cs, ns, kube.RunSelector(runID), true); err != nil {
		return fmt.Errorf("NetworkAttachmentDefinition %s is kept: the run's pods are not gone: %w", n.Name, err)
	}
	if err := kube.DeleteNetworkDefinition(ctx, n.nads(cs), ns, n.Create.Name); err != nil {
		return err
	}
	n.created = false
	return nil
}

// Leftovers says what of the network may be left, and how to remove it ("" when nothing).
func (n *SecondaryNetwork) Leftovers(ns string) string {
	if !n.created {
		return ""
	}
	return "its NetworkAttachmentDefinition: " + kube.NetworkDefinitionCleanup(ns, n.Create.Name)
}

// attachAgent fills an agent's address on the set's secondary network from its pod's network
// status; an error when Multus did not attach it.
func attachAgent(a *Agent, pod *corev1.Pod, network string) error {
	iface, ip, mtu, err := kube.AttachmentOf(pod, network, "")
	if err != nil {
		return err
	}
	a.AttachInterface, a.AttachIP, a.AttachMTU = iface, ip, mtu
	return nil
}

// policies are the NetworkPolicies (NAMESPACE/NAME) that select pod for traffic of type t.
func policies(ctx context.Context, cs kubernetes.Interface, ns, pod string, t networkingv1.PolicyType) []string {
	p, err := cs.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	var out []string
	for _, n := range kube.SelectingPolicies(ctx, cs, p, t) {
		out = append(out, ns+"/"+n)
	}
	return out
}

// union is a followed by the elements of b it lacks.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// matrixAttachment is a set's secondary network as its matrix names it, with the policies that
// select its server pods for ingress (serverIn) or its client pods for egress: nil off one.
func (s *AgentSet) matrixAttachment(serverIn []string) *api.Attachment {
	if s.Attachment == nil {
		return nil
	}
	a := *s.Attachment
	a.PoliciesNotApplied = union(serverIn, s.policiesOut)
	if len(a.PoliciesNotApplied) == 0 {
		a.PoliciesNotApplied = nil
	}
	return &a
}

// readMTU settles the attachment's MTU when no agent's network status said it: the interface's
// as an agent sees it (one exec), else the definition's. Once per set.
func (s *AgentSet) readMTU(ctx context.Context, env Env) {
	if s.Attachment == nil || !s.mtuUnread {
		return
	}
	s.mtuUnread = false
	for _, a := range s.ByNode {
		out := env.Exec(a).Exec(ctx, driver.Command{Argv: []string{"cat", "/sys/class/net/" + a.AttachInterface + "/mtu"}})
		var mtu int
		if out.Err == nil && out.ExitCode == 0 {
			if _, err := fmt.Sscanf(string(out.Stdout), "%d", &mtu); err == nil && mtu > 0 {
				s.Attachment.MTUBytes = mtu
				return
			}
		}
		if env.Log != nil {
			fmt.Fprintf(env.Log, "mesh: secondary network %s: the MTU of %s in pod %s is unknown (exit %d, %v): the matrix gives the definition's\n",
				s.Attachment.Network, a.AttachInterface, a.Pod, out.ExitCode, out.Err)
		}
		return
	}
}
