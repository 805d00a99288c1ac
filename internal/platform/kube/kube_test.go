package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/kube/kubetest"
	"github.com/cnperf/cnperf/internal/plan"
)

// specDriver is a driver that only lists servers: Prepare needs nothing else of a driver.
// The real drivers live in other packages; these tests are about placement, not tools.
type specDriver struct {
	name    string
	servers []driver.Server
}

func (d specDriver) Name() string                              { return d.name }
func (d specDriver) Capabilities() driver.Capabilities         { return driver.Capabilities{} }
func (d specDriver) Job(plan.Case) (driver.Job, error)         { return d, nil }
func (d specDriver) Servers() []driver.Server                  { return d.servers }
func (d specDriver) Parse([]driver.Output) (api.Sample, error) { return api.Sample{}, nil }
func (d specDriver) Client(driver.Target, bool) ([]driver.Command, error) {
	return nil, nil
}

var testDrivers = map[string]driver.Driver{
	"iperf3": specDriver{"iperf3", []driver.Server{{Name: "iperf3", Argv: []string{"iperf3", "-s", "-p", "5201"},
		Ports: []driver.Port{{Name: "control", Port: 5201, Protocol: "TCP"}}}}},
	"qperf": specDriver{"qperf", []driver.Server{{Name: "qperf", Argv: []string{"qperf", "-lp", "19765"},
		Ports: []driver.Port{{Name: "control", Port: 19765, Protocol: "TCP"}, {Name: "data", Port: 19766, Protocol: "TCP"}, {Name: "data-udp", Port: 19766, Protocol: "UDP"}}}}},
}

// cluster is a fake API server whose kubelet "starts" pods: a reactor fills in the status
// the real kubelet and scheduler would (node from the affinity, IPs, Ready), and service
// creation gets cluster IPs and node ports. podFate can make pods fail instead.
type cluster struct {
	cs    *fake.Clientset
	mu    sync.Mutex
	podIP int
	// podFate, when set, returns a status to give a pod instead of Running/Ready.
	podFate func(p *corev1.Pod) *corev1.PodStatus
	// deny lists the permissions the fake API server's authorizer refuses ("verb resource" or
	// "verb resource/subresource"); everything else is allowed.
	deny map[string]bool
}

func newCluster(t *testing.T, nodes ...corev1.Node) *cluster {
	t.Helper()
	var objs []runtime.Object
	for i := range nodes {
		objs = append(objs, &nodes[i])
	}
	c := &cluster{cs: fake.NewClientset(objs...), deny: map[string]bool{}}
	// the fake plays the authorizer: SelfSubjectAccessReviews are answered from c.deny
	c.cs.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		r := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview)
		ra := r.Spec.ResourceAttributes
		key := ra.Verb + " " + ra.Resource
		if ra.Subresource != "" {
			key += "/" + ra.Subresource
		}
		c.mu.Lock()
		r.Status.Allowed = !c.deny[key]
		c.mu.Unlock()
		return true, r, nil
	})
	nodeIP := map[string]string{}
	for _, n := range nodes {
		nodeIP[n.Name] = n.Status.Addresses[0].Address
	}
	c.cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		p := a.(k8stesting.CreateAction).GetObject().(*corev1.Pod)
		if p.Spec.Affinity == nil {
			return false, nil, nil // not an endpoint pod
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		terms := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
		p.Spec.NodeName = terms[0].MatchFields[0].Values[0]
		if c.podFate != nil {
			if st := c.podFate(p); st != nil {
				p.Status = *st
				return false, nil, nil
			}
		}
		c.podIP++
		ip := fmt.Sprintf("10.244.0.%d", c.podIP)
		host := nodeIP[p.Spec.NodeName]
		if p.Spec.HostNetwork {
			ip = host
		}
		p.Status = corev1.PodStatus{
			Phase:      corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			PodIP:      ip, PodIPs: []corev1.PodIP{{IP: ip}},
			HostIP: host, HostIPs: []corev1.HostIP{{IP: host}},
		}
		return false, nil, nil
	})
	svcN := 0
	c.cs.PrependReactor("create", "services", func(a k8stesting.Action) (bool, runtime.Object, error) {
		s := a.(k8stesting.CreateAction).GetObject().(*corev1.Service)
		c.mu.Lock()
		defer c.mu.Unlock()
		svcN++
		s.Spec.ClusterIP = fmt.Sprintf("10.96.0.%d", svcN)
		s.Spec.ClusterIPs = []string{s.Spec.ClusterIP}
		if s.Spec.Type == corev1.ServiceTypeNodePort {
			for i := range s.Spec.Ports {
				s.Spec.Ports[i].NodePort = int32(30000 + svcN*100 + i)
			}
		}
		return false, nil, nil
	})
	return c
}

