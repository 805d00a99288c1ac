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

// The default NodePort range (kube-apiserver --service-node-port-range).
const (
	NodePortMin = 30000
	NodePortMax = 32767
)

// ServiceOptions describe a Service in front of cnperf's own pods (the kube platform's
// ClusterIP and NodePort Services, mesh's all-to-one server, tiger-bench's DNS target).
type ServiceOptions struct {
	Name, Namespace string
	Labels          map[string]string
	Type            corev1.ServiceType
	Selector        map[string]string
	Ports           []corev1.ServicePort
	// Families are the IP families wanted ("ipv4", "ipv6"): one is single-stack, both
	// require dual-stack; none is the cluster's default.
	Families []string
}

// Service builds the Service. A NodePort Service exposes a port inside the default NodePort
// range under its own number, so tools that tell the client which data port to dial (qperf)
// work through the NodePort, as tiger-bench's external test requires (ports 32000/32221).
func (o ServiceOptions) Service() *corev1.Service {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace, Labels: o.Labels},
		Spec:       corev1.ServiceSpec{Type: o.Type, Selector: o.Selector, Ports: o.Ports},
	}
	if o.Type == corev1.ServiceTypeNodePort {
		for i := range svc.Spec.Ports {
			if p := svc.Spec.Ports[i].Port; p >= NodePortMin && p <= NodePortMax {
				svc.Spec.Ports[i].NodePort = p
			}
		}
	}
	var fams []corev1.IPFamily
	for _, f := range o.Families {
		switch f {
		case "ipv4":
			fams = append(fams, corev1.IPv4Protocol)
		case "ipv6":
			fams = append(fams, corev1.IPv6Protocol)
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

// ServicePorts lists every (port, protocol) the servers listen on, once, by port and then
// protocol, named "tcp-5201". There is no limit on the number of ports.
func ServicePorts(servers []driver.Server) []corev1.ServicePort {
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
