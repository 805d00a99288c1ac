package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/plan"
)

const testBridgeNAD = `{"apiVersion":"k8s.cni.cncf.io/v1","kind":"NetworkAttachmentDefinition",` +
	`"metadata":{"name":"e2e-bridge","namespace":"multus-e2e"},"spec":{"config":"{\"cniVersion\": \"0.3.1\", ` +
	`\"name\": \"e2e-bridge\", \"type\": \"bridge\", \"bridge\": \"mbr0\", \"mtu\": 1500, \"ipam\": {\"type\": \"whereabouts\", ` +
	`\"range\": \"10.125.0.0/24\"}}"}}`

// multusAttaches makes the fake kubelet play Multus: a pod that asks for networks gets a network
// status with its default interface and one net1 per network, at 10.125.0.N.
func multusAttaches(c *cluster) {
	n := 0
	c.cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		p := a.(k8stesting.CreateAction).GetObject().(*corev1.Pod)
		nets := p.Annotations[annotationNetworks]
		if nets == "" {
			return false, nil, nil
		}
		c.mu.Lock()
		n++
		ip := fmt.Sprintf("10.125.0.%d", n)
		c.mu.Unlock()
		st := []networkStatus{{Name: "k8s-pod-network", Interface: "eth0", IPs: []string{"10.244.9.9"}, Default: true}}
		for i, name := range strings.Split(nets, ",") {
			st = append(st, networkStatus{Name: name, Interface: fmt.Sprintf("net%d", i+1), IPs: []string{ip}})
		}
		raw, _ := json.Marshal(st)
		p.Annotations[annotationNetworkStatus] = string(raw)
		return false, nil, nil
	})
}

// getNAD answers a read of a NetworkAttachmentDefinition.
type getNAD func(ctx context.Context, namespace, name string) ([]byte, error)

// memNADs keeps NetworkAttachmentDefinitions in memory, as the API server would (get answers
// from get when set), and records what was created and deleted.
type memNADs struct {
	mu               sync.Mutex
	get              getNAD
	objs             map[string][]byte
	created, deleted []string
}

func (m *memNADs) Get(ctx context.Context, ns, name string) ([]byte, error) {
	if m.get != nil {
		return m.get(ctx, ns, name)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if b, ok := m.objs[ns+"/"+name]; ok {
		return b, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: nadGroup, Resource: nadResource}, name)
}