func newTestPlatform(t *testing.T, c *cluster, o Options) *Platform {
	t.Helper()
	p, err := NewWithClient(o, testRun, io.Discard, c.cs, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func allPaths() []api.Path {
	return []api.Path{api.PathPodPodSameNode, api.PathPodPodCrossNode, api.PathHostHost, api.PathPodHost,
		api.PathHostPod, api.PathPodClusterIP, api.PathPodNodePort}
}

func casesWith(drivers []string, paths []api.Path) []plan.Case {
	var out []plan.Case
	for _, d := range drivers {
		for _, p := range paths {
			out = append(out, plan.Case{Index: len(out), Profile: api.TCPStream, Path: p, Driver: d,
				Params: api.Params{DurationSeconds: 1, Samples: 1, MessageSizeBytes: 1024, Parallel: 1}})
		}
	}
	return out
}

func TestPrepareAndPair(t *testing.T) {
	ctx := context.Background()
	c := newCluster(t, node("node1", "zone-a"), node("node2", "zone-a"))
	p := newTestPlatform(t, c, Options{})
	cases := casesWith([]string{"iperf3", "qperf"}, allPaths())
	if err := p.Prepare(ctx, cases, testDrivers); err != nil {
		t.Fatal(err)
	}

	// One server pod per driver and network, one client pod per network and node.
	pods, _ := c.cs.CoreV1().Pods("cnperf").List(ctx, metav1.ListOptions{LabelSelector: kube.RunSelector(testRun)})
	var names []string
	for _, pod := range pods.Items {
		names = append(names, pod.Name)
	}
	if len(pods.Items) != 7 {
		t.Errorf("%d pods, want 4 servers (2 drivers x pod/host) + 3 clients (pod on both nodes, host on node2): %v", len(pods.Items), names)
	}
	ns, err := c.cs.CoreV1().Namespaces().Get(ctx, "cnperf", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ns.Labels[kube.LabelRun] != testRun || ns.Labels["pod-security.kubernetes.io/enforce"] != "privileged" {
		t.Errorf("namespace labels = %v", ns.Labels)
	}
	if _, err := c.cs.CoreV1().ServiceAccounts("cnperf").Get(ctx, kube.ServiceAccountName, metav1.GetOptions{}); err != nil {
		t.Errorf("service account: %v", err)
	}
	svcs, _ := c.cs.CoreV1().Services("cnperf").List(ctx, metav1.ListOptions{})
	if len(svcs.Items) != 4 {
		t.Errorf("%d services, want ClusterIP + NodePort per driver", len(svcs.Items))
	}

	type want struct {
		clientNode, serverNode string
		clientHost, serverHost bool
		target                 string
		ports                  map[int]int
	}
	wants := map[api.Path]want{
		api.PathPodPodSameNode:  {"node1", "node1", false, false, "10.244.0.", nil},
		api.PathPodPodCrossNode: {"node2", "node1", false, false, "10.244.0.", nil},
		api.PathHostHost:        {"node2", "node1", true, true, "10.0.0.1", nil},
		api.PathPodHost:         {"node2", "node1", false, true, "10.0.0.1", nil},
		api.PathHostPod:         {"node2", "node1", true, false, "10.244.0.", nil},
		api.PathPodClusterIP:    {"node2", "node1", false, false, "10.96.0.", nil},
		api.PathPodNodePort:     {"node2", "node1", false, false, "10.0.0.1", map[int]int{}},
	}
	for _, cs := range cases {
		pair, err := p.Pair(ctx, cs)
		if err != nil {
			t.Fatalf("%s: %v", cs, err)
		}
		w := wants[cs.Path]
		pl := pair.Placement
		if pl.Client.Node != w.clientNode || pl.Server.Node != w.serverNode {
			t.Errorf("%s: client on %s server on %s, want %s and %s", cs, pl.Client.Node, pl.Server.Node, w.clientNode, w.serverNode)
		}
		if pl.Client.HostNetwork != w.clientHost || pl.Server.HostNetwork != w.serverHost {
			t.Errorf("%s: hostNetwork client %v server %v", cs, pl.Client.HostNetwork, pl.Server.HostNetwork)
		}
		if !strings.HasPrefix(pair.Target.Host, w.target) || pl.Target != pair.Target.Host {
			t.Errorf("%s: target %q (placement %q), want %s*", cs, pair.Target.Host, pl.Target, w.target)
		}
		if pl.Server.Zone != "zone-a" || pl.Client.Pod == "" || pl.Server.PodIP == "" || pl.Server.HostIP == "" || pl.Client.Namespace != "cnperf" {
			t.Errorf("%s: incomplete placement %+v", cs, pl)
		}
		if cs.Path == api.PathPodNodePort {
			for port, np := range pair.Target.Ports {
				if np < 30000 || port == np {
					t.Errorf("%s: port %d maps to %d, want a node port", cs, port, np)
				}
			}
			if len(pair.Target.Ports) == 0 {
				t.Errorf("%s: no node port mapping", cs)
			}
		} else if len(pair.Target.Ports) != 0 {
			t.Errorf("%s: unexpected port mapping %v", cs, pair.Target.Ports)
		}
		if cs.Path == api.PathPodPodSameNode && pl.Client.Node != pl.Server.Node {
			t.Error("same-node case on two nodes")
		}
	}

	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.cs.CoreV1().Namespaces().Get(ctx, "cnperf", metav1.GetOptions{}); err == nil {
		t.Error("the namespace cnperf created is still there after Close")
	}
	if err := p.Close(ctx); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := p.Pair(ctx, cases[0]); err == nil {
		t.Error("Pair after Close succeeded")
	}
}

func TestExistingNamespaceIsKept(t *testing.T) {
	ctx := context.Background()
	c := newCluster(t, node("node1", ""), node("node2", ""))
	mine := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "perf"}}
	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "user-app", Namespace: "perf", Labels: map[string]string{"app": "x"}}}
	if _, err := c.cs.CoreV1().Namespaces().Create(ctx, mine, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.cs.CoreV1().Pods("perf").Create(ctx, other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := newTestPlatform(t, c, Options{Namespace: "perf"})
	if err := p.Prepare(ctx, casesWith([]string{"iperf3"}, []api.Path{api.PathPodClusterIP}), testDrivers); err != nil {
		t.Fatal(err)
	}
	// the token reaches the pods through the run's Secret only
	sec, err := c.cs.CoreV1().Secrets("perf").Get(ctx, kube.TokenSecretName(testRun), metav1.GetOptions{})
	if err != nil || string(sec.Data[kube.TokenSecretKey]) != p.s.AgentToken {
		t.Errorf("token secret: %v", err)
	}
	pods, _ := c.cs.CoreV1().Pods("perf").List(ctx, metav1.ListOptions{LabelSelector: kube.RunSelector(testRun)})
	if js, _ := json.Marshal(pods); len(pods.Items) == 0 || strings.Contains(string(js), p.s.AgentToken) {
		t.Errorf("%d pods; the token is in their spec", len(pods.Items))
	}
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.cs.CoreV1().Secrets("perf").Get(ctx, kube.TokenSecretName(testRun), metav1.GetOptions{}); err == nil {
		t.Error("the token's Secret is left after Close")
	}
	if _, err := c.cs.CoreV1().Namespaces().Get(ctx, "perf", metav1.GetOptions{}); err != nil {
		t.Errorf("a namespace cnperf did not create was deleted: %v", err)
	}
	left, _ := c.cs.CoreV1().Pods("perf").List(ctx, metav1.ListOptions{})
	if len(left.Items) != 1 || left.Items[0].Name != "user-app" {
		t.Errorf("pods left: %v, want only user-app", left.Items)
	}
	for _, kind := range []string{"services", "serviceaccounts"} {
		var n int
		if kind == "services" {
			l, _ := c.cs.CoreV1().Services("perf").List(ctx, metav1.ListOptions{})
			n = len(l.Items)
		} else {
			l, _ := c.cs.CoreV1().ServiceAccounts("perf").List(ctx, metav1.ListOptions{})
			n = len(l.Items)
		}
		if n != 0 {
			t.Errorf("%d %s left", n, kind)
		}
	}
}

func TestKeep(t *testing.T) {
	ctx := context.Background()
	c := newCluster(t, node("node1", ""))
	p := newTestPlatform(t, c, Options{Keep: true})
	if err := p.Prepare(ctx, casesWith([]string{"iperf3"}, []api.Path{api.PathPodPodSameNode}), testDrivers); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	pods, _ := c.cs.CoreV1().Pods("cnperf").List(ctx, metav1.ListOptions{})
	if len(pods.Items) != 2 {
		t.Errorf("--keep left %d pods, want 2", len(pods.Items))
	}
	found, err := kube.Cleanup(ctx, c.cs, kube.CleanupOptions{RunID: testRun, Wait: false, NADs: &kubetest.NADs{}, Objects: &kubetest.Objects{}}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 || found[0].Kind != "Namespace" || found[0].Name != "cnperf" {
		t.Errorf("cleanup found %+v, want the namespace (its objects go with it)", found)
	}
	if _, err := c.cs.CoreV1().Namespaces().Get(ctx, "cnperf", metav1.GetOptions{}); err == nil {
		t.Error("cleanup left the namespace")
	}
}

func TestCleanupLeavesForeignObjects(t *testing.T) {
	ctx := context.Background()
	c := newCluster(t)
	objs := []runtime.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shared"}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "ours", Namespace: "shared", Labels: kube.RunLabels("run-1")}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "other-run", Namespace: "shared", Labels: kube.RunLabels("run-2")}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "theirs", Namespace: "shared"}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "ours-svc", Namespace: "shared", Labels: kube.RunLabels("run-1")}},
	}
	for _, o := range objs {
		if err := c.cs.Tracker().Add(o); err != nil {
			t.Fatal(err)
		}
	}
	found, err := kube.Cleanup(ctx, c.cs, kube.CleanupOptions{RunID: "run-1", DryRun: true, NADs: &kubetest.NADs{}, Objects: &kubetest.Objects{}}, io.Discard)
	if err != nil || len(found) != 2 {
		t.Fatalf("dry run found %+v (%v), want the pod and service of run-1", found, err)
	}
	if _, err := kube.Cleanup(ctx, c.cs, kube.CleanupOptions{RunID: "run-1", Wait: true, NADs: &kubetest.NADs{}, Objects: &kubetest.Objects{}}, io.Discard); err != nil {
		t.Fatal(err)
	}
	pods, _ := c.cs.CoreV1().Pods("shared").List(ctx, metav1.ListOptions{})
	var left []string
	for _, p := range pods.Items {
		left = append(left, p.Name)
	}
	if strings.Join(left, ",") != "other-run,theirs" {
		t.Errorf("pods left %v", left)
	}
	if _, err := c.cs.CoreV1().Namespaces().Get(ctx, "shared", metav1.GetOptions{}); err != nil {
		t.Error("cleanup deleted a namespace without cnperf's labels")
	}
}

func TestPrepareFailsFast(t *testing.T) {
	tests := []struct {
		name    string
		fate    func(p *corev1.Pod) *corev1.PodStatus
		want    []string
		notWant string
	}{
		{
			name: "image pull",
			fate: func(p *corev1.Pod) *corev1.PodStatus {
				return &corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{
					Name: p.Spec.Containers[0].Name, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
						Reason: "ErrImagePull", Message: `failed to pull image "ghcr.io/cnperf/cnperf:v0.1.0": not found`}}}}}
			},
			want: []string{"waiting: ErrImagePull", "not found", "on node node1",
				"the nodes cannot get the agent image example.com/cnperf:test", "--tag example.com/cnperf:test --load kind:CLUSTER",
				"ctr -n k8s.io images import cnperf-agent.tar", "cnperf run --image REGISTRY/cnperf:TAG"},
		},
		{
			name: "image pull back-off",
			fate: func(p *corev1.Pod) *corev1.PodStatus {
				return &corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{
					Name: p.Spec.Containers[0].Name, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
						Reason: "ImagePullBackOff", Message: `Back-off pulling image "example.com/cnperf:test"`}}}}}
			},
			want: []string{"waiting: ImagePullBackOff", "the nodes cannot get the agent image example.com/cnperf:test", "cnperf image push"},
		},
		{
			name: "invalid image name",
			fate: func(p *corev1.Pod) *corev1.PodStatus {
				return &corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{
					Name: p.Spec.Containers[0].Name, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
						Reason: "InvalidImageName", Message: `couldn't parse image name "example.com/cnperf:test"`}}}}}
			},
			want:    []string{"waiting: InvalidImageName", "example.com/cnperf:test is not a valid image reference: pass --image with a valid one"},
			notWant: "cnperf image push",
		},
		{
			name: "unschedulable",
			fate: func(p *corev1.Pod) *corev1.PodStatus {
				return &corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled,
					Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/2 nodes are available: 1 Insufficient cpu."}}}
			},
			want:    []string{"PodScheduled=False Unschedulable: 0/2 nodes are available: 1 Insufficient cpu."},
			notWant: "cannot get the agent image",
		},
		{
			name: "server exits",
			fate: func(p *corev1.Pod) *corev1.PodStatus {
				if p.Labels[kube.LabelRole] != "server" {
					return nil
				}
				return &corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
					Name: "iperf3", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
						ExitCode: 1, Reason: "Error", Message: "iperf3: error - unable to start listener: Address in use"}}}}}
			},
			want: []string{"container iperf3 exited with code 1 (Error): iperf3: error - unable to start listener"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster(t, node("node1", ""))
			c.podFate = tt.fate
			// A long start timeout: the test passes only if the failure is reported at once.
			p := newTestPlatform(t, c, Options{PodStartTimeout: 10 * time.Minute, Image: "example.com/cnperf:test"})
			err := p.Prepare(context.Background(), casesWith([]string{"iperf3"}, []api.Path{api.PathPodPodSameNode}), testDrivers)
			if err == nil {
				t.Fatal("Prepare succeeded")
			}
			se, ok := err.(*kube.StartError)
			if !ok || se.Reason != "failed" {
				t.Fatalf("error %T %v, want a StartError (failed)", err, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if tt.notWant != "" && strings.Contains(err.Error(), tt.notWant) {
				t.Errorf("error %q says %q", err, tt.notWant)
			}
			if err := p.Close(context.Background()); err != nil {
				t.Errorf("Close after a failed Prepare: %v", err)
			}
		})
	}
}

