package kube

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cnperf/cnperf/internal/kube/kubetest"
)

var (
	modeCUDN  = NetworkMode{Flag: "--cudn layer2", Kind: ModeCUDN, Topology: "Layer2"}
	modeUDN   = NetworkMode{Flag: "--udnl3", Kind: ModeUDN, Topology: "Layer3"}
	modeSRIOV = NetworkMode{Flag: "--sriov ens1f0", Kind: ModeSRIOV, PF: "ens1f0", NodeRole: "worker"}
)

// The network a mode's objects make is the definition OVN-Kubernetes or the SR-IOV operator
// names after them, in the run's namespace (where k8s-netperf reads the pods' addresses).
func TestNetworkModeNetwork(t *testing.T) {
	for _, tc := range []struct {
		m       NetworkMode
		want    string
		primary bool
		res     string
	}{
		{NetworkMode{Kind: ModeUDN, Topology: "Layer2"}, "perf/udn-primary-netperf", true, ""},
		{modeCUDN, "perf/cudn-secondary-netperf", false, ""},
		{NetworkMode{Kind: ModeLocalnet, PhysicalNetwork: "physnet"}, "perf/cudn-localnet-netperf", false, ""},
		{modeSRIOV, "perf/sriov-netperf", false, "openshift.io/ens1f0"},
	} {
		if got := tc.m.Network("perf"); got != tc.want || tc.m.Primary() != tc.primary || tc.m.SRIOVResource() != tc.res {
			t.Errorf("%s: network %q primary %v resource %q; want %q, %v, %q", tc.m.Kind, got, tc.m.Primary(), tc.m.SRIOVResource(),
				tc.want, tc.primary, tc.res)
		}
	}
}

// Objects are created in order and each reported once the API took it; one that exists is not
// the run's: the run stops naming it, and deletes only what it created, the last first.
func TestCreateAndDeleteModeObjects(t *testing.T) {
	ctx := context.Background()
	objs, err := modeSRIOV.Objects("perf", "r1")
	if err != nil {
		t.Fatal(err)
	}
	st := &kubetest.Objects{}
	var created []string
	if err := CreateModeObjects(ctx, st, objs, func(o NetworkObject) { created = append(created, o.String()) }); err != nil {
		t.Fatal(err)
	}
	want := "SriovNetworkNodePolicy openshift-sriov-network-operator/sriov-netperf-policy,SriovNetwork openshift-sriov-network-operator/sriov-netperf"
	if strings.Join(created, ",") != want {
		t.Errorf("created %q, want %q", created, want)
	}
	if err := DeleteModeObjects(ctx, st, objs); err != nil {
		t.Fatal(err)
	}
	wantDel := "/apis/sriovnetwork.openshift.io/v1/namespaces/openshift-sriov-network-operator/sriovnetworks/sriov-netperf," +
		"/apis/sriovnetwork.openshift.io/v1/namespaces/openshift-sriov-network-operator/sriovnetworknodepolicies/sriov-netperf-policy"
	if got := strings.Join(st.Deleted, ","); got != wantDel {
		t.Errorf("deleted %q, want %q", got, wantDel)
	}
	if err := DeleteModeObjects(ctx, st, objs); err != nil {
		t.Errorf("deleting what is gone already: %v", err)
	}

	// the SriovNetwork exists already (not the run's): the policy, created first, is reported
	// (so that it is deleted), the SriovNetwork is named and not touched
	st = &kubetest.Objects{}
	st.Set(objs[1].ObjectPath(), []byte(`{"metadata":{"name":"sriov-netperf"}}`))
	created = nil
	err = CreateModeObjects(ctx, st, objs, func(o NetworkObject) { created = append(created, o.String()) })
	if err == nil || !strings.Contains(err.Error(), "SriovNetwork openshift-sriov-network-operator/sriov-netperf exists already and is not this run's") {
		t.Errorf("error %v", err)
	}
	if len(created) != 1 || created[0] != objs[0].String() {
		t.Errorf("created %q, want the policy only", created)
	}
	if got := ModeObjectsCleanup(objs); got != "kubectl delete sriovnetworknodepolicies.sriovnetwork.openshift.io sriov-netperf-policy -n openshift-sriov-network-operator; "+
		"kubectl delete sriovnetworks.sriovnetwork.openshift.io sriov-netperf -n openshift-sriov-network-operator" {
		t.Errorf("cleanup command %q", got)
	}
}

