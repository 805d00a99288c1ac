//go:build e2e

// End-to-end tests of deploy/rbac/mesh.yaml and deploy/rbac/tigerbench-load.yaml: `cnperf mesh`,
// `cnperf load` and a tiger-bench file (leaveStandingConfig) run as a ServiceAccount bound only
// to the feature's manifest (a token kubeconfig); with one verb taken away each stops before
// creating anything and names the missing permission. The agent token reaches the pods only
// through the run's Secret: no pod or DaemonSet spec, no output holds it.
package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/cnperf/cnperf/internal/agenttoken"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/text"
	"github.com/cnperf/cnperf/internal/tigerbench"
)

// withoutVerb takes verb on resource away from the Role ns/role and returns what puts it back.
func withoutVerb(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, role, resource, verb string) func() {
	t.Helper()
	r, err := cs.RbacV1().Roles(ns).Get(ctx, role, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	orig := r.DeepCopy()
	var rules []rbacv1.PolicyRule
	taken := false
	group := ""
	for _, rule := range r.Rules {
		if len(rule.Resources) == 1 && rule.Resources[0] == resource {
			if len(rule.APIGroups) > 0 {
				group = rule.APIGroups[0]
			}
			var vs []string
			for _, v := range rule.Verbs {
				if v != verb {
					vs = append(vs, v)
				} else {
					taken = true
				}
			}
			if len(vs) == 0 {
				continue // the rule had only that verb
			}
			rule.Verbs = vs
		}
		rules = append(rules, rule)
	}
	if !taken {
		t.Fatalf("role %s/%s does not grant %s %s on its own line", ns, role, verb, resource)
	}
	r.Rules = rules
	if _, err := cs.RbacV1().Roles(ns).Update(ctx, r, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	attrs := &authorizationv1.ResourceAttributes{Namespace: ns, Verb: verb, Group: group}
	attrs.Resource, attrs.Subresource, _ = strings.Cut(resource, "/")
	if err := waitAuthorized(ctx, cs, ns, role, attrs, false); err != nil {
		t.Fatal(err)
	}
	return func() {
		cur, err := cs.RbacV1().Roles(ns).Get(ctx, role, metav1.GetOptions{})
		if err != nil {
			t.Errorf("restore role %s/%s: %v", ns, role, err)
			return
		}
		orig.ResourceVersion = cur.ResourceVersion
		if _, err := cs.RbacV1().Roles(ns).Update(ctx, orig, metav1.UpdateOptions{}); err != nil {
			t.Errorf("restore role %s/%s: %v", ns, role, err)
		}
		if err := waitAuthorized(ctx, cs, ns, role, attrs, true); err != nil {
			t.Error(err)
		}
	}
}

// waitAuthorized waits until the API server's authorizer answers allowed for attrs, for every
// subject bound to the Role ns/role: a Role's change reaches the authorizer through its
// informer, later on a loaded machine (a fixed 2 s sleep once stood here), and a run started
// before would be checked against the old rules.
func waitAuthorized(ctx context.Context, cs kubernetes.Interface, ns, role string, attrs *authorizationv1.ResourceAttributes, allowed bool) error {
	rbs, err := cs.RbacV1().RoleBindings(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	var specs []authorizationv1.SubjectAccessReviewSpec
	for _, rb := range rbs.Items {
		if rb.RoleRef.Kind != "Role" || rb.RoleRef.Name != role {
			continue
		}
		for _, sub := range rb.Subjects {
			switch sub.Kind {
			case rbacv1.ServiceAccountKind:
				sns := sub.Namespace
				if sns == "" {
					sns = ns
				}
				specs = append(specs, authorizationv1.SubjectAccessReviewSpec{ResourceAttributes: attrs,
					User:   "system:serviceaccount:" + sns + ":" + sub.Name,
					Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + sns, "system:authenticated"}})
			case rbacv1.UserKind:
				specs = append(specs, authorizationv1.SubjectAccessReviewSpec{ResourceAttributes: attrs, User: sub.Name,
					Groups: []string{"system:authenticated"}})
			case rbacv1.GroupKind:
				specs = append(specs, authorizationv1.SubjectAccessReviewSpec{ResourceAttributes: attrs, User: "cnperf-e2e-probe",
					Groups: []string{sub.Name, "system:authenticated"}})
			}
		}
	}
	if len(specs) == 0 {
		return fmt.Errorf("no subject is bound to role %s/%s: cannot tell when the authorizer has its change", ns, role)
	}
	deadline := time.Now().Add(time.Minute)
	for _, spec := range specs {
		for {
			r, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx,
				&authorizationv1.SubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
			if err != nil {
				return fmt.Errorf("SubjectAccessReview for %s: %w", spec.User, err)
			}
			if r.Status.Allowed == allowed {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("role %s/%s changed a minute ago, yet the authorizer still answers allowed=%v for %s %s %s",
					ns, role, r.Status.Allowed, spec.User, attrs.Verb, attrs.Resource)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return nil
}

// e2eToken sets the agent token every run of this process uses ($CNPERF_AGENT_TOKEN, as a
// user may), so the test knows what must never show.
func e2eToken(t *testing.T) string {
	tok := strings.ReplaceAll(uuid.NewString()+uuid.NewString(), "-", "")
	t.Setenv(agenttoken.Env, tok)
	return tok
}

// tokenWatch follows the pods and DaemonSets of a namespace while a command runs, as
// `kubectl get pod,daemonset -o yaml` shows them (the API objects, serialized).
type tokenWatch struct {
	mu         sync.Mutex
	leaks      []string // objects whose spec or status held the token
	fromSecret int      // containers seen taking it from the run's Secret
	secret     bool     // the run's Secret was seen holding it
	stop       chan struct{}
	done       chan struct{}
}

func watchToken(t *testing.T, cs kubernetes.Interface, ns, token string) *tokenWatch {
	t.Helper()
	w := &tokenWatch{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		ctx := context.Background()
		for {
			select {
			case <-w.stop:
				return
			case <-time.After(300 * time.Millisecond):
			}
			pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				continue
			}
			dss, _ := cs.AppsV1().DaemonSets(ns).List(ctx, metav1.ListOptions{})
			secs, _ := cs.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{LabelSelector: kube.ManagedSelector()})
			w.mu.Lock()
			for _, p := range pods.Items {
				if b, _ := json.Marshal(p); strings.Contains(string(b), token) {
					w.leaks = append(w.leaks, "pod/"+p.Name)
				}
				for _, c := range p.Spec.Containers {
					for _, e := range c.Env {
						if e.Name == agenttoken.Env && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil &&
							strings.HasPrefix(e.ValueFrom.SecretKeyRef.Name, "cnperf-token-") {
							w.fromSecret++
						}
					}
				}
			}
			if dss != nil {
				for _, d := range dss.Items {
					if b, _ := json.Marshal(d); strings.Contains(string(b), token) {
						w.leaks = append(w.leaks, "daemonset/"+d.Name)
					}
				}
			}
			if secs != nil {
				for _, s := range secs.Items {
					if string(s.Data[kube.TokenSecretKey]) == token {
						w.secret = true
					}
				}
			}
			w.mu.Unlock()
		}
	}()
	return w
}

// check stops the watch and fails the test if the token showed in an object, if no pod took it
// from the Secret, or if it is in out (the command's output and error).
func (w *tokenWatch) check(t *testing.T, token string, out ...string) {
	t.Helper()
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.leaks) > 0 {
		t.Errorf("the agent token is in the spec of %v", w.leaks)
	}
	if w.fromSecret == 0 || !w.secret {
		t.Errorf("seen %d containers taking the token from the run's Secret (secret holding it seen: %v); want some", w.fromSecret, w.secret)
	}
	for _, o := range out {
		if strings.Contains(o, token) {
			t.Errorf("the agent token is in the output:\n%s", o)
		}
	}
	t.Logf("%d containers took the token from the run's Secret; no pod or DaemonSet spec held it", w.fromSecret)
}

// noneLeft fails the test if namespace ns still holds anything cnperf makes a minute after a
// run (pods terminate in the background) or after a refused one.
func noneLeft(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns string) {
	t.Helper()
	var left []string
	for end := time.Now().Add(time.Minute); ; time.Sleep(500 * time.Millisecond) {
		if left = leftIn(ctx, cs, ns); len(left) == 0 || time.Now().After(end) {
			break
		}
	}
	if len(left) > 0 {
		t.Errorf("namespace %s holds %s", ns, strings.Join(left, ", "))
	}
}

func leftIn(ctx context.Context, cs kubernetes.Interface, ns string) []string {
	var left []string
	if l, _ := cs.AppsV1().DaemonSets(ns).List(ctx, metav1.ListOptions{}); l != nil && len(l.Items) > 0 {
		left = append(left, fmt.Sprintf("%d DaemonSets", len(l.Items)))
	}
	if l, _ := cs.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{}); l != nil && len(l.Items) > 0 {
		left = append(left, fmt.Sprintf("%d Deployments", len(l.Items)))
	}
	if l, _ := cs.NetworkingV1().NetworkPolicies(ns).List(ctx, metav1.ListOptions{}); l != nil && len(l.Items) > 0 {
		left = append(left, fmt.Sprintf("%d NetworkPolicies", len(l.Items)))
	}
	if l, _ := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{}); l != nil && len(l.Items) > 0 {
		left = append(left, fmt.Sprintf("%d pods", len(l.Items)))
	}
	if l, _ := cs.CoreV1().Services(ns).List(ctx, metav1.ListOptions{}); l != nil && len(l.Items) > 0 {
		left = append(left, fmt.Sprintf("%d Services", len(l.Items)))
	}
	if l, _ := cs.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{LabelSelector: kube.ManagedSelector()}); l != nil && len(l.Items) > 0 {
		left = append(left, fmt.Sprintf("%d Secrets", len(l.Items)))
	}
	if l, _ := cs.CoordinationV1().Leases(ns).List(ctx, metav1.ListOptions{}); l != nil && len(l.Items) > 0 {
		left = append(left, fmt.Sprintf("%d Leases", len(l.Items)))
	}
	return left
}

