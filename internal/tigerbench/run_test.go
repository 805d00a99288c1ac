package tigerbench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/config"
	_ "github.com/cnperf/cnperf/internal/driver/all"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/kube/kubetest"
	kubeplatform "github.com/cnperf/cnperf/internal/platform/kube"
)

func readyNode(name string, labels map[string]string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
}

func load(t *testing.T, yaml string) *config.Loaded {
	t.Helper()
	l, err := config.LoadBytes("testconfig.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestRunRefusesClusterChangesWithoutFlag(t *testing.T) {
	cs := fake.NewClientset(readyNode("n1", nil))
	l := load(t, "- testKind: thruput-latency\n  duration: 1\n- testKind: ttfr\n  encap: vxlan\n  calicoNodeCPULimit: 500m\n")
	run := &api.Run{UUID: "1a2b3c4d-0000-0000-0000-000000000000", Timing: &api.Timing{}}
	err := Run(context.Background(), l, run, Deps{Client: cs, RunID: run.UUID})
	if run.Timing != nil {
		t.Errorf("timing %+v of a run refused before its tests, want none (not zeros)", run.Timing)
	}
	var ue *exit.UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "--allow-cluster-changes") ||
		!strings.Contains(err.Error(), "testconfig.yaml:3: test [1] (ttfr): encap vxlan, calicoNodeCPULimit 500m") {
		t.Fatalf("error %v", err)
	}
	if nss, _ := cs.CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{}); len(nss.Items) != 0 {
		t.Errorf("something was created before refusing: %v", nss.Items)
	}
}

// A ttfr test end to end on a fake cluster: test nodes by label, standing config created and
// (leaveStandingConfig false) removed with the namespace cnperf created, the TTFR pods run,
// and the record holds the config as tiger-bench writes it.
func TestRunTTFRTestWithStandingConfig(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool := map[string]string{"tigera.io/test-nodepool": "default-pool"}
	cs := kubetest.Authorize(fake.NewClientset(readyNode("n1", pool), readyNode("n2", pool), readyNode("n3", nil)))
	go markReady(ctx, cs, "testns2")
	k := &fakeKubelet{cs: cs, ns: "testns2", logs: map[string]string{}, result: func(string) string { return `{"ok":true,"ttfrSeconds":0.002}` }}
	k.run(ctx, t)
	l := load(t, `- testKind: ttfr
  numPolicies: 3
  numServices: 2
  numPods: 4
  duration: 1
  leaveStandingConfig: false
  TestNamespace: testns2
  TTFRConfig:
    TestPodsPerNode: 5
    Rate: 4
`)
	run := &api.Run{UUID: "1a2b3c4d-0000-0000-0000-000000000000", Timing: &api.Timing{}}
	var log bytes.Buffer
	updates := 0
	err := Run(ctx, l, run, Deps{Client: cs, RunID: run.UUID, Log: &log, Kube: kubeOpts(), OnUpdate: func() error { updates++; return nil }})
	// The fake clientset's logs say "fake logs": every pod is a failure, counted.
	var fe *exit.FailureError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "ttfr:") {
		t.Errorf("error %v, want the TTFR failures reported", err)
	}
	if len(run.TigerBench) != 1 {
		t.Fatalf("tests %+v", run.TigerBench)
	}
	rec := run.TigerBench[0]
	if rec.Kind != "ttfr" || rec.Group != "ttfr-1" || rec.Standing == nil || rec.Standing.Pods != 4 || rec.Standing.Services != 2 ||
		rec.Standing.Policies != 3 || rec.Standing.Kept || rec.Standing.Error != "" {
		t.Errorf("record %+v standing %+v", rec, rec.Standing)
	}
	if rec.TTFR == nil || rec.TTFR.PodsCreated == 0 || rec.TTFR.Failures != rec.TTFR.PodsCreated ||
		!strings.HasPrefix(rec.TTFR.FailureReasons[0].What, "no result line in the log") {
		t.Errorf("ttfr %+v", rec.TTFR)
	}
	if strings.Join(rec.TTFR.Nodes, ",") != "n1,n2" {
		t.Errorf("test nodes %v, want the labelled ones", rec.TTFR.Nodes)
	}
	var cfg map[string]any
	if err := json.Unmarshal(rec.Config, &cfg); err != nil || cfg["TestNamespace"] != "testns2" || cfg["TestKind"] != "ttfr" {
		t.Errorf("config %s: %v", rec.Config, err)
	}
	if _, err := cs.CoreV1().Namespaces().Get(ctx, "testns2", metav1.GetOptions{}); err == nil {
		t.Error("namespace cnperf created for the test was not removed (leaveStandingConfig false)")
	}
	if run.Cluster == nil || run.Cluster.NodeCount != 3 {
		t.Errorf("cluster %+v", run.Cluster)
	}
	if updates == 0 {
		t.Error("OnUpdate never called")
	}
	// the header asked for timing: measured, not zeros
	if tm := run.Timing; tm == nil || tm.SetupSeconds <= 0 || tm.MeasureSeconds <= 0 || tm.TeardownSeconds < 0 {
		t.Errorf("timing %+v, want set-up and measure times measured", run.Timing)
	}
}

