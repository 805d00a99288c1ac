package kube

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cnperf/cnperf/internal/driver"
)

// Labels on every object cnperf creates. `cnperf cleanup` finds leftovers by them.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedByValue = "cnperf"
	LabelName      = "app.kubernetes.io/name"
	LabelRun       = "cnperf.dev/run"
	LabelRole      = "cnperf.dev/role"     // server or client
	LabelDriver    = "cnperf.dev/driver"   // servers: the driver they serve
	LabelNetwork   = "cnperf.dev/network"  // pod or host
	LabelEndpoint  = "cnperf.dev/endpoint" // the pod's own name; Services select on it
	// ServiceAccountName is the account endpoint pods run as. It has no RBAC bindings: the
	// endpoints never call the API, and its token is not mounted.
	ServiceAccountName = "cnperf"
	// ClientContainer is the container commands are exec'ed in.
	ClientContainer = "client"
)

// startupProbeFailures lets the startup probe try for as long as the start-up wait allows;
// cnperf's own wait (with its timeout) decides when to give up.
const startupProbeFailures = 3600

// The default NodePort range (kube-apiserver --service-node-port-range).
const (
	NodePortMin = 30000
	NodePortMax = 32767
)

// terminationGrace is short: endpoints hold no state worth a graceful shutdown.
const terminationGrace int64 = 2

// IdleCommand keeps a container running until it is told to stop, and stops at once (sh as PID
// 1 ignores SIGTERM without a trap, which would hold every deletion for the grace period):
// client pods (commands are exec'ed in them), mesh's client containers, tiger-bench's standing
// pods.
var IdleCommand = []string{"sh", "-c", "trap 'exit 0' TERM INT; while :; do sleep 3600 & wait $!; done"}

// RunLabels are the labels that tie an object to a run (platform, mesh, tiger-bench, load).
func RunLabels(runID string) map[string]string {
	return map[string]string{LabelManagedBy: ManagedByValue, LabelName: "cnperf", LabelRun: runID}
}

// RunSelector selects every object of one run; ManagedSelector every object cnperf made.
func RunSelector(runID string) string {
	return fmt.Sprintf("%s=%s,%s=%s", LabelManagedBy, ManagedByValue, LabelRun, runID)
}

// ManagedSelector selects every object cnperf made, of any run.
func ManagedSelector() string { return LabelManagedBy + "=" + ManagedByValue }

// ShortID is a name suffix from the run id: unique enough within a namespace, readable.
func ShortID(runID string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(runID) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
		if b.Len() == 8 {
			break
		}
	}
	if b.Len() == 0 {
		return "run"
	}
	return b.String()
}

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
	Net    network
	Node   string
	// Servers are the driver's servers, one container each (servers only).
	Servers []driver.Server
}

func serverPodName(runID, drv string, net network) string {
	return fmt.Sprintf("cnperf-srv-%s-%s-%s", dnsLabel(drv), net, ShortID(runID))
}

func clientPodName(runID string, net network, r nodeRole) string {
	short := map[nodeRole]string{roleServerNode: "s", roleClientNode: "c", roleZoneNode: "z"}[r]
	return fmt.Sprintf("cnperf-cli-%s-%s-%s", net, short, ShortID(runID))
}

func serviceName(runID, drv string, net network, kind corev1.ServiceType) string {
	k := "cip"
	if kind == corev1.ServiceTypeNodePort {
		k = "np"
	}
	n := ""
	if net == netHost {
		n = "-host"
	}
	return fmt.Sprintf("cnperf-%s-%s%s-%s", k, dnsLabel(drv), n, ShortID(runID))
}

func buildServiceAccount(ns, runID string) *corev1.ServiceAccount {
	no := false
	return &corev1.ServiceAccount{
		ObjectMeta:                   metav1.ObjectMeta{Name: ServiceAccountName, Namespace: ns, Labels: RunLabels(runID)},
		AutomountServiceAccountToken: &no,
	}
}

// buildPod builds an endpoint pod: a server pod runs one container per driver server (the
// server is the container's command); a client pod idles and commands are exec'ed in it.
func buildPod(s *settings, runID string, e endpointSpec) *corev1.Pod {
	labels := RunLabels(runID)
	labels[LabelRole] = e.Role
	labels[LabelNetwork] = string(e.Net)
	labels[LabelEndpoint] = e.Name
	if e.Driver != "" {
		labels[LabelDriver] = dnsLabel(e.Driver)
	}
	o := PodOptions{
		Name: e.Name, Namespace: s.Namespace, Labels: labels,
		HostNetwork: e.Net == netHost, Tolerations: s.tolerations,
		ServiceAccount: ServiceAccountName, GraceSeconds: terminationGrace, RunOnce: true,
	}
	if e.Node != "" {
		o.Nodes = []string{e.Node}
	}
	co := s.containerOptions(runID)
	if e.Role == "client" {
		o.Containers = []corev1.Container{co.Container(ClientContainer, IdleCommand)}
		return o.Pod()
	}
	for _, srv := range e.Servers {
		// a server that prints when it is ready is waited for by its log, not a probe
		o.Containers = append(o.Containers, co.ServerContainer(dnsLabel(srv.Name), srv, e.Net == netHost, srv.Ready == ""))
	}
	return o.Pod()
}

// containerOptions are the endpoint containers' image, resources and the run's token.
func (s *settings) containerOptions(runID string) ContainerOptions {
	return ContainerOptions{Image: s.Image, PullPolicy: s.pullPolicy, Resources: s.resources, TokenRun: runID, Privileged: s.Privileged}
}

// buildService exposes one server pod as a ClusterIP or NodePort Service with every port
// its servers use. families are the IP families wanted ("ipv4", "ipv6"); none means the
// cluster's default.
func buildService(s *settings, runID string, server endpointSpec, kind corev1.ServiceType, families []string) *corev1.Service {
	labels := RunLabels(runID)
	labels[LabelDriver] = dnsLabel(server.Driver)
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: serviceName(runID, server.Driver, server.Net, kind), Namespace: s.Namespace, Labels: labels},
		Spec: corev1.ServiceSpec{
			Type:     kind,
			Selector: map[string]string{LabelEndpoint: server.Name},
			Ports:    ServicePorts(server.Servers),
		},
	}
	var fams []corev1.IPFamily
	for _, f := range families {
		switch f {
		case "ipv4":
			fams = append(fams, corev1.IPv4Protocol)
		case "ipv6":
			fams = append(fams, corev1.IPv6Protocol)
		}
	}
	if kind == corev1.ServiceTypeNodePort {
		// A server port inside the default NodePort range is exposed under its own number,
		// so tools that tell the client which data port to dial (qperf) work through the
		// NodePort, as tiger-bench's external test requires (ports 32000/32221).
		for i := range svc.Spec.Ports {
			if p := svc.Spec.Ports[i].Port; p >= NodePortMin && p <= NodePortMax {
				svc.Spec.Ports[i].NodePort = p
			}
		}
	}
	switch len(fams) {
	case 1:
		single := corev1.IPFamilyPolicySingleStack
		svc.Spec.IPFamilyPolicy, svc.Spec.IPFamilies = &single, fams
	case 2:
		dual := corev1.IPFamilyPolicyRequireDualStack
		svc.Spec.IPFamilyPolicy, svc.Spec.IPFamilies = &dual, fams
	}
	return svc
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
		if e.Net != netHost || e.Role != "server" {
			continue
		}
		for _, srv := range e.Servers {
			for _, p := range srv.Ports {
				k := key{e.Node, p.Port, Protocol(p.Protocol)}
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
