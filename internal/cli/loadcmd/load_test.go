package loadcmd

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
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/iostreams"
	"github.com/cnperf/cnperf/internal/kube/kubetest"
)

// The fake clientset stands in for a cluster (no API server runs in unit tests); this
// goroutine plays the deployment controller. test/e2e runs `cnperf load` on a real cluster.
func markReady(ctx context.Context, cs kubernetes.Interface, ns string) {
	for ctx.Err() == nil {
		if ds, err := cs.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{}); err == nil {
			for i := range ds.Items {
				d := &ds.Items[i]
				n := *d.Spec.Replicas
				if d.Status.ReadyReplicas != n || d.Status.ObservedGeneration < d.Generation {
					d.Status.Replicas, d.Status.ReadyReplicas, d.Status.UpdatedReplicas, d.Status.ObservedGeneration = n, n, n, d.Generation
					_, _ = cs.AppsV1().Deployments(ns).UpdateStatus(ctx, d, metav1.UpdateOptions{})
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func execute(t *testing.T, cs kubernetes.Interface, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	c := newCommand(iostreams.Streams{Out: &out, ErrOut: &errOut}, func() (kubernetes.Interface, error) { return cs, nil })
	c.SetArgs(args)
	c.SetOut(&errOut)
	c.SetErr(&errOut)
	err := c.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

func TestCreateStatusRemove(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node1"},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	cs := kubetest.Authorize(fake.NewClientset(node))
	go markReady(ctx, cs, "load1")

	out, logs, err := execute(t, cs, "create", "-n", "load1", "--pods", "5", "--services", "3", "--policies", "7", "--idle-policies", "2", "-o", "json")
	if err != nil {
		t.Fatalf("%v\n%s", err, logs)
	}
	var rep api.StandingConfig
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	// 2 deployments, 3 services, 7 policies, 2 idle, 1 allow-all.
	if rep.ObjectsApplied != 15 || rep.Pods != 5 || rep.Error != "" || strings.Join(rep.Nodes, ",") != "node1" {
		t.Errorf("%+v", rep)
	}
	if !strings.Contains(logs, "no node is labelled") {
		t.Errorf("no note about the test node label:\n%s", logs)
	}

	out, _, err = execute(t, cs, "status", "-n", "load1")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"services:       3", "policies:       7 (+ allow-all policy: true)", "idle policies:  2", "created by cnperf load"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}

	out, _, err = execute(t, cs, "remove", "-n", "load1")
	if err != nil || !strings.Contains(out, "standing config of load1 removed") {
		t.Fatalf("%v %s", err, out)
	}
	if _, err := cs.CoreV1().Namespaces().Get(ctx, "load1", metav1.GetOptions{}); err == nil {
		t.Error("namespace still there")
	}
}

func TestUsage(t *testing.T) {
	cs := fake.NewClientset()
	for _, args := range [][]string{
		{"create", "--pods", "-1"},
		{"create", "-o", "yaml"},
		{"create", "--image-pull-policy", "Sometimes"},
		{"status", "-n", ""},
	} {
		_, _, err := execute(t, cs, args...)
		var ue *exit.UsageError
		if !errors.As(err, &ue) {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
	// the one -o check of every command (flags.Output): the flag, the formats, the closest
	if _, _, err := execute(t, cs, "status", "-o", "jsn"); err == nil || err.Error() != `unable to match a printer suitable for the output format "jsn", allowed formats are: text,json (did you mean "json"?)` {
		t.Errorf("status -o jsn: %v", err)
	}
}

// With one permission missing, load create and load remove stop before changing anything and
// name the permission and deploy/rbac/tigerbench-load.yaml.
func TestPreflightNamesTheMissingPermission(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node1"},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	existing := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "load2"}}
	for _, tc := range []struct {
		args       []string
		deny, want string
	}{
		{[]string{"create", "-n", "load2", "--policies", "3"}, "patch networkpolicies", "patch networkpolicies.networking.k8s.io in namespace load2"},
		{[]string{"create", "-n", "absent", "--pods", "1"}, "create namespaces", "create namespaces (cluster-wide)"},
		{[]string{"create", "-n", "load2", "--pods", "1"}, "create deployments", "create deployments.apps in namespace load2"},
		{[]string{"remove", "-n", "load2"}, "delete deployments", "delete deployments.apps in namespace load2"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			cs := kubetest.Authorize(fake.NewClientset(node, existing), tc.deny)
			_, _, err := execute(t, cs, tc.args...)
			if err == nil || !strings.Contains(err.Error(), "missing permission") || !strings.Contains(err.Error(), tc.want) ||
				!strings.Contains(err.Error(), "deploy/rbac/tigerbench-load.yaml") {
				t.Fatalf("err = %v, want the missing permission %q named", err, tc.want)
			}
			for _, a := range cs.Actions() {
				if v := a.GetVerb(); v != "get" && v != "list" && a.GetResource().Resource != "selfsubjectaccessreviews" {
					t.Errorf("%s %s before the permission check failed", v, a.GetResource().Resource)
				}
			}
		})
	}
}
