package mesh

import (
	"slices"

	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/driver/all"
	"github.com/cnperf/cnperf/internal/driver/toolkit/fixture"
	"github.com/cnperf/cnperf/internal/plan"

	_ "github.com/cnperf/cnperf/internal/driver/native"
)

// TestObjectsGolden keeps the DaemonSets, pods and Services mesh creates exactly as they were
// before the Kubernetes object layer was shared with the platform and tiger-bench
// (testdata/objects, written by the code before that change).
func TestObjectsGolden(t *testing.T) {
	run := "0b5c3e2a-1f0d-4c6b-9a51-0d7e3f2a9c11"
	servers := []driver.Server{
		{Name: "native", Argv: []string{"cnperf", "agent", "serve", "--port", "7100", "--data-port", "7101"},
			Ports: []driver.Port{{Name: "control", Port: 7100, Protocol: "TCP"}, {Name: "data", Port: 7101, Protocol: "UDP"}}},
		{Name: "client", Argv: []string{"sockperf", "sr", "-p", "11111"}, Ports: []driver.Port{{Port: 11111, Protocol: "UDP"}}},
	}
	o := AgentOptions{Namespace: "ns1", RunID: run, Image: "example.invalid/cnperf:test", PullPolicy: corev1.PullIfNotPresent,
		Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}, Servers: servers,
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}}}
	priv := o
	priv.Privileged = true
	d, err := all.Get("native")
	if err != nil {
		t.Fatal(err)
	}
	c := plan.Case{Driver: "native", Profile: api.TCPStream, Path: api.PathPodPodCrossNode, Params: api.Params{DurationSeconds: 10, Samples: 1, Parallel: 1}}
	opts, err := ServerPortOptions(d, 7200, 2)
	if err != nil {
		t.Fatal(err)
	}
	onePod, oneSvc, err := buildOneServer(o, api.NetworkPod, "node-a", c, d, opts)
	if err != nil {
		t.Fatal(err)
	}
	oneHostPod, _, err := buildOneServer(priv, api.NetworkHost, "node-b", c, d, []map[string]string{nil})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		obj  any
	}{
		{"daemonset-pod", BuildDaemonSet(o, api.NetworkPod, []string{"node-a", "node-b"})},
		{"daemonset-host-privileged", BuildDaemonSet(priv, api.NetworkHost, []string{"node-a"})},
		{"one-server-pod", onePod},
		{"one-server-service", oneSvc},
		{"one-server-host-privileged", oneHostPod},
	} {
		t.Run(tt.name, func(t *testing.T) { fixture.Golden(t, "testdata/objects/"+tt.name+".json", tt.obj) })
	}
}

// TestOneServerServiceTakesTheRunsFamily: an IPv6 run's all-to-one Service is single-stack
// IPv6, whatever family the cluster gives Services first (its ClusterIP is what --via service
// dials, on the family the servers are started for); without a family, the cluster's default
// (the golden file above).
func TestOneServerServiceTakesTheRunsFamily(t *testing.T) {
	d, err := all.Get("native")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		family string
		want   []corev1.IPFamily
	}{{"", nil}, {"ipv6", []corev1.IPFamily{corev1.IPv6Protocol}}, {"ipv4", []corev1.IPFamily{corev1.IPv4Protocol}}} {
		c := plan.Case{Driver: "native", Profile: api.TCPStream, Path: api.PathPodPodCrossNode,
			Params: api.Params{DurationSeconds: 10, Samples: 1, Parallel: 1, IPFamily: tc.family}}
		_, svc, err := buildOneServer(AgentOptions{Namespace: "ns", RunID: "run1", Image: "img"}, api.NetworkPod, "node-a", c, d, []map[string]string{nil})
		if err != nil {
			t.Fatal(err)
		}
		single := tc.want != nil && svc.Spec.IPFamilyPolicy != nil && *svc.Spec.IPFamilyPolicy == corev1.IPFamilyPolicySingleStack
		if !slices.Equal(svc.Spec.IPFamilies, tc.want) || (tc.want != nil) != single {
			t.Errorf("family %q: Service families %v, policy %v; want %v single-stack", tc.family, svc.Spec.IPFamilies, svc.Spec.IPFamilyPolicy, tc.want)
		}
	}
}
