package kube

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/kube"
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
// status 2) naming everything the cluster lacks, or, when nothing is missing, saying that cnperf
// does not create these networks.
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
		{name: "OVN-Kubernetes everywhere", mode: kube.NetworkMode{Flag: "--cudn layer3", Kind: kube.ModeCUDN, Topology: "Layer3"}, ovnOn: []string{"node1", "node2"},
			want: []string{"--cudn layer3: stopped before anything was created:\n  k8s-netperf creates ClusterUserDefinedNetwork " +
				"cudn-secondary-netperf for it; this cluster has what that needs, but cnperf does not create these objects nor"},
			notWant: []string{"lacks"}},
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
