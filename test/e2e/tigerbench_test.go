//go:build e2e

// End-to-end tests of tiger-bench parity (issue 8) on the harness's real cluster: standing
// config of 100 pods, 50 services and 500 policies created, measured against and removed;
// TTFR at 2 pods/s; DNS latency; seed 001's example testconfig.yaml producing results.json;
// Calico reconfiguration against the real API server with minimal CRDs, restored also when
// the run is interrupted. The agent image must contain a cnperf with `agent ttfr` and
// `agent dns` (the harness builds it from this repository).
//
// CNPERF_E2E_TTFR_FULL=1 runs the TTFR test as the issue states it (2 pods/s for 60 s, ≥ 100
// datapoints); by default it runs 20 s to fit the CI budget.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/config"
	_ "github.com/cnperf/cnperf/internal/driver/all"
	"github.com/cnperf/cnperf/internal/kube"
	kubeplatform "github.com/cnperf/cnperf/internal/platform/kube"
	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/report/junit"
	tbreport "github.com/cnperf/cnperf/internal/report/tigerbench"
	"github.com/cnperf/cnperf/internal/tigerbench"
)

type tbCluster struct {
	kubeconfig string
	image      string
	cs         kubernetes.Interface
	dyn        dynamic.Interface
}

func tbClusterFromEnv(t *testing.T) tbCluster {
	t.Helper()
	kc := os.Getenv("CNPERF_E2E_KUBECONFIG")
	if kc == "" {
		t.Skip("CNPERF_E2E_KUBECONFIG is not set: no e2e cluster given (run `make e2e`, or `make e2e-up` then `make e2e-test`)")
	}
	cs, cfg, err := kube.NewClientset(kc, "")
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tbCluster{kubeconfig: kc, image: os.Getenv("CNPERF_E2E_AGENT_IMAGE"), cs: cs, dyn: dyn}
}

// tbNeedAgent skips a test whose pods run `cnperf agent ttfr` / `cnperf agent dns` when the
// agent image's cnperf (CNPERF_E2E_CNPERF, the same binary) does not have them.
func tbNeedAgent(t *testing.T) {
	t.Helper()
	bin := os.Getenv("CNPERF_E2E_CNPERF")
	if bin == "" {
		return // cannot tell: let the test say what happens
	}
	for _, sub := range []string{"ttfr", "dns"} {
		if out, err := exec.Command(bin, "agent", sub, "--help").CombinedOutput(); err != nil || !strings.Contains(string(out), "--target") {
			t.Skipf("the agent image's cnperf (%s) has no `agent %s`: wire internal/ttfr into `cnperf agent`", bin, sub)
		}
	}
}

func (c tbCluster) kubeOptions() kubeplatform.Options {
	return kubeplatform.Options{Kubeconfig: c.kubeconfig, Image: c.image, PodStartTimeout: 3 * time.Minute}
}

