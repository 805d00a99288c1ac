package kube

import (
	"fmt"
	"strings"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/kube"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cnperf/cnperf/internal/driver"
)

// dnsLabel turns s into an RFC 1123 label fragment.
func dnsLabel(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9'):
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	out := strings.Trim(b.String(), "-")
	if out == "" {
		out = "x"
	}
	if len(out) > 40 {
		out = strings.TrimRight(out[:40], "-")
	}
	return out
}

// endpointSpec describes one endpoint pod to create.
type endpointSpec struct {
	Name   string
	Role   string // "server" or "client"
	Driver string // servers only
	Net    api.Network
	// Attachment is the secondary network (NAMESPACE/NAME) the pod attaches to, when Net is
	// api.NetworkAttachment: Multus adds its interface (annotation k8s.v1.cni.cncf.io/networks).
	Attachment string
	Node       string
	// Servers are the driver's servers, one container each (servers only).
	Servers []driver.Server
	// VM: the endpoint is a KubeVirt VirtualMachineInstance (buildVMI), not a pod (--vm).
	VM bool
	// Address is a VM's static address (CIDR) on Attachment, which it sets itself when the
	// definition has no IPAM (Platform.vmStatic).
	Address string
	// Exited are the servers that exited before they were ready, by name, with why: their
	// containers idle instead, their cases fail with that reason (servers only).
	Exited map[string]string
}

func serverPodName(runID, drv string, net api.Network) string {
	return fmt.Sprintf("cnperf-srv-%s-%s-%s", dnsLabel(drv), net, kube.ShortID(runID))
}

func clientPodName(runID string, net api.Network, r nodeRole) string {
	short := map[nodeRole]string{roleServerNode: "s", roleClientNode: "c", roleZoneNode: "z"}[r]
	return fmt.Sprintf("cnperf-cli-%s-%s-%s", net, short, kube.ShortID(runID))
}

func serviceName(runID, drv string, net api.Network, kind corev1.ServiceType) string {
	k := "cip"
	if kind == corev1.ServiceTypeNodePort {
		k = "np"
	}
	n := ""
	if net == api.NetworkHost {
		n = "-host"
	}
	return fmt.Sprintf("cnperf-%s-%s%s-%s", k, dnsLabel(drv), n, kube.ShortID(runID))
}

func buildServiceAccount(ns, runID string) *corev1.ServiceAccount {
	no := false
	return &corev1.ServiceAccount{
		ObjectMeta:                   metav1.ObjectMeta{Name: kube.ServiceAccountName, Namespace: ns, Labels: kube.RunLabels(runID)},
		AutomountServiceAccountToken: &no,
	}
}

// endpointLabels are the labels of an endpoint's pod or VM: the run's, its role, network,
// name and driver.
func endpointLabels(runID string, e endpointSpec) map[string]string {
	labels := kube.RunLabels(runID)
	labels[kube.LabelRole] = e.Role
	labels[kube.LabelNetwork] = string(e.Net)
	labels[kube.LabelEndpoint] = e.Name
	if e.Driver != "" {
		labels[kube.LabelDriver] = dnsLabel(e.Driver)
	}
	return labels
}

// buildPod builds an endpoint pod: a server pod runs one container per driver server (the
// server is the container's command); a client pod idles and commands are exec'ed in it.
func buildPod(s *settings, runID string, e endpointSpec) *corev1.Pod {
	o := kube.PodOptions{
		Name: e.Name, Namespace: s.namespaceOf(e.Role), Labels: endpointLabels(runID, e),
		HostNetwork: e.Net == api.NetworkHost, Tolerations: s.tolerations,
		ServiceAccount: kube.ServiceAccountName, GraceSeconds: kube.TerminationGraceSeconds, RunOnce: true,
		Metadata: s.podMeta,
	}
	if e.Node != "" {
		o.Nodes = []string{e.Node}
	}
	co := s.containerOptions(runID)
	if e.Role == "client" {
		o.Containers = []corev1.Container{co.Container(kube.ClientContainer, kube.IdleCommand)}
		return s.withAttachment(o.Pod(), e)
	}
	for _, srv := range e.Servers {
		if e.Exited[srv.Name] != "" {
			o.Containers = append(o.Containers, co.Container(dnsLabel(srv.Name), kube.IdleCommand))
			continue
		}
		// a server that prints when it is ready is waited for by its log, not a probe
		o.Containers = append(o.Containers, co.ServerContainer(dnsLabel(srv.Name), srv, e.Net == api.NetworkHost, srv.Ready == ""))
	}
	return s.withAttachment(o.Pod(), e)
}

