package kube

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/cnperf/cnperf/internal/driver"
)

// The object layer: every pod cnperf creates (the platform's endpoints, mesh's agents and
// all-to-one server, tiger-bench's TTFR and DNS pods) is built from a PodOptions, its
// containers from a ContainerOptions, a driver's servers with ServerContainer and their
// Service ports with ServicePorts.

// PodOptions say what a pod cnperf creates is; what every such pod shares (no service account
// token, no service links, cluster DNS on the host network, scheduling pinned through the
// scheduler) is not an option.
type PodOptions struct {
	Name, Namespace string
	Labels          map[string]string
	// Nodes the pod may run on (any of them, through the scheduler: NodesAffinity); none
	// means anywhere.
	Nodes       []string
	HostNetwork bool
	// HostPID shares the node's process namespace (mesh's privileged agents, for perf).
	HostPID     bool
	Tolerations []corev1.Toleration
	// ServiceAccount is the account the pod runs as; empty, the namespace's default.
	ServiceAccount string
	// GraceSeconds is the termination grace period: short, endpoints hold no state.
	GraceSeconds int64
	// RunOnce gives the pod restart policy Never (a pod, not a DaemonSet's template, whose
	// pods must restart).
	RunOnce    bool
	Containers []corev1.Container
	Volumes    []corev1.Volume
	// Annotations are the pod's (a DaemonSet's template's too); Metadata adds the user's
	// (--pod-labels, --pod-annotations) to Labels and Annotations.
	Annotations map[string]string
	Metadata    PodMetadata
}

// Spec is the pod spec (also a DaemonSet's template).
func (o PodOptions) Spec() corev1.PodSpec {
	no := false
	grace := o.GraceSeconds
	spec := corev1.PodSpec{
		ServiceAccountName:            o.ServiceAccount,
		AutomountServiceAccountToken:  &no,
		EnableServiceLinks:            &no,
		TerminationGracePeriodSeconds: &grace,
		HostNetwork:                   o.HostNetwork,
		HostPID:                       o.HostPID,
		Tolerations:                   o.Tolerations,
		Affinity:                      NodesAffinity(o.Nodes),
		Containers:                    o.Containers,
		Volumes:                       o.Volumes,
	}
	if o.RunOnce {
		spec.RestartPolicy = corev1.RestartPolicyNever
	}
	if o.HostNetwork {
		// names still resolve through the cluster's DNS (Services, as a pod's would)
		spec.DNSPolicy = corev1.DNSClusterFirstWithHostNet
	}
	return spec
}

// Pod is the pod.
func (o PodOptions) Pod() *corev1.Pod {
	return &corev1.Pod{ObjectMeta: o.ObjectMeta(), Spec: o.Spec()}
}

// ObjectMeta is the pod's name, namespace, labels and annotations, the user's metadata added
// (a DaemonSet's template takes it too).
func (o PodOptions) ObjectMeta() metav1.ObjectMeta {
	labels, annotations := o.Metadata.Apply(maps.Clone(o.Labels), maps.Clone(o.Annotations))
	return metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace, Labels: labels, Annotations: annotations}
}

// NodesAffinity pins a pod to the named nodes through the scheduler (not spec.nodeName), so
// taints, resources and host ports are still checked and a refusal is reported as an event:
// one term per node (terms are ORed; a metadata.name field selector takes a single value).
// No nodes: nil, anywhere.
func NodesAffinity(nodes []string) *corev1.Affinity {
	if len(nodes) == 0 {
		return nil
	}
	terms := make([]corev1.NodeSelectorTerm, len(nodes))
	for i, n := range nodes {
		terms[i] = corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{{
			Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{n},
		}}}
	}
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms},
	}}
}

// ContainerOptions say how a pod's containers run.
type ContainerOptions struct {
	Image      string
	PullPolicy corev1.PullPolicy
	Resources  corev1.ResourceRequirements
	// TokenRun is the run whose agent token the container gets in its environment, from the
	// run's Secret (TokenEnvVar): neither in the pod spec nor on a command line; exec'ed
	// commands inherit it. Empty: no token.
	TokenRun   string
	Privileged bool
}

// Container is one container that runs command.
func (o ContainerOptions) Container(name string, command []string) corev1.Container {
	c := corev1.Container{
		Name:            name,
		Image:           o.Image,
		ImagePullPolicy: o.PullPolicy,
		Command:         slices.Clone(command),
		Resources:       *o.Resources.DeepCopy(),
	}
	if o.TokenRun != "" {
		c.Env = []corev1.EnvVar{TokenEnvVar(o.TokenRun)}
	}
	if o.Privileged {
		yes := true
		c.SecurityContext = &corev1.SecurityContext{Privileged: &yes}
	}
	return c
}

// ServerContainer is the container that runs one of a driver's servers: its ports declared
// (as host ports too on the host network, so the scheduler refuses a node where one is
// taken) and, when probe is set, a startup probe on its first TCP port.
func (o ContainerOptions) ServerContainer(name string, srv driver.Server, hostNetwork, probe bool) corev1.Container {
	c := o.Container(name, srv.Argv)
	for _, p := range srv.Ports {
		cp := corev1.ContainerPort{ContainerPort: int32(p.Port), Protocol: Protocol(p.Protocol)}
		if hostNetwork {
			cp.HostPort = int32(p.Port)
		}
		c.Ports = append(c.Ports, cp)
	}
	if p, ok := FirstTCPPort(srv.Ports); ok && probe {
		c.StartupProbe = StartupProbe(p)
	}
	return c
}

// StartupProbe connects to a TCP port until it accepts once. A startup probe, not a readiness
// probe: it stops after the first success, so no probe connection ever reaches a server during
// a measurement and a busy server is never taken out of its Service. It tries for as long as
// the start-up wait allows; cnperf's own wait (with its timeout) decides when to give up.
func StartupProbe(port int) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler:     corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(int32(port))}},
		PeriodSeconds:    1,
		FailureThreshold: startupProbeFailures,
		SuccessThreshold: 1,
		TimeoutSeconds:   1,
	}
}

// ServeTCP declares a named TCP port on c and a readiness probe on it (a connect every
// second; 3 failures take the pod out): a server that is a Service's endpoint while it listens.
func ServeTCP(c *corev1.Container, name string, port int) {
	c.Ports = []corev1.ContainerPort{{Name: name, ContainerPort: int32(port), Protocol: corev1.ProtocolTCP}}
	c.ReadinessProbe = &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(int32(port))}},
		PeriodSeconds: 1, TimeoutSeconds: 1, FailureThreshold: 3, SuccessThreshold: 1,
	}
}

// Protocol is a driver port's protocol as Kubernetes spells it (TCP when unset).
func Protocol(p string) corev1.Protocol {
	switch strings.ToUpper(p) {
	case "UDP":
		return corev1.ProtocolUDP
	case "SCTP":
		return corev1.ProtocolSCTP
	}
	return corev1.ProtocolTCP
}

// FirstTCPPort is the first TCP port of ports (a readiness probe target).
func FirstTCPPort(ports []driver.Port) (int, bool) {
	for _, p := range ports {
		if Protocol(p.Protocol) == corev1.ProtocolTCP {
			return p.Port, true
		}
	}
	return 0, false
}

// ParsePullPolicy reads --image-pull-policy: IfNotPresent, Always or Never. cnperf run, mesh,
// load and programming share it.
func ParsePullPolicy(v string) (corev1.PullPolicy, error) {
	switch p := corev1.PullPolicy(v); p {
	case corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
		return p, nil
	}
	return "", fmt.Errorf("--image-pull-policy %q: want IfNotPresent, Always or Never", v)
}