func TestSandboxFailureEvents(t *testing.T) {
	// The pod stays ContainerCreating; only events tell that the CNI fails.
	c := newCluster(t, node("node1", ""))
	c.podFate = func(p *corev1.Pod) *corev1.PodStatus { return &corev1.PodStatus{Phase: corev1.PodPending} }
	p := newTestPlatform(t, c, Options{PodStartTimeout: 2 * time.Minute})
	ctx := context.Background()
	done := make(chan struct{})
	defer close(done)
	go func() {
		// Emit the kubelet's events once the pods exist, and keep emitting them as a kubelet
		// does on every retry: the fake clientset ignores the resource version the wait
		// watches from, so an event created between its list and its watch is never seen
		// (a real API server replays it). Once only, the test hung under load.
		for {
			pods, _ := c.cs.CoreV1().Pods("cnperf").List(ctx, metav1.ListOptions{})
			if len(pods.Items) == 2 {
				break
			}
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
		for i := 0; ; i++ {
			ev := &corev1.Event{
				ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("ev-%d", i), Namespace: "cnperf", UID: types.UID(fmt.Sprint("uid-", i))},
				InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: clientPodName(testRun, api.NetworkPod, roleServerNode), Namespace: "cnperf"},
				Type:           corev1.EventTypeWarning, Reason: "FailedCreatePodSandBox", Count: 1,
				Message: `Failed to create pod sandbox: plugin type="bridge" failed (add): failed to allocate for range 0: no IP addresses available`,
			}
			_, _ = c.cs.CoreV1().Events("cnperf").Create(ctx, ev, metav1.CreateOptions{})
			select {
			case <-done:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	err := p.Prepare(ctx, casesWith([]string{"iperf3"}, []api.Path{api.PathPodPodSameNode}), testDrivers)
	if err == nil || !strings.Contains(err.Error(), "event FailedCreatePodSandBox: Failed to create pod sandbox") {
		t.Fatalf("error = %v", err)
	}
}

func TestCheckPath(t *testing.T) {
	p := newTestPlatform(t, newCluster(t), Options{})
	for _, c := range casesWith([]string{"iperf3"}, allPaths()) {
		if err := p.CheckPath(c); err != nil {
			t.Errorf("%s: %v", c.Path, err)
		}
	}
	if err := p.CheckPath(casesWith([]string{"iperf3"}, []api.Path{api.PathExternalService})[0]); err == nil || !strings.Contains(err.Error(), "--external HOST") {
		t.Errorf("external-service without an address: %v", err)
	}
	if err := p.CheckPath(casesWith([]string{"iperf3"}, []api.Path{api.PathLoopback})[0]); err == nil {
		t.Error("loopback accepted on kube")
	}
	bad := casesWith([]string{"iperf3"}, []api.Path{api.PathPodPodCrossNode})[0]
	bad.Params.IPFamily = "ipx"
	if err := p.CheckPath(bad); err == nil {
		t.Error("bad ipFamily accepted")
	}
}

func TestPrepareCrossZoneOneZone(t *testing.T) {
	c := newCluster(t, node("node1", "zone-a"), node("node2", "zone-a"))
	p := newTestPlatform(t, c, Options{})
	err := p.Prepare(context.Background(), casesWith([]string{"iperf3"}, []api.Path{api.PathPodPodCrossZone}), testDrivers)
	if err == nil || !strings.Contains(err.Error(), "two zones") {
		t.Fatalf("error = %v", err)
	}
	// Nothing was created: the error comes before any object.
	if nss, _ := c.cs.CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{}); len(nss.Items) != 0 {
		t.Errorf("objects created before the placement error: %v", nss.Items)
	}
}

func TestExternalService(t *testing.T) {
	ctx := context.Background()
	c := newCluster(t, node("node1", ""), node("node2", ""))
	p := newTestPlatform(t, c, Options{External: "lb.example.com:32001,32002"})
	cases := casesWith([]string{"qperf"}, []api.Path{api.PathExternalService})
	if err := p.Prepare(ctx, cases, testDrivers); err != nil {
		t.Fatal(err)
	}
	pair, err := p.Pair(ctx, cases[0])
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]int{19765: 32001, 19766: 32002}
	if pair.Target.Host != "lb.example.com" || fmt.Sprint(pair.Target.Ports) != fmt.Sprint(want) {
		t.Errorf("target %+v, want lb.example.com %v", pair.Target, want)
	}
	if pair.Placement.Target != "lb.example.com:32001,32002" || pair.Placement.Client.Node != "node2" || pair.Placement.Server.Node != "node1" {
		t.Errorf("placement %+v", pair.Placement)
	}
	// The server pod runs, labelled for whatever exposes it.
	pods, _ := c.cs.CoreV1().Pods("cnperf").List(ctx, metav1.ListOptions{LabelSelector: kube.LabelRole + "=server," + kube.LabelDriver + "=qperf"})
	if len(pods.Items) != 1 {
		t.Errorf("%d qperf server pods", len(pods.Items))
	}
}

