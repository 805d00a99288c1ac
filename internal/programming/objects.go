package programming

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/ttfr"
)

// Labels of what `cnperf programming` creates (beside kube.RunLabels).
const (
	// LabelRole is "server", "client", "service", "policy" or "standing-policy".
	LabelRole = "cnperf.dev/programming"
	// LabelBackend is what the endpoint Service selects: the server pod carries it while it is
	// the Service's endpoint (ENDPOINT_ADD adds it, ENDPOINT_REMOVE takes it away).
	LabelBackend = "cnperf.dev/programming-backend"
	// LabelNobody is what standing policies allow ingress from: no pod carries it.
	LabelNobody = "cnperf.dev/programming-nobody"
	// Container is the container of every pod.
	Container = "probe"
)

// objects builds the objects of one run.
type objects struct {
	ns, runID, image string
	pull             corev1.PullPolicy
	port             int
}

func (o objects) id() string { return kube.ShortID(o.runID) }

func (o objects) labels(role string) map[string]string {
	l := kube.RunLabels(o.runID)
	l[LabelRole] = role
	return l
}

// serverPod answers TCP connects on port (cnperf agent ttfr's HTTP server) and is Ready once
// it listens, so it can be a Service's endpoint.
func (o objects) serverPod(node string) *corev1.Pod {
	return o.listeningPod("cnperf-prog-srv-"+o.id(), "server", node)
}

// targetPod is the pod of POD_CREATE and POD_READY's change i: a server like serverPod.
func (o objects) targetPod(i int, node string) *corev1.Pod {
	return o.listeningPod(fmt.Sprintf("cnperf-prog-tgt-%s-%04d", o.id(), i), "target", node)
}

func (o objects) listeningPod(name, role, node string) *corev1.Pod {
	p := kube.PodOptions{Name: name, Namespace: o.ns, Labels: o.labels(role), Nodes: []string{node},
		GraceSeconds: kube.TerminationGraceSeconds,
		Containers: []corev1.Container{kube.ContainerOptions{Image: o.image, PullPolicy: o.pull}.Container(Container,
			[]string{"cnperf", "agent", "ttfr", "--listen", ":" + strconv.Itoa(o.port)})},
	}.Pod()
	kube.ServeTCP(&p.Spec.Containers[0], "probe", o.port)
	return p
}

// clientPod idles on node; the probes are exec'ed in it.
func (o objects) clientPod(i int, node string) *corev1.Pod {
	return kube.PodOptions{Name: fmt.Sprintf("cnperf-prog-cli-%s-%02d", o.id(), i), Namespace: o.ns, Labels: o.labels("client"),
		Nodes: []string{node}, GraceSeconds: kube.TerminationGraceSeconds,
		Containers: []corev1.Container{kube.ContainerOptions{Image: o.image, PullPolicy: o.pull}.Container(Container, kube.IdleCommand)},
	}.Pod()
}

// hostPod idles on node in the node's network namespace: kube-proxy's metrics (127.0.0.1) are
// read through it.
func (o objects) hostPod(i int, node string) *corev1.Pod {
	return kube.PodOptions{Name: fmt.Sprintf("cnperf-prog-host-%s-%02d", o.id(), i), Namespace: o.ns, Labels: o.labels("host"),
		Nodes: []string{node}, GraceSeconds: kube.TerminationGraceSeconds, HostNetwork: true,
		Containers: []corev1.Container{kube.ContainerOptions{Image: o.image, PullPolicy: o.pull}.Container(Container, kube.IdleCommand)},
	}.Pod()
}

// service is a ClusterIP (or NodePort) Service on the probe port. selector picks its
// endpoints; clusterIP, when set, is the address it must get (SERVICE_CREATE creates it again
// and again at the address the clients probe).
func (o objects) service(name, clusterIP string, selector map[string]string, nodePort bool) *corev1.Service {
	typ := corev1.ServiceTypeClusterIP
	if nodePort {
		typ = corev1.ServiceTypeNodePort
	}
	svc := kube.ServiceOptions{Name: name, Namespace: o.ns, Labels: o.labels("service"), Type: typ,
		Selector: selector,
		Ports: []corev1.ServicePort{{Name: "probe", Port: int32(o.port), TargetPort: intstr.FromInt32(int32(o.port)),
			Protocol: corev1.ProtocolTCP}},
	}.Service()
	svc.Spec.ClusterIP = clusterIP
	return svc
}

// serverSelector selects the server pod.
func (o objects) serverSelector() map[string]string {
	return map[string]string{kube.LabelRun: o.runID, LabelRole: "server"}
}

// denyPolicy isolates the server for ingress and allows nothing: POLICY_DENY's change, and
// POLICY_ALLOW's standing default deny.
func (o objects) denyPolicy(name string) *networkingv1.NetworkPolicy {
	return &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: o.ns, Labels: o.labels("policy")},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: o.serverSelector()},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
		},
	}
}

// allowPolicy allows the clients to reach the server's probe port: POLICY_ALLOW's change.
func (o objects) allowPolicy(name string) *networkingv1.NetworkPolicy {
	p := o.denyPolicy(name)
	port := intstr.FromInt32(int32(o.port))
	tcp := corev1.ProtocolTCP
	p.Spec.Ingress = []networkingv1.NetworkPolicyIngressRule{{
		From:  []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{kube.LabelRun: o.runID, LabelRole: "client"}}}},
		Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: &port}},
	}}
	return p
}

// standingPolicy i selects the client pods and allows ingress to them only from pods no one
// carries the label of, on a port of its own: rules every client's node must hold, which do
// not touch the clients' own connects (egress) nor the server.
func (o objects) standingPolicy(i int) *networkingv1.NetworkPolicy {
	port := intstr.FromInt32(int32(10000 + i%50000))
	tcp := corev1.ProtocolTCP
	return &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cnperf-prog-standing-%s-%05d", o.id(), i), Namespace: o.ns,
			Labels: o.labels("standing-policy")},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{kube.LabelRun: o.runID, LabelRole: "client"}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{
				From:  []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{LabelNobody: strconv.Itoa(i)}}}},
				Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: &port}},
			}},
		},
	}
}

// probeArgv is the probe a client runs for one change.
func probeArgv(target string, expect ttfr.State, p Params) []string {
	argv := []string{"cnperf", "agent", "probe", "--target", target, "--expect", string(expect),
		"--interval", p.Interval.String(), "--attempt-timeout", p.AttemptTimeout.String(),
		"--confirm", strconv.Itoa(p.Confirm), "--settle", p.Settle.String(), "--timeout", p.Timeout.String()}
	if p.FromStart {
		argv = append(argv, "--from-start")
	}
	return argv
}

// clockArgv reads a client node's clock.
var clockArgv = []string{"cnperf", "agent", "probe", "--clock"}
