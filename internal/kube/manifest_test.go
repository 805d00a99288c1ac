package kube

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/cnperf/cnperf/internal/config"
	"github.com/cnperf/cnperf/internal/plan"
)

// grants reads the Roles and ClusterRoles of deploy/rbac manifests: what each one allows.
type grants struct {
	cluster    []rbacv1.PolicyRule            // ClusterRoles: every namespace
	namespaced map[string][]rbacv1.PolicyRule // Roles, by namespace
}

func readGrants(t *testing.T, files ...string) grants {
	t.Helper()
	g := grants{namespaced: map[string][]rbacv1.PolicyRule{}}
	for _, f := range files {
		for _, obj := range readObjects(t, filepath.Join("..", "..", "deploy", "rbac", f)) {
			switch o := obj.(type) {
			case *rbacv1.ClusterRole:
				g.cluster = append(g.cluster, o.Rules...)
			case *rbacv1.Role:
				g.namespaced[o.Namespace] = append(g.namespaced[o.Namespace], o.Rules...)
			}
		}
	}
	return g
}

// readObjects decodes every document of a manifest file.
func readObjects(t *testing.T, path string) []runtime.Object {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []runtime.Object
	for _, doc := range strings.Split(string(b), "\n---\n") {
		onlyComments := true
		for _, l := range strings.Split(doc, "\n") {
			if l = strings.TrimSpace(l); l != "" && l != "---" && !strings.HasPrefix(l, "#") {
				onlyComments = false
			}
		}
		if onlyComments {
			continue // the generated file's header
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode([]byte(doc), nil, nil)
		if err != nil {
			t.Fatalf("%s: %v\n%s", path, err, doc)
		}
		out = append(out, obj)
	}
	return out
}

func (g grants) allows(a Access) bool {
	res := a.Resource
	if a.Subresource != "" {
		res += "/" + a.Subresource
	}
	match := func(rules []rbacv1.PolicyRule) bool {
		for _, r := range rules {
			if slices.Contains(r.APIGroups, a.Group) && slices.Contains(r.Resources, res) && slices.Contains(r.Verbs, a.Verb) &&
				(len(r.ResourceNames) == 0 || (a.Name != "" && slices.Contains(r.ResourceNames, a.Name))) {
				return true
			}
		}
		return false
	}
	return match(g.cluster) || (a.Namespace != "" && match(g.namespaced[a.Namespace]))
}

// Every permission a feature's preflight asks for is granted by the manifest the error names,
// in the namespace the manifest is written for — so a user bound to it passes the check. (The
// e2e tests prove run, mesh, tiger-bench and load on a real cluster; calico.yaml is checked
// only here: the e2e cluster's Calico is CRDs without an operator.)
func TestManifestsGrantThePreflight(t *testing.T) {
	for _, tc := range []struct {
		files []string
		needs []Access
	}{
		{[]string{"run.yaml"}, RunAccess("cnperf", true, true)},
		{[]string{"mesh.yaml"}, MeshAccess("cnperf", true)},
		{[]string{"programming.yaml"}, ProgrammingAccess("cnperf", true)},
		{[]string{"tigerbench-load.yaml"}, slices.Concat(StandingAccess("testns", true), StandingRemoveAccess("testns", false),
			RunAccess("testns", true, true), TestPodAccess("testns", true))},
		{[]string{"calico.yaml"}, CalicoAccess()},
		{[]string{"secondary-networks.yaml"}, slices.Concat(NetworkAccess("multus-e2e/e2e-bridge"), NetworkCreateAccess("cnperf"))},
		{[]string{"idle-footprint.yaml"}, FootprintAccess()},
		{[]string{"network-modes.yaml"}, slices.Concat(ModeAccess(NetworkMode{Kind: ModeUDN}, "cnperf"), ModeAccess(NetworkMode{Kind: ModeCUDN}, "cnperf"),
			ModeAccess(NetworkMode{Kind: ModeSRIOV}, "cnperf"))},
		{[]string{"vms.yaml"}, VMAccess("cnperf")},
	} {
		g := readGrants(t, tc.files...)
		for _, a := range tc.needs {
			if !g.allows(a) {
				t.Errorf("%s does not grant %s", strings.Join(tc.files, "+"), a)
			}
		}
	}
	// the KubeVirt resource (its useEmulation and featureGates) is listed cluster-wide
	if g := readGrants(t, "vms.yaml"); !g.allows(Access{Verb: "list", Group: KubeVirtGroup, Resource: "kubevirts"}) {
		t.Error("vms.yaml does not grant listing kubevirts.kubevirt.io at the cluster scope")
	}
	// and the check can fail: a permission no manifest grants
	if g := readGrants(t, "run.yaml"); g.allows(Access{Verb: "list", Resource: "secrets", Namespace: "cnperf"}) ||
		g.allows(Access{Verb: "get", Resource: "nodes", Subresource: "proxy"}) {
		t.Error("run.yaml grants listing Secrets or nodes/proxy")
	}
	// a run on the default network needs no right on secondary networks
	if g := readGrants(t, "run.yaml"); g.allows(NetworkAccess("multus-e2e/e2e-bridge")[0]) {
		t.Error("run.yaml grants reading NetworkAttachmentDefinitions: only secondary-networks.yaml should")
	}
	// the modes' objects only with network-modes.yaml; a UserDefinedNetwork in the run's namespace only
	if g := readGrants(t, "run.yaml", "secondary-networks.yaml"); g.allows(ModeAccess(NetworkMode{Kind: ModeCUDN}, "cnperf")[0]) {
		t.Error("run.yaml or secondary-networks.yaml grants creating ClusterUserDefinedNetworks: only network-modes.yaml should")
	}
	if g := readGrants(t, "network-modes.yaml"); g.allows(ModeAccess(NetworkMode{Kind: ModeUDN}, "default")[0]) {
		t.Error("network-modes.yaml grants creating UserDefinedNetworks outside the run's namespace cnperf")
	}
	// creating one is granted in the run's namespace only, not everywhere
	if g := readGrants(t, "secondary-networks.yaml"); g.allows(NetworkCreateAccess("default")[0]) {
		t.Error("secondary-networks.yaml grants creating NetworkAttachmentDefinitions outside the run's namespace cnperf")
	}
}

// The Helm chart's RBAC is deploy/rbac/run.yaml's, one source: deploy/manifests/cnperf.yaml
// (the chart's helm template, kept equal to the chart by make chart-check) must hold exactly
// run.yaml's rules (its ClusterRoles' and its Role's, in order), bound to the ServiceAccount
// its CronJob runs as, which then passes the run's preflight in its namespace. The CronJob
// never overlaps runs, cuts a run at its deadline and runs the ConfigMap's plan, which is a
// valid cnperf Plan.
func TestChartManifestIsRunYAML(t *testing.T) {
	type rbac struct {
		cluster, role [][]rbacv1.PolicyRule
		bound         map[string]string // role name -> subject "ns/name"
	}
	read := func(path string) (rbac, []runtime.Object) {
		var r rbac
		r.bound = map[string]string{}
		objs := readObjects(t, path)
		for _, obj := range objs {
			switch o := obj.(type) {
			case *rbacv1.ClusterRole:
				r.cluster = append(r.cluster, o.Rules)
			case *rbacv1.Role:
				r.role = append(r.role, o.Rules)
			case *rbacv1.ClusterRoleBinding:
				r.bound[o.RoleRef.Name] = o.Subjects[0].Namespace + "/" + o.Subjects[0].Name
			case *rbacv1.RoleBinding:
				r.bound[o.RoleRef.Name] = o.Subjects[0].Namespace + "/" + o.Subjects[0].Name
			}
		}
		return r, objs
	}
	manifest := filepath.Join("..", "..", "deploy", "manifests", "cnperf.yaml")
	want, _ := read(filepath.Join("..", "..", "deploy", "rbac", "run.yaml"))
	got, objs := read(manifest)
	if !reflect.DeepEqual(got.cluster, want.cluster) || !reflect.DeepEqual(got.role, want.role) {
		t.Errorf("the chart's rules differ from deploy/rbac/run.yaml's:\nchart ClusterRoles %v\nrun.yaml          %v\nchart Roles %v\nrun.yaml    %v",
			got.cluster, want.cluster, got.role, want.role)
	}
	var cj *batchv1.CronJob
	var cm *corev1.ConfigMap
	for _, obj := range objs {
		switch o := obj.(type) {
		case *batchv1.CronJob:
			cj = o
		case *corev1.ConfigMap:
			cm = o
		}
	}
	if cj == nil || cm == nil {
		t.Fatalf("%s has no CronJob or no ConfigMap", manifest)
	}
	sa := cj.Namespace + "/" + cj.Spec.JobTemplate.Spec.Template.Spec.ServiceAccountName
	if len(got.bound) != 3 {
		t.Errorf("bindings %v, want the three of run.yaml", got.bound)
	}
	for role, subject := range got.bound {
		if subject != sa {
			t.Errorf("%s is bound to %s, the CronJob runs as %s", role, subject, sa)
		}
	}
	g := grants{namespaced: map[string][]rbacv1.PolicyRule{}}
	for _, obj := range objs {
		switch o := obj.(type) {
		case *rbacv1.ClusterRole:
			g.cluster = append(g.cluster, o.Rules...)
		case *rbacv1.Role:
			g.namespaced[o.Namespace] = append(g.namespaced[o.Namespace], o.Rules...)
		}
	}
	for _, a := range RunAccess(cj.Namespace, true, true) {
		if !g.allows(a) {
			t.Errorf("the chart does not grant %s", a)
		}
	}

	js := cj.Spec.JobTemplate.Spec
	if cj.Spec.ConcurrencyPolicy != batchv1.ForbidConcurrent || cj.Spec.StartingDeadlineSeconds == nil ||
		js.ActiveDeadlineSeconds == nil || js.BackoffLimit == nil || *js.BackoffLimit != 0 {
		t.Errorf("CronJob: concurrencyPolicy %q, startingDeadlineSeconds %v, activeDeadlineSeconds %v, backoffLimit %v",
			cj.Spec.ConcurrencyPolicy, cj.Spec.StartingDeadlineSeconds, js.ActiveDeadlineSeconds, js.BackoffLimit)
	}
	c := js.Template.Spec.Containers[0]
	args := strings.Join(c.Args, " ")
	for _, want := range []string{"run --config=/etc/cnperf/plan.yaml --platform=kube --namespace=" + cj.Namespace, "--image=" + c.Image} {
		if !strings.Contains(args, want) {
			t.Errorf("CronJob args %q lack %q", args, want)
		}
	}
	loaded, err := config.LoadBytes("plan.yaml", []byte(cm.Data["plan.yaml"]))
	if err != nil {
		t.Fatalf("the chart's plan: %v", err)
	}
	cases, err := loaded.Expand(plan.Options{}, nil)
	if err != nil || len(cases) == 0 || loaded.Plan.Metadata.Name == "" {
		t.Errorf("the chart's plan: %d cases, name %q, %v", len(cases), loaded.Plan.Metadata.Name, err)
	}
}
