package kube

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestServiceOptions(t *testing.T) {
	ports := func(ps ...int32) []corev1.ServicePort {
		var out []corev1.ServicePort
		for _, p := range ps {
			out = append(out, corev1.ServicePort{Protocol: corev1.ProtocolTCP, Port: p, TargetPort: intstr.FromInt32(p)})
		}
		return out
	}
	single, dual := corev1.IPFamilyPolicySingleStack, corev1.IPFamilyPolicyRequireDualStack
	for _, tc := range []struct {
		name      string
		o         ServiceOptions
		nodePorts []int32
		policy    *corev1.IPFamilyPolicy
		families  []corev1.IPFamily
	}{
		{name: "ClusterIP keeps no node port", o: ServiceOptions{Type: corev1.ServiceTypeClusterIP, Ports: ports(5201, 32000)},
			nodePorts: []int32{0, 0}},
		{name: "NodePort keeps in-range ports", o: ServiceOptions{Type: corev1.ServiceTypeNodePort, Ports: ports(5201, 30000, 32767, 32768)},
			nodePorts: []int32{0, 30000, 32767, 0}},
		{name: "cluster's default family", o: ServiceOptions{Type: corev1.ServiceTypeClusterIP, Ports: ports(80), Families: []string{"any"}},
			nodePorts: []int32{0}},
		{name: "one family", o: ServiceOptions{Type: corev1.ServiceTypeClusterIP, Ports: ports(80), Families: []string{"ipv6"}},
			nodePorts: []int32{0}, policy: &single, families: []corev1.IPFamily{corev1.IPv6Protocol}},
		{name: "both families", o: ServiceOptions{Type: corev1.ServiceTypeClusterIP, Ports: ports(80), Families: []string{"ipv4", "ipv6"}},
			nodePorts: []int32{0}, policy: &dual, families: []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}},
	} {
		tc.o.Name, tc.o.Namespace = "svc", "ns"
		tc.o.Labels, tc.o.Selector = RunLabels("r1"), map[string]string{LabelEndpoint: "srv"}
		svc := tc.o.Service()
		if svc.Name != "svc" || svc.Namespace != "ns" || !reflect.DeepEqual(svc.Labels, RunLabels("r1")) ||
			svc.Spec.Type != tc.o.Type || svc.Spec.Selector[LabelEndpoint] != "srv" {
			t.Errorf("%s: %+v", tc.name, svc)
		}
		var got []int32
		for _, p := range svc.Spec.Ports {
			got = append(got, p.NodePort)
		}
		if !reflect.DeepEqual(got, tc.nodePorts) {
			t.Errorf("%s: node ports %v, want %v", tc.name, got, tc.nodePorts)
		}
		if !reflect.DeepEqual(svc.Spec.IPFamilyPolicy, tc.policy) || !reflect.DeepEqual(svc.Spec.IPFamilies, tc.families) {
			t.Errorf("%s: family policy %v families %v, want %v %v", tc.name, svc.Spec.IPFamilyPolicy, svc.Spec.IPFamilies, tc.policy, tc.families)
		}
	}
}