func TestRunKeepsStandingConfig(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs := kubetest.Authorize(fake.NewClientset(readyNode("n1", nil)))
	go markReady(ctx, cs, "testns")
	// iterations 0: standing config only.
	l := load(t, "- testKind: iperf\n  iterations: 0\n  numPods: 2\n  numIdlePolicies: 4\n  leaveStandingConfig: true\n")
	run := &api.Run{UUID: "1a2b3c4d-0000-0000-0000-000000000000"}
	var log bytes.Buffer
	if err := Run(ctx, l, run, Deps{Client: cs, RunID: run.UUID, Log: &log, Kube: kubeOpts()}); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	rec := run.TigerBench[0]
	if !rec.Standing.Kept || rec.Standing.IdlePolicies != 4 || len(run.Results) != 0 {
		t.Errorf("%+v %+v", rec, rec.Standing)
	}
	if rec.EndTime.IsZero() || rec.EndTime.Before(rec.StartTime) {
		t.Errorf("test ran %v to %v, want an end after its start", rec.StartTime, rec.EndTime)
	}
	c, err := (&Standing{Client: cs}).Count(ctx, "testns")
	if err != nil || c.IdlePolicies != 4 {
		t.Errorf("kept standing config: %+v %v", c, err)
	}
	if !strings.Contains(log.String(), "no node is labelled tigera.io/test-nodepool=default-pool") ||
		!strings.Contains(log.String(), "cnperf load remove -n testns") {
		t.Errorf("log:\n%s", log.String())
	}
	if len(run.Notes) != 1 {
		t.Errorf("notes %q", run.Notes)
	}
}

func kubeOpts() (o kubeOptions) {
	o.Image = "img:v1"
	o.PodStartTimeout = 5 * time.Second
	return o
}

func TestEqualitySelector(t *testing.T) {
	if got := equalitySelector("a=b,c=d"); strings.Join(got, ";") != "a=b;c=d" {
		t.Errorf("%q", got)
	}
	for _, s := range []string{"a!=b", "a in (b)", "a==b", "a"} {
		if got := equalitySelector(s); got != nil {
			t.Errorf("%q: %q", s, got)
		}
	}
}

type kubeOptions = kubeplatform.Options

// With one permission missing, a tiger-bench run stops before creating anything (no namespace,
// no standing config, no Calico change) and names the permission and the manifest.
func TestRunPreflightNamesTheMissingPermission(t *testing.T) {
	file := "- testKind: thruput-latency\n  numPolicies: 2\n  duration: 1\n  iterations: 1\n  Perf: {direct: true, service: true}\n" +
		"- testKind: dnsperf\n  duration: 1\n  DNSPerf: {TargetURL: \"https://kubernetes.default.svc\"}\n  TestNamespace: dnsns\n" +
		"- testKind: ttfr\n  duration: 1\n  encap: vxlan\n  TestNamespace: ttfrns\n"
	for _, tc := range []struct{ deny, want, manifest string }{
		{"patch networkpolicies", "patch networkpolicies.networking.k8s.io in namespace testns", kube.TigerBenchManifest},
		{"create services", "create services in namespace testns", kube.TigerBenchManifest},
		{"create pods/exec", "create pods/exec in namespace testns", kube.TigerBenchManifest},
		{"get pods/log", "get pods/log in namespace dnsns", kube.TigerBenchManifest},
		{"create namespaces", "create namespaces (cluster-wide)", kube.TigerBenchManifest},
		{"update felixconfigurations", "update felixconfigurations.crd.projectcalico.org (cluster-wide)", kube.CalicoManifest},
	} {
		t.Run(tc.deny, func(t *testing.T) {
			cs := kubetest.Authorize(fake.NewClientset(readyNode("n1", nil), readyNode("n2", nil)), tc.deny)
			run := &api.Run{UUID: "1a2b3c4d-0000-0000-0000-000000000000"}
			err := Run(context.Background(), load(t, file), run, Deps{Client: cs, RunID: run.UUID, Kube: kubeOpts(),
				Options: Options{AllowClusterChanges: true}})
			var me *kube.MissingPermissionsError
			if !errors.As(err, &me) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.manifest) {
				t.Fatalf("err = %v, want a missing-permission error naming %q and %s", err, tc.want, tc.manifest)
			}
			t.Log(err)
			for _, a := range cs.Actions() {
				if v := a.GetVerb(); v != "get" && v != "list" && v != "watch" && a.GetResource().Resource != "selfsubjectaccessreviews" {
					t.Errorf("%s %s before the permission check failed", v, a.GetResource().Resource)
				}
			}
		})
	}
}

