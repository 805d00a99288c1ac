package kube

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/driver/toolkit/fixture"
)

// TestObjectsGolden keeps the objects the platform creates exactly as they were when the
// Kubernetes object layer was shared with mesh and tiger-bench (testdata/objects, written by
// the code before that change): a refactor of the builders must not change what a cluster
// gets.
func TestObjectsGolden(t *testing.T) {
	s := mustParse(t, Options{Namespace: "ns1", Image: "example.invalid/cnperf:test", ImagePullPolicy: "Never",
		Tolerations: []string{"dedicated=perf:NoSchedule"}, Resources: []string{"cpu=1", "memory=256Mi"}, Guaranteed: true})
	priv := mustParse(t, Options{Namespace: "ns1", Image: "example.invalid/cnperf:test", ImagePullPolicy: "IfNotPresent", Privileged: true})
	servers := []driver.Server{
		{Name: "native", Argv: []string{"cnperf", "agent", "serve", "--port", "7100", "--data-port", "7101"},
			Ports: []driver.Port{{Name: "control", Port: 7100, Protocol: "TCP"}, {Name: "data", Port: 7101, Protocol: "UDP"}}},
		{Name: "sockperf_udp", Argv: []string{"sockperf", "sr", "-p", "11111"}, Ports: []driver.Port{{Port: 11111, Protocol: "UDP"}}, Ready: "Warmup"},
		{Name: "qperf", Argv: []string{"qperf", "-lp", "32000"}, Ports: []driver.Port{{Port: 32000, Protocol: "TCP"}, {Port: 32001, Protocol: "TCP"}}},
	}
	srvPod := endpointSpec{Name: serverPodName(testRun, "native", api.NetworkPod), Role: "server", Driver: "native", Net: api.NetworkPod, Node: "node-a", Servers: servers}
	srvHost := endpointSpec{Name: serverPodName(testRun, "native", api.NetworkHost), Role: "server", Driver: "native", Net: api.NetworkHost, Node: "node-b", Servers: servers}
	for _, tt := range []struct {
		name string
		obj  any
	}{
		{"server-pod", buildPod(s, testRun, srvPod)},
		{"server-host-privileged", buildPod(priv, testRun, srvHost)},
		{"client-pod", buildPod(s, testRun, endpointSpec{Name: clientPodName(testRun, api.NetworkPod, roleClientNode), Role: "client", Net: api.NetworkPod, Node: "node-c"})},
		{"client-host-anywhere", buildPod(priv, testRun, endpointSpec{Name: clientPodName(testRun, api.NetworkHost, roleServerNode), Role: "client", Net: api.NetworkHost})},
		{"service-clusterip", buildService(s, testRun, srvPod, corev1.ServiceTypeClusterIP, nil)},
		{"service-nodeport-dual", buildService(s, testRun, srvHost, corev1.ServiceTypeNodePort, []string{"ipv6", "ipv4"})},
		{"service-single", buildService(s, testRun, srvPod, corev1.ServiceTypeClusterIP, []string{"ipv4"})},
		{"serviceaccount", buildServiceAccount("ns1", testRun)},
	} {
		t.Run(tt.name, func(t *testing.T) { fixture.Golden(t, "testdata/objects/"+tt.name+".json", tt.obj) })
	}
}