// With one permission missing, Prepare stops before creating anything and names it.
func TestPreflightNamesTheMissingPermission(t *testing.T) {
	for _, missing := range []string{"create pods", "create pods/exec", "create leases", "create namespaces", "list nodes"} {
		t.Run(missing, func(t *testing.T) {
			c := newCluster(t, node("node1", "zone-a"), node("node2", "zone-a"))
			c.deny[missing] = true
			p, err := NewWithClient(Options{Namespace: "perf"}, testRun, io.Discard, c.cs, nil)
			if err != nil {
				t.Fatal(err)
			}
			cases := []plan.Case{{Profile: api.TCPStream, Path: api.PathPodPodSameNode, Driver: "iperf3", Params: api.Params{DurationSeconds: 1, Samples: 1}}}
			err = p.Prepare(context.Background(), cases, testDrivers)
			var me *kube.MissingPermissionsError
			if !errors.As(err, &me) || !strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), kube.RunManifest) {
				t.Fatalf("err = %v, want a missing-permission error naming %q", err, missing)
			}
			t.Log(err)
			for _, a := range c.cs.Actions() {
				if a.GetVerb() == "create" && a.GetResource().Resource != "selfsubjectaccessreviews" {
					t.Errorf("created %s before the permission check failed", a.GetResource().Resource)
				}
			}
		})
	}
}