// tbRun runs a testconfig.yaml through tigerbench.Run as `cnperf run -c` does.
func tbRun(ctx context.Context, t *testing.T, c tbCluster, yaml string, opts tigerbench.Options) (*api.Run, error) {
	t.Helper()
	l, err := config.LoadBytes("testconfig.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	run := &api.Run{APIVersion: api.APIVersion, Kind: api.KindRun, UUID: uuid.NewString(), StartTime: time.Now().UTC(), Platform: "kube"}
	var log kpSyncBuffer
	if opts.Parallelism == 0 {
		opts.Parallelism = tigerbench.DefaultParallelism
	}
	if os.Getenv("CNPERF_E2E_CNI") != "calico" {
		// The Calico here is this file's CRDs (tbInstallCalico): no felix applies a change, so
		// the 10 s cnperf gives felix after each one wait for nothing (4 in CI's run, in
		// TestTigerBenchSeedExample and TestTigerBenchCalicoReconfiguration; the 2 of
		// TestKubeRBACTigerBenchLoadManifest go through the CLI and stay). On the harness's
		// Calico they stay (a TCP_STREAM started at once after VXLAN was switched back on
		// failed to connect there).
		opts.CalicoSettleGrace = 100 * time.Millisecond
	}
	err = tigerbench.Run(ctx, l, run, tigerbench.Deps{Kube: c.kubeOptions(), Options: opts, RunID: run.UUID, Log: &log})
	run.EndTime = time.Now().UTC()
	t.Logf("cnperf log:\n%s", log.String())
	return run, err
}

func tbEncode(t *testing.T, format string, run *api.Run) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := report.Encode(&b, format, []*api.Run{run}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// tbNoLeftovers checks that a namespace is gone (or has none of the run's pods).
func tbNamespaceGone(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns string) {
	t.Helper()
	if _, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("namespace %s still exists after the test (leaveStandingConfig false): %v", ns, err)
	}
}

// TestTigerBenchStandingConfig: 100 pods, 50 services and 500 policies created with
// server-side apply, measured against (qperf pod-pod and pod-svc-pod), removed.
func TestTigerBenchStandingConfig(t *testing.T) {
	// About 90 s, mostly the API server creating and deleting 553 objects and the kubelets
	// starting 110 pods, all in its own namespace (no Calico change): it runs beside the
	// chart tests, which mostly wait for a CronJob's minutes (go test starts parallel tests
	// after the sequential ones). Its checks are counts, not rates.
	t.Parallel()
	c := tbClusterFromEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	ns := kpNamespace("tb-standing")
	run, err := tbRun(ctx, t, c, fmt.Sprintf(`- testKind: thruput-latency
  numPods: 100
  numServices: 50
  numPolicies: 500
  duration: 2
  iterations: 2
  leaveStandingConfig: false
  testNamespace: %s
`, ns), tigerbench.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec := run.TigerBench[0]
	sc := rec.Standing
	if sc == nil || sc.Error != "" || sc.Pods != 100 || sc.Services != 50 || sc.Policies != 500 || sc.Kept {
		t.Fatalf("standing config %+v", sc)
	}
	// 2 deployments + 50 services + 500 policies + the allow-all policy.
	if sc.ObjectsApplied != 553 {
		t.Errorf("objects applied %d, want 553", sc.ObjectsApplied)
	}
	t.Logf("standing config: %d objects applied in %.2fs (%.1f objects/s, %d in flight); 110 pods ready after %.2fs (%.1f pods/s); removed in %.2fs",
		sc.ObjectsApplied, sc.ApplySeconds, sc.ObjectsPerSecond, sc.Parallelism, sc.ReadySeconds, sc.PodsPerSecond, sc.RemoveSeconds)
	if len(run.Results) != 4 {
		t.Fatalf("%d cases, want TCP_STREAM and TCP_RR on pod-pod and pod-svc-pod", len(run.Results))
	}
	for _, r := range run.Results {
		if r.Failed() {
			t.Errorf("case %s %s failed: %s", r.Profile, r.Path, r.Error)
		}
		if r.Placement == nil || r.Placement.Client.Namespace != ns {
			t.Errorf("case %s %s did not run in the standing namespace: %+v", r.Profile, r.Path, r.Placement)
		}
	}
	var out []map[string]json.RawMessage
	if err := json.Unmarshal(tbEncode(t, tbreport.Format, run), &out); err != nil || len(out) != 1 {
		t.Fatalf("results.json: %v", err)
	}
	var tl tbreport.ThruputLatency
	if err := json.Unmarshal(out[0]["thruput-latency"], &tl); err != nil {
		t.Fatal(err)
	}
	if tl.Throughput.Direct.Datapoints != 2 || tl.Throughput.Direct.Avg <= 0 || tl.Latency.Service.Datapoints != 2 || tl.Latency.Service.Avg <= 0 {
		t.Errorf("thruput-latency %+v", tl)
	}
	tbNamespaceGone(ctx, t, c.cs, ns)
}

// TestTigerBenchTTFR: client pods at 2 pods/s, each measuring from its process start to the
// first response of the server on its node; every pod counted.
func TestTigerBenchTTFR(t *testing.T) {
	c := tbClusterFromEnv(t)
	tbNeedAgent(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	duration, minPoints := 20, 30
	if os.Getenv("CNPERF_E2E_TTFR_FULL") == "1" {
		duration, minPoints = 60, 100
	}
	ns := kpNamespace("tb-ttfr")
	run, err := tbRun(ctx, t, c, fmt.Sprintf(`- testKind: ttfr
  numPolicies: 20
  numServices: 5
  numPods: 4
  duration: %d
  leaveStandingConfig: false
  TestNamespace: %s
  TTFRConfig:
    TestPodsPerNode: 20
    Rate: 2
`, duration, ns), tigerbench.Options{})
	res := run.TigerBench[0].TTFR
	if res == nil {
		t.Fatalf("no TTFR result: %v", err)
	}
	t.Logf("ttfr: %d pods created in %.1fs (%.2f pods/s), %d datapoints, %d failures %v; ttfr %+v; create-to-ready %+v; warnings %q",
		res.PodsCreated, res.DurationSeconds, res.AchievedPodsPerSecond, res.Datapoints, res.Failures, res.FailureReasons,
		res.TTFRSeconds, res.PodCreateToReadySeconds, res.Warnings)
	if err != nil && res.Failures == 0 {
		t.Fatal(err)
	}
	if res.Datapoints+res.Failures != res.PodsCreated {
		t.Errorf("datapoints %d + failures %d != pods created %d: a pod was dropped", res.Datapoints, res.Failures, res.PodsCreated)
	}
	if res.Datapoints < minPoints {
		t.Errorf("%d datapoints, want at least %d at 2 pods/s for %ds", res.Datapoints, minPoints, duration)
	}
	if res.TTFRSeconds == nil || res.TTFRSeconds.Min <= 0 || res.TTFRSeconds.Max > 60 {
		t.Errorf("ttfr distribution %+v", res.TTFRSeconds)
	}
	if res.PodCreateToReadySeconds == nil || res.PodCreateToReadySeconds.N < res.Datapoints/2 {
		t.Errorf("create-to-ready %+v", res.PodCreateToReadySeconds)
	}
	var out []struct {
		TTFR []tbreport.TTFRSummary `json:"ttfr"`
	}
	if err := json.Unmarshal(tbEncode(t, tbreport.Format, run), &out); err != nil {
		t.Fatal(err)
	}
	if s := out[0].TTFR[0].TTFRSummary; s.Datapoints != res.Datapoints || s.Unit != "seconds" || s.Failures == nil {
		t.Errorf("results.json ttfr %+v", s)
	}
	tbNamespaceGone(ctx, t, c.cs, ns)
}

// TestTigerBenchDNS: lookups of an in-cluster Service name and connects to it from a pod on
// each test node. tiger-bench requires a DNSPerf section for a dnsperf test, and its target
// defaults to www.example.com, which this cluster cannot resolve (CoreDNS has no forward):
// the file names the API server's Service.
func TestTigerBenchDNS(t *testing.T) {
	c := tbClusterFromEnv(t)
	tbNeedAgent(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	ns := kpNamespace("tb-dns")
	run, err := tbRun(ctx, t, c, fmt.Sprintf("- testKind: dnsperf\n  duration: 10\n  testNamespace: %s\n  DNSPerf:\n    Mode: Inline\n    TargetURL: https://kubernetes.default.svc.cluster.local\n", ns), tigerbench.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := run.TigerBench[0].DNS
	t.Logf("dns: %+v lookup %+v connect %+v", d, d.LookupSeconds, d.ConnectSeconds)
	if d.Lookups < 20 || d.LookupFailures != 0 || d.ConnectFailures != 0 || d.Connects != d.Lookups || d.Pods < 2 {
		t.Errorf("dns %+v", d)
	}
	if d.LookupSeconds == nil || d.LookupSeconds.N != d.Lookups || d.ConnectSeconds == nil || d.ConnectSeconds.Min <= 0 {
		t.Errorf("distributions %+v %+v", d.LookupSeconds, d.ConnectSeconds)
	}
	var out []struct {
		DNS tbreport.DNSPerf `json:"dnsperf"`
	}
	if err := json.Unmarshal(tbEncode(t, tbreport.Format, run), &out); err != nil {
		t.Fatal(err)
	}
	if got := out[0].DNS; got.SuccessfulCurls != d.Connects || got.LookupTime.Unit != "seconds" || got.DuplicateSYN != nil {
		t.Errorf("results.json dnsperf %+v", got)
	}
	tbNamespaceGone(ctx, t, c.cs, ns)
}

// Calico CRDs, minimal: the fields cnperf reads and writes, kept as written.
var tbCalicoCRDs = []struct{ group, kind, plural string }{
	{"operator.tigera.io", "Installation", "installations"},
	{"crd.projectcalico.org", "IPPool", "ippools"},
	{"crd.projectcalico.org", "FelixConfiguration", "felixconfigurations"},
	{"crd.projectcalico.org", "ClusterInformation", "clusterinformations"},
}

var tbCRDGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// tbInstallCalico installs the CRDs and Calico's objects as an operator install has them, and
// removes them (and the CRDs it created) at the end.
func tbInstallCalico(ctx context.Context, t *testing.T, c tbCluster) {
	t.Helper()
	if os.Getenv("CNPERF_E2E_CNI") == "calico" {
		// its IPPool 10.244.0.0/16 would be a live pool that calico-ipam could hand out
		t.Skip("the cluster runs Calico: its CRDs are Calico's own, not this test's minimal ones, and the operator objects would stand beside a live Calico (TestTigerBenchCalicoLive reconfigures that Calico)")
	}
	for _, d := range tbCalicoCRDs {
		name := d.plural + "." + d.group
		crd := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": name, "labels": map[string]any{"cnperf.dev/e2e": "tigerbench"}},
			"spec": map[string]any{
				"group": d.group, "scope": "Cluster",
				"names": map[string]any{"kind": d.kind, "plural": d.plural, "singular": strings.ToLower(d.kind), "listKind": d.kind + "List"},
				"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
					"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
			},
		}}
		_, err := c.dyn.Resource(tbCRDGVR).Create(ctx, crd, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			t.Fatalf("CRD %s already exists: a Calico or an earlier run's leftover; not touching it", name)
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			// Wait until it is gone: the next test creates it again.
			_ = c.dyn.Resource(tbCRDGVR).Delete(context.Background(), name, metav1.DeleteOptions{})
			_ = wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
				_, err := c.dyn.Resource(tbCRDGVR).Get(ctx, name, metav1.GetOptions{})
				return apierrors.IsNotFound(err), nil
			})
		})
		err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			got, err := c.dyn.Resource(tbCRDGVR).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
			for _, c := range conds {
				if m, ok := c.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			t.Fatalf("CRD %s not established: %v", name, err)
		}
	}
	objs := []struct {
		gvr schema.GroupVersionResource
		obj map[string]any
	}{
		{tigerbench.GVRInstallation, map[string]any{"apiVersion": "operator.tigera.io/v1", "kind": "Installation", "metadata": map[string]any{"name": "default"},
			"spec": map[string]any{"cni": map[string]any{"type": "Calico"}, "calicoNetwork": map[string]any{
				"ipPools": []any{map[string]any{"cidr": "10.244.0.0/16", "encapsulation": "VXLANCrossSubnet", "natOutgoing": "Enabled"}}}},
			"status": map[string]any{"variant": "Calico", "calicoVersion": "v3.30.2"}}},
		{tigerbench.GVRIPPool, map[string]any{"apiVersion": "crd.projectcalico.org/v1", "kind": "IPPool", "metadata": map[string]any{"name": "default-ipv4-ippool"},
			"spec": map[string]any{"cidr": "10.244.0.0/16", "vxlanMode": "CrossSubnet", "ipipMode": "Never", "natOutgoing": true}}},
		{tigerbench.GVRFelixConfiguration, map[string]any{"apiVersion": "crd.projectcalico.org/v1", "kind": "FelixConfiguration", "metadata": map[string]any{"name": "default"},
			"spec": map[string]any{"logSeverityScreen": "Info", "wireguardEnabled": false}}},
		{tigerbench.GVRClusterInformation, map[string]any{"apiVersion": "crd.projectcalico.org/v1", "kind": "ClusterInformation", "metadata": map[string]any{"name": "default"},
			"spec": map[string]any{"clusterType": "k8s,bgp,kubeadm,operator", "calicoVersion": "v3.30.2"}}},
	}
	for _, o := range objs {
		if _, err := c.dyn.Resource(o.gvr).Create(ctx, &unstructured.Unstructured{Object: o.obj}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s: %v", o.gvr.Resource, err)
		}
	}
	// The BPF switch needs the operator's API server endpoint ConfigMap.
	if _, err := c.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tigera-operator"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = kube.DeleteNamespace(context.Background(), c.cs, "tigera-operator", true)
	})
	if _, err := c.cs.CoreV1().ConfigMaps("tigera-operator").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kubernetes-services-endpoint"},
		Data: map[string]string{"KUBERNETES_SERVICE_HOST": "10.123.0.1", "KUBERNETES_SERVICE_PORT": "6443"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func tbSpec(t *testing.T, c tbCluster, gvr schema.GroupVersionResource, name string) map[string]any {
	t.Helper()
	u, err := c.dyn.Resource(gvr).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return u.Object["spec"].(map[string]any)
}

// TestTigerBenchCalicoReconfiguration: refused without --allow-cluster-changes; with it, the
// Installation and IPPool are changed for the test and restored exactly afterwards, also when
// the run is interrupted in the middle of a test.
func TestTigerBenchCalicoReconfiguration(t *testing.T) {
	c := tbClusterFromEnv(t)
	tbNeedAgent(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	tbInstallCalico(ctx, t, c)
	origInst := tbSpec(t, c, tigerbench.GVRInstallation, "default")
	origPool := tbSpec(t, c, tigerbench.GVRIPPool, "default-ipv4-ippool")
	ns := kpNamespace("tb-calico")
	yaml := fmt.Sprintf("- testKind: ttfr\n  encap: ipip\n  dataplane: bpf\n  calicoNodeCPULimit: 750m\n  duration: 30\n  testNamespace: %s\n  TTFRConfig: {Rate: 1, TestPodsPerNode: 5}\n", ns)

	if _, err := tbRun(ctx, t, c, yaml, tigerbench.Options{}); err == nil || !strings.Contains(err.Error(), "--allow-cluster-changes") {
		t.Fatalf("reconfiguration without --allow-cluster-changes: %v", err)
	}

	// Interrupt the run while the test measures: the settings must be back at once.
	ictx, icancel := context.WithCancel(ctx)
	changed := make(chan map[string]any, 1)
	go func() {
		_ = wait.PollUntilContextCancel(ictx, 200*time.Millisecond, true, func(context.Context) (bool, error) {
			u, err := c.dyn.Resource(tigerbench.GVRIPPool).Get(ctx, "default-ipv4-ippool", metav1.GetOptions{})
			if err == nil && u.Object["spec"].(map[string]any)["ipipMode"] == "Always" {
				inst, _ := c.dyn.Resource(tigerbench.GVRInstallation).Get(ctx, "default", metav1.GetOptions{})
				changed <- inst.Object["spec"].(map[string]any)
				time.Sleep(3 * time.Second) // let the test start measuring
				icancel()
				return true, nil
			}
			return false, nil
		})
	}()
	run, err := tbRun(ictx, t, c, yaml, tigerbench.Options{AllowClusterChanges: true})
	icancel()
	if err == nil || !run.Interrupted {
		t.Errorf("interrupted run: err %v interrupted %v", err, run.Interrupted)
	}
	select {
	case inst := <-changed:
		cn := inst["calicoNetwork"].(map[string]any)
		if cn["linuxDataplane"] != "BPF" || cn["ipPools"].([]any)[0].(map[string]any)["encapsulation"] != "IPIP" {
			t.Errorf("during the test the Installation was %v", inst)
		}
	default:
		t.Error("the IPPool never showed ipipMode Always during the test")
	}
	if got := tbSpec(t, c, tigerbench.GVRInstallation, "default"); fmt.Sprint(got) != fmt.Sprint(origInst) {
		t.Errorf("Installation not restored after the interruption:\n got %v\nwant %v", got, origInst)
	}
	if got := tbSpec(t, c, tigerbench.GVRIPPool, "default-ipv4-ippool"); fmt.Sprint(got) != fmt.Sprint(origPool) {
		t.Errorf("IPPool not restored after the interruption:\n got %v\nwant %v", got, origPool)
	}
	if len(run.TigerBench) == 1 {
		ch := run.TigerBench[0].Calico
		if ch == nil || ch.PreviousEncap != "VXLANCrossSubnet" || len(ch.Changes) == 0 {
			t.Errorf("calico change record %+v", ch)
		}
	}
	if run.Cluster == nil || run.Cluster.Calico == nil || run.Cluster.Calico.Version != "v3.30.2" || run.Cluster.Calico.ClusterType == "" {
		t.Errorf("cluster details lack Calico: %+v", run.Cluster)
	}
	tbNamespaceGone(ctx, t, c.cs, ns)
}

// TestTigerBenchSeedExample runs seed 001's example testconfig.yaml (its external host replaced
// by node1's address behind a NodePort, namespaces made unique, durations shortened for CI) and
// checks the results.json structure of the seed's examples, with real numbers, and the JUnit.
func TestTigerBenchSeedExample(t *testing.T) {
	c := tbClusterFromEnv(t)
	tbNeedAgent(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	tbInstallCalico(ctx, t, c)
	ns1, ns2 := kpNamespace("tb-seed"), kpNamespace("tb-seed2")
	nodeIPs := kpNodeIPs(ctx, t, c.cs)
	extIP := nodeIPs["node1"]
	if extIP == "" {
		t.Fatalf("no node1 address: %v", nodeIPs)
	}
	// What exposes the qperf server pods to the outside, as the seed's external_service_example.yaml.
	if _, err := c.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns1}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kube.DeleteNamespace(context.Background(), c.cs, ns1, true) })
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "qperf-external", Namespace: ns1},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort,
			Selector: map[string]string{kube.LabelRole: "server", kube.LabelDriver: "qperf"},
			Ports: []corev1.ServicePort{
				{Name: "control", Port: 32000, TargetPort: intstr.FromInt32(32000), NodePort: 32000, Protocol: corev1.ProtocolTCP},
				{Name: "test", Port: 32221, TargetPort: intstr.FromInt32(32221), NodePort: 32221, Protocol: corev1.ProtocolTCP},
			}}}
	if _, err := c.cs.CoreV1().Services(ns1).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	yaml := fmt.Sprintf(`- testKind: thruput-latency
  numPolicies: 5
  numServices: 10
  numPods: 7
  duration: 5
  hostNetwork: false
  iterations: 1
  leaveStandingConfig: true
  testNamespace: %[1]s
  Perf:
    direct: true
    service: true
    external: true
    ControlPort: 32000
    TestPort: 32221
    ExternalIPOrFQDN: "%[3]s"
- testKind: thruput-latency
  numPolicies: 20
  numServices: 3
  numPods: 9
  duration: 4
  hostNetwork: true
  encap: none
  dataplane: bpf
  iterations: 1
  leaveStandingConfig: true
  testNamespace: %[1]s
- testKind: ttfr
  numPolicies: 100
  numServices: 10
  numPods: 7
  duration: 15
  hostNetwork: false
  iterations: 1
  leaveStandingConfig: false
  TestNamespace: %[2]s
  TTFRConfig:
    TestPodsPerNode: 53
    Rate: 2.5
`, ns1, ns2, extIP)
	run, err := tbRun(ctx, t, c, yaml, tigerbench.Options{AllowClusterChanges: true})
	if err != nil {
		t.Errorf("run: %v", err)
	}
	out := tbEncode(t, tbreport.Format, run)
	t.Logf("results.json:\n%s", out)
	if dir := os.Getenv("CNPERF_E2E_ARTIFACTS"); dir != "" {
		_ = os.WriteFile(dir+"/tiger-bench-results.json", out, 0o644)
	}
	var got []map[string]json.RawMessage
	if err := json.Unmarshal(out, &got); err != nil || len(got) != 3 {
		t.Fatalf("results.json: %v, %d elements", err, len(got))
	}
	for i, want := range [][]string{{"config", "ClusterDetails", "thruput-latency"}, {"config", "ClusterDetails", "thruput-latency"}, {"config", "ClusterDetails", "ttfr"}} {
		for _, k := range want {
			if _, ok := got[i][k]; !ok {
				t.Errorf("element %d lacks %q", i, k)
			}
		}
	}
	var tl1, tl2 tbreport.ThruputLatency
	_ = json.Unmarshal(got[0]["thruput-latency"], &tl1)
	_ = json.Unmarshal(got[1]["thruput-latency"], &tl2)
	for name, s := range map[string]tbreport.Summary{
		"1 latency pod-pod": tl1.Latency.Direct, "1 latency pod-svc-pod": tl1.Latency.Service, "1 latency ext-svc-pod": tl1.Latency.External,
		"1 throughput pod-pod": tl1.Throughput.Direct, "1 throughput pod-svc-pod": tl1.Throughput.Service, "1 throughput ext-svc-pod": tl1.Throughput.External,
		"2 latency pod-pod": tl2.Latency.Direct, "2 throughput pod-pod": tl2.Throughput.Direct,
	} {
		if s.Datapoints != 1 || s.Avg <= 0 || s.Unit == "" {
			t.Errorf("test %s: %+v", name, s)
		}
	}
	var cd tbreport.ClusterDetails
	_ = json.Unmarshal(got[0]["ClusterDetails"], &cd)
	if cd.NumNodes < 2 || cd.K8SVersion == "" || cd.Product != "calico" || cd.CalicoVersion != "v3.30.2" || cd.Provisioner != "kubeadm" {
		t.Errorf("ClusterDetails %+v", cd)
	}
	var doc junit.TestSuites
	if err := xml.Unmarshal(tbEncode(t, junit.Format, run), &doc); err != nil || doc.Tests < 10 {
		t.Errorf("junit: %v, %d tests", err, doc.Tests)
	}
	// Standing config kept for the first two tests, removed with the third's namespace.
	counts, err := (&tigerbench.Standing{Client: c.cs}).Count(ctx, ns1)
	if err != nil || counts.Pods != 9 || counts.Policies != 20 || counts.Services != 3 {
		t.Errorf("kept standing config in %s: %+v %v", ns1, counts, err)
	}
	tbNamespaceGone(ctx, t, c.cs, ns2)
	if got := tbSpec(t, c, tigerbench.GVRIPPool, "default-ipv4-ippool"); got["vxlanMode"] != "CrossSubnet" {
		t.Errorf("IPPool not restored: %v", got)
	}
}

