//go:build e2e

// k8s-netperf's --udnl2, --udnl3, --cudn, --localnet and --sriov on a cluster without
// OVN-Kubernetes or the SR-IOV Network Operator: the objects cnperf builds for them are accepted by
// those projects' real CRDs (testdata/crds, installed for the test and removed after it), a
// wrong field is refused by the same CRDs, and a run with each flag stops before creating anything
// (exit status 2), naming what the cluster lacks — also with the CRDs installed, since CRDs alone
// are not OVN-Kubernetes.
package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"

	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/text"
)

const crdPath = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"

// nmInstallCRDs installs the CRDs of testdata/crds that the cluster does not have and removes
// them when the test ends (a CRD that was there before is the cluster's: used, never removed).
func nmInstallCRDs(ctx context.Context, t *testing.T, cl kpCluster) {
	t.Helper()
	files, err := filepath.Glob("testdata/crds/*.yaml")
	if err != nil || len(files) != 6 {
		t.Fatalf("testdata/crds: %v (%d files, want 6)", err, len(files))
	}
	rc := cl.cs.CoreV1().RESTClient()
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		body, err := yaml.YAMLToJSON(raw)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		var crd struct {
			Metadata struct{ Name string } `json:"metadata"`
		}
		if err := json.Unmarshal(body, &crd); err != nil || crd.Metadata.Name == "" {
			t.Fatalf("%s: no CRD name (%v)", f, err)
		}
		name := crd.Metadata.Name
		if _, err := rc.Get().AbsPath(crdPath, name).DoRaw(ctx); err == nil {
			t.Logf("CRD %s is the cluster's already: used, not removed", name)
			continue
		}
		if _, err := rc.Post().AbsPath(crdPath).SetHeader("Content-Type", "application/json").Body(body).DoRaw(ctx); err != nil {
			t.Fatalf("install CRD %s: %v", name, err)
		}
		t.Cleanup(func() {
			dctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if _, err := rc.Delete().AbsPath(crdPath, name).DoRaw(dctx); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("remove CRD %s: %v", name, err)
			}
			if err := wait.PollUntilContextCancel(dctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
				_, err := rc.Get().AbsPath(crdPath, name).DoRaw(ctx)
				return apierrors.IsNotFound(err), nil
			}); err != nil {
				t.Errorf("CRD %s still there a minute after its deletion", name)
			}
		})
		// served once Established
		if err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			raw, err := rc.Get().AbsPath(crdPath, name).DoRaw(ctx)
			if err != nil {
				return false, nil
			}
			var st struct {
				Status struct {
					Conditions []struct{ Type, Status string } `json:"conditions"`
				} `json:"status"`
			}
			_ = json.Unmarshal(raw, &st)
			for _, c := range st.Status.Conditions {
				if c.Type == "Established" && c.Status == "True" {
					return true, nil
				}
			}
			return false, nil
		}); err != nil {
			t.Fatalf("CRD %s not Established in a minute", name)
		}
		t.Logf("installed CRD %s (%s)", name, filepath.Base(f))
	}
}

// nmDryRunCreate submits o with server-side dry-run (validated by the CRD's schema and its CEL
// rules, stored nowhere) and strict field validation (an unknown field is an error, not dropped).
// A refusal comes back as the API's Status: its reason (e.g. Invalid) and message.
func nmDryRunCreate(ctx context.Context, cl kpCluster, o kube.NetworkObject) (reason string, err error) {
	body, err := json.Marshal(o.Object)
	if err != nil {
		return "", err
	}
	raw, err := cl.cs.CoreV1().RESTClient().Post().AbsPath(o.Path()).Param("dryRun", "All").Param("fieldValidation", "Strict").
		SetHeader("Content-Type", "application/json").Body(body).DoRaw(ctx)
	if err == nil {
		return "", nil
	}
	var st metav1.Status
	if json.Unmarshal(raw, &st) == nil && st.Kind == "Status" {
		return string(st.Reason), fmt.Errorf("%s (%d %s)", st.Message, st.Code, st.Reason)
	}
	return "", err
}

// nmNamespace creates namespace name (labelled as the test's) unless it exists, and deletes it
// at the end when it created it.
func nmNamespace(ctx context.Context, t *testing.T, cl kpCluster, name string) {
	t.Helper()
	if _, err := cl.cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{}); err == nil {
		return
	}
	_, err := cl.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name,
		Labels: map[string]string{"cnperf.dev/e2e-test": "netmodes"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = cl.cs.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}

// nmModes are the modes under test, as the run command's flags make them.
var nmModes = []struct {
	args []string
	mode kube.NetworkMode
}{
	{[]string{"--udnl2"}, kube.NetworkMode{Flag: "--udnl2", Kind: kube.ModeUDN, Topology: "Layer2"}},
	{[]string{"--udnl3"}, kube.NetworkMode{Flag: "--udnl3", Kind: kube.ModeUDN, Topology: "Layer3"}},
	{[]string{"--cudn", "layer2"}, kube.NetworkMode{Flag: "--cudn layer2", Kind: kube.ModeCUDN, Topology: "Layer2"}},
	{[]string{"--cudn", "layer3"}, kube.NetworkMode{Flag: "--cudn layer3", Kind: kube.ModeCUDN, Topology: "Layer3"}},
	{[]string{"--localnet", "physnet"}, kube.NetworkMode{Flag: "--localnet physnet", Kind: kube.ModeLocalnet, PhysicalNetwork: "physnet"}},
	{[]string{"--sriov", "ens1f0"}, kube.NetworkMode{Flag: "--sriov ens1f0", Kind: kube.ModeSRIOV, PF: "ens1f0", NodeRole: "worker"}},
}

