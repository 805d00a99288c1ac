package kube

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/kube"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/cnperf/cnperf/internal/agenttoken"
	"github.com/cnperf/cnperf/internal/driver"
)

const testRun = "0b5c3e2a-1f0d-4c6b-9a51-0d7e3f2a9c11"

func mustParse(t *testing.T, o Options) *settings {
	t.Helper()
	s, err := o.parse()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// qosClass computes a pod's QoS class the way the kubelet does (for cpu and memory).
func qosClass(pod *corev1.Pod) corev1.PodQOSClass {
	guaranteed, any := true, false
	for _, c := range pod.Spec.Containers {
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			req, hasReq := c.Resources.Requests[name]
			lim, hasLim := c.Resources.Limits[name]
			if hasReq || hasLim {
				any = true
			}
			if !hasLim || (hasReq && req.Cmp(lim) != 0) {
				guaranteed = false
			}
		}
	}
	switch {
	case !any:
		return corev1.PodQOSBestEffort
	case guaranteed:
		return corev1.PodQOSGuaranteed
	}
	return corev1.PodQOSBurstable
}

func TestBuildPod(t *testing.T) {
	iperf := []driver.Server{{Name: "iperf3", Argv: []string{"iperf3", "-s", "-p", "5201"}, Ports: []driver.Port{{Name: "control", Port: 5201, Protocol: "TCP"}}}}
	sockperf := []driver.Server{
		{Name: "sockperf_tcp", Argv: []string{"sockperf", "sr", "--tcp", "-p", "11111"}, Ports: []driver.Port{{Port: 11111, Protocol: "TCP"}}},
		{Name: "sockperf-udp", Argv: []string{"sockperf", "sr", "-p", "11111"}, Ports: []driver.Port{{Port: 11111, Protocol: "UDP"}}, Ready: "Warmup"},
	}
	tests := []struct {
		name  string
		opts  Options
		spec  endpointSpec
		check func(t *testing.T, p *corev1.Pod)
	}{
		{
			name: "pod-network server",
			spec: endpointSpec{Name: "srv", Role: "server", Driver: "iperf3", Net: api.NetworkPod, Node: "node1", Servers: iperf},
			check: func(t *testing.T, p *corev1.Pod) {
				if p.Spec.HostNetwork {
					t.Error("hostNetwork set on a pod-network server")
				}
				c := p.Spec.Containers[0]
				if !reflect.DeepEqual(c.Command, iperf[0].Argv) {
					t.Errorf("command = %v, want the driver's argv %v", c.Command, iperf[0].Argv)
				}
				if c.StartupProbe == nil || c.StartupProbe.TCPSocket.Port.IntValue() != 5201 {
					t.Errorf("startup probe = %+v, want TCP 5201", c.StartupProbe)
				}
				if c.ReadinessProbe != nil || c.LivenessProbe != nil {
					t.Error("a readiness or liveness probe would hit the server during measurements")
				}
				if c.Ports[0].HostPort != 0 {
					t.Error("host port declared on a pod-network server")
				}
				if p.Labels[kube.LabelDriver] != "iperf3" || p.Labels[kube.LabelRole] != "server" || p.Labels[kube.LabelNetwork] != "pod" {
					t.Errorf("labels = %v", p.Labels)
				}
				if qosClass(p) != corev1.PodQOSBestEffort {
					t.Errorf("QoS = %s, want BestEffort without --resources", qosClass(p))
				}
			},
		},
		{
			name: "hostNetwork server",
			spec: endpointSpec{Name: "srv", Role: "server", Driver: "iperf3", Net: api.NetworkHost, Node: "node1", Servers: iperf},
			check: func(t *testing.T, p *corev1.Pod) {
				if !p.Spec.HostNetwork || p.Spec.DNSPolicy != corev1.DNSClusterFirstWithHostNet {
					t.Errorf("hostNetwork %v dnsPolicy %q", p.Spec.HostNetwork, p.Spec.DNSPolicy)
				}
				if hp := p.Spec.Containers[0].Ports[0].HostPort; hp != 5201 {
					t.Errorf("host port = %d, want 5201 so the scheduler sees conflicts", hp)
				}
				if p.Spec.Containers[0].SecurityContext != nil {
					t.Error("hostNetwork must not imply privileged")
				}
			},
		},
		{
			name: "two servers, one container each; a message-ready server has no probe",
			spec: endpointSpec{Name: "srv", Role: "server", Driver: "sockperf", Net: api.NetworkPod, Node: "node1", Servers: sockperf},
			check: func(t *testing.T, p *corev1.Pod) {
				if len(p.Spec.Containers) != 2 {
					t.Fatalf("%d containers, want 2", len(p.Spec.Containers))
				}
				if p.Spec.Containers[0].Name != "sockperf-tcp" || p.Spec.Containers[1].Name != "sockperf-udp" {
					t.Errorf("container names %q %q", p.Spec.Containers[0].Name, p.Spec.Containers[1].Name)
				}
				if p.Spec.Containers[1].StartupProbe != nil {
					t.Error("UDP server got a TCP probe")
				}
			},
		},
		{
			name: "client",
			spec: endpointSpec{Name: "cli", Role: "client", Net: api.NetworkPod, Node: "node2"},
			check: func(t *testing.T, p *corev1.Pod) {
				if len(p.Spec.Containers) != 1 || p.Spec.Containers[0].Name != kube.ClientContainer {
					t.Fatalf("containers = %+v", p.Spec.Containers)
				}
				terms := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
				if terms[0].MatchFields[0].Values[0] != "node2" || p.Spec.NodeName != "" {
					t.Errorf("client not pinned to node2 through the scheduler: %+v nodeName %q", terms, p.Spec.NodeName)
				}
			},
		},
		{
			name: "guaranteed, privileged, tolerations, pull policy",
			opts: Options{Resources: []string{"cpu=2", "memory=1Gi"}, Guaranteed: true, Privileged: true,
				Tolerations: []string{"dedicated=perf:NoSchedule"}, Image: "example.com/cnperf:test", ImagePullPolicy: "Never"},
			spec: endpointSpec{Name: "srv", Role: "server", Driver: "iperf3", Net: api.NetworkPod, Node: "node1", Servers: iperf},
			check: func(t *testing.T, p *corev1.Pod) {
				if qosClass(p) != corev1.PodQOSGuaranteed {
					t.Errorf("QoS = %s, want Guaranteed", qosClass(p))
				}
				c := p.Spec.Containers[0]
				if c.SecurityContext == nil || !*c.SecurityContext.Privileged {
					t.Error("not privileged")
				}
				if c.Image != "example.com/cnperf:test" || c.ImagePullPolicy != corev1.PullNever {
					t.Errorf("image %s policy %s", c.Image, c.ImagePullPolicy)
				}
				if len(p.Spec.Tolerations) != 1 || p.Spec.Tolerations[0].Key != "dedicated" || p.Spec.Tolerations[0].Value != "perf" {
					t.Errorf("tolerations = %+v", p.Spec.Tolerations)
				}
			},
		},
		{
			name: "requests only: burstable",
			opts: Options{Resources: []string{"requests.cpu=500m"}},
			spec: endpointSpec{Name: "cli", Role: "client", Net: api.NetworkPod, Node: "node2"},
			check: func(t *testing.T, p *corev1.Pod) {
				if qosClass(p) != corev1.PodQOSBurstable {
					t.Errorf("QoS = %s, want Burstable", qosClass(p))
				}
			},
		},
	}
	tests = append(tests, struct {
		name  string
		opts  Options
		spec  endpointSpec
		check func(t *testing.T, p *corev1.Pod)
	}{
		name: "--pod-labels and --pod-annotations", opts: Options{PodLabels: []string{"team=net"}, PodAnnotations: []string{"sidecar.istio.io/inject=false"}},
		spec: endpointSpec{Name: "cli", Role: "client", Net: api.NetworkPod, Node: "node2"},
		check: func(t *testing.T, p *corev1.Pod) {
			if p.Labels["team"] != "net" || p.Labels[kube.LabelRole] != "client" || len(p.Annotations) != 1 ||
				p.Annotations["sidecar.istio.io/inject"] != "false" {
				t.Errorf("labels %v annotations %v", p.Labels, p.Annotations)
			}
		},
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustParse(t, tt.opts)
			p := buildPod(s, testRun, tt.spec)
			// Invariants of every endpoint pod.
			if p.Namespace != "cnperf" {
				t.Errorf("namespace = %q", p.Namespace)
			}
			for k, v := range kube.RunLabels(testRun) {
				if p.Labels[k] != v {
					t.Errorf("label %s = %q, want %q", k, p.Labels[k], v)
				}
			}
			if p.Labels[kube.LabelEndpoint] != p.Name {
				t.Error("endpoint label missing")
			}
			if *p.Spec.AutomountServiceAccountToken || p.Spec.ServiceAccountName != kube.ServiceAccountName {
				t.Error("endpoint pods must not get an API token")
			}
			if p.Spec.RestartPolicy != corev1.RestartPolicyNever {
				t.Error("a crashed server must not restart silently")
			}
			for _, c := range p.Spec.Containers {
				if errs := validation.IsDNS1123Label(c.Name); len(errs) > 0 {
					t.Errorf("container name %q: %v", c.Name, errs)
				}
				// the run's agent token: in the environment from the run's Secret, never in
				// the pod spec itself
				var ref *corev1.EnvVarSource
				if len(c.Env) > 0 {
					ref = c.Env[0].ValueFrom
				}
				if len(c.Env) != 1 || c.Env[0].Name != agenttoken.Env || c.Env[0].Value != "" || ref == nil || ref.SecretKeyRef == nil ||
					ref.SecretKeyRef.Name != kube.TokenSecretName(testRun) || ref.SecretKeyRef.Key != kube.TokenSecretKey {
					t.Errorf("container %s: env %+v, want %s from secret %s key %s", c.Name, c.Env, agenttoken.Env, kube.TokenSecretName(testRun), kube.TokenSecretKey)
				}
			}
			// nowhere in the serialized pod (what kubectl get pod -o yaml shows)
			if js, err := json.Marshal(p); err != nil || len(s.AgentToken) != 64 || strings.Contains(string(js), s.AgentToken) {
				t.Errorf("the token (%d chars) is in the pod spec (or it does not serialize: %v)", len(s.AgentToken), err)
			}
			tt.check(t, p)
		})
	}
}