func (m *memNADs) Create(_ context.Context, ns string, body []byte) error {
	var obj struct {
		Metadata struct{ Name, Namespace string } `json:"metadata"`
	}
	if err := json.Unmarshal(body, &obj); err != nil {
		return err
	}
	if obj.Metadata.Namespace != ns {
		return fmt.Errorf("namespace %q in the body, %q in the path", obj.Metadata.Namespace, ns)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	key := ns + "/" + obj.Metadata.Name
	if _, ok := m.objs[key]; ok {
		return apierrors.NewAlreadyExists(schema.GroupResource{Group: nadGroup, Resource: nadResource}, obj.Metadata.Name)
	}
	if m.objs == nil {
		m.objs = map[string][]byte{}
	}
	m.objs[key] = body
	m.created = append(m.created, key)
	return nil
}

func (m *memNADs) Delete(_ context.Context, ns, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := ns + "/" + name
	if _, ok := m.objs[key]; !ok {
		return apierrors.NewNotFound(schema.GroupResource{Group: nadGroup, Resource: nadResource}, name)
	}
	delete(m.objs, key)
	m.deleted = append(m.deleted, key)
	return nil
}

func networkCases(network string, paths ...api.Path) []plan.Case {
	cases := casesWith([]string{"iperf3"}, paths)
	for i := range cases {
		cases[i].Params.Network = network
	}
	return cases
}

func TestPrepareSecondaryNetwork(t *testing.T) {
	ctx := context.Background()
	c := newCluster(t, node("node1", "zone-a"), node("node2", "zone-a"))
	multusAttaches(c)
	p := newTestPlatform(t, c, Options{})
	var asked []string
	p.nads = &memNADs{get: func(_ context.Context, ns, name string) ([]byte, error) {
		asked = append(asked, ns+"/"+name)
		return []byte(testBridgeNAD), nil
	}}
	// the secondary network's cases beside the default network's, in one run
	cases := append(networkCases("multus-e2e/e2e-bridge", api.PathPodPodSameNode, api.PathPodPodCrossNode),
		casesWith([]string{"iperf3"}, []api.Path{api.PathPodPodCrossNode})...)
	if err := p.Prepare(ctx, cases, testDrivers); err != nil {
		t.Fatal(err)
	}
	if strings.Join(asked, " ") != "multus-e2e/e2e-bridge" {
		t.Errorf("NetworkAttachmentDefinitions read: %v, want the one network once", asked)
	}
	pods, _ := c.cs.CoreV1().Pods("cnperf").List(ctx, metav1.ListOptions{LabelSelector: kube.RunSelector(testRun)})
	attached := 0
	for _, pod := range pods.Items {
		if pod.Annotations[annotationNetworks] == "multus-e2e/e2e-bridge" {
			attached++
		}
	}
	// attachment: server, same-node client, cross-node client; pod network: server, cross-node client
	if len(pods.Items) != 5 || attached != 3 {
		t.Errorf("%d pods, %d of them on the secondary network; want 5 and 3", len(pods.Items), attached)
	}
	for _, cs := range cases {
		pair, err := p.Pair(ctx, cs)
		if err != nil {
			t.Fatalf("%s: %v", cs, err)
		}
		a := pair.Placement.Attachment
		if cs.Params.Network == "" {
			if a != nil || !strings.HasPrefix(pair.Target.Host, "10.244.0.") {
				t.Errorf("%s: default network case dials %s with attachment %+v", cs, pair.Target.Host, a)
			}
			continue
		}
		if a == nil {
			t.Fatalf("%s: no attachment in the placement", cs)
		}
		if a.Network != "multus-e2e/e2e-bridge" || a.Type != "bridge" || a.MTUBytes != 1500 || a.Interface != "net1" ||
			!strings.HasPrefix(a.ServerIP, "10.125.0.") || !strings.HasPrefix(a.ClientIP, "10.125.0.") || a.ClientIP == a.ServerIP {
			t.Errorf("%s: attachment %+v", cs, a)
		}
		if pair.Target.Host != a.ServerIP || pair.Placement.Target != a.ServerIP {
			t.Errorf("%s: target %s, want the server's attachment address %s", cs, pair.Target.Host, a.ServerIP)
		}
		wantNode := map[api.Path]string{api.PathPodPodSameNode: "node1", api.PathPodPodCrossNode: "node2"}[cs.Path]
		if pair.Placement.Client.Node != wantNode {
			t.Errorf("%s: client on %s, want %s", cs, pair.Placement.Client.Node, wantNode)
		}
	}
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestSecondaryNetworkRefusedBeforeAnything: a missing or unreadable NetworkAttachmentDefinition,
// or two networks in one plan, stop Prepare before any namespace or pod is created.
func TestSecondaryNetworkRefusedBeforeAnything(t *testing.T) {
	gr := schema.GroupResource{Group: nadGroup, Resource: nadResource}
	tests := []struct {
		name    string
		cases   []plan.Case
		getNAD  getNAD
		deny    string
		wantErr string
	}{
		{name: "not found", cases: networkCases("multus-e2e/nope", api.PathPodPodCrossNode),
			getNAD: func(context.Context, string, string) ([]byte, error) {
				return nil, apierrors.NewNotFound(gr, "nope")
			},
			wantErr: "network multus-e2e/nope: NetworkAttachmentDefinition nope not found in namespace multus-e2e (Multus and the definition must exist first"},
		{name: "forbidden", cases: networkCases("multus-e2e/e2e-bridge", api.PathPodPodCrossNode),
			deny:    "get network-attachment-definitions",
			wantErr: "get network-attachment-definitions.k8s.cni.cncf.io e2e-bridge in namespace multus-e2e — deploy/rbac/secondary-networks.yaml grants"},
		{name: "no plugin", cases: networkCases("multus-e2e/e2e-bridge", api.PathPodPodCrossNode),
			getNAD: func(context.Context, string, string) ([]byte, error) {
				return []byte(`{"kind":"NetworkAttachmentDefinition","spec":{"config":"{\"cniVersion\":\"0.3.1\"}"}}`), nil
			},
			wantErr: `spec.config names no CNI plugin (no "type")`},
		{name: "two networks", cases: append(networkCases("ns/a", api.PathPodPodCrossNode), networkCases("ns/b", api.PathPodPodSameNode)...),
			wantErr: "the plan names 2 secondary networks (ns/a, ns/b): a run measures on one"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			c := newCluster(t, node("node1", "zone-a"), node("node2", "zone-a"))
			if tt.deny != "" {
				c.deny[tt.deny] = true
			}
			p := newTestPlatform(t, c, Options{})
			get := tt.getNAD
			if get == nil {
				get = func(context.Context, string, string) ([]byte, error) { return []byte(testBridgeNAD), nil }
			}
			p.nads = &memNADs{get: get}
			err := p.Prepare(ctx, tt.cases, testDrivers)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
			}
			if tt.deny != "" {
				var mp *kube.MissingPermissionsError
				if !errors.As(err, &mp) {
					t.Errorf("error %T, want a MissingPermissionsError", err)
				}
			}
			if _, err := c.cs.CoreV1().Namespaces().Get(ctx, "cnperf", metav1.GetOptions{}); err == nil {
				t.Error("the namespace was created before the secondary network was checked")
			}
		})
	}
}