// The wait ends when the definition exists and, for OVN-Kubernetes's objects, NetworkCreated is
// True; else, at the timeout, the error names the object, the definition and the object's
// conditions.
func TestWaitModeNetwork(t *testing.T) {
	ctx := context.Background()
	networkCreated := `{"status":{"conditions":[{"type":"NetworkCreated","status":"True","reason":"NetworkAttachmentDefinitionCreated"}]}}`
	for _, tc := range []struct {
		name   string
		m      NetworkMode
		status string // the maker's body after its creation ("" = as created)
		nad    bool
		want   string // "" = no error
	}{
		{"cudn made", modeCUDN, networkCreated, true, ""},
		{"cudn: definition, no condition yet", modeCUDN, "", true,
			"--cudn layer2: the network was not made: OVN-Kubernetes did not make NetworkAttachmentDefinition perf/cudn-secondary-netperf and condition NetworkCreated=True " +
				"within 1.5s; ClusterUserDefinedNetwork cudn-secondary-netperf has no status conditions (is OVN-Kubernetes's controller running?); " +
				"NetworkAttachmentDefinition perf/cudn-secondary-netperf exists"},
		{"udn refused", modeUDN, `{"status":{"conditions":[{"type":"NetworkCreated","status":"False","reason":"SyncError",` +
			`"message":"primary network requires namespace label"}]}}`, false,
			"--udnl3: the network was not made: OVN-Kubernetes did not make NetworkAttachmentDefinition perf/udn-primary-netperf and condition NetworkCreated=True within 1.5s; " +
				"UserDefinedNetwork perf/udn-primary-netperf's status conditions: NetworkCreated=False (SyncError: primary network requires namespace label); " +
				"NetworkAttachmentDefinition perf/udn-primary-netperf does not exist"},
		{"sriov: the definition is enough (k8s-netperf's wait)", modeSRIOV, "", true, ""},
		{"sriov: no definition", modeSRIOV, "", false,
			"--sriov ens1f0: the network was not made: the SR-IOV Network Operator did not make NetworkAttachmentDefinition perf/sriov-netperf within 1.5s; " +
				"SriovNetwork openshift-sriov-network-operator/sriov-netperf has no status conditions (is the SR-IOV Network Operator's controller running?); " +
				"NetworkAttachmentDefinition perf/sriov-netperf does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := tc.m.Objects("perf", "r1")
			if err != nil {
				t.Fatal(err)
			}
			st, nads := &kubetest.Objects{}, &kubetest.NADs{}
			if err := CreateModeObjects(ctx, st, objs, func(NetworkObject) {}); err != nil {
				t.Fatal(err)
			}
			// the controller answers half a second later
			go func() {
				time.Sleep(500 * time.Millisecond)
				if tc.status != "" {
					st.Set(objs[len(objs)-1].ObjectPath(), []byte(tc.status))
				}
				if tc.nad {
					ns, name, _ := strings.Cut(tc.m.Network("perf"), "/")
					_ = nads.Create(ctx, ns, []byte(`{"metadata":{"name":"`+name+`","namespace":"`+ns+`"}}`))
				}
			}()
			start := time.Now()
			err = WaitModeNetwork(ctx, st, nads, tc.m, objs, "perf", 1500*time.Millisecond)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("error %v", err)
			case tc.want == "" && time.Since(start) > 1400*time.Millisecond:
				t.Errorf("took %s: the wait did not end when the network was made", time.Since(start))
			case tc.want != "" && (err == nil || strings.Join(strings.Fields(err.Error()), " ") != tc.want):
				t.Errorf("error\n %v\nwant (wrapping aside)\n %s", err, tc.want)
			}
			if err != nil {
				for _, line := range strings.Split("cnperf: set up the kube platform: "+err.Error(), "\n") {
					if len(line) > 120 {
						t.Errorf("a line of %d columns (at most 120): %s", len(line), line)
					}
				}
			}
		})
	}
}

// A pod's address on its primary UserDefinedNetwork is k8s.ovn.org/pod-networks's, where
// k8s-netperf reads it (ExtractUdnIp), not status.podIP (the default network's).
func TestPrimaryAddressOf(t *testing.T) {
	// an annotation as OVN-Kubernetes writes it for a pod of a namespace with a primary layer3 UDN
	const ann = `{"default":{"ip_addresses":["10.244.1.5/24"],"mac_address":"0a:58:0a:f4:01:05","routes":[],` +
		`"ip_address":"10.244.1.5/24","role":"infrastructure-locked"},"perf/udn-primary-netperf":{"ip_addresses":["10.0.1.4/24","fd00::4/64"],` +
		`"mac_address":"0a:58:0a:00:01:04","gateway_ips":["10.0.1.1"],"ip_address":"10.0.1.4/24","gateway_ip":"10.0.1.1","role":"primary"}}`
	pod := func(a string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "server"}, Status: corev1.PodStatus{PodIP: "10.244.1.5"}}
		if a != "" {
			p.Annotations = map[string]string{AnnotationOVNPodNetworks: a}
		}
		return p
	}
	for _, tc := range []struct {
		name, ann, network, family, want, err string
	}{
		{"first", ann, "perf/udn-primary-netperf", "", "10.0.1.4", ""},
		{"ipv6", ann, "perf/udn-primary-netperf", "ipv6", "fd00::4", ""},
		{"other network", ann, "perf/other", "", "", "pod server is not on perf/other (its k8s.ovn.org/pod-networks names default, perf/udn-primary-netperf)"},
		{"no annotation", "", "perf/udn-primary-netperf", "", "", "pod server has no k8s.ovn.org/pod-networks annotation: OVN-Kubernetes did not attach it to perf/udn-primary-netperf"},
		{"no such family", `{"perf/udn-primary-netperf":{"ip_addresses":["10.0.1.4/24"]}}`, "perf/udn-primary-netperf", "ipv6", "",
			"pod server has no ipv6 address on perf/udn-primary-netperf (addresses 10.0.1.4/24)"},
		{"not json", "{", "perf/udn-primary-netperf", "", "", "pod server: k8s.ovn.org/pod-networks is not JSON"},
	} {
		got, err := PrimaryAddressOf(pod(tc.ann), tc.network, tc.family)
		if got != tc.want || (tc.err == "") != (err == nil) || (err != nil && !strings.HasPrefix(err.Error(), tc.err)) {
			t.Errorf("%s: %q, %v; want %q, %q", tc.name, got, err, tc.want, tc.err)
		}
	}
}