func TestNames(t *testing.T) {
	for _, name := range []string{
		serverPodName(testRun, "iperf3", api.NetworkHost), clientPodName(testRun, api.NetworkPod, roleZoneNode),
		serviceName(testRun, "sockperf", api.NetworkHost, corev1.ServiceTypeNodePort), serviceName("weird/ID_with.stuff", "native", api.NetworkPod, corev1.ServiceTypeClusterIP),
	} {
		if errs := validation.IsDNS1035Label(name); len(errs) > 0 {
			t.Errorf("%q: %v", name, errs)
		}
	}
	if a, b := serverPodName(testRun, "iperf3", api.NetworkPod), serverPodName(testRun, "iperf3", api.NetworkHost); a == b {
		t.Error("pod and host servers share a name")
	}
}

func TestBuildServiceManyPorts(t *testing.T) {
	// k8s-netperf exposes at most 16 ports; a parallel uperf/netperf run needs more.
	var srv driver.Server
	srv.Name = "netperf"
	for i := 0; i < 40; i++ {
		srv.Ports = append(srv.Ports, driver.Port{Name: fmt.Sprintf("data-%d", i), Port: 20000 + i, Protocol: "TCP"})
		srv.Ports = append(srv.Ports, driver.Port{Name: fmt.Sprintf("udp-%d", i), Port: 20000 + i, Protocol: "UDP"})
	}
	srv.Ports = append(srv.Ports, driver.Port{Name: "dup", Port: 20000, Protocol: "TCP"})
	s := mustParse(t, Options{})
	e := endpointSpec{Name: "srv-pod", Role: "server", Driver: "netperf", Net: api.NetworkPod, Servers: []driver.Server{srv}}
	for _, tt := range []struct {
		kind     corev1.ServiceType
		families []string
		policy   corev1.IPFamilyPolicy
	}{
		{corev1.ServiceTypeClusterIP, nil, ""},
		{corev1.ServiceTypeNodePort, []string{"ipv6"}, corev1.IPFamilyPolicySingleStack},
		{corev1.ServiceTypeClusterIP, []string{"ipv4", "ipv6"}, corev1.IPFamilyPolicyRequireDualStack},
	} {
		svc := buildService(s, testRun, e, tt.kind, tt.families)
		if len(svc.Spec.Ports) != 80 {
			t.Fatalf("%d ports, want 80 (every TCP and UDP port once)", len(svc.Spec.Ports))
		}
		names := map[string]bool{}
		for _, p := range svc.Spec.Ports {
			if names[p.Name] {
				t.Errorf("duplicate port name %s", p.Name)
			}
			names[p.Name] = true
			if p.TargetPort.IntValue() != int(p.Port) {
				t.Errorf("port %d targets %s", p.Port, p.TargetPort.String())
			}
		}
		if svc.Spec.Type != tt.kind || svc.Spec.Selector[kube.LabelEndpoint] != "srv-pod" {
			t.Errorf("type %s selector %v", svc.Spec.Type, svc.Spec.Selector)
		}
		got := corev1.IPFamilyPolicy("")
		if svc.Spec.IPFamilyPolicy != nil {
			got = *svc.Spec.IPFamilyPolicy
		}
		if got != tt.policy || len(svc.Spec.IPFamilies) != len(tt.families) {
			t.Errorf("families %v: policy %q families %v", tt.families, got, svc.Spec.IPFamilies)
		}
	}
}