func TestParseNAD(t *testing.T) {
	tests := []struct {
		name, raw       string
		wantType        string
		wantMTU         int
		wantMaster      string
		wantErrContains string
	}{
		{name: "bridge", raw: testBridgeNAD, wantType: "bridge", wantMTU: 1500},
		{name: "macvlan without mtu", raw: `{"kind":"NetworkAttachmentDefinition","spec":{"config":"{\"type\":\"macvlan\",\"master\":\"eth0\"}"}}`,
			wantType: "macvlan", wantMaster: "eth0"},
		{name: "list", raw: `{"spec":{"config":"{\"cniVersion\":\"0.4.0\",\"plugins\":[{\"type\":\"bridge\",\"mtu\":9000},{\"type\":\"tuning\"}]}"}}`,
			wantType: "bridge", wantMTU: 9000},
		{name: "file on the nodes", raw: `{"kind":"NetworkAttachmentDefinition","spec":{}}`},
		{name: "not a NAD", raw: `{"kind":"Status"}`, wantErrContains: "the API answered a Status, not a NetworkAttachmentDefinition"},
		{name: "bad config", raw: `{"spec":{"config":"{"}}`, wantErrContains: "spec.config is not a CNI configuration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := parseNAD("ns/x", []byte(tt.raw))
			if tt.wantErrContains != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErrContains) {
					t.Fatalf("error = %v, want %q", err, tt.wantErrContains)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.Network != "ns/x" || a.Type != tt.wantType || a.MTUBytes != tt.wantMTU || a.Master != tt.wantMaster {
				t.Errorf("attachment %+v, want type %q mtu %d master %q", a, tt.wantType, tt.wantMTU, tt.wantMaster)
			}
		})
	}
}

func TestAttachmentOf(t *testing.T) {
	pod := func(status string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "srv"}}
		if status != "" {
			p.Annotations = map[string]string{annotationNetworkStatus: status}
		}
		return p
	}
	status := `[{"name":"k8s-pod-network","interface":"eth0","ips":["10.244.1.5"],"default":true},` +
		`{"name":"multus-e2e/e2e-macvlan","interface":"net1","ips":["10.126.0.3","fd00::3"],"mac":"aa:bb:cc:dd:ee:ff","mtu":1500}]`
	tests := []struct {
		name, status, network, family string
		iface, ip                     string
		mtu                           int
		wantErr                       string
	}{
		{name: "ipv4", status: status, network: "multus-e2e/e2e-macvlan", iface: "net1", ip: "10.126.0.3", mtu: 1500},
		{name: "ipv6", status: status, network: "multus-e2e/e2e-macvlan", family: "ipv6", iface: "net1", ip: "fd00::3", mtu: 1500},
		{name: "other network", status: status, network: "multus-e2e/e2e-bridge",
			wantErr: "pod srv is not attached to multus-e2e/e2e-bridge (its network status names k8s-pod-network, multus-e2e/e2e-macvlan)"},
		{name: "no status", network: "ns/x", wantErr: "pod srv has no k8s.v1.cni.cncf.io/network-status annotation: Multus did not attach it"},
		{name: "no address", status: `[{"name":"ns/x","interface":"net1","ips":[]}]`, network: "ns/x",
			wantErr: "pod srv has no IP address on ns/x (interface net1, addresses )"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			iface, ip, mtu, err := attachmentOf(pod(tt.status), tt.network, tt.family)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if iface != tt.iface || ip != tt.ip || mtu != tt.mtu {
				t.Errorf("got %s %s %d, want %s %s %d", iface, ip, mtu, tt.iface, tt.ip, tt.mtu)
			}
		})
	}
}

