package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/kube/kubetest"
	"github.com/cnperf/cnperf/internal/plan"
)

// multusAttaches makes the fake kubelet play Multus: a pod that asks for networks gets a network
// status with its default interface and one net1 per network, at 10.125.0.N.
func multusAttaches(c *cluster) {
	n := 0
	c.cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		p := a.(k8stesting.CreateAction).GetObject().(*corev1.Pod)
		nets := p.Annotations[kube.AnnotationNetworks]
		if nets == "" {
			return false, nil, nil
		}
		c.mu.Lock()
		n++
		ip := fmt.Sprintf("10.125.0.%d", n)
		c.mu.Unlock()
		st := []kube.NetworkStatus{{Name: "k8s-pod-network", Interface: "eth0", IPs: []string{"10.244.9.9"}, Default: true}}
		for i, name := range strings.Split(nets, ",") {
			st = append(st, kube.NetworkStatus{Name: name, Interface: fmt.Sprintf("net%d", i+1), IPs: []string{ip}})
		}
		raw, _ := json.Marshal(st)
		p.Annotations[kube.AnnotationNetworkStatus] = string(raw)
		return false, nil, nil
	})
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
	p.nads = &kubetest.NADs{Answer: func(_ context.Context, ns, name string) ([]byte, error) {
		asked = append(asked, ns+"/"+name)
		return []byte(kubetest.BridgeNAD), nil
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
		if pod.Annotations[kube.AnnotationNetworks] == "multus-e2e/e2e-bridge" {
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
	gr := schema.GroupResource{Group: kube.NADGroup, Resource: kube.NADResource}
	tests := []struct {
		name    string
		cases   []plan.Case
		getNAD  func(ctx context.Context, namespace, name string) ([]byte, error)
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
				get = func(context.Context, string, string) ([]byte, error) { return []byte(kubetest.BridgeNAD), nil }
			}
			p.nads = &kubetest.NADs{Answer: get}
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
		p := newTestPlatform(t, c, Options{PodAnnotations: []string{kube.AnnotationNetworks + "=" + tt.annotation}})
		p.nads = &kubetest.NADs{Answer: func(context.Context, string, string) ([]byte, error) { return []byte(kubetest.BridgeNAD), nil }}
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
			if got := pod.Annotations[kube.AnnotationNetworks]; got != "other/net1,multus-e2e/e2e-bridge" {
				t.Errorf("pod %s asks for %q", pod.Name, got)
			}
		}
		if p.s.podMeta.Annotations[kube.AnnotationNetworks] != "other/net1" {
			t.Errorf("the options' annotation became %q", p.s.podMeta.Annotations[kube.AnnotationNetworks])
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