func TestDuplicateHostPorts(t *testing.T) {
	a := endpointSpec{Role: "server", Driver: "iperf3", Net: api.NetworkHost, Node: "n1", Servers: []driver.Server{{Ports: []driver.Port{{Port: 5201, Protocol: "TCP"}}}}}
	b := endpointSpec{Role: "server", Driver: "native", Net: api.NetworkHost, Node: "n1", Servers: []driver.Server{{Ports: []driver.Port{{Port: 5201, Protocol: "TCP"}}}}}
	c := b
	c.Net = api.NetworkPod
	if err := duplicateHostPorts([]endpointSpec{a, c}); err != nil {
		t.Errorf("pod-network servers never clash: %v", err)
	}
	if err := duplicateHostPorts([]endpointSpec{a, b}); err == nil || !strings.Contains(err.Error(), "both need TCP port 5201 on node n1") {
		t.Errorf("error = %v", err)
	}
}

func TestParseOptions(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		wantErr string
	}{
		{name: "defaults", opts: Options{}},
		{name: "bad pull policy", opts: Options{ImagePullPolicy: "Sometimes"}, wantErr: "--image-pull-policy"},
		{name: "bad selector", opts: Options{NodeSelector: []string{"novalue"}}, wantErr: "--node-selector"},
		{name: "bad effect", opts: Options{Tolerations: []string{"k=v:Never"}}, wantErr: "effect \"Never\""},
		{name: "cnperf's own label", opts: Options{PodLabels: []string{"cnperf.dev/role=x"}}, wantErr: "cnperf.dev/role is cnperf's own key"},
		{name: "bad annotation key", opts: Options{PodAnnotations: []string{"a b=c"}}, wantErr: `--pod-annotations "a b=c": key "a b"`},
		{name: "toleration without key", opts: Options{Tolerations: []string{"=v"}}, wantErr: "has no key"},
		{name: "bad quantity", opts: Options{Resources: []string{"cpu=lots"}}, wantErr: "--resources"},
		{name: "request above limit", opts: Options{Resources: []string{"requests.cpu=2", "limits.cpu=1"}}, wantErr: "above its limit"},
		{name: "guaranteed without memory", opts: Options{Resources: []string{"cpu=1"}, Guaranteed: true}, wantErr: "needs a memory amount"},
		{name: "guaranteed with unequal", opts: Options{Resources: []string{"requests.cpu=1", "limits.cpu=2", "memory=1Gi"}, Guaranteed: true}, wantErr: "differs from its limit"},
		{name: "guaranteed from requests", opts: Options{Resources: []string{"requests.cpu=1", "requests.memory=1Gi"}, Guaranteed: true}},
		{name: "bad namespace", opts: Options{Namespace: "Perf_Tests"}, wantErr: "--namespace"},
		{name: "external without host", opts: Options{External: ":5201"}, wantErr: "no host"},
		{name: "external port out of range", opts: Options{External: "lb.example.com:5201,70000"}, wantErr: "1-65535"},
		{name: "external host and ports", opts: Options{External: "lb.example.com:32001,32002"}},
		{name: "external IPv6", opts: Options{External: "[fd00::1]:32001"}},
		{name: "bad external client", opts: Options{ExternalClient: "laptop"}, wantErr: "--external-client"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := tt.opts.parse()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.opts.Guaranteed {
				for _, n := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
					req, lim := s.resources.Requests[n], s.resources.Limits[n]
					if req.Cmp(lim) != 0 || req.IsZero() {
						t.Errorf("%s request %v limit %v", n, req.String(), lim.String())
					}
				}
			}
		})
	}
	s := mustParse(t, Options{Resources: []string{"cpu=2", "limits.memory=1Gi", "requests.memory=512Mi"}})
	want := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{"cpu": resource.MustParse("2"), "memory": resource.MustParse("512Mi")},
		Limits:   corev1.ResourceList{"cpu": resource.MustParse("2"), "memory": resource.MustParse("1Gi")},
	}
	for _, n := range []corev1.ResourceName{"cpu", "memory"} {
		req, lim := s.resources.Requests[n], s.resources.Limits[n]
		if req.Cmp(want.Requests[n]) != 0 || lim.Cmp(want.Limits[n]) != 0 {
			t.Errorf("%s: got %s/%s", n, req.String(), lim.String())
		}
	}
}

func TestNodePortKeepsPortsInRange(t *testing.T) {
	// tiger-bench exposes qperf on 32000/32221: tools that tell the client which data port
	// to dial need the NodePort to keep the number.
	srv := driver.Server{Name: "qperf", Ports: []driver.Port{{Port: 32000, Protocol: "TCP"}, {Port: 32221, Protocol: "TCP"}, {Port: 19765, Protocol: "TCP"}}}
	e := endpointSpec{Name: "srv", Role: "server", Driver: "qperf", Net: api.NetworkPod, Servers: []driver.Server{srv}}
	s := mustParse(t, Options{})
	got := map[int32]int32{}
	for _, p := range buildService(s, testRun, e, corev1.ServiceTypeNodePort, nil).Spec.Ports {
		got[p.Port] = p.NodePort
	}
	want := map[int32]int32{32000: 32000, 32221: 32221, 19765: 0}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("node ports %v, want %v", got, want)
	}
	for _, p := range buildService(s, testRun, e, corev1.ServiceTypeClusterIP, nil).Spec.Ports {
		if p.NodePort != 0 {
			t.Errorf("ClusterIP service asks for node port %d", p.NodePort)
		}
	}
}