// TestSay: what a failed clean-up may have left goes to Deps.Say (the session's line that -q
// keeps) when it is set, and to Log only without it.
func TestSay(t *testing.T) {
	for _, withSay := range []bool{true, false} {
		var log, said bytes.Buffer
		deps := Deps{Log: &log}
		if withSay {
			deps.Say = func(_ context.Context, line string) { said.WriteString(line + "\n") }
		}
		r := &tbRun{deps: deps, log: &log}
		r.say(context.Background(), "cnperf: clean-up did not finish; x")
		got, other := &said, &log
		if !withSay {
			got, other = &log, &said
		}
		if got.String() != "cnperf: clean-up did not finish; x\n" || other.Len() != 0 {
			t.Errorf("Say set: %v: said %q, log %q", withSay, said.String(), log.String())
		}
	}
}

// TestDescribeSpellsTheClusterFamily: a run without a platform (its tests need no endpoint pods)
// takes the cluster's family from Calico's pools, in ClusterDetails.IPFamily's spelling
// ("dual-stack", as a run with a platform says it), while Calico's details keep "dual".
func TestDescribeSpellsTheClusterFamily(t *testing.T) {
	for _, tt := range []struct{ pools, cluster string }{
		{"dual", "dual-stack"},
		{"ipv6", "ipv6"},
		{"ipv4", "ipv4"},
	} {
		r := &tbRun{log: &bytes.Buffer{}, run: &api.Run{}, cs: fake.NewClientset(readyNode("n1", nil)),
			nodes: &TestNodes{Names: []string{"n1"}}, calicoFound: &api.CalicoDetails{Product: "calico", IPFamily: tt.pools}}
		r.describe(context.Background(), nil)
		if c := r.run.Cluster; c == nil || c.IPFamily != tt.cluster || c.Calico == nil || c.Calico.IPFamily != tt.pools {
			t.Errorf("pools %s: cluster %+v; want ipFamily %q and Calico's %q", tt.pools, c, tt.cluster, tt.pools)
		}
	}
}

// TestFailures: the exit error of a tiger-bench run names each failed test (number, kind, cause)
// and each failed case (number, profile, driver, path, group) with its error or how many of its
// samples failed.
func TestFailures(t *testing.T) {
	run := &api.Run{
		TigerBench: []api.TigerBenchTest{
			{Index: 0, Kind: "ttfr"},
			{Index: 1, Kind: "dnsperf", Error: "no DNS pod became ready"},
		},
		Results: []api.Result{
			{Profile: api.TCPStream, Driver: "iperf3", Path: api.PathPodPodCrossNode, Group: "thruput-latency 1",
				Summary: api.Summary{SamplesTotal: 2}},
			{Profile: api.TCPRR, Driver: "qperf", Path: api.PathPodPodCrossNode, Group: "thruput-latency 1",
				Summary: api.Summary{SamplesTotal: 3, SamplesFailed: 1}},
		},
	}
	want := "2 failures:\n  test 2 (dnsperf): no DNS pod became ready\n" +
		"  case 2 (TCP_RR qperf pod-pod-cross-node, thruput-latency 1): 1 of 3 samples failed"
	if err := failures(run); err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}
