package programming

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

// fakeCluster is a fake API server whose "dataplane" is a loopback listener: a Service with a
// selector, created, opens it (after delay, as kube-proxy would program it), deleting the
// Service closes it; NetworkPolicies change nothing (a CNI that does not enforce them).
func fakeCluster(t *testing.T, delay time.Duration) (*fake.Clientset, int) {
	t.Helper()
	return fakeClusterLate(t, delay, nil)
}

// lateness is how much later than its delay the fake's dataplane made a change, the most of
// them: a loaded machine runs the goroutine's timer late, and the figure is then late by as
// much, which is not the programming the test checks.
type lateness struct {
	mu  sync.Mutex
	max time.Duration
}

// since records a change made now, asked for at start with delay.
func (l *lateness) since(start time.Time, delay time.Duration) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.max = max(l.max, time.Since(start)-delay)
}

// most is the most a change was late.
func (l *lateness) most() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.max
}

// fakeClusterLate is fakeCluster recording how late its changes were in late (nil: not).
func fakeClusterLate(t *testing.T, delay time.Duration, late *lateness) (*fake.Clientset, int) {
	t.Helper()
	addr, open, closeIt := loopbackTarget(t)
	_, p, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(p)
	cs := fake.NewClientset()
	// only a Service with endpoints closes the target when deleted (not the one cnperf creates
	// and deletes at once to learn a ClusterIP: its late close could follow the next open)
	var mu sync.Mutex
	selected := map[string]bool{}
	cs.PrependReactor("create", "services", func(a k8stesting.Action) (bool, runtime.Object, error) {
		svc := a.(k8stesting.CreateAction).GetObject().(*corev1.Service).DeepCopy()
		// the API server allocates an address (and a node port) and says its family
		svc.Spec.ClusterIP, svc.Spec.ClusterIPs, svc.Spec.IPFamilies = "127.0.0.1", []string{"127.0.0.1"}, []corev1.IPFamily{corev1.IPv4Protocol}
		single := corev1.IPFamilyPolicySingleStack
		svc.Spec.IPFamilyPolicy = &single
		if svc.Spec.Type == corev1.ServiceTypeNodePort && svc.Spec.Ports[0].NodePort == 0 {
			svc.Spec.Ports[0].NodePort = int32(port)
		}
		if svc.Spec.Selector != nil {
			mu.Lock()
			selected[svc.Name] = true
			mu.Unlock()
			start := time.Now()
			go func() { time.Sleep(delay); _ = open(context.Background()); late.since(start, delay) }()
		}
		return true, svc, nil
	})
	cs.PrependReactor("delete", "services", func(a k8stesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		if selected[a.(k8stesting.DeleteAction).GetName()] {
			start := time.Now()
			go func() { time.Sleep(delay); _ = closeIt(context.Background()); late.since(start, delay) }()
		}
		return true, nil, nil
	})
	return cs, port
}

// fakePolicyCluster enforces cnperf's deny policy: its target (open at first) closes delay
// after a NetworkPolicy is created and opens again delay after it is deleted.
func fakePolicyCluster(t *testing.T, delay time.Duration) (*fake.Clientset, int) {
	t.Helper()
	addr, open, closeIt := loopbackTarget(t)
	_, p, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(p)
	if err := open(context.Background()); err != nil {
		t.Fatal(err)
	}
	cs := fake.NewClientset()
	cs.PrependReactor("create", "networkpolicies", func(k8stesting.Action) (bool, runtime.Object, error) {
		go func() { time.Sleep(delay); _ = closeIt(context.Background()) }()
		return false, nil, nil
	})
	cs.PrependReactor("delete", "networkpolicies", func(k8stesting.Action) (bool, runtime.Object, error) {
		go func() { time.Sleep(delay); _ = open(context.Background()) }()
		return false, nil, nil
	})
	return cs, port
}

func testRunner(t *testing.T, cs *fake.Clientset, port int, nodePort bool, kinds ...Kind) *Runner {
	t.Helper()
	p := testParams
	p.Timeout = time.Second
	r, err := New(Options{Namespace: "ns", RunID: "run-1", Image: "img", Nodes: []string{"n1", "n2"}, Kinds: kinds, Count: 3,
		Params: p, Port: port, StandingSettle: time.Millisecond, NodePort: nodePort,
		NodeIPs: map[string]map[string]string{"n1": {"ipv4": "127.0.0.1"}, "n2": {"ipv4": "127.0.0.1"}}}, Env{Client: cs})
	if err != nil {
		t.Fatal(err)
	}
	// what Prepare would have found: the server and a client per node
	r.server = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "srv"}, Status: corev1.PodStatus{PodIP: "127.0.0.1"}}
	r.clients = []Client{{Node: "n1", NodeIPs: map[string]string{"ipv4": "127.0.0.1"}, Pod: "c1", Exec: localExec{}},
		{Node: "n2", NodeIPs: map[string]string{"ipv4": "127.0.0.1"}, Pod: "c2", Exec: localExec{}}}
	return r
}

