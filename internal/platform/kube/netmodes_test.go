package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/kube/kubetest"
)

// ovnCluster makes c look like a cluster on OVN-Kubernetes: its CRDs served, a Ready ovnkube-node
// pod on each of nodes, each node given a subnet by OVN-Kubernetes's cluster manager.
func ovnCluster(t *testing.T, c *cluster, nodes ...string) {
	t.Helper()
	ctx := context.Background()
	c.cs.Resources = append(c.cs.Resources, &metav1.APIResourceList{GroupVersion: "k8s.ovn.org/v1", APIResources: []metav1.APIResource{
		{Name: "userdefinednetworks", Namespaced: true, Kind: "UserDefinedNetwork"},
		{Name: "clusteruserdefinednetworks", Kind: "ClusterUserDefinedNetwork"}}},
		&metav1.APIResourceList{GroupVersion: "k8s.cni.cncf.io/v1", APIResources: []metav1.APIResource{
			{Name: "network-attachment-definitions", Namespaced: true, Kind: "NetworkAttachmentDefinition"}}})
	for _, n := range nodes {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "ovnkube-node-" + n, Namespace: "ovn-kubernetes", Labels: map[string]string{"app": "ovnkube-node"}},
			Spec:   corev1.PodSpec{NodeName: n},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}}
		if _, err := c.cs.CoreV1().Pods("ovn-kubernetes").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		node, err := c.cs.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		node.Annotations = map[string]string{"k8s.ovn.org/node-subnets": `{"default":["10.244.0.0/24"]}`}
		if _, err := c.cs.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// The preflight of a k8s-netperf network mode: before anything is created, the run stops (exit
// status 2) naming everything the cluster lacks (TestNetworkModeRun: what it does when nothing is).
func TestPrepareNetworkModePreflight(t *testing.T) {
	cross := casesWith([]string{"iperf3"}, []api.Path{api.PathPodPodCrossNode})
	for _, tc := range []struct {
		name    string
		mode    kube.NetworkMode
		ovnOn   []string // nodes OVN-Kubernetes runs on ("": none, no CRDs)
		want    []string
		notWant []string
	}{
		{name: "no OVN-Kubernetes", mode: kube.NetworkMode{Flag: "--udnl2", Kind: kube.ModeUDN, Topology: "Layer2"}, want: []string{
			"--udnl2: stopped before anything was created:\n  k8s-netperf creates UserDefinedNetwork cnperf/udn-primary-netperf for it; this cluster lacks what that needs:",
			"  - the CRD userdefinednetworks.k8s.ovn.org is not installed (the API server does not serve k8s.ovn.org/v1)",
			"  - OVN-Kubernetes is not running: no pod labelled app=ovnkube-node (its ovnkube-node DaemonSet's) in any namespace",
			"  - node node1, node2 has no k8s.ovn.org/node-subnets annotation: OVN-Kubernetes is not the cluster's network there"}},
		{name: "cudn without Multus's CRD either", mode: kube.NetworkMode{Flag: "--cudn layer2", Kind: kube.ModeCUDN, Topology: "Layer2"}, want: []string{
			"the CRD clusteruserdefinednetworks.k8s.ovn.org is not installed",
			"the CRD network-attachment-definitions.k8s.cni.cncf.io is not installed (the API server does not serve k8s.cni.cncf.io/v1)"}},
		{name: "OVN-Kubernetes on one node", mode: kube.NetworkMode{Flag: "--udnl3", Kind: kube.ModeUDN, Topology: "Layer3"}, ovnOn: []string{"node1"},
			want:    []string{"  - no Ready ovnkube-node pod (app=ovnkube-node) on node node2"},
			notWant: []string{"is not installed", "node1,", "node node1 has"}},
		{name: "localnet is VM-only", mode: kube.NetworkMode{Flag: "--localnet physnet", Kind: kube.ModeLocalnet, PhysicalNetwork: "physnet"}, ovnOn: []string{"node1", "node2"},
			want: []string{`  - the OVS bridge mapping of physical network "physnet" on the nodes cannot be read through the API;`,
				"k8s-netperf's --localnet is for VMs only"}},
		{name: "no SR-IOV operator", mode: kube.NetworkMode{Flag: "--sriov ens1f0", Kind: kube.ModeSRIOV, PF: "ens1f0"}, want: []string{
			"k8s-netperf creates SriovNetworkNodePolicy openshift-sriov-network-operator/sriov-netperf-policy and SriovNetwork\n" +
				"  openshift-sriov-network-operator/sriov-netperf for it; this cluster lacks what that needs:",
			"  - the CRD sriovnetworknodepolicies.sriovnetwork.openshift.io is not installed",
			"  - the SR-IOV Network Operator is not running: no Ready pod labelled name=sriov-network-operator in namespace\n" +
				"    openshift-sriov-network-operator"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t, node("node1", "zone-a"), node("node2", "zone-a"))
			if len(tc.ovnOn) > 0 {
				ovnCluster(t, c, tc.ovnOn...)
			}
			mode := tc.mode
			p := newTestPlatform(t, c, Options{NetworkMode: &mode})
			before := len(c.cs.Actions())
			err := p.Prepare(context.Background(), cross, testDrivers)
			var ue *exit.UsageError
			if !errors.As(err, &ue) {
				t.Fatalf("Prepare: %v, want a usage error (exit status 2)", err)
			}
			msg := err.Error()
			flat := func(s string) string { return strings.Join(strings.Fields(s), " ") } // wrapping aside
			for _, w := range tc.want {
				if !strings.Contains(flat(msg), flat(w)) {
					t.Errorf("message does not hold %q:\n%s", w, msg)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(msg, w) {
					t.Errorf("message holds %q:\n%s", w, msg)
				}
			}
			for _, line := range strings.Split("cnperf: set up the kube platform: "+msg, "\n") {
				if len(line) > 120 {
					t.Errorf("a line of %d columns (at most 120): %s", len(line), line)
				}
			}
			for _, a := range c.cs.Actions()[before:] {
				if a.GetVerb() == "create" && a.GetResource().Resource != "selfsubjectaccessreviews" {
					t.Errorf("created %s before the preflight stopped the run", a.GetResource().Resource)
				}
			}
		})
	}
}

