package tigerbench

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

// The fake dynamic client stands in for the API server with Calico's CRDs (no Calico can run
// here); test/e2e runs the same code against a real API server with the CRDs installed.

func obj(gvr schema.GroupVersionResource, kind, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gvr.GroupVersion().String(), "kind": kind,
		"metadata": map[string]any{"name": name},
		"spec":     spec,
	}}
	return u
}

func newDynamic(objs ...runtime.Object) *dynfake.FakeDynamicClient {
	kinds := map[schema.GroupVersionResource]string{
		GVRInstallation: "InstallationList", GVRTigerStatus: "TigerStatusList", GVRIPPool: "IPPoolList",
		GVRFelixConfiguration: "FelixConfigurationList", GVRClusterInformation: "ClusterInformationList",
	}
	return dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), kinds, objs...)
}

func getObj(t *testing.T, c *dynfake.FakeDynamicClient, gvr schema.GroupVersionResource, name string) *unstructured.Unstructured {
	t.Helper()
	u, err := c.Resource(gvr).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestCalicoOperatorApplyAndRestore(t *testing.T) {
	ctx := context.Background()
	inst := obj(GVRInstallation, "Installation", "default", map[string]any{
		"cni": map[string]any{"type": "Calico"},
		"calicoNetwork": map[string]any{
			"ipPools": []any{map[string]any{"cidr": "10.244.0.0/16", "encapsulation": "VXLANCrossSubnet"}},
		},
	})
	inst.Object["status"] = map[string]any{"variant": "Calico", "calicoVersion": "v3.30.2",
		"computed": map[string]any{"calicoNetwork": map[string]any{"linuxDataplane": "Iptables"}}}
	pool := obj(GVRIPPool, "IPPool", "default-ipv4-ippool", map[string]any{"cidr": "10.244.0.0/16", "vxlanMode": "CrossSubnet", "ipipMode": "Never"})
	pool6 := obj(GVRIPPool, "IPPool", "default-ipv6-ippool", map[string]any{"cidr": "fd00:10:244::/64", "vxlanMode": "Never"})
	felix := obj(GVRFelixConfiguration, "FelixConfiguration", "default", map[string]any{"wireguardEnabled": true, "wireguardEnabledV6": true})
	ci := obj(GVRClusterInformation, "ClusterInformation", "default", map[string]any{"clusterType": "k8s,bgp,kubeadm,operator", "calicoVersion": "v3.30.2"})
	dyn := newDynamic(inst, pool, pool6, felix, ci)
	origInst := getObj(t, dyn, GVRInstallation, "default").DeepCopy()
	origPool := getObj(t, dyn, GVRIPPool, "default-ipv4-ippool").DeepCopy()

	c := &Calico{Dynamic: dyn}
	d, err := c.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := &api.CalicoDetails{Product: "calico", Version: "v3.30.2", Encapsulation: "VXLANCrossSubnet", Dataplane: "iptables",
		WireguardEnabled: true, WireguardEnabledV6: true, IPFamily: "dual", ClusterType: "k8s,bgp,kubeadm,operator", CNIType: "Calico"}
	if !reflect.DeepEqual(d, want) {
		t.Errorf("describe\n got %+v\nwant %+v", d, want)
	}

	ch, err := c.Apply(ctx, CalicoSettings{Encap: "ipip", Dataplane: "nftables", CPULimit: "500m"})
	if err != nil {
		t.Fatal(err)
	}
	if ch.PreviousEncap != "VXLANCrossSubnet" || ch.PreviousDataplane != "iptables" || len(ch.Changes) != 5 {
		t.Errorf("change %+v", ch)
	}
	p := getObj(t, dyn, GVRIPPool, "default-ipv4-ippool")
	if field(p, "spec", "ipipMode") != "Always" || field(p, "spec", "vxlanMode") != "Never" {
		t.Errorf("ipv4 pool %v", p.Object["spec"])
	}
	if p6 := getObj(t, dyn, GVRIPPool, "default-ipv6-ippool"); field(p6, "spec", "ipipMode") != nil {
		t.Errorf("IPIP set on an IPv6 pool: %v", p6.Object["spec"])
	}
	in := getObj(t, dyn, GVRInstallation, "default")
	if field(in, "spec", "calicoNetwork", "linuxDataplane") != "Nftables" || cpuLimitOf(field(in, "spec", "calicoNodeDaemonSet")) != "500m" {
		t.Errorf("installation %v", in.Object["spec"])
	}
	if pools := field(in, "spec", "calicoNetwork", "ipPools").([]any); pools[0].(map[string]any)["encapsulation"] != "IPIP" {
		t.Errorf("installation pools %v", pools)
	}

	// A later test that asks for nothing gets the cluster as the run found it.
	_, err = c.Apply(ctx, CalicoSettings{Dataplane: "iptables"})
	if err != nil {
		t.Fatal(err)
	}
	if p := getObj(t, dyn, GVRIPPool, "default-ipv4-ippool"); field(p, "spec", "vxlanMode") != "CrossSubnet" {
		t.Errorf("encap not back to the original for a test without encap: %v", p.Object["spec"])
	}

	if err := c.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	if got := getObj(t, dyn, GVRInstallation, "default"); !reflect.DeepEqual(got.Object["spec"], origInst.Object["spec"]) {
		t.Errorf("installation not restored:\n got %v\nwant %v", got.Object["spec"], origInst.Object["spec"])
	}
	if got := getObj(t, dyn, GVRIPPool, "default-ipv4-ippool"); !reflect.DeepEqual(got.Object["spec"], origPool.Object["spec"]) {
		t.Errorf("pool not restored:\n got %v\nwant %v", got.Object["spec"], origPool.Object["spec"])
	}
	// Restoring twice changes nothing.
	if err := c.Restore(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestCalicoWithoutOperatorUsesFelix(t *testing.T) {
	ctx := context.Background()
	pool := obj(GVRIPPool, "IPPool", "pool", map[string]any{"cidr": "10.244.0.0/16", "ipipMode": "Always"})
	felix := obj(GVRFelixConfiguration, "FelixConfiguration", "default", map[string]any{})
	dyn := newDynamic(pool, felix)
	c := &Calico{Dynamic: dyn}
	if _, err := c.Apply(ctx, CalicoSettings{Dataplane: "bpf", Encap: "none"}); err != nil {
		t.Fatal(err)
	}
	f := getObj(t, dyn, GVRFelixConfiguration, "default")
	if field(f, "spec", "bpfEnabled") != true {
		t.Errorf("felix %v", f.Object["spec"])
	}
	if _, err := c.Apply(ctx, CalicoSettings{CPULimit: "1"}); err == nil || !strings.Contains(err.Error(), "needs the Calico operator") {
		t.Errorf("cpu limit without operator: %v", err)
	}
	if err := c.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	f = getObj(t, dyn, GVRFelixConfiguration, "default")
	if len(f.Object["spec"].(map[string]any)) != 0 {
		t.Errorf("felix not restored to an empty spec: %v", f.Object["spec"])
	}
	if p := getObj(t, dyn, GVRIPPool, "pool"); field(p, "spec", "ipipMode") != "Always" || field(p, "spec", "vxlanMode") != nil {
		t.Errorf("pool %v", p.Object["spec"])
	}
}

func TestCalicoAbsent(t *testing.T) {
	c := &Calico{Dynamic: newDynamic()}
	if d, err := c.Describe(context.Background()); d != nil || err != nil {
		t.Errorf("describe without Calico: %v %v", d, err)
	}
	if _, err := c.Apply(context.Background(), CalicoSettings{Encap: "vxlan"}); err == nil || !strings.Contains(err.Error(), "Calico is not installed") {
		t.Errorf("apply without Calico: %v", err)
	}
	if err := c.Restore(context.Background()); err != nil {
		t.Errorf("restore without apply: %v", err)
	}
}

func TestCalicoSettingsValidate(t *testing.T) {
	if err := (CalicoSettings{Encap: "gre", Dataplane: "vpp", CPULimit: "lots"}).Validate(); err == nil ||
		!strings.Contains(err.Error(), "encap") || !strings.Contains(err.Error(), "dataplane") || !strings.Contains(err.Error(), "calicoNodeCPULimit") {
		t.Errorf("%v", err)
	}
}

// Calico v3.28's FelixConfiguration CRD has no nftablesMode: the API server prunes the field on
// every write (seen on make e2e CNI=calico: `kubectl patch ... nftablesMode` says "no change").
// A reactor does the same to the fake's updates.
func TestCalicoFieldDroppedByCRD(t *testing.T) {
	ctx := context.Background()
	pool := obj(GVRIPPool, "IPPool", "pool", map[string]any{"cidr": "10.244.1.0/24", "vxlanMode": "Always", "ipipMode": "Never"})
	felix := obj(GVRFelixConfiguration, "FelixConfiguration", "default", map[string]any{"logSeverityScreen": "Info"})
	dyn := newDynamic(pool, felix)
	dyn.PrependReactor("update", "felixconfigurations", func(a k8stesting.Action) (bool, runtime.Object, error) {
		u := a.(k8stesting.UpdateAction).GetObject().(*unstructured.Unstructured).DeepCopy()
		unstructured.RemoveNestedField(u.Object, "spec", "nftablesMode")
		_, err := dyn.Tracker().Get(GVRFelixConfiguration, "", u.GetName())
		if err != nil {
			return true, nil, err
		}
		return true, u, dyn.Tracker().Update(GVRFelixConfiguration, u, "")
	})
	var log strings.Builder
	c := &Calico{Dynamic: dyn, Log: &log}
	ch, err := c.Apply(ctx, CalicoSettings{Dataplane: "iptables"})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ch.Changes, "; "); got != "FelixConfiguration default: bpfEnabled (unset) -> false" {
		t.Errorf("changes %q: the dropped nftablesMode must not be listed", got)
	}
	if !strings.Contains(log.String(), "did not keep spec.nftablesMode") {
		t.Errorf("log does not say the field was dropped:\n%s", log.String())
	}
	if _, err := c.Apply(ctx, CalicoSettings{Dataplane: "nftables"}); err == nil || !strings.Contains(err.Error(), "no nftables dataplane") {
		t.Errorf("nftables on a Calico without it: %v", err)
	}
	if err := c.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	if f := getObj(t, dyn, GVRFelixConfiguration, "default"); !reflect.DeepEqual(f.Object["spec"], map[string]any{"logSeverityScreen": "Info"}) {
		t.Errorf("felix not restored: %v", f.Object["spec"])
	}
}

// TestCalicoSettleWithoutDaemonSet: a Calico whose calico-node is not a DaemonSet (the e2e
// cluster runs it as processes) gives no rollout to watch; Apply must still give felix its
// grace before tests measure (a TCP_STREAM started at once after VXLAN was switched back on
// failed to connect), and say so. The fake clientset stands in for an API server without the
// DaemonSet; test/e2e's TestTigerBenchCalicoLive runs this against a real Calico.
func TestCalicoSettleWithoutDaemonSet(t *testing.T) {
	pool := obj(GVRIPPool, "IPPool", "default-ipv4-ippool", map[string]any{"cidr": "10.244.0.0/16", "vxlanMode": "Always", "ipipMode": "Never"})
	var log strings.Builder
	const grace = 80 * time.Millisecond
	c := &Calico{Dynamic: newDynamic(pool), Client: fake.NewSimpleClientset(), Log: &log, SettleGrace: grace}
	start := time.Now()
	ch, err := c.Apply(context.Background(), CalicoSettings{Encap: "none"})
	if err != nil {
		t.Fatal(err)
	}
	if len(ch.Changes) == 0 {
		t.Fatal("no change applied")
	}
	if took := time.Since(start); took < grace {
		t.Errorf("Apply returned after %s, before the %s grace", took, grace)
	}
	if !strings.Contains(log.String(), "giving felix 80ms to apply the change") {
		t.Errorf("log does not say it waits:\n%s", log.String())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c.SettleGrace = time.Hour
	if err := c.Restore(ctx); err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Errorf("Restore with a cancelled context waited or did not say why: %v", err)
	}
}