// nmBreak makes o invalid for its CRD's schema: a value outside an enum or a range.
func nmBreak(o kube.NetworkObject) (kube.NetworkObject, string) {
	b, _ := json.Marshal(o.Object)
	var obj map[string]any
	_ = json.Unmarshal(b, &obj)
	spec := obj["spec"].(map[string]any)
	what := ""
	switch o.Kind() {
	case "UserDefinedNetwork":
		spec["topology"], what = "Layer4", "spec.topology"
	case "ClusterUserDefinedNetwork":
		spec["network"].(map[string]any)["topology"], what = "Layer4", "spec.network.topology"
	case "SriovNetworkNodePolicy":
		spec["deviceType"], what = "virtio", "spec.deviceType"
	case "SriovNetwork":
		spec["vlan"], what = 5000, "spec.vlan"
	}
	o.Object = obj
	return o, what
}

func TestK8sNetperfNetworkObjectsAgainstCRDs(t *testing.T) {
	cl := kpClusterFromEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	id := uuid.NewString()[:6]
	runNS := "crd-netmodes-" + id // never created: the runs must stop before anything is

	// 1. without the CRDs (unless the cluster has them): each flag stops the run, naming what is missing
	_, err := cl.cs.Discovery().ServerResourcesForGroupVersion("k8s.ovn.org/v1")
	hadOVNCRDs := err == nil
	runMode := func(args []string) (string, int) {
		a := append([]string{"run", "--platform", "kube", "--kubeconfig", cl.kubeconfig, "-n", runNS, "--driver", "native",
			"--profile", "TCP_STREAM", "--path", "pod-pod-cross-node", "--duration", "1s", "--samples", "1"}, args...)
		_, stderr, code := kpRunCLI(ctx, a...)
		return stderr, code
	}
	checkNothingCreated := func(label string) {
		if _, err := cl.cs.CoreV1().Namespaces().Get(ctx, runNS, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s: namespace %s exists after a refused run (err %v)", label, runNS, err)
		}
	}
	if !hadOVNCRDs {
		stderr, code := runMode([]string{"--udnl2"})
		t.Logf("--udnl2 without the CRDs: exit %d, stderr:\n%s", code, stderr)
		if code != exit.BadInput || !text.ContainsFolded(stderr, "the CRD userdefinednetworks.k8s.ovn.org is not installed") {
			t.Errorf("--udnl2 without the CRD: exit %d, want %d naming the CRD", code, exit.BadInput)
		}
		checkNothingCreated("--udnl2 without the CRDs")
	}

	// 2. the CRDs installed: cnperf's objects are accepted, a wrong field is refused
	nmInstallCRDs(ctx, t, cl)
	nmNamespace(ctx, t, cl, kube.SRIOVOperatorNamespace)
	objNS := "crd-netmodes-objs-" + id
	nmNamespace(ctx, t, cl, objNS)
	for _, m := range nmModes {
		objs, err := m.mode.Objects(objNS, "e2e-"+id)
		if err != nil {
			t.Fatalf("%s: %v", m.mode.Flag, err)
		}
		for _, o := range objs {
			if _, err := nmDryRunCreate(ctx, cl, o); err != nil {
				t.Errorf("%s: %s refused by its CRD: %v", m.mode.Flag, o, err)
			} else {
				t.Logf("%s: %s accepted (server-side dry-run, strict field validation)", m.mode.Flag, o)
			}
			bad, what := nmBreak(o)
			reason, err := nmDryRunCreate(ctx, cl, bad)
			if reason != string(metav1.StatusReasonInvalid) || !strings.Contains(err.Error(), what) {
				t.Errorf("%s: %s with a wrong %s: %v, want it refused as invalid", m.mode.Flag, o, what, err)
			} else {
				t.Logf("%s: %s with a wrong %s refused: %v", m.mode.Flag, o, what, err)
			}
		}
	}

	// 3. the CRDs alone are not OVN-Kubernetes nor the SR-IOV operator: every flag still stops the
	// run before anything is created, naming the missing agents
	for _, m := range nmModes {
		stderr, code := runMode(m.args)
		t.Logf("%s with the CRDs: exit %d, stderr:\n%s", m.mode.Flag, code, stderr)
		if code != exit.BadInput {
			t.Errorf("%s: exit %d, want %d", m.mode.Flag, code, exit.BadInput)
		}
		if text.ContainsFolded(stderr, ".k8s.ovn.org is not installed") || text.ContainsFolded(stderr, ".sriovnetwork.openshift.io is not installed") {
			t.Errorf("%s: says a CRD is missing, but they are installed", m.mode.Flag)
		}
		want := []string{"stopped before anything was created", "no pod labelled app=ovnkube-node", "k8s.ovn.org/node-subnets"}
		if m.mode.Kind == kube.ModeSRIOV {
			want = []string{"stopped before anything was created", "the SR-IOV Network Operator is not running",
				"no SriovOperatorConfig openshift-sriov-network-operator/default", `reports no SR-IOV PF "ens1f0"`}
		}
		for _, w := range want {
			if !text.ContainsFolded(stderr, w) {
				t.Errorf("%s: stderr does not say %q", m.mode.Flag, w)
			}
		}
		checkNothingCreated(m.mode.Flag)
	}
	t.Logf("took %.1fs", time.Since(start).Seconds())
}