// sriovCluster makes c look like a cluster with the SR-IOV Network Operator: its CRDs served, its
// pod Ready, its SriovOperatorConfig, and each of nodes reporting pf in its SriovNetworkNodeState.
func sriovCluster(t *testing.T, c *cluster, objs *kubetest.Objects, pf string, nodes ...string) {
	t.Helper()
	var res []metav1.APIResource
	for _, r := range []string{"sriovnetworknodepolicies", "sriovnetworks", "sriovoperatorconfigs", "sriovnetworknodestates"} {
		res = append(res, metav1.APIResource{Name: r, Namespaced: true})
	}
	c.cs.Resources = append(c.cs.Resources, &metav1.APIResourceList{GroupVersion: "sriovnetwork.openshift.io/v1", APIResources: res},
		&metav1.APIResourceList{GroupVersion: "k8s.cni.cncf.io/v1", APIResources: []metav1.APIResource{
			{Name: "network-attachment-definitions", Namespaced: true, Kind: "NetworkAttachmentDefinition"}}})
	ns := kube.SRIOVOperatorNamespace
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "sriov-network-operator", Namespace: ns, Labels: map[string]string{"name": "sriov-network-operator"}},
		Spec:   corev1.PodSpec{NodeName: nodes[0]},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}}
	if _, err := c.cs.CoreV1().Pods(ns).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	base := "/apis/sriovnetwork.openshift.io/v1/namespaces/" + ns
	objs.Set(base+"/sriovoperatorconfigs/default", []byte(`{"kind":"SriovOperatorConfig"}`))
	for _, n := range nodes {
		objs.Set(base+"/sriovnetworknodestates/"+n, []byte(`{"status":{"interfaces":[{"name":"`+pf+`"}]}}`))
	}
}

