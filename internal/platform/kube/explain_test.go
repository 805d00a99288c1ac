package kube

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/kube"
)

// What a failed sample's error gains from a look at its endpoints. The fake clientset stands
// in for the cluster (pods deleted and kubelets stopped on the real one: test/e2e/fault_*).
func TestExplainer(t *testing.T) {
	ready := []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	pod := func(name, node string, mut ...func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, Spec: corev1.PodSpec{NodeName: node},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: ready}}
		for _, m := range mut {
			m(p)
		}
		return p
	}
	node := func(name string, st corev1.ConditionStatus) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeReady, Status: st, Reason: "NodeStatusUnknown"}}}}
	}
	labelled := func(k, v string) func(*corev1.Pod) {
		return func(p *corev1.Pod) { p.Labels = map[string]string{k: v} }
	}
	// denyAll selects the pods with these labels (nil: every pod) and allows nothing of type typ
	denyAll := func(name string, sel map[string]string, typ networkingv1.PolicyType) *networkingv1.NetworkPolicy {
		return &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
			Spec: networkingv1.NetworkPolicySpec{PodSelector: metav1.LabelSelector{MatchLabels: sel}, PolicyTypes: []networkingv1.PolicyType{typ}}}
	}
	pl := &api.Placement{Server: api.Endpoint{Role: "server", Pod: "srv", Node: "n1"}, Client: api.Endpoint{Role: "client", Pod: "cli", Node: "n2"}}
	netErr := errors.New("receive response: connection closed by peer")
	kubeletGone := errors.New(`Internal error occurred: error sending request: Post "https://10.123.0.12:10250/exec/ns/cli/client?command=true": dial tcp 10.123.0.12:10250: connect: connection refused`)
	for _, tc := range []struct {
		name string
		objs []any
		err  error
		// probe is what an exec of `true` in the client pod returns
		probe error
		want  string
		// attachment: the pair is on a secondary network, where NetworkPolicy does not apply:
		// never a cause, and named as not applied (wantNotApplied)
		attachment     bool
		wantNotApplied string
	}{
		{name: "all well", objs: []any{pod("srv", "n1"), pod("cli", "n2"), node("n1", corev1.ConditionTrue), node("n2", corev1.ConditionTrue)},
			err: netErr, want: ""},
		{name: "server deleted", objs: []any{pod("cli", "n2"), node("n1", corev1.ConditionTrue), node("n2", corev1.ConditionTrue)},
			err: netErr, want: "server pod ns/srv is gone: it was deleted"},
		{name: "server being deleted", objs: []any{pod("srv", "n1", func(p *corev1.Pod) { now := metav1.Now(); p.DeletionTimestamp = &now }), pod("cli", "n2"),
			node("n1", corev1.ConditionTrue), node("n2", corev1.ConditionTrue)},
			err: netErr, want: "server pod ns/srv is being deleted"},
		{name: "server restarted, not ready", objs: []any{pod("srv", "n1", func(p *corev1.Pod) {
			p.Status.Conditions = nil
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "server", RestartCount: 2}}
		}), pod("cli", "n2"), node("n1", corev1.ConditionTrue), node("n2", corev1.ConditionTrue)},
			err: netErr, want: "server pod ns/srv: container server restarted 2 times, not ready"},
		{name: "client's node NotReady, kubelet unreachable", objs: []any{pod("srv", "n1"), pod("cli", "n2"), node("n1", corev1.ConditionTrue), node("n2", corev1.ConditionUnknown)},
			err:  errors.New("exec in pod ns/cli: error dialing backend: dial tcp 10.0.0.2:10250: connect: connection refused"),
			want: "client pod ns/cli: its node n2 is not Ready (NodeStatusUnknown); the API server could not reach the kubelet of node n2, where client pod cli runs"},
		{name: "kubelet stopped during the exec: no error, the probe says it", objs: []any{pod("srv", "n1"), pod("cli", "n2"),
			node("n1", corev1.ConditionTrue), node("n2", corev1.ConditionTrue)},
			err: errors.New("cnperf agent client printed nothing (no output)"), probe: kubeletGone,
			want: "the API server could not reach the kubelet of node n2, where client pod cli runs"},
		{name: "kubelet stopped, node still Ready (Kubernetes 1.34's message, captured on the e2e cluster)",
			objs: []any{pod("srv", "n1"), pod("cli", "n2"), node("n1", corev1.ConditionTrue), node("n2", corev1.ConditionTrue)},
			err:  errors.New(`cnperf agent client failed: exec in pod ns/cli: cnperf agent client --json: Internal error occurred: error sending request: Post "https://10.123.0.12:10250/exec/ns/cli/client?command=sh&error=1&output=1": dial tcp 10.123.0.12:10250: connect: connection refused; exit code -1`),
			want: "the API server could not reach the kubelet of node n2, where client pod cli runs"},
		// what a client whose traffic a NetworkPolicy drops sees (captured: the native driver on
		// the e2e cluster with Calico and a default-deny policy, test/e2e/policy_test.go)
		{name: "denied by a NetworkPolicy selecting the server", objs: []any{pod("srv", "n1", labelled("app", "srv")), pod("cli", "n2"),
			node("n1", corev1.ConditionTrue), node("n2", corev1.ConditionTrue), denyAll("deny-all", nil, "Ingress"), denyAll("other", map[string]string{"app": "x"}, "Ingress")},
			err:  errors.New("cnperf agent client: agent client: TCP_RR to 10.244.1.144:7100: connect to agent at 10.244.1.144:7100: dial tcp 10.244.1.144:7100: i/o timeout"),
			want: "server pod ns/srv is selected for ingress by NetworkPolicy deny-all: traffic they do not allow is dropped (a likely cause)"},
		{name: "egress policies on the client, more than three named", objs: []any{pod("srv", "n1"), pod("cli", "n2"),
			node("n1", corev1.ConditionTrue), node("n2", corev1.ConditionTrue),
			denyAll("e1", nil, "Egress"), denyAll("e2", nil, "Egress"), denyAll("e3", nil, "Egress"), denyAll("e4", nil, "Egress")},
			err:  errors.New("connect: connection timed out"),
			want: "client pod ns/cli is selected for egress by NetworkPolicy e1, e2, e3 and 1 more: traffic they do not allow is dropped (a likely cause)"},
		{name: "policies do not apply to a host-network server", objs: []any{pod("srv", "n1", func(p *corev1.Pod) { p.Spec.HostNetwork = true }), pod("cli", "n2"),
			node("n1", corev1.ConditionTrue), node("n2", corev1.ConditionTrue), denyAll("deny-all", nil, "Ingress")},
			err: errors.New("dial tcp 10.123.0.11:5201: i/o timeout"), want: ""},
		{name: "on a secondary network a policy is not a cause, and it is named as not applied", objs: []any{pod("srv", "n1", labelled("app", "srv")),
			pod("cli", "n2", labelled("app", "cli")), node("n1", corev1.ConditionTrue), node("n2", corev1.ConditionTrue),
			denyAll("deny-all", nil, "Ingress"), denyAll("cli-egress", map[string]string{"app": "cli"}, "Egress"),
			denyAll("srv-egress", map[string]string{"app": "srv"}, "Egress"), denyAll("other", map[string]string{"app": "x"}, "Ingress")},
			err: errors.New("dial tcp 10.125.0.3:7100: i/o timeout"), want: "", attachment: true, wantNotApplied: "ns/deny-all ns/cli-egress"},
		{name: "on a secondary network without policies nothing is named", objs: []any{pod("srv", "n1"), pod("cli", "n2"),
			node("n1", corev1.ConditionTrue), node("n2", corev1.ConditionTrue)},
			err: errors.New("dial tcp 10.125.0.3:7100: i/o timeout"), want: "", attachment: true},
		{name: "a policy is not blamed for a closed connection", objs: []any{pod("srv", "n1"), pod("cli", "n2"),
			node("n1", corev1.ConditionTrue), node("n2", corev1.ConditionTrue), denyAll("deny-all", nil, "Ingress")},
			err: netErr, want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := fake.NewSimpleClientset()
			for _, o := range tc.objs {
				var err error
				switch o := o.(type) {
				case *corev1.Pod:
					_, err = cs.CoreV1().Pods("ns").Create(context.Background(), o, metav1.CreateOptions{})
				case *corev1.Node:
					_, err = cs.CoreV1().Nodes().Create(context.Background(), o, metav1.CreateOptions{})
				case *networkingv1.NetworkPolicy:
					_, err = cs.NetworkingV1().NetworkPolicies("ns").Create(context.Background(), o, metav1.CreateOptions{})
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			p, err := NewWithClient(Options{Namespace: "ns"}, testRun, io.Discard, cs, nil)
			if err != nil {
				t.Fatal(err)
			}
			p.stream = func(_ context.Context, ns, pod, container string, argv []string, _, _ io.Writer) error {
				if ns != "ns" || pod != "cli" || container != kube.ClientContainer || len(argv) != 1 || argv[0] != "true" {
					t.Errorf("probe exec %s/%s/%s %q", ns, pod, container, argv)
				}
				return tc.probe
			}
			pl := *pl
			if tc.attachment {
				pl.Attachment = &api.Attachment{Network: "multus-e2e/e2e-bridge"}
				if got := strings.Join(p.policiesNotApplied(context.Background(), &pl), " "); got != tc.wantNotApplied {
					t.Errorf("policies not applied %q, want %q", got, tc.wantNotApplied)
				}
			}
			if got := p.explainer(&pl)(context.Background(), tc.err); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}
