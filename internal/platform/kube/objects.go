package kube

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

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

// clientCommand keeps a client pod running until it is told to stop, and stops at once.
var clientCommand = []string{"sh", "-c", "trap 'exit 0' TERM INT; while :; do sleep 3600 & wait $!; done"}

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
	no := false
	grace := terminationGrace
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: e.Name, Namespace: s.Namespace, Labels: labels},
		Spec: corev1.PodSpec{
			ServiceAccountName:            ServiceAccountName,
			AutomountServiceAccountToken:  &no,
			EnableServiceLinks:            &no,
			RestartPolicy:                 corev1.RestartPolicyNever,
			TerminationGracePeriodSeconds: &grace,
			HostNetwork:                   e.Net == netHost,
			Tolerations:                   s.tolerations,
			Affinity:                      nodeAffinity(e.Node),
		},
	}
	if e.Net == netHost {
		pod.Spec.DNSPolicy = corev1.DNSClusterFirstWithHostNet
	}
	if e.Role == "client" {
		pod.Spec.Containers = []corev1.Container{container(s, runID, ClientContainer, clientCommand)}
		return pod
	}
	for _, srv := range e.Servers {
		c := container(s, runID, dnsLabel(srv.Name), srv.Argv)
		for _, p := range srv.Ports {
			cp := corev1.ContainerPort{ContainerPort: int32(p.Port), Protocol: Protocol(p.Protocol)}
			if e.Net == netHost {
				// Declaring the host port lets the scheduler refuse a node where it is taken.
				cp.HostPort = int32(p.Port)
			}
			c.Ports = append(c.Ports, cp)
		}
		if srv.Ready == "" {
			if p, ok := FirstTCPPort(srv.Ports); ok {
				// A startup probe, not a readiness probe: it stops after the first success, so
				// no probe connection ever reaches a server during a measurement and a busy
				// server is never taken out of its Service.
				c.StartupProbe = &corev1.Probe{
					ProbeHandler:     corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(int32(p))}},
					PeriodSeconds:    1,
					FailureThreshold: startupProbeFailures,
					SuccessThreshold: 1,
					TimeoutSeconds:   1,
				}
			}
		}
		pod.Spec.Containers = append(pod.Spec.Containers, c)
	}
	return pod
}

func container(s *settings, runID, name string, command []string) corev1.Container {
	c := corev1.Container{
		Name:            name,
		Image:           s.Image,
		ImagePullPolicy: s.pullPolicy,
		Command:         append([]string(nil), command...),
		Resources:       *s.resources.DeepCopy(),
		// the run's agent token, from the run's Secret: neither in the pod spec nor on a
		// command line; exec'ed clients inherit it
		Env: []corev1.EnvVar{TokenEnvVar(runID)},
	}
	if s.Privileged {
		yes := true
		c.SecurityContext = &corev1.SecurityContext{Privileged: &yes}
	}
	return c
}

// nodeAffinity pins a pod to a node through the scheduler (not spec.nodeName), so taints,
// resources and host ports are still checked and a refusal is reported as an event.
func nodeAffinity(node string) *corev1.Affinity {
	if node == "" {
		return nil
	}
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchFields: []corev1.NodeSelectorRequirement{{
					Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node},
				}},
			}},
		},
	}}
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

// servicePorts lists every (port, protocol) the servers listen on, once, in order. There
// is no limit on the number of ports.
func servicePorts(servers []driver.Server) []corev1.ServicePort {
	type key struct {
		port  int
		proto corev1.Protocol
	}
	seen := map[key]bool{}
	var out []corev1.ServicePort
	for _, srv := range servers {
		for _, p := range srv.Ports {
			k := key{p.Port, Protocol(p.Protocol)}
			if seen[k] {
				continue
			}
			seen[k] = true
			out = append(out, corev1.ServicePort{
				Name:       fmt.Sprintf("%s-%d", strings.ToLower(string(k.proto)), p.Port),
				Protocol:   k.proto,
				Port:       int32(p.Port),
				TargetPort: intstr.FromInt32(int32(p.Port)),
			})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Port != out[j].Port {
			return out[i].Port < out[j].Port
		}
		return out[i].Protocol < out[j].Protocol
	})
	return out
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
			Ports:    servicePorts(server.Servers),
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