// ovnController plays OVN-Kubernetes's (or the SR-IOV operator's) controller on the in-memory
// stores: when the (Cluster)UserDefinedNetwork or SriovNetwork is created, the definition named
// after it appears in the run's namespace and, when condition, NetworkCreated=True is set.
func ovnController(objs *kubetest.Objects, nads *kubetest.NADs, ns string, condition bool) {
	objs.OnCreate = func(path string, body []byte) {
		var o struct {
			Kind     string                `json:"kind"`
			Metadata struct{ Name string } `json:"metadata"`
		}
		_ = json.Unmarshal(body, &o)
		if o.Kind == "SriovNetworkNodePolicy" {
			return
		}
		name := o.Metadata.Name
		_ = nads.Create(context.Background(), ns, []byte(`{"kind":"NetworkAttachmentDefinition","metadata":{"name":"`+name+`","namespace":"`+ns+
			`"},"spec":{"config":"{\"cniVersion\":\"0.4.0\",\"name\":\"`+name+`\",\"type\":\"ovn-k8s-cni-overlay\"}"}}`))
		if condition {
			objs.Set(path, []byte(`{"kind":"`+o.Kind+`","status":{"conditions":[{"type":"NetworkCreated","status":"True"}]}}`))
		}
	}
}

// ovnPrimaryAttaches plays OVN-Kubernetes on a namespace with a primary UserDefinedNetwork: each
// pod created there gets the network's address in k8s.ovn.org/pod-networks (no Multus annotation).
func ovnPrimaryAttaches(c *cluster, network string) {
	n := 0
	c.cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		p := a.(k8stesting.CreateAction).GetObject().(*corev1.Pod)
		c.mu.Lock()
		n++
		ip := fmt.Sprintf("10.0.1.%d/24", n)
		c.mu.Unlock()
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[kube.AnnotationOVNPodNetworks] = `{"default":{"ip_addresses":["10.244.9.9/24"],"role":"infrastructure-locked"},"` +
			network + `":{"ip_addresses":["` + ip + `"],"role":"primary"}}`
		return false, nil, nil
	})
}