// TestSplitNamespaces: --server-namespace and --client-namespace (k8s-netperf #130) put the
// servers and their Services in one namespace and the clients in another; the preflight asks
// for the verbs in both, a namespace cnperf created is deleted and one it found is kept with
// everything cnperf did not create in it, and the hairpin client is the server pod.
func TestSplitNamespaces(t *testing.T) {
	ctx := context.Background()
	c := newCluster(t, node("node1", ""), node("node2", ""))
	asked := map[string]map[string]bool{} // namespace -> "verb resource"
	c.cs.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		ra := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview).Spec.ResourceAttributes
		c.mu.Lock()
		if asked[ra.Namespace] == nil {
			asked[ra.Namespace] = map[string]bool{}
		}
		asked[ra.Namespace][ra.Verb+" "+ra.Resource] = true
		c.mu.Unlock()
		return false, nil, nil
	})
	theirs := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-b"}}
	app := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "user-app", Namespace: "team-b"}}
	if _, err := c.cs.CoreV1().Namespaces().Create(ctx, theirs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.cs.CoreV1().Pods("team-b").Create(ctx, app, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := newTestPlatform(t, c, Options{ServerNamespace: "team-a", ClientNamespace: "team-b"})
	paths := []api.Path{api.PathPodPodCrossNode, api.PathPodClusterIP, api.PathPodNodePort, api.PathPodHairpin, api.PathHostHost}
	cases := casesWith([]string{"iperf3"}, paths)
	if err := p.Prepare(ctx, cases, testDrivers); err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct{ ns, access string }{
		{"team-a", "create pods"}, {"team-a", "create services"}, {"team-a", "create leases"}, {"team-a", "create secrets"},
		{"team-b", "create pods"}, {"team-b", "create pods"}, {"team-b", "create leases"}, {"team-b", "create serviceaccounts"},
	} {
		if !asked[want.ns][want.access] {
			t.Errorf("the preflight did not ask for %s in namespace %s", want.access, want.ns)
		}
	}
	if asked["team-b"]["create services"] {
		t.Error("the preflight asked for creating Services in the clients' namespace, where none go")
	}
	roles := func(ns string) map[string]int {
		pods, _ := c.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: kube.RunSelector(testRun)})
		out := map[string]int{}
		for _, pod := range pods.Items {
			out[pod.Labels[kube.LabelRole]]++
		}
		return out
	}
	if got := roles("team-a"); got["server"] != 2 || got["client"] != 0 {
		t.Errorf("team-a holds %v, want the 2 servers (pod, host) only", got)
	}
	if got := roles("team-b"); got["client"] != 2 || got["server"] != 0 {
		t.Errorf("team-b holds %v, want the 2 clients (pod, host) only", got)
	}
	for _, ns := range []string{"team-a", "team-b"} {
		if _, err := c.cs.CoreV1().Secrets(ns).Get(ctx, kube.TokenSecretName(testRun), metav1.GetOptions{}); err != nil {
			t.Errorf("token secret in %s: %v", ns, err)
		}
		if _, err := c.cs.CoreV1().ServiceAccounts(ns).Get(ctx, kube.ServiceAccountName, metav1.GetOptions{}); err != nil {
			t.Errorf("service account in %s: %v", ns, err)
		}
	}
	if svcs, _ := c.cs.CoreV1().Services("team-a").List(ctx, metav1.ListOptions{}); len(svcs.Items) != 2 {
		t.Errorf("%d Services in team-a, want ClusterIP and NodePort", len(svcs.Items))
	}
	for _, cs := range cases {
		pair, err := p.Pair(ctx, cs)
		if err != nil {
			t.Fatalf("%s: %v", cs, err)
		}
		wantClient := "team-b"
		if cs.Path == api.PathPodHairpin {
			wantClient = "team-a" // the client runs in the server pod
		}
		pl := pair.Placement
		exe, ok := pair.Client.(*kube.PodExecutor)
		if pl.Server.Namespace != "team-a" || pl.Client.Namespace != wantClient || !ok || exe.Namespace != wantClient {
			t.Errorf("%s: server in %q, client in %q (exec in %v), want team-a and %s", cs, pl.Server.Namespace, pl.Client.Namespace, exe, wantClient)
		}
		if srv, ok := pair.Server.(*kube.PodExecutor); !ok || srv.Namespace != "team-a" {
			t.Errorf("%s: server executor %v, want one in team-a", cs, pair.Server)
		}
	}
	if msg := p.Leftovers(); !strings.Contains(msg, "namespace team-a (created by run") || !strings.Contains(msg, "in namespace team-b (labelled") {
		t.Errorf("leftovers before Close: %q", msg)
	}
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.cs.CoreV1().Namespaces().Get(ctx, "team-a", metav1.GetOptions{}); err == nil {
		t.Error("the servers' namespace cnperf created is still there after Close")
	}
	if _, err := c.cs.CoreV1().Namespaces().Get(ctx, "team-b", metav1.GetOptions{}); err != nil {
		t.Errorf("the clients' namespace cnperf did not create was deleted: %v", err)
	}
	left, _ := c.cs.CoreV1().Pods("team-b").List(ctx, metav1.ListOptions{})
	if len(left.Items) != 1 || left.Items[0].Name != "user-app" {
		t.Errorf("pods left in team-b: %v, want only user-app", left.Items)
	}
	if _, err := c.cs.CoreV1().Secrets("team-b").Get(ctx, kube.TokenSecretName(testRun), metav1.GetOptions{}); err == nil {
		t.Error("the token's Secret is left in team-b after Close")
	}
	if l, _ := c.cs.CoordinationV1().Leases("team-b").List(ctx, metav1.ListOptions{}); len(l.Items) != 0 {
		t.Errorf("%d Leases left in team-b", len(l.Items))
	}
}