// TestRunnerService: the Service kind, 3 times, gives one result per profile, node and target
// (the ClusterIP; with NodePort also each node's port), each with 3 samples near the fake's
// programming delay, its percentiles and how it was measured.
func TestRunnerService(t *testing.T) {
	type want = wantResult
	for _, c := range []struct {
		nodePort bool
		want     []want
	}{
		{false, []want{{api.ServiceCreate, "n1", api.PathPodClusterIP}, {api.ServiceCreate, "n2", api.PathPodClusterIP},
			{api.ServiceDelete, "n1", api.PathPodClusterIP}, {api.ServiceDelete, "n2", api.PathPodClusterIP}}},
		{true, []want{{api.ServiceCreate, "n1", api.PathPodClusterIP}, {api.ServiceCreate, "n2", api.PathPodClusterIP},
			{api.ServiceCreate, "n1", api.PathPodNodePort}, {api.ServiceCreate, "n2", api.PathPodNodePort},
			{api.ServiceDelete, "n1", api.PathPodClusterIP}, {api.ServiceDelete, "n2", api.PathPodClusterIP},
			{api.ServiceDelete, "n1", api.PathPodNodePort}, {api.ServiceDelete, "n2", api.PathPodNodePort}}},
	} {
		t.Run(fmt.Sprintf("nodePort=%v", c.nodePort), func(t *testing.T) { testRunnerService(t, c.nodePort, c.want) })
	}
}

// wantResult is a result's identity: its profile, client node and path.
type wantResult struct {
	p    api.Profile
	node string
	path api.Path
}

func testRunnerService(t *testing.T, nodePort bool, wants []wantResult) {
	const delay = 50 * time.Millisecond
	late := &lateness{}
	cs, port := fakeClusterLate(t, delay, late)
	r := testRunner(t, cs, port, nodePort, KindService)
	if err := r.Measure(context.Background()); err != nil {
		t.Fatal(err)
	}
	res := r.Results()
	if len(res) != len(wants) {
		t.Fatalf("%d results, want %d", len(res), len(wants))
	}
	for i, want := range wants {
		x := res[i]
		if x.Profile != want.p || x.Placement.Client.Node != want.node || x.Params.Options[OptNode] != want.node || x.Path != want.path {
			t.Errorf("result %d: %s from %s on %s, want %s from %s on %s", i, x.Profile, x.Placement.Client.Node, x.Path, want.p, want.node, want.path)
		}
		if x.Params.IPFamily != "ipv4" { // the Service's (spec.ipFamilies), the node address's
			t.Errorf("result %d: IP family %q, want ipv4", i, x.Params.IPFamily)
		}
		if x.Error != "" || x.Summary.ProgrammingSeconds == nil || x.Summary.ProgrammingSeconds.N != 3 {
			t.Fatalf("result %d: error %q, summary %+v", i, x.Error, x.Summary.ProgrammingSeconds)
		}
		// The fake programs delay after it receives the change; the clock starts when the call
		// returns, which a busy machine (load 30 here) delays by tens of ms: the figure is about
		// delay, less that, plus up to a probe interval and the scheduling, plus however late
		// the loaded machine ran the fake's own change (one failed at 0.45 s under load 17).
		if st := x.Summary.ProgrammingSeconds; st.Min < delay.Seconds()-0.03 || st.Max > (delay+late.most()).Seconds()+0.2 {
			t.Errorf("result %d: %.4f..%.4f s, want about %s (the fake's changes at most %s late)", i, st.Min, st.Max, delay, late.most())
		}
		pr := x.Programming
		if len(pr.Percentiles) != 4 || pr.ProbeIntervalSeconds != testParams.Interval.Seconds() || pr.Target != "127.0.0.1:"+strconv.Itoa(port) {
			t.Errorf("result %d: programming %+v", i, pr)
		}
	}
}