// refused runs a command that must stop at the permission check, naming want.
func refused(ctx context.Context, t *testing.T, want string, args ...string) {
	t.Helper()
	start := time.Now()
	out, stderr, code := kpRunCLI(ctx, args...)
	t.Logf("%s exited %d in %.1fs:\n%s", args[0], code, time.Since(start).Seconds(), stderr)
	if code == exit.OK || !text.ContainsFolded(stderr, "missing permission") || !text.ContainsFolded(stderr, want) {
		t.Errorf("exit %d, output %q; want a failure naming %q", code, out, want)
	}
}

// TestKubeRBACMeshManifest: `cnperf mesh` (two nodes, pod network) as a ServiceAccount bound only
// to mesh.yaml; without create on Secrets it stops before creating anything.
func TestKubeRBACMeshManifest(t *testing.T) {
	cl := kpClusterFromEnv(t)
	nodes := strings.Fields(os.Getenv("CNPERF_E2E_NODE_NAMES"))
	if len(nodes) < 2 {
		t.Skipf("CNPERF_E2E_NODE_NAMES=%q: mesh needs two nodes", os.Getenv("CNPERF_E2E_NODE_NAMES"))
	}
	token := e2eToken(t)
	ns := kpNamespace("cnperf-e2e-rbac-mesh")
	defer applyManifest(t, cl.cs, "mesh.yaml", "cnperf", ns, "-"+ns)()
	kc := tokenKubeconfig(t, cl.cs, cl.kubeconfig, ns, "cnperf-mesh")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	args := []string{"mesh", "--kubeconfig", kc, "-n", ns, "--nodes", nodes[0] + "," + nodes[1], "--network", "pod",
		"--profile", "TCP_RR", "--duration", "1s", "--samples", "1", "-o", "json"}

	start := time.Now()
	w := watchToken(t, cl.cs, ns, token)
	out, stderr, code := kpRunCLI(ctx, args...)
	t.Logf("as %s/cnperf-mesh (mesh.yaml only), %.1fs:\n%s", ns, time.Since(start).Seconds(), stderr)
	w.check(t, token, out, stderr)
	if code != exit.OK {
		t.Fatalf("mesh exited %d", code)
	}
	if run := kpDecodeRun(t, out); len(run.Results) == 0 {
		t.Error("no results")
	}
	noneLeft(ctx, t, cl.cs, ns)

	restore := withoutVerb(ctx, t, cl.cs, ns, "cnperf-mesh", "secrets", "create")
	refused(ctx, t, "create secrets in namespace "+ns, args...)
	restore()
	noneLeft(ctx, t, cl.cs, ns)
}