// TestTigerBenchCalicoLive: tiger-bench's Calico reconfiguration against the harness's real
// Calico (make e2e CNI=calico: calico-node as processes, no tigera-operator, so the manifest
// path: IPPools and FelixConfiguration "default"). Test 1 switches the encapsulation off
// (encap: none) and measures host-host (hostNetwork: the pod network has no route between the
// nodes without VXLAN, as this Calico runs no BGP); felix exits on the change and is restarted
// by the harness, as calico/node's runit does. Test 2 asks for vxlan with dataplane iptables
// and measures pod-pod across the nodes, which works only once felix has put VXLAN back. At
// the end every IPPool and the FelixConfiguration are as they were.
func TestTigerBenchCalicoLive(t *testing.T) {
	c := tbClusterFromEnv(t)
	if os.Getenv("CNPERF_E2E_CNI") != "calico" {
		t.Skip("needs the harness's real Calico (make e2e CNI=calico)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	pools := func() string {
		l, err := c.dyn.Resource(tigerbench.GVRIPPool).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, p := range l.Items {
			fmt.Fprintf(&b, "%s %v\n", p.GetName(), p.Object["spec"])
		}
		return b.String()
	}
	origPools, origFelix := pools(), tbSpec(t, c, tigerbench.GVRFelixConfiguration, "default")
	ns1, ns2 := kpNamespace("tb-live"), kpNamespace("tb-live")
	yaml := fmt.Sprintf(`- testKind: thruput-latency
  encap: none
  hostNetwork: true
  duration: 2
  iterations: 1
  testNamespace: %s
  Perf: {direct: true, service: false, external: false}
- testKind: thruput-latency
  encap: vxlan
  dataplane: iptables
  duration: 2
  iterations: 1
  testNamespace: %s
  Perf: {direct: true, service: false, external: false}
`, ns1, ns2)
	run, err := tbRun(ctx, t, c, yaml, tigerbench.Options{AllowClusterChanges: true})
	if err != nil {
		t.Errorf("run: %v", err)
	}
	if len(run.TigerBench) != 2 {
		t.Fatalf("%d tiger-bench tests in the run, want 2", len(run.TigerBench))
	}
	for i, want := range []string{"vxlanMode Always -> Never", "vxlanMode Never -> Always"} {
		tb := run.TigerBench[i]
		if tb.Calico == nil || tb.Calico.PreviousEncap != "VXLAN" || !strings.Contains(strings.Join(tb.Calico.Changes, "; "), want) {
			t.Errorf("test %d: calico change record %+v, want %q and previous encapsulation VXLAN", i+1, tb.Calico, want)
		} else {
			t.Logf("test %d: changes %q", i+1, tb.Calico.Changes)
		}
	}
	for _, r := range run.Results {
		t.Logf("%s %s %s: error %q, %d/%d samples failed", r.Profile, r.Driver, r.Path, r.Error, r.Summary.SamplesFailed, r.Summary.SamplesTotal)
		if r.Failed() {
			t.Errorf("%s %s on %s failed: %s", r.Profile, r.Path, r.Driver, r.Error)
		}
	}
	if got := pools(); got != origPools {
		t.Errorf("IPPools not restored:\n got %s\nwant %s", got, origPools)
	}
	if got := tbSpec(t, c, tigerbench.GVRFelixConfiguration, "default"); fmt.Sprint(got) != fmt.Sprint(origFelix) {
		t.Errorf("FelixConfiguration not restored:\n got %v\nwant %v", got, origFelix)
	}
	if cd := run.Cluster; cd == nil || cd.Calico == nil || cd.Calico.Version != "v3.28.4-11-ga0db560f0520" || cd.Calico.Encapsulation != "VXLAN" {
		t.Errorf("cluster details: %+v", cd)
	}
	tbNamespaceGone(ctx, t, c.cs, ns1)
	tbNamespaceGone(ctx, t, c.cs, ns2)
}