// TestNodePortTakesTheServicesFamily: a Service's node port is probed at each node's address
// of the Service's IP family (the fake's Services are IPv4; its dataplane listens on
// 127.0.0.1 only), not at another address of the node (::1 here, which a dual-stack node may
// list first and whose probe would never see the port open); a node without an address of the
// Service's family is refused with a message saying so, before any change, and the endpoint
// kind's Service is deleted.
func TestNodePortTakesTheServicesFamily(t *testing.T) {
	for _, tc := range []struct {
		name    string
		n2      map[string]string
		kind    Kind
		wantErr string
	}{
		{"dual-stack, service", map[string]string{"ipv6": "::1", "ipv4": "127.0.0.1"}, KindService, ""},
		{"no IPv4 address, service", map[string]string{"ipv6": "::1"}, KindService,
			"its node port is open on the nodes' ipv4 addresses only, and node n2 has no ipv4 InternalIP or ExternalIP to probe it at"},
		{"no IPv4 address, endpoint", map[string]string{"ipv6": "::1"}, KindEndpoint,
			"its node port is open on the nodes' ipv4 addresses only, and node n2 has no ipv4 InternalIP or ExternalIP to probe it at"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs, port := fakeCluster(t, 20*time.Millisecond)
			r := testRunner(t, cs, port, true, tc.kind)
			r.clients[0].NodeIPs = map[string]string{"ipv6": "::1", "ipv4": "127.0.0.1"}
			r.clients[1].NodeIPs = tc.n2
			err := r.Measure(context.Background())
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				if len(r.Results()) != 0 {
					t.Errorf("%d results of a refused kind", len(r.Results()))
				}
				if svcs, lerr := cs.CoreV1().Services("ns").List(context.Background(), metav1.ListOptions{}); lerr != nil || len(svcs.Items) != 0 {
					t.Errorf("Services left: %v (%v)", svcs, lerr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			nodePorts := 0
			for _, x := range r.Results() {
				if x.Path != api.PathPodNodePort {
					continue
				}
				nodePorts++
				if x.Error != "" || x.Params.IPFamily != "ipv4" || !strings.HasPrefix(x.Programming.Target, "127.0.0.1:") {
					t.Errorf("%s from %s: error %q, family %q, target %s", x.Profile, x.Placement.Client.Node, x.Error, x.Params.IPFamily, x.Programming.Target)
				}
			}
			if nodePorts != 4 {
				t.Errorf("%d NodePort results, want 4", nodePorts)
			}
		})
	}
}

// TestRunnerPolicyNotEnforced: a policy kind on a "CNI" that ignores NetworkPolicies stops after
// the first change with the cause in every result, and no figure.
func TestRunnerPolicyNotEnforced(t *testing.T) {
	cs, port := fakeCluster(t, 0)
	// the server answers (on the pod IP); the policy changes nothing
	if _, err := cs.CoreV1().Services("ns").Create(context.Background(), (objects{}).service("x", "", map[string]string{"a": "b"}, false), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r := testRunner(t, cs, port, false, KindPolicyDeny)
	waitAccepts(t, port) // the fake's dataplane opens the port in a goroutine
	if err := r.Measure(context.Background()); err != nil {
		t.Fatal(err)
	}
	res := r.Results()
	if len(res) != 2 {
		t.Fatalf("%d results, want POLICY_DENY from 2 nodes", len(res))
	}
	for _, x := range res {
		if !strings.Contains(x.Error, "NetworkPolicy is not enforced here") || !strings.Contains(x.Error, "still open 1s after the probe was ready") ||
			!strings.Contains(x.Error, "the other 2 not made") || x.Summary.ProgrammingSeconds != nil || len(x.Samples) != 1 {
			t.Errorf("%s from %s: error %q, %d samples, figure %v", x.Profile, x.Placement.Client.Node, x.Error, len(x.Samples), x.Summary.ProgrammingSeconds)
		}
		if x.Params.Options[OptStandingPolicies] != "0" {
			t.Errorf("options %v", x.Params.Options)
		}
	}
	pols, err := cs.NetworkingV1().NetworkPolicies("ns").List(context.Background(), metav1.ListOptions{})
	if err != nil || len(pols.Items) != 0 {
		t.Errorf("policies left: %v (%v)", pols, err)
	}
}

// TestSinceEach: a new pod's observations re-based on the create call's return or on the
// moment it was seen Ready: the figure from that moment, 0 with a note when the pod answered
// before it, a note when the first attempt answered (an upper bound), errors kept as they are.
func TestSinceEach(t *testing.T) {
	base := time.Date(2026, 11, 29, 1, 40, 0, 0, time.UTC)
	seen := base.Add(300 * time.Millisecond)
	v := 0.0
	for _, c := range []struct {
		name    string
		obs     Observation
		from    time.Time
		seconds float64 // -1: no figure
		note    string
	}{
		{"after", Observation{Seconds: &v, SeenAt: seen, Flaps: 1}, base, 0.3, "1 unconfirmed attempt(s) in the new state before it"},
		{"before", Observation{Seconds: &v, SeenAt: seen}, base.Add(time.Second), 0, "answered 700.0 ms before it: counted as 0"},
		{"first attempt", Observation{Seconds: &v, SeenAt: seen, FirstAttempt: true}, base, 0.3, "answered at the probe's first attempt: an upper bound"},
		{"failed", Observation{Error: "still closed 30s after the probe was ready"}, base, -1, ""},
		{"no moment", Observation{Seconds: &v, SeenAt: seen}, time.Time{}, 0, ""},
	} {
		got := sinceEach([]Observation{c.obs}, base, c.from, "it")[0]
		switch {
		case c.seconds < 0 && (got.Seconds != nil || got.Error != c.obs.Error):
			t.Errorf("%s: %+v, want the error kept", c.name, got)
		case c.seconds >= 0 && (got.Seconds == nil || math.Abs(*got.Seconds-c.seconds) > 1e-9 || got.Note != c.note):
			t.Errorf("%s: %v s, note %q; want %v s, note %q", c.name, got.Seconds, got.Note, c.seconds, c.note)
		case got.Sent != base || got.At != c.from:
			t.Errorf("%s: window %v..%v", c.name, got.Sent, got.At)
		}
	}
}

// TestPrepareHostPodForbidden: a cluster whose pod security forbids hostNetwork pods refuses
// the pod that reads kube-proxy's (or Felix's) metrics; the error names the flags that do
// without it, and only the components the kinds ask for.
func TestPrepareHostPodForbidden(t *testing.T) {
	for _, c := range []struct {
		kinds        []Kind
		proxy, felix bool
		cilium       bool
		hint         string // "" when no hostNetwork pod is asked for
	}{
		{[]Kind{KindService}, true, true, false, "to read kube-proxy's metrics; --kube-proxy-metrics=false does without"},
		{[]Kind{KindService}, false, true, true, ""},
		{[]Kind{KindPolicyDeny}, true, true, false, "to read Felix's metrics; --felix-metrics=false does without"},
		{[]Kind{KindPolicyDeny}, true, false, false, ""},
		{[]Kind{KindPolicyAllow}, false, true, true, "to read Felix's and Cilium's metrics; --felix-metrics=false and --cilium-metrics=false do without"},
		{[]Kind{KindPolicyAllow}, false, false, true, "to read Cilium's metrics; --cilium-metrics=false does without"},
		{[]Kind{KindEndpoint, KindPolicyAllow}, true, true, false,
			"to read kube-proxy's and Felix's metrics; --kube-proxy-metrics=false and --felix-metrics=false do without"},
	} {
		cs := fake.NewClientset()
		cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
			pod := a.(k8stesting.CreateAction).GetObject().(*corev1.Pod)
			if pod.Spec.HostNetwork {
				return true, nil, apierrors.NewForbidden(corev1.Resource("pods"), pod.Name,
					errors.New(`violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)`))
			}
			return false, nil, nil
		})
		r, err := New(Options{Namespace: "ns", RunID: "run-1", Image: "img", Nodes: []string{"n1"}, Kinds: c.kinds,
			Count: 1, Params: testParams, KubeProxyMetrics: c.proxy, FelixMetrics: c.felix, CiliumMetrics: c.cilium, StartTimeout: 50 * time.Millisecond}, Env{Client: cs})
		if err != nil {
			t.Fatal(err)
		}
		err = r.Prepare(context.Background())
		hinted := err != nil && strings.Contains(err.Error(), "PodSecurity")
		if hinted != (c.hint != "") || (hinted && !strings.Contains(err.Error(), c.hint)) {
			t.Errorf("%v, kube-proxy metrics %v, Felix's %v, Cilium's %v: error %v, want %q", c.kinds, c.proxy, c.felix, c.cilium, err, c.hint)
		}
	}
}

// waitAccepts waits until 127.0.0.1:port accepts a connection (instead of a fixed pause, which
// a loaded machine can outlast).
func waitAccepts(t *testing.T, port int) {
	t.Helper()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s does not accept", addr)
		}
	}
}
