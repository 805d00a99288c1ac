package mesh

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/driver/native"
	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/kube/kubetest"
	"github.com/cnperf/cnperf/internal/meshview"
	"github.com/cnperf/cnperf/internal/platform"
)

const bridgeNet = "multus-e2e/e2e-bridge"

// A mesh on a secondary network reads the pod-to-pod rows of the path table, as a run's case
// with a network does (api.PathRow.Effective).
func TestPathOfOnASecondaryNetwork(t *testing.T) {
	a, b, c := Node{Name: "a", Zone: "z1"}, Node{Name: "b", Zone: "z1"}, Node{Name: "c", Zone: "z2"}
	for _, tc := range []struct {
		client, server Node
		want           api.Path
	}{{a, a, api.PathPodPodSameNode}, {a, b, api.PathPodPodCrossNode}, {a, c, api.PathPodPodCrossZone}} {
		if got := PathOf(api.NetworkAttachment, tc.client, tc.server); got != tc.want {
			t.Errorf("PathOf(attachment, %s, %s) = %s, want %s", tc.client.Name, tc.server.Name, got, tc.want)
		}
	}
}

// The agents on a secondary network ask Multus for it after the networks --pod-annotations
// asks for; each agent's address on it comes from its network status, and an agent Multus did
// not attach is a node whose agent did not start (not a cell that dials the pod network); the
// set's attachment takes the MTU the network status reports and names the NetworkPolicies that
// select the agents.
func TestDeployAgentsOnSecondaryNetwork(t *testing.T) {
	cs := fake.NewSimpleClientset(&networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "deny", Namespace: "ns"},
		Spec: networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	nw := &SecondaryNetwork{Name: bridgeNet, NADs: &kubetest.NADs{Objs: map[string][]byte{bridgeNet: []byte(kubetest.BridgeNAD)}}}
	if err := nw.Check(ctx, cs, nil); err != nil {
		t.Fatal(err)
	}
	meta, err := kube.ParsePodMetadata(nil, []string{kube.AnnotationNetworks + "=other/net0"})
	if err != nil {
		t.Fatal(err)
	}
	o := AgentOptions{Namespace: "ns", RunID: "run1", Image: "img", StartTimeout: 2 * time.Second, Metadata: meta, Network: nw}
	if got := BuildDaemonSet(o, api.NetworkAttachment, []string{"n1"}).Spec.Template.Annotations[kube.AnnotationNetworks]; got != "other/net0,"+bridgeNet {
		t.Fatalf("the agents ask Multus for %q, want the user's network, then %s", got, bridgeNet)
	}
	if got := BuildDaemonSet(o, api.NetworkPod, []string{"n1"}).Spec.Template.Annotations[kube.AnnotationNetworks]; got != "other/net0" {
		t.Fatalf("the pod-network agents ask Multus for %q, want only the user's network", got)
	}
	done := make(chan struct{})
	go func() { // the DaemonSet controller and Multus: n1's agent is attached, n2's is not
		defer close(done)
		for ctx.Err() == nil {
			ds, err := cs.AppsV1().DaemonSets("ns").Get(ctx, DaemonSetName("run1", api.NetworkAttachment), metav1.GetOptions{})
			if err == nil {
				for _, n := range []string{"n1", "n2"} {
					ann := map[string]string{}
					if n == "n1" {
						ann[kube.AnnotationNetworkStatus] = `[{"name":"k8s-pod-network","interface":"eth0","ips":["10.244.1.5"],"default":true},` +
							`{"name":"other/net0","interface":"net1","ips":["10.9.0.1"]},{"name":"` + bridgeNet + `","interface":"net2","ips":["10.125.0.7"],"mtu":9000}]`
					}
					p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "agent-" + n, Namespace: "ns", Labels: ds.Spec.Template.Labels, Annotations: ann},
						Spec: corev1.PodSpec{NodeName: n},
						Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.244.1." + n[1:],
							Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}}
					_, _ = cs.CoreV1().Pods("ns").Create(ctx, p, metav1.CreateOptions{})
				}
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	set, err := DeployAgents(ctx, cs, o, api.NetworkAttachment, []string{"n1", "n2"}, nil)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	if a := set.ByNode["n1"]; a.AttachIP != "10.125.0.7" || a.AttachInterface != "net2" || Target(a, "").Host != "10.125.0.7" {
		t.Errorf("n1's agent %+v: want net2 10.125.0.7, dialled there", a)
	}
	if len(set.Failed) != 1 || set.Failed[0].Node != "n2" ||
		!strings.Contains(set.Failed[0].Reason, "agent pod agent-n2: pod agent-n2 has no k8s.v1.cni.cncf.io/network-status annotation") {
		t.Errorf("failed %+v: want n2, not attached", set.Failed)
	}
	a := set.matrixAttachment(set.policiesIn)
	if a == nil || a.Network != bridgeNet || a.Type != "bridge" || a.MTUBytes != 9000 || set.mtuUnread ||
		strings.Join(a.PoliciesNotApplied, ",") != "ns/deny" {
		t.Errorf("attachment %+v (MTU unread %v): want bridge, the status's MTU 9000, ns/deny not applied", a, set.mtuUnread)
	}
}

