package tigerbench

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/cnperf/cnperf/internal/driver/toolkit/fixture"
)

// TestObjectsGolden keeps the pods, Services and Deployments tiger-bench (and `cnperf load`)
// create exactly as they were before the Kubernetes object layer was shared with the platform
// and mesh (testdata/objects, written by the code before that change).
func TestObjectsGolden(t *testing.T) {
	run := "0b5c3e2a-1f0d-4c6b-9a51-0d7e3f2a9c11"
	ttfr := TTFRSpec{PodTestSpec: PodTestSpec{Namespace: "ns1", ID: "0b5c3e2a-00", RunID: run, Nodes: []string{"node-a", "node-b"},
		Image: "example.invalid/cnperf:test", PullPolicy: corev1.PullIfNotPresent}, Port: 8080, ResponseTimeout: 60 * time.Second}
	ttfrHost := ttfr
	ttfrHost.HostNetwork, ttfrHost.RunID = true, ""
	dns := DNSSpec{PodTestSpec: PodTestSpec{Namespace: "ns1", ID: "0b5c3e2a-01", RunID: run, Nodes: []string{"node-a"},
		Image: "example.invalid/cnperf:test", PullPolicy: corev1.PullNever, HostNetwork: true}, Duration: time.Minute, Interval: 100 * time.Millisecond}
	standing := StandingSpec{Namespace: "ns1", Pods: 10, Services: 2, Nodes: []string{"node-a", "node-b"}, Image: "example.invalid/cnperf:test", PullPolicy: corev1.PullIfNotPresent}
	standingAny := standing
	standingAny.Nodes = nil
	for _, tt := range []struct {
		name string
		obj  any
	}{
		{"ttfr-server", serverPodSpec(ttfr, "cnperf-ttfr-srv-0b5c3e2a-00-00", "node-a")},
		{"ttfr-client", clientPodSpec(ttfr, "cnperf-ttfr-0b5c3e2a-00-00000", "node-b", "10.0.0.1:8080")},
		{"ttfr-server-host", serverPodSpec(ttfrHost, "cnperf-ttfr-srv-0b5c3e2a-00-00", "node-a")},
		{"dns-client-host", dnsPod(dns, "cnperf-dns-0b5c3e2a-01-00", "node-a", "client", []string{"cnperf", "agent", "dns", "--target", "x"})},
		{"dns-target", dnsTargetPod(dns, "cnperf-dns-target-0b5c3e2a-01-00", "node-a")},
		{"dns-target-service", dnsTargetService(dns, "cnperf-dns-0b5c3e2a-01")},
		{"standing-backends", standingDeployment(standing, "standing-backends", StandingBackends, 5)},
		{"standing-pods-any-node", standingDeployment(standingAny, "standing-pods", StandingPods, 5)},
		{"standing-service", standingService("ns1", "standing-svc-00000")},
	} {
		t.Run(tt.name, func(t *testing.T) { fixture.Golden(t, "testdata/objects/"+tt.name+".json", tt.obj) })
	}
}