// The networks --pod-annotations asks for stay on an attachment pod, the run's network after
// them, in the form the user wrote; a list that cannot be read stops the run before anything.
func TestMergeNetworks(t *testing.T) {
	const n = "multus-e2e/e2e-bridge"
	for _, tt := range []struct {
		user, want, wantErr string
	}{
		{user: "", want: n},
		{user: "other/net1", want: "other/net1," + n},
		{user: "other/net1@eth9, other/net2", want: "other/net1@eth9, other/net2," + n},
		{user: "other/net1," + n + "@net7", want: "other/net1," + n + "@net7"},
		{user: `[{"name":"net1","namespace":"other"}]`, want: `[{"name":"net1","namespace":"other"},{"name":"e2e-bridge","namespace":"multus-e2e"}]`},
		{user: `[{"name":"e2e-bridge","namespace":"multus-e2e","interface":"net5"}]`, want: `[{"name":"e2e-bridge","namespace":"multus-e2e","interface":"net5"}]`},
		{user: `[{"name":`, wantErr: `--pod-annotations k8s.v1.cni.cncf.io/networks: "[{\"name\":" is not a JSON list of network selection elements`},
		{user: "a/b,,c/d", wantErr: `--pod-annotations k8s.v1.cni.cncf.io/networks: "a/b,,c/d" has an empty element`},
	} {
		got, err := mergeNetworks(tt.user, n)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%q: error %v, want %q", tt.user, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%q: got %q (%v), want %q", tt.user, got, err, tt.want)
		}
	}
}

// TestPodAnnotationNetworks: a user's own k8s.v1.cni.cncf.io/networks (--pod-annotations) is kept
// on the attachment pods with the run's network after it, and the case is measured on the run's
// network's interface (net2), not on the user's (net1); a list that cannot be read stops Prepare
// before the namespace is created.
func TestPodAnnotationNetworks(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		annotation, wantErr string
	}{
		{annotation: "other/net1"},
		{annotation: "[{bad", wantErr: "is not a JSON list of network selection elements"},
	} {
		c := newCluster(t, node("node1", "zone-a"), node("node2", "zone-a"))
		multusAttaches(c)
		p := newTestPlatform(t, c, Options{PodAnnotations: []string{annotationNetworks + "=" + tt.annotation}})
		p.nads = &memNADs{get: func(context.Context, string, string) ([]byte, error) { return []byte(testBridgeNAD), nil }}
		cases := networkCases("multus-e2e/e2e-bridge", api.PathPodPodCrossNode)
		err := p.Prepare(ctx, cases, testDrivers)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want %q", err, tt.wantErr)
			}
			if _, err := c.cs.CoreV1().Namespaces().Get(ctx, "cnperf", metav1.GetOptions{}); err == nil {
				t.Error("the namespace was created before the annotation was checked")
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		pods, _ := c.cs.CoreV1().Pods("cnperf").List(ctx, metav1.ListOptions{LabelSelector: kube.RunSelector(testRun)})
		for _, pod := range pods.Items {
			if got := pod.Annotations[annotationNetworks]; got != "other/net1,multus-e2e/e2e-bridge" {
				t.Errorf("pod %s asks for %q", pod.Name, got)
			}
		}
		if p.s.podMeta.Annotations[annotationNetworks] != "other/net1" {
			t.Errorf("the options' annotation became %q", p.s.podMeta.Annotations[annotationNetworks])
		}
		pair, err := p.Pair(ctx, cases[0])
		if err != nil {
			t.Fatal(err)
		}
		if a := pair.Placement.Attachment; a == nil || a.Interface != "net2" {
			t.Errorf("attachment %+v, want the run's network on net2", a)
		}
		_ = p.Close(ctx)
	}
}