// mtuExec answers the one MTU read of an agent.
type mtuExec struct {
	argv *[]string
	out  string
}

func (e mtuExec) Exec(_ context.Context, cmd driver.Command) driver.Output {
	*e.argv = cmd.Argv
	return driver.Output{Argv: cmd.Argv, Stdout: []byte(e.out)}
}

// Without an MTU in the network status, the interface's is read in an agent; the definition's
// stays when that read fails.
func TestReadMTU(t *testing.T) {
	for _, tc := range []struct {
		out  string
		want int
	}{{"1450\n", 1450}, {"cat: no such file\n", 1500}} {
		set := &AgentSet{Attachment: &api.Attachment{Network: bridgeNet, MTUBytes: 1500}, mtuUnread: true,
			ByNode: map[string]Agent{"n1": {Node: "n1", Pod: "agent-n1", AttachInterface: "net1"}}}
		var argv []string
		set.readMTU(context.Background(), Env{Exec: func(Agent) platform.Executor { return mtuExec{&argv, tc.out} }})
		if set.Attachment.MTUBytes != tc.want || strings.Join(argv, " ") != "cat /sys/class/net/net1/mtu" {
			t.Errorf("%q: MTU %d after %v, want %d", tc.out, set.Attachment.MTUBytes, argv, tc.want)
		}
	}
}

// The cells of a secondary network dial the server's address on it, are the path table's
// pod-to-pod paths with the case's network set, and name the network, its type, MTU and the
// pair's addresses; the matrix is named after the network and says what it is.
func TestRunMeshOnSecondaryNetwork(t *testing.T) {
	nodes := []Node{{Name: "n1"}, {Name: "n2"}}
	set := &AgentSet{Network: api.NetworkAttachment, ByNode: map[string]Agent{},
		Attachment: &api.Attachment{Network: bridgeNet, Type: "bridge", MTUBytes: 1500}, policiesIn: []string{"ns/deny"}}
	f := &fakeCluster{byIP: map[string]string{}, active: map[string]string{}, reads: map[string]int{}}
	for i, n := range nodes {
		ip := fmt.Sprintf("10.125.0.%d", i+1)
		set.ByNode[n.Name] = Agent{Node: n.Name, Pod: "agent-" + n.Name, PodIP: fmt.Sprintf("10.244.%d.5", i+1), Network: api.NetworkAttachment,
			AttachInterface: "net1", AttachIP: ip}
		f.byIP[ip] = n.Name // a cell that dialled the pod address would find no server
	}
	sched, _ := NewSchedule(2, ScheduleOptions{})
	metric, _ := meshview.LookupMetric("", api.TCPStream)
	o := &Options{Profile: api.TCPStream, Driver: native.Driver{}, Params: api.Params{DurationSeconds: 1, Samples: 1, Parallel: 1},
		Metric: metric, OutlierMADs: 3, Attachment: bridgeNet}
	o.roundStart = func(int) { f.startRound(1) }
	m, results := o.RunMesh(context.Background(), Env{Exec: f.executor}, nodes, sched, []*AgentSet{set})
	mat := m.Matrices[0]
	if mat.Network != bridgeNet || mat.Attachment == nil || mat.Attachment.Type != "bridge" || mat.Attachment.MTUBytes != 1500 ||
		strings.Join(mat.Attachment.PoliciesNotApplied, ",") != "ns/deny" {
		t.Fatalf("matrix %q attachment %+v", mat.Network, mat.Attachment)
	}
	if len(mat.Cells) != 2 {
		t.Fatalf("%d cells", len(mat.Cells))
	}
	for _, c := range mat.Cells {
		r := results[c.Result]
		a := r.Placement.Attachment
		if c.Error != "" || r.Path != api.PathPodPodCrossNode || r.Params.Network != bridgeNet || r.Group != bridgeNet {
			t.Errorf("%s→%s: error %q, path %s, network %q, group %q", c.Client, c.Server, c.Error, r.Path, r.Params.Network, r.Group)
			continue
		}
		srv, cli := set.ByNode[c.Server], set.ByNode[c.Client]
		if a == nil || a.ServerIP != srv.AttachIP || a.ClientIP != cli.AttachIP || a.Interface != "net1" || a.Type != "bridge" ||
			r.Placement.Target != srv.AttachIP || r.Placement.Server.PodIP != srv.PodIP {
			t.Errorf("%s→%s: target %s, attachment %+v", c.Client, c.Server, r.Placement.Target, a)
		}
	}
}