// A result names the mode with the value k8s-netperf's CSV writes.
func TestNetworkModeInfo(t *testing.T) {
	objs, _ := NetworkMode{Flag: "--cudn Layer2", Kind: ModeCUDN, Topology: "Layer2"}.Objects("perf", "r1")
	i := NetworkMode{Flag: "--cudn Layer2", Kind: ModeCUDN, Topology: "Layer2"}.Info(objs)
	if i.Kind != "cudn" || i.Value != "Layer2" || i.Primary || len(i.Objects) != 1 || i.Objects[0] != "ClusterUserDefinedNetwork cudn-secondary-netperf" {
		t.Errorf("cudn: %+v", i)
	}
	if i := (NetworkMode{Flag: "--udnl2", Kind: ModeUDN, Topology: "Layer2"}).Info(nil); i.Value != "layer2" || !i.Primary {
		t.Errorf("udnl2: %+v", i)
	}
	if i := modeSRIOV.Info(nil); i.Value != "ens1f0" || i.Kind != "sriov" {
		t.Errorf("sriov: %+v", i)
	}
}

// `cnperf cleanup` knows the modes' objects: an abandoned run's UserDefinedNetwork,
// ClusterUserDefinedNetwork and SR-IOV objects are found by its label and deleted by their own
// paths; another run's (alive) and unlabelled ones are kept.
func TestModeKindsCleanup(t *testing.T) {
	ctx := context.Background()
	st := &kubetest.Objects{}
	var all []NetworkObject
	for _, m := range []NetworkMode{modeUDN, modeCUDN, modeSRIOV} {
		objs, err := m.Objects("perf", "gone")
		if err != nil {
			t.Fatal(err)
		}
		if err := CreateModeObjects(ctx, st, objs, func(NetworkObject) {}); err != nil {
			t.Fatal(err)
		}
		all = append(all, objs...)
	}
	other, _ := NetworkMode{Flag: "--udnl2", Kind: ModeUDN, Topology: "Layer2"}.Objects("other", "alive")
	_ = CreateModeObjects(ctx, st, other, func(NetworkObject) {})
	st.Set("/apis/k8s.ovn.org/v1/namespaces/mine/userdefinednetworks/by-hand", []byte(`{"metadata":{"name":"by-hand","namespace":"mine"}}`))

	var found []string
	for _, k := range modeKinds(st, "") {
		ms, err := k.list(ctx, metav1.ListOptions{LabelSelector: RunSelector("gone")})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			found = append(found, k.kind+" "+m.Namespace+"/"+m.Name)
			kk, ok := func() (runKind, bool) {
				for _, k2 := range modeKinds(st, m.Namespace) {
					if k2.kind == k.kind {
						return k2, true
					}
				}
				return runKind{}, false
			}()
			if !ok {
				t.Fatalf("no kind %s in namespace %q", k.kind, m.Namespace)
			}
			if err := kk.del(ctx, m.Name, metav1.DeleteOptions{}); err != nil {
				t.Errorf("delete %s %s: %v", k.kind, m.Name, err)
			}
		}
	}
	want := "UserDefinedNetwork perf/udn-primary-netperf,ClusterUserDefinedNetwork /cudn-secondary-netperf," +
		"SriovNetwork openshift-sriov-network-operator/sriov-netperf,SriovNetworkNodePolicy openshift-sriov-network-operator/sriov-netperf-policy"
	if got := strings.Join(found, ","); got != want {
		t.Errorf("found %q, want %q", got, want)
	}
	for _, o := range all {
		if _, err := st.Get(ctx, o.ObjectPath()); err == nil {
			t.Errorf("%s still there", o)
		}
	}
	if _, err := st.Get(ctx, other[0].ObjectPath()); err != nil {
		t.Errorf("another run's %s was deleted", other[0])
	}
	// in one namespace: its UserDefinedNetworks only (the cluster-scoped and the operator's are elsewhere)
	if ks := modeKinds(st, "perf"); len(ks) != 1 || ks[0].kind != "UserDefinedNetwork" {
		t.Errorf("kinds in namespace perf: %d", len(ks))
	}
}
