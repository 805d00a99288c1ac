//go:build e2e

// End-to-end test of deploy/rbac/run.yaml: `cnperf run --platform kube` as a ServiceAccount
// bound only to that manifest (a token kubeconfig) works; with one verb taken away, cnperf
// stops before creating anything and names the missing permission.
package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/text"
)

// applyManifest creates the objects of a deploy/rbac manifest with its namespace from renamed
// to ns and its cluster-wide names suffixed, and returns a function that deletes them.
func applyManifest(t *testing.T, cs kubernetes.Interface, file, from, ns, suffix string) func() {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "deploy", "rbac", file))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	text = strings.ReplaceAll(text, "namespace: "+from+"\n", "namespace: "+ns+"\n")
	text = strings.ReplaceAll(text, "namespace: "+from+"}", "namespace: "+ns+"}")
	text = strings.ReplaceAll(text, "  name: "+from+"\n", "  name: "+ns+"\n")
	text = strings.ReplaceAll(text, "resourceNames: ["+from+"]", "resourceNames: ["+ns+"]")
	ctx := context.Background()
	var undo []func()
	for _, doc := range strings.Split(text, "\n---\n") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode([]byte(doc), nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		switch o := obj.(type) {
		case *corev1.Namespace:
			_, err = cs.CoreV1().Namespaces().Create(ctx, o, metav1.CreateOptions{})
			undo = append(undo, func() { _ = kube.DeleteNamespace(ctx, cs, o.Name, true) })
		case *corev1.ServiceAccount:
			_, err = cs.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.ClusterRole:
			o.Name += suffix
			_, err = cs.RbacV1().ClusterRoles().Create(ctx, o, metav1.CreateOptions{})
			undo = append(undo, func() { _ = cs.RbacV1().ClusterRoles().Delete(ctx, o.Name, metav1.DeleteOptions{}) })
		case *rbacv1.ClusterRoleBinding:
			o.Name += suffix
			o.RoleRef.Name += suffix
			_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{})
			undo = append(undo, func() { _ = cs.RbacV1().ClusterRoleBindings().Delete(ctx, o.Name, metav1.DeleteOptions{}) })
		case *rbacv1.Role:
			_, err = cs.RbacV1().Roles(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
			if o.Namespace != ns { // not deleted with the test's namespace
				undo = append(undo, func() { _ = cs.RbacV1().Roles(o.Namespace).Delete(ctx, o.Name, metav1.DeleteOptions{}) })
			}
		case *rbacv1.RoleBinding:
			_, err = cs.RbacV1().RoleBindings(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
			if o.Namespace != ns {
				undo = append(undo, func() { _ = cs.RbacV1().RoleBindings(o.Namespace).Delete(ctx, o.Name, metav1.DeleteOptions{}) })
			}
		default:
			t.Fatalf("%s: unexpected %T", file, obj)
		}
		if err != nil {
			t.Fatalf("%s: create %T: %v", file, obj, err)
		}
	}
	return func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
}

// tokenKubeconfig writes a kubeconfig that authenticates as the ServiceAccount ns/sa with a
// short-lived token, against the admin kubeconfig's cluster.
func tokenKubeconfig(t *testing.T, cs kubernetes.Interface, admin, ns, sa string) string {
	t.Helper()
	secs := int64(3600)
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(context.Background(), sa,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &secs}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.LoadFromFile(admin)
	if err != nil {
		t.Fatal(err)
	}
	cur := cfg.Contexts[cfg.CurrentContext]
	out := clientcmdapi.NewConfig()
	out.Clusters["e2e"] = cfg.Clusters[cur.Cluster]
	out.AuthInfos[sa] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	out.Contexts[sa] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: sa, Namespace: ns}
	out.CurrentContext = sa
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*out, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestKubeRBACRunManifest(t *testing.T) {
	cl := kpClusterFromEnv(t)
	ns := kpNamespace("cnperf-e2e-rbac")
	suffix := "-" + ns
	defer applyManifest(t, cl.cs, "run.yaml", "cnperf", ns, suffix)()
	kc := tokenKubeconfig(t, cl.cs, cl.kubeconfig, ns, "cnperf-runner")
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	run := func(runID string) (string, string, int) {
		return kpRunCLI(ctx, "run", "--platform", "kube", "--kubeconfig", kc, "-n", ns, "--uuid", runID,
			"--driver", "native", "--profile", "TCP_RR", "--path", "pod-pod-same-node,host-host,pod-clusterip",
			"--duration", "1s", "--samples", "1", "-o", "json", "--no-progress")
	}

	// bound only to run.yaml: the run works, and its pods get the agent token from its Secret
	token := e2eToken(t)
	runID := uuid.NewString()
	start := time.Now()
	w := watchToken(t, cl.cs, ns, token)
	out, stderr, code := run(runID)
	t.Logf("as %s/cnperf-runner (run.yaml only), %.1fs:\n%s", ns, time.Since(start).Seconds(), stderr)
	w.check(t, token, out, stderr)
	if code != exit.OK {
		t.Fatalf("run exited %d", code)
	}
	got := kpDecodeRun(t, out)
	for _, r := range got.Results {
		if r.Failed() {
			t.Errorf("%s %s failed: %s", r.Profile, r.Path, r.Error)
		}
	}
	if left := kpLeftovers(ctx, t, cl.cs, runID); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}

	// one verb taken away: stopped before anything is created, the permission named
	for _, tc := range []struct{ resource, verb, want string }{
		{"pods/exec", "create", "create pods/exec in namespace " + ns},
		{"leases", "create", "create leases.coordination.k8s.io in namespace " + ns},
		{"services", "create", "create services in namespace " + ns},
		{"secrets", "create", "create secrets in namespace " + ns},
	} {
		t.Run("without "+tc.verb+" "+tc.resource, func(t *testing.T) {
			defer withoutVerb(ctx, t, cl.cs, ns, "cnperf-run", tc.resource, tc.verb)()
			runID := uuid.NewString()
			_, stderr, code := run(runID)
			t.Logf("stderr:\n%s", stderr)
			if code == exit.OK || !text.ContainsFolded(stderr, "missing permission") || !text.ContainsFolded(stderr, tc.want) {
				t.Errorf("exit %d; want a failure naming %q", code, tc.want)
			}
			if left := kpLeftovers(ctx, t, cl.cs, runID); len(left) > 0 {
				t.Errorf("created before the check failed: %v", left)
			}
			les, _ := cl.cs.CoordinationV1().Leases(ns).List(ctx, metav1.ListOptions{})
			if len(les.Items) > 0 {
				t.Errorf("a Lease was created before the check failed")
			}
		})
	}
}
