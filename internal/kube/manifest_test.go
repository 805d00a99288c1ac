package kube

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/kubernetes/scheme"
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
		b, err := os.ReadFile(filepath.Join("..", "..", "deploy", "rbac", f))
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(b), "\n---\n") {
			obj, _, err := scheme.Codecs.UniversalDeserializer().Decode([]byte(doc), nil, nil)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
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
		{[]string{"tigerbench-load.yaml"}, slices.Concat(StandingAccess("testns", true), StandingRemoveAccess("testns", false),
			RunAccess("testns", true, true), TestPodAccess("testns", true))},
		{[]string{"calico.yaml"}, CalicoAccess()},
	} {
		g := readGrants(t, tc.files...)
		for _, a := range tc.needs {
			if !g.allows(a) {
				t.Errorf("%s does not grant %s", strings.Join(tc.files, "+"), a)
			}
		}
	}
	// and the check can fail: a permission no manifest grants
	if g := readGrants(t, "run.yaml"); g.allows(Access{Verb: "list", Resource: "secrets", Namespace: "cnperf"}) ||
		g.allows(Access{Verb: "get", Resource: "nodes", Subresource: "proxy"}) {
		t.Error("run.yaml grants listing Secrets or nodes/proxy")
	}
}