// TestKubeRBACTigerBenchLoadManifest: as a ServiceAccount bound only to tigerbench-load.yaml,
// `cnperf load create`, `load status`, `cnperf load remove`, and — bound to calico.yaml too —
// a tiger-bench file (a thruput-latency test that changes Calico's encapsulation, against the
// Installation and IPPool of tbInstallCalico, and leaves its standing config standing); with
// one verb taken away, load create and the tiger-bench run stop before creating anything,
// naming it.
func TestKubeRBACTigerBenchLoadManifest(t *testing.T) {
	cl := kpClusterFromEnv(t)
	token := e2eToken(t)
	ns := kpNamespace("cnperf-e2e-rbac-tb")
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	tbInstallCalico(ctx, t, tbClusterFromEnv(t))
	if _, err := cl.cs.CoreV1().Namespaces().Get(ctx, "calico-system", metav1.GetOptions{}); apierrors.IsNotFound(err) {
		// calico.yaml binds a Role there (restarting calico-node pods)
		if _, err := cl.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "calico-system"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = kube.DeleteNamespace(context.Background(), cl.cs, "calico-system", true) }()
	}
	defer applyManifest(t, cl.cs, "tigerbench-load.yaml", "testns", ns, "-"+ns)()
	defer applyManifest(t, cl.cs, "calico.yaml", "testns", ns, "-"+ns)()
	kc := tokenKubeconfig(t, cl.cs, cl.kubeconfig, ns, "cnperf-tigerbench")

	// cnperf load
	start := time.Now()
	out, stderr, code := kpRunCLI(ctx, "load", "create", "--kubeconfig", kc, "-n", ns, "--pods", "2", "--services", "1", "--policies", "2", "--idle-policies", "1")
	t.Logf("load create as %s/cnperf-tigerbench (tigerbench-load.yaml only), %.1fs:\n%s%s", ns, time.Since(start).Seconds(), out, stderr)
	if code != exit.OK {
		t.Fatalf("load create exited %d", code)
	}
	out, stderr, code = kpRunCLI(ctx, "load", "status", "--kubeconfig", kc, "-n", ns)
	if code != exit.OK {
		t.Errorf("load status exited %d:\n%s%s", code, out, stderr)
	}
	out, stderr, code = kpRunCLI(ctx, "load", "remove", "--kubeconfig", kc, "-n", ns)
	t.Logf("load remove:\n%s%s", out, stderr)
	if code != exit.OK {
		t.Fatalf("load remove exited %d", code)
	}
	noneLeft(ctx, t, cl.cs, ns)

	// a tiger-bench file, its standing config left standing
	file := filepath.Join(t.TempDir(), "testconfig.yaml")
	yaml := fmt.Sprintf(`- testKind: thruput-latency
  encap: vxlan
  numPods: 2
  numServices: 1
  numPolicies: 2
  duration: 1
  iterations: 1
  leaveStandingConfig: true
  testNamespace: %s
  Perf:
    direct: true
    service: false
    external: false
`, ns)
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	runArgs := []string{"run", "-c", file, "--kubeconfig", kc, "-o", "json", "--no-progress", "--allow-cluster-changes"}
	start = time.Now()
	w := watchToken(t, cl.cs, ns, token)
	out, stderr, code = kpRunCLI(ctx, runArgs...)
	t.Logf("tiger-bench as %s/cnperf-tigerbench, %.1fs:\n%s", ns, time.Since(start).Seconds(), stderr)
	w.check(t, token, out, stderr)
	if code != exit.OK {
		t.Fatalf("tiger-bench run exited %d", code)
	}
	run := kpDecodeRun(t, out)
	if len(run.Results) == 0 || len(run.TigerBench) != 1 || run.TigerBench[0].Standing == nil || !run.TigerBench[0].Standing.Kept {
		t.Errorf("results %d, tiger-bench tests %+v", len(run.Results), run.TigerBench)
	}
	for _, r := range run.Results {
		if r.Failed() {
			t.Errorf("%s %s failed: %s", r.Profile, r.Path, r.Error)
		}
	}
	if len(run.TigerBench) == 1 && run.TigerBench[0].Calico == nil {
		t.Error("the test's Calico change is not recorded")
	}
	if got := tbSpec(t, tbClusterFromEnv(t), tigerbench.GVRIPPool, "default-ipv4-ippool"); got["vxlanMode"] != "CrossSubnet" {
		t.Errorf("IPPool not restored: %v", got)
	}
	pols, err := cl.cs.NetworkingV1().NetworkPolicies(ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(pols.Items) < 2 {
		t.Errorf("standing policies after the run: %d (%v), want them kept", len(pols.Items), err)
	}
	out, stderr, code = kpRunCLI(ctx, "load", "remove", "--kubeconfig", kc, "-n", ns)
	if code != exit.OK {
		t.Fatalf("load remove after tiger-bench exited %d:\n%s%s", code, out, stderr)
	}
	noneLeft(ctx, t, cl.cs, ns)

	// one verb taken away
	restore := withoutVerb(ctx, t, cl.cs, ns, "cnperf-tigerbench", "networkpolicies", "patch")
	refused(ctx, t, "patch networkpolicies.networking.k8s.io in namespace "+ns,
		"load", "create", "--kubeconfig", kc, "-n", ns, "--policies", "2")
	noneLeft(ctx, t, cl.cs, ns)
	restore()
	restore = withoutVerb(ctx, t, cl.cs, ns, "cnperf-tigerbench", "pods/exec", "create")
	refused(ctx, t, "create pods/exec in namespace "+ns, runArgs...)
	noneLeft(ctx, t, cl.cs, ns)
	restore()
}