// With OVN-Kubernetes (or the SR-IOV operator) present, a mode's run creates its objects after its
// namespace, waits for the definition they make, puts the pods on it (a secondary network through
// Multus's annotation, a primary UDN through the namespace's label, the SR-IOV VF requested),
// measures between their addresses on it, names the mode in the result, and deletes what it
// created at the end; the network never made stops the run naming the object.
func TestNetworkModeRun(t *testing.T) {
	for _, tc := range []struct {
		name      string
		mode      kube.NetworkMode
		noControl bool   // nothing makes the definition
		deny      string // a permission the user lacks
		wantObjs  string
		wantErr   string
	}{
		{name: "may not create the cudn", mode: kube.NetworkMode{Flag: "--cudn layer2", Kind: kube.ModeCUDN, Topology: "Layer2"},
			deny: "create clusteruserdefinednetworks", wantErr: "create clusteruserdefinednetworks.k8s.ovn.org (cluster-wide) — deploy/rbac/network-modes.yaml grants"},
		{name: "cudn", mode: kube.NetworkMode{Flag: "--cudn layer2", Kind: kube.ModeCUDN, Topology: "Layer2"},
			wantObjs: "/apis/k8s.ovn.org/v1/clusteruserdefinednetworks/cudn-secondary-netperf"},
		{name: "udn primary", mode: kube.NetworkMode{Flag: "--udnl2", Kind: kube.ModeUDN, Topology: "Layer2"},
			wantObjs: "/apis/k8s.ovn.org/v1/namespaces/perf/userdefinednetworks/udn-primary-netperf"},
		{name: "sriov", mode: kube.NetworkMode{Flag: "--sriov ens1f0", Kind: kube.ModeSRIOV, PF: "ens1f0", NodeRole: "worker"},
			wantObjs: "/apis/sriovnetwork.openshift.io/v1/namespaces/openshift-sriov-network-operator/sriovnetworknodepolicies/sriov-netperf-policy " +
				"/apis/sriovnetwork.openshift.io/v1/namespaces/openshift-sriov-network-operator/sriovnetworks/sriov-netperf"},
		{name: "not made", mode: kube.NetworkMode{Flag: "--cudn layer3", Kind: kube.ModeCUDN, Topology: "Layer3"}, noControl: true,
			wantObjs: "/apis/k8s.ovn.org/v1/clusteruserdefinednetworks/cudn-secondary-netperf",
			wantErr: "--cudn layer3: the network was not made: OVN-Kubernetes did not make NetworkAttachmentDefinition perf/cudn-secondary-netperf and condition " +
				"NetworkCreated=True within 1.5s; ClusterUserDefinedNetwork cudn-secondary-netperf has no status conditions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			c := newCluster(t, node("node1", "zone-a"), node("node2", "zone-a"))
			network := tc.mode.Network("perf")
			if tc.mode.Primary() {
				ovnPrimaryAttaches(c, network)
			} else {
				multusAttaches(c)
			}
			objs, nads := &kubetest.Objects{}, &kubetest.NADs{}
			if tc.mode.Kind == kube.ModeSRIOV {
				sriovCluster(t, c, objs, "ens1f0", "node1", "node2")
			} else {
				ovnCluster(t, c, "node1", "node2")
			}
			if tc.deny != "" {
				c.deny[tc.deny] = true
			}
			mode := tc.mode
			p := newTestPlatform(t, c, Options{Namespace: "perf", NetworkMode: &mode, ModeNetworkTimeout: 1500 * time.Millisecond})
			if !tc.noControl {
				ovnController(objs, nads, "perf", tc.mode.Kind != kube.ModeSRIOV)
			}
			p.objects, p.nads = objs, nads
			cases := append(networkCases(network, api.PathPodPodCrossNode), casesWith([]string{"iperf3"}, []api.Path{api.PathPodClusterIP})...)
			err := p.Prepare(ctx, cases, testDrivers)
			if got := strings.Join(objs.Created, " "); got != tc.wantObjs {
				t.Errorf("created %q, want %q", got, tc.wantObjs)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(strings.Join(strings.Fields(err.Error()), " "), tc.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if tc.wantErr == "" {
				ns, _ := c.cs.CoreV1().Namespaces().Get(ctx, "perf", metav1.GetOptions{})
				if _, labelled := ns.Labels[kube.PrimaryUDNLabel]; labelled != tc.mode.Primary() {
					t.Errorf("namespace labels %v: primary-UDN label %v, want %v", ns.Labels, labelled, tc.mode.Primary())
				}
				pods, _ := c.cs.CoreV1().Pods("perf").List(ctx, metav1.ListOptions{LabelSelector: kube.RunSelector(testRun)})
				for _, pod := range pods.Items {
					onNet := pod.Labels[kube.LabelNetwork] == string(api.NetworkAttachment)
					ann := pod.Annotations[kube.AnnotationNetworks]
					if want := onNet && !tc.mode.Primary(); (ann == network) != want {
						t.Errorf("pod %s: networks annotation %q (on the network: %v)", pod.Name, ann, onNet)
					}
					vf := pod.Spec.Containers[0].Resources.Limits[corev1.ResourceName("openshift.io/ens1f0")]
					if want := onNet && tc.mode.Kind == kube.ModeSRIOV; (vf.Value() == 1) != want {
						t.Errorf("pod %s: openshift.io/ens1f0 limit %s, want one VF: %v", pod.Name, vf.String(), want)
					}
				}
				pair, err := p.Pair(ctx, cases[0])
				if err != nil {
					t.Fatal(err)
				}
				a := pair.Placement.Attachment
				if a == nil || a.Network != network || a.Mode == nil || a.Mode.Flag != tc.mode.Flag || pair.Target.Host != a.ServerIP ||
					a.Mode.Primary != tc.mode.Primary() || len(a.Mode.Objects) == 0 {
					t.Fatalf("attachment %+v (mode %+v), target %s", a, a.Mode, pair.Target.Host)
				}
				if tc.mode.Primary() && (!strings.HasPrefix(a.ServerIP, "10.0.1.") || !strings.HasPrefix(a.ClientIP, "10.0.1.")) {
					t.Errorf("primary UDN addresses %s -> %s, want pod-networks' 10.0.1.x", a.ClientIP, a.ServerIP)
				}
				// the ClusterIP case stays on the default network
				if pair, err := p.Pair(ctx, cases[1]); err != nil || pair.Placement.Attachment != nil {
					t.Errorf("ClusterIP case: %v, attachment %+v", err, pair.Placement.Attachment)
				}
			}
			if err := p.Close(ctx); err != nil {
				t.Fatal(err)
			}
			var created []string
			if tc.wantObjs != "" {
				created = strings.Split(tc.wantObjs, " ")
			}
			slices.Reverse(created)
			if got := strings.Join(objs.Deleted, " "); got != strings.Join(created, " ") {
				t.Errorf("deleted %q, want %q (what was created, the last first)", got, strings.Join(created, " "))
			}
		})
	}
}