// The run's own definition (k8s-netperf's --macvlan) is created in the mesh's namespace and
// deleted at the end, once the agents are gone, unless the namespace (cnperf's) took it along;
// one that exists already is not the run's and is left alone.
func TestSecondaryNetworkCreated(t *testing.T) {
	def, err := kube.MacvlanDefinition("eth0", `{"type": "whereabouts", "range": "192.168.200.0/24"}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name                 string
		exists, nsCreated    bool
		wantErr, wantDeleted string
	}{
		{name: "namespace found", wantDeleted: "perf/macvlan-netperf"},
		{name: "namespace created", nsCreated: true},
		{name: "exists", exists: true, wantErr: "NetworkAttachmentDefinition perf/macvlan-netperf exists already and is not this run's"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			cs := kubetest.Authorize(fake.NewSimpleClientset())
			nads := &kubetest.NADs{}
			if tc.exists {
				nads.Objs = map[string][]byte{"perf/macvlan-netperf": []byte(kubetest.BridgeNAD)}
			}
			n := &SecondaryNetwork{Name: "perf/macvlan-netperf", Create: def, NADs: nads}
			if err := n.Check(ctx, cs, nil); err != nil { // nothing to read before it exists
				t.Fatal(err)
			}
			err := n.Prepare(ctx, cs, "perf", "run1", nil)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
			} else if err != nil || n.def == nil || n.def.Type != "macvlan" || n.def.Master != "eth0" {
				t.Fatalf("prepare: %v, definition read %+v", err, n.def)
			}
			if got := n.Leftovers("perf"); (got != "") != (tc.wantErr == "") {
				t.Errorf("leftovers %q", got)
			}
			if err := n.Close(ctx, cs, "perf", "run1", tc.nsCreated); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(nads.Deleted, " "); got != tc.wantDeleted {
				t.Errorf("deleted %q, want %q", got, tc.wantDeleted)
			}
			if tc.exists && len(nads.Objs) != 1 {
				t.Error("a definition the run did not create was deleted")
			}
		})
	}
}

// TestTargetTakesTheRunsFamily: a cell dials its server agent at the address of the run's IP
// family, on the host network as on the pod network: a dual-stack node whose pods are IPv6
// first may list its IPv4 address first (status.hostIPs), and an IPv6 run's host-network cell
// dialled that IPv4 address (status.hostIP) while its server listened on IPv6 and the result
// said IPv6. Without a family (IPv4 runs) or a list of addresses, the first address, as before.
func TestTargetTakesTheRunsFamily(t *testing.T) {
	dual := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "agent-n1"}, Spec: corev1.PodSpec{NodeName: "n1"},
		Status: corev1.PodStatus{PodIP: "fd00:10:244:1::5", PodIPs: []corev1.PodIP{{IP: "fd00:10:244:1::5"}, {IP: "10.244.1.5"}},
			HostIP: "192.168.0.1", HostIPs: []corev1.HostIP{{IP: "192.168.0.1"}, {IP: "fd00::1"}}}}
	for _, tc := range []struct {
		name   string
		agent  Agent
		family string
		want   string
	}{
		{"host, ipv6 run", agentOf(dual, api.NetworkHost), "ipv6", "fd00::1"},
		{"host, ipv4 run", agentOf(dual, api.NetworkHost), "ipv4", "192.168.0.1"},
		{"host, no family", agentOf(dual, api.NetworkHost), "", "192.168.0.1"},
		{"pod, ipv6 run", agentOf(dual, api.NetworkPod), "ipv6", "fd00:10:244:1::5"},
		{"pod, ipv4 run", agentOf(dual, api.NetworkPod), "ipv4", "10.244.1.5"},
		{"pod, no family", agentOf(dual, api.NetworkPod), "", "fd00:10:244:1::5"},
		{"host, no list", Agent{HostIP: "192.168.0.2", Network: api.NetworkHost}, "", "192.168.0.2"},
		{"pod, no list", Agent{PodIP: "10.0.0.2", Network: api.NetworkPod}, "", "10.0.0.2"},
		{"host, ipv6 run, IPv4 node", Agent{HostIP: "192.168.0.2", Network: api.NetworkHost}, "ipv6", ""},
	} {
		if got := Target(tc.agent, tc.family).Host; got != tc.want {
			t.Errorf("%s: dials %q, want %q", tc.name, got, tc.want)
		}
	}
}
