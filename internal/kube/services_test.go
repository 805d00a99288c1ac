package kube

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/driver/iperf2"
	"github.com/cnperf/cnperf/internal/driver/sockperf"
	"github.com/cnperf/cnperf/internal/plan"
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

// TestServicePortsBothFamilies: in a dual-stack run iperf 2's and sockperf's IPv6 cases have
// servers of their own on the next port (toolkit.FamilyServer), and the Service of the server
// pod exposes both families' ports, so ClusterIP and NodePort reach each.
func TestServicePortsBothFamilies(t *testing.T) {
	rr := func(d, fam string, p api.Profile, size int) plan.Case {
		return plan.Case{Driver: d, Profile: p, Params: api.Params{DurationSeconds: 1, Samples: 1, Parallel: 1,
			MessageSizeBytes: size, IPFamily: fam}}
	}
	for _, tc := range []struct {
		d     driver.Driver
		cases []plan.Case
		want  []string
	}{
		{iperf2.Driver{}, []plan.Case{rr("iperf2", "ipv4", api.TCPRR, 64), rr("iperf2", "ipv6", api.TCPRR, 64)},
			[]string{"tcp-5001", "tcp-5002"}},
		{sockperf.Driver{}, []plan.Case{rr("sockperf", "ipv4", api.TCPRR, 14), rr("sockperf", "ipv6", api.TCPRR, 14),
			rr("sockperf", "ipv4", api.UDPRR, 14), rr("sockperf", "ipv6", api.UDPRR, 14)},
			[]string{"tcp-11111", "udp-11111", "tcp-11112", "udp-11112"}},
	} {
		var got []string
		for _, p := range ServicePorts(driver.Servers(tc.d, tc.cases)) {
			got = append(got, p.Name)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: service ports %v, want %v", tc.d.Name(), got, tc.want)
		}
	}
}