func TestNamespaceFlagsChecked(t *testing.T) {
	for _, o := range []Options{{ClientNamespace: "Bad_NS"}, {ServerNamespace: "-x"}} {
		_, err := o.parse()
		if err == nil || !strings.Contains(err.Error(), "-namespace:") {
			t.Errorf("%+v: err %v, want the flag named", o, err)
		}
	}
}

// TestIdleFootprintWithoutPermission: --idle-footprint without get nodes/proxy is not fatal:
// the run goes on, the log warns naming the verb and the manifest, and the footprint says why
// it is missing.
func TestIdleFootprintWithoutPermission(t *testing.T) {
	ctx := context.Background()
	c := newCluster(t, node("node1", ""), node("node2", ""))
	c.deny["get nodes/proxy"] = true
	var log strings.Builder
	p, err := NewWithClient(Options{IdleFootprint: 20 * time.Second}, testRun, &log, c.cs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Prepare(ctx, casesWith([]string{"iperf3"}, []api.Path{api.PathPodPodCrossNode}), testDrivers); err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	if !strings.Contains(log.String(), "warning: --idle-footprint is left out") || !strings.Contains(log.String(), "get nodes/proxy (cluster-wide)") ||
		!strings.Contains(log.String(), kube.FootprintManifest) {
		t.Errorf("log:\n%s", log.String())
	}
	cd, err := p.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if fp := cd.IdleFootprint; fp == nil || len(fp.Agents) != 0 || !strings.Contains(fp.Note, "get nodes/proxy") {
		t.Errorf("footprint %+v, want none with the missing verb named", fp)
	}
}

func TestIdleFootprintWindowChecked(t *testing.T) {
	if _, err := (Options{IdleFootprint: 5 * time.Second}).parse(); err == nil || !strings.Contains(err.Error(), "--idle-footprint") {
		t.Errorf("a 5 s window: %v", err)
	}
}