// withAttachment asks Multus for the endpoint's secondary network, if it has one, after the
// networks --pod-annotations asks for (kube.AttachNetwork; Prepare checked they merge). On a
// primary UserDefinedNetwork (--udnl2, --udnl3) nothing is asked for: OVN-Kubernetes attaches
// every pod of the namespace to it, as k8s-netperf's pods are. On --sriov PF the pod requests
// one VF, openshift.io/PF, as k8s-netperf's do (the device plugin gives it the VF Multus needs).
func (s *settings) withAttachment(pod *corev1.Pod, e endpointSpec) *corev1.Pod {
	if e.Net != api.NetworkAttachment || e.Attachment == "" {
		return pod
	}
	m := s.NetworkMode
	if m == nil || !m.Primary() {
		kube.AttachNetwork(&pod.ObjectMeta, e.Attachment)
	}
	if r := modeResource(m); r != "" && len(pod.Spec.Containers) > 0 {
		c := &pod.Spec.Containers[0]
		one := resource.MustParse("1")
		for _, l := range []*corev1.ResourceList{&c.Resources.Requests, &c.Resources.Limits} {
			if *l == nil {
				*l = corev1.ResourceList{}
			}
			(*l)[corev1.ResourceName(r)] = one // extended resources: the limit is the request
		}
	}
	return pod
}

// modeResource is the extended resource a pod of mode m requests ("" for none).
func modeResource(m *kube.NetworkMode) string {
	if m == nil {
		return ""
	}
	return m.SRIOVResource()
}

// containerOptions are the endpoint containers' image, resources and the run's token.
func (s *settings) containerOptions(runID string) kube.ContainerOptions {
	return kube.ContainerOptions{Image: s.Image, PullPolicy: s.pullPolicy, Resources: s.resources, TokenRun: runID, Privileged: s.Privileged}
}

// buildService exposes one server pod as a ClusterIP or NodePort Service with every port
// its servers use. families are the IP families wanted ("ipv4", "ipv6"); none means the
// cluster's default.
func buildService(s *settings, runID string, server endpointSpec, kind corev1.ServiceType, families []string) *corev1.Service {
	labels := kube.RunLabels(runID)
	labels[kube.LabelDriver] = dnsLabel(server.Driver)
	return kube.ServiceOptions{
		Name: serviceName(runID, server.Driver, server.Net, kind), Namespace: s.serverNamespace(), Labels: labels,
		Type: kind, Selector: map[string]string{kube.LabelEndpoint: server.Name}, Ports: kube.ServicePorts(server.Servers),
		Families: families,
	}.Service()
}

// duplicateHostPorts reports host ports two hostNetwork server pods on one node would share.
func duplicateHostPorts(specs []endpointSpec) error {
	type key struct {
		node  string
		port  int
		proto corev1.Protocol
	}
	owner := map[key]string{}
	for _, e := range specs {
		if e.Net != api.NetworkHost || e.Role != "server" {
			continue
		}
		for _, srv := range e.Servers {
			for _, p := range srv.Ports {
				k := key{e.Node, p.Port, kube.Protocol(p.Protocol)}
				if o, dup := owner[k]; dup && o != e.Driver {
					return fmt.Errorf("drivers %s and %s both need %s port %d on node %s with hostNetwork; run them in separate plans",
						o, e.Driver, k.proto, p.Port, e.Node)
				}
				owner[k] = e.Driver
			}
		}
	}
	return nil
}
