package cleanupcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/iostreams"
	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/kube/kubetest"
	"github.com/cnperf/cnperf/internal/tigerbench"
)

func TestBadKubeconfigIsUsageError(t *testing.T) {
	var out, errb bytes.Buffer
	cmd := NewCommand(iostreams.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errb})
	missing := filepath.Join(t.TempDir(), "missing")
	cmd.SetArgs([]string{"--kubeconfig", missing, "--run", "x"})
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	err := cmd.ExecuteContext(context.Background())
	if exit.Code(err) != exit.BadInput || !strings.Contains(err.Error(), missing) {
		t.Errorf("err = %v (exit %d), want a usage error naming the file", err, exit.Code(err))
	}
	if out.Len() != 0 {
		t.Errorf("stdout %q", out.String())
	}
}

func TestFlags(t *testing.T) {
	cmd := NewCommand(iostreams.Streams{})
	for _, f := range []string{"kubeconfig", "context", "run", "namespace", "dry-run", "no-wait", "timeout"} {
		if cmd.Flags().Lookup(f) == nil {
			t.Errorf("no --%s", f)
		}
	}
	if cmd.Flags().ShorthandLookup("n") == nil {
		t.Error("no -n")
	}
}

// A fake API server holds the cluster state below (the rules are about which objects exist
// and what their Leases say; the real thing is exercised in test/e2e/kube_cleanup_test.go).
func TestCleanupRemovesOnlyAbandonedRuns(t *testing.T) {
	now := time.Now()
	lease := func(ns, run string, renewed time.Time, keep bool) *coordinationv1.Lease {
		secs := int32(30)
		holder := "laptop/4242"
		rt := metav1.NewMicroTime(renewed)
		l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: kube.LeaseName(run), Namespace: ns,
			Labels: map[string]string{kube.LabelManagedBy: kube.ManagedByValue, kube.LabelRun: run}},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &secs, RenewTime: &rt}}
		if keep {
			l.Annotations = map[string]string{kube.AnnotationKeep: "true"}
		}
		return l
	}
	runNS := func(name, run string) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{kube.LabelManagedBy: kube.ManagedByValue, kube.LabelRun: run}}}
	}
	pod := func(ns, name, run string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{kube.LabelManagedBy: kube.ManagedByValue, kube.LabelRun: run}}}
	}
	state := func() *fake.Clientset {
		return fake.NewSimpleClientset(
			runNS("live", "run-live"), lease("live", "run-live", now.Add(-5*time.Second), false), pod("live", "srv", "run-live"),
			runNS("dead", "run-dead"), lease("dead", "run-dead", now.Add(-2*time.Minute), false), pod("dead", "srv", "run-dead"),
			runNS("kept", "run-kept"), lease("kept", "run-kept", now.Add(-time.Hour), true),
			runNS("nolease", "run-nolease"),
			// standing config of cnperf load, in a namespace it created
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "standing", Labels: map[string]string{kube.LabelManagedBy: kube.ManagedByValue,
				tigerbench.LabelStanding: "namespace", tigerbench.LabelStandingNamespace: "true"}}},
			// someone else's namespace that carries cnperf's label
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team", Labels: map[string]string{kube.LabelManagedBy: kube.ManagedByValue}}},
			// the dead run's pod in the team's namespace, and the live run's
			pod("team", "dead-client", "run-dead"), pod("team", "live-client", "run-live"),
		)
	}
	// NetworkAttachmentDefinitions: the ones --macvlan made (labelled with their run), and the
	// team's own of the same name, without cnperf's labels, which cleanup never lists
	nadBody := func(ns, run string) []byte {
		md := map[string]any{"name": kube.MacvlanDefinitionName, "namespace": ns}
		if run != "" {
			md["labels"] = map[string]string{kube.LabelManagedBy: kube.ManagedByValue, kube.LabelRun: run}
		}
		b, _ := json.Marshal(map[string]any{"apiVersion": "k8s.cni.cncf.io/v1", "kind": "NetworkAttachmentDefinition", "metadata": md,
			"spec": map[string]string{"config": kubetest.K8sNetperfMacvlanConfig}})
		return b
	}
	nads := &kubetest.NADs{Objs: map[string][]byte{
		"perf/macvlan-netperf": nadBody("perf", "run-dead"), "shared/macvlan-netperf": nadBody("shared", "run-live"),
		"team/macvlan-netperf": nadBody("team", ""), "dead/macvlan-netperf": nadBody("dead", "run-dead"),
	}}
	nadExists := func(key string) bool {
		_, err := nads.Get(context.Background(), strings.Split(key, "/")[0], strings.Split(key, "/")[1])
		return err == nil
	}
	// the objects of k8s-netperf's network modes: an abandoned run's ClusterUserDefinedNetwork,
	// a live run's SriovNetwork
	objs := &kubetest.Objects{}
	for _, m := range []struct {
		mode kube.NetworkMode
		run  string
	}{{kube.NetworkMode{Flag: "--cudn layer2", Kind: kube.ModeCUDN, Topology: "Layer2"}, "run-dead"},
		{kube.NetworkMode{Flag: "--sriov ens1f0", Kind: kube.ModeSRIOV, PF: "ens1f0"}, "run-live"}} {
		os, err := m.mode.Objects("perf", m.run)
		if err != nil {
			t.Fatal(err)
		}
		if err := kube.CreateModeObjects(context.Background(), objs, os[len(os)-1:], func(kube.NetworkObject) {}); err != nil {
			t.Fatal(err)
		}
	}
	const cudnPath = "/apis/k8s.ovn.org/v1/clusteruserdefinednetworks/cudn-secondary-netperf"
	const sriovPath = "/apis/sriovnetwork.openshift.io/v1/namespaces/openshift-sriov-network-operator/sriovnetworks/sriov-netperf"
	objExists := func(p string) bool { _, err := objs.Get(context.Background(), p); return err == nil }
	run := func(cs *fake.Clientset, o Options) string {
		o.nads, o.objects = nads, objs
		var out, errb bytes.Buffer
		if err := o.run(context.Background(), cs, iostreams.Streams{Out: &out, ErrOut: &errb}); err != nil {
			t.Fatalf("%v\n%s", err, errb.String())
		}
		return out.String()
	}
	exists := func(cs *fake.Clientset, ns, podName string) bool {
		if podName == "" {
			_, err := cs.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{})
			return err == nil
		}
		_, err := cs.CoreV1().Pods(ns).Get(context.Background(), podName, metav1.GetOptions{})
		return err == nil
	}

	cs := state()
	out := run(cs, Options{DryRun: true})
	t.Logf("cnperf cleanup --dry-run:\n%s", out)
	for _, want := range []string{
		"would remove Namespace dead (run run-dead): run abandoned: lease dead/" + kube.LeaseName("run-dead") + " (held by laptop/4242) expired",
		"would remove Pod team/dead-client (run run-dead): run abandoned",
		"kept Namespace live (run run-live): run alive: lease live/" + kube.LeaseName("run-live") + " renewed by laptop/4242",
		"kept Pod team/live-client (run run-live): run alive",
		"kept Namespace kept (run run-kept): kept on purpose (--keep",
		"kept Namespace nolease (run run-nolease): no Lease proves run run-nolease abandoned (name it with --run run-nolease)",
		"kept Namespace standing: standing config: removed only when named (cnperf cleanup --standing standing",
		"kept Namespace team: not created by cnperf: never deleted",
		"would remove NetworkAttachmentDefinition perf/macvlan-netperf (run run-dead): run abandoned",
		"kept NetworkAttachmentDefinition shared/macvlan-netperf (run run-live): run alive",
		"would remove ClusterUserDefinedNetwork cudn-secondary-netperf (run run-dead): run abandoned",
		"kept SriovNetwork openshift-sriov-network-operator/sriov-netperf (run run-live): run alive",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run lacks %q", want)
		}
	}
	for _, never := range []string{"team/macvlan-netperf", "dead/macvlan-netperf"} { // not cnperf's; goes with its namespace
		if strings.Contains(out, never) {
			t.Errorf("the dry run lists NetworkAttachmentDefinition %s", never)
		}
	}
	if !exists(cs, "dead", "") || !exists(cs, "team", "dead-client") || len(nads.Deleted) > 0 {
		t.Fatal("--dry-run removed something")
	}

	run(cs, Options{NoWait: true})
	for _, gone := range [][2]string{{"dead", ""}, {"team", "dead-client"}} {
		if exists(cs, gone[0], gone[1]) {
			t.Errorf("%v survived cleanup", gone)
		}
	}
	if nadExists("perf/macvlan-netperf") {
		t.Error("the abandoned run's NetworkAttachmentDefinition survived cleanup")
	}
	if !nadExists("team/macvlan-netperf") || !nadExists("shared/macvlan-netperf") {
		t.Errorf("removed a NetworkAttachmentDefinition that is not an abandoned run's (deleted: %v)", nads.Deleted)
	}
	if objExists(cudnPath) || !objExists(sriovPath) {
		t.Errorf("network modes' objects deleted %v, want the abandoned run's ClusterUserDefinedNetwork only", objs.Deleted)
	}
	for _, kept := range [][2]string{{"live", ""}, {"live", "srv"}, {"team", "live-client"}, {"kept", ""}, {"nolease", ""}, {"standing", ""}, {"team", ""}} {
		if !exists(cs, kept[0], kept[1]) {
			t.Errorf("%v removed, but it is not provably abandoned", kept)
		}
	}

	// named, they go
	run(cs, Options{RunID: "run-kept", NoWait: true})
	run(cs, Options{RunID: "run-live", NoWait: true})
	if exists(cs, "kept", "") || exists(cs, "live", "") || exists(cs, "team", "live-client") {
		t.Error("a run named with --run was not removed")
	}
	if !exists(cs, "team", "") {
		t.Error("the team's namespace was deleted")
	}
	if nadExists("shared/macvlan-netperf") || !nadExists("team/macvlan-netperf") {
		t.Errorf("--run run-live: NetworkAttachmentDefinitions deleted %v, want shared/macvlan-netperf and never the team's", nads.Deleted)
	}
	if objExists(sriovPath) {
		t.Error("--run run-live: its SriovNetwork was not removed")
	}
}
