package mesh

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/agenttoken"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/driver/native"
	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/plan"
)

func TestBuildDaemonSet(t *testing.T) {
	c := plan.Case{Profile: api.TCPStream, Driver: "native", Params: api.Params{Options: map[string]string{"port": "7300", "dataPort": "7301"}}}
	meta, err := kube.ParsePodMetadata([]string{"team=net"}, []string{"sidecar.istio.io/inject=false"})
	if err != nil {
		t.Fatal(err)
	}
	o := AgentOptions{Namespace: "ns", RunID: "1234abcd-ffff", Image: "img:v1", PullPolicy: corev1.PullNever,
		Servers: driver.Servers(native.Driver{}, []plan.Case{c}), Metadata: meta}
	for _, tc := range []struct {
		net        api.Network
		privileged bool
	}{{api.NetworkPod, false}, {api.NetworkHost, false}, {api.NetworkPod, true}} {
		o.Privileged = tc.privileged
		ds := BuildDaemonSet(o, tc.net, []string{"a", "b"})
		spec := ds.Spec.Template.Spec
		if ds.Name != "cnperf-mesh-"+string(tc.net)+"-1234abcd" || ds.Spec.UpdateStrategy.Type != appsv1.OnDeleteDaemonSetStrategyType {
			t.Fatalf("%s: name %s strategy %s", tc.net, ds.Name, ds.Spec.UpdateStrategy.Type)
		}
		for k, v := range ds.Spec.Selector.MatchLabels {
			if ds.Spec.Template.Labels[k] != v {
				t.Fatalf("selector %s=%s does not match the template", k, v)
			}
		}
		if tl, ta := ds.Spec.Template.Labels, ds.Spec.Template.Annotations; tl["team"] != "net" || ta["sidecar.istio.io/inject"] != "false" {
			t.Fatalf("template labels %v annotations %v: --pod-labels/--pod-annotations not applied", tl, ta)
		}
		if ds.Labels[kube.LabelManagedBy] != kube.ManagedByValue || ds.Labels[kube.LabelRun] != o.RunID {
			t.Fatalf("labels %v: cnperf cleanup would not find it", ds.Labels)
		}
		if spec.HostNetwork != (tc.net == api.NetworkHost) || spec.HostPID != tc.privileged {
			t.Fatalf("%s: hostNetwork %v hostPID %v", tc.net, spec.HostNetwork, spec.HostPID)
		}
		terms := spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
		if len(terms) != 2 || terms[1].MatchFields[0].Values[0] != "b" || len(terms[0].MatchFields[0].Values) != 1 {
			t.Fatalf("affinity %+v: want one metadata.name term per node", terms)
		}
		if len(spec.Containers) != 2 || spec.Containers[1].Name != ClientContainer {
			t.Fatalf("containers %+v", spec.Containers)
		}
		srv := spec.Containers[0]
		if strings.Join(srv.Command, " ") != "cnperf agent serve --port 7300 --data-port 7301" || srv.StartupProbe == nil {
			t.Fatalf("server container %v probe %v", srv.Command, srv.StartupProbe)
		}
		if hp := srv.Ports[0].HostPort; (hp == 7300) != (tc.net == api.NetworkHost) {
			t.Fatalf("%s: host port %d", tc.net, hp)
		}
		cli := spec.Containers[1]
		if tc.privileged != (len(cli.VolumeMounts) == 1 && cli.SecurityContext != nil && *cli.SecurityContext.Privileged) {
			t.Fatalf("privileged %v: client container %+v", tc.privileged, cli)
		}
		if *spec.AutomountServiceAccountToken {
			t.Fatal("agents must not get an API token")
		}
		// the run's agent token: from the run's Secret, never in the DaemonSet's spec
		for _, c := range spec.Containers {
			if len(c.Env) != 1 || !reflect.DeepEqual(c.Env[0], kube.TokenEnvVar(o.RunID)) || c.Env[0].Value != "" {
				t.Fatalf("container %s env %+v: want %s from secret %s", c.Name, c.Env, agenttoken.Env, kube.TokenSecretName(o.RunID))
			}
		}
	}
}

// TestDeployAgentsInBatches plays the DaemonSet controller against a fake clientset: for
// every node in the DaemonSet's affinity it creates an agent pod, Ready a moment later
// (node "n3" never gets one). It checks that the node list grows by the batch size only
// once the previous batch is up, and that the node without an agent is reported.
func TestDeployAgentsInBatches(t *testing.T) {
	cs := fake.NewSimpleClientset()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o := AgentOptions{Namespace: "ns", RunID: "run1", Image: "img", Batch: 2, StartTimeout: 2 * time.Second}
	nodes := []string{"n1", "n2", "n3", "n4", "n5"}

	var mu sync.Mutex
	var listed []int // the DaemonSet's node count each time it changed
	done := make(chan struct{})
	go func() {
		defer close(done)
		made := map[string]bool{}
		for ctx.Err() == nil {
			ds, err := cs.AppsV1().DaemonSets("ns").Get(ctx, DaemonSetName("run1", api.NetworkPod), metav1.GetOptions{})
			if err == nil {
				terms := ds.Spec.Template.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
				mu.Lock()
				if len(listed) == 0 || listed[len(listed)-1] != len(terms) {
					listed = append(listed, len(terms))
				}
				mu.Unlock()
				for _, term := range terms {
					n := term.MatchFields[0].Values[0]
					if made[n] || n == "n3" {
						continue
					}
					made[n] = true
					p := &corev1.Pod{
						ObjectMeta: metav1.ObjectMeta{Name: "agent-" + n, Namespace: "ns", Labels: ds.Spec.Template.Labels},
						Spec:       corev1.PodSpec{NodeName: n},
						Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0." + n[1:], HostIP: "192.168.0." + n[1:],
							Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
					}
					if _, err := cs.CoreV1().Pods("ns").Create(ctx, p, metav1.CreateOptions{}); err != nil {
						t.Errorf("create pod: %v", err)
					}
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	set, err := DeployAgents(ctx, cs, o, api.NetworkPod, nodes, nil)
	cancel()
	<-done
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(listed) != "[2 4 5]" {
		t.Fatalf("the DaemonSet listed %v nodes over time, want batches of 2: [2 4 5]", listed)
	}
	if len(set.ByNode) != 4 || set.ByNode["n4"].PodIP != "10.0.0.4" || set.ByNode["n4"].Pod != "agent-n4" {
		t.Fatalf("agents %+v", set.ByNode)
	}
	if len(set.Failed) != 1 || set.Failed[0].Node != "n3" || !strings.Contains(set.Failed[0].Reason, "no agent pod within") {
		t.Fatalf("failed %+v", set.Failed)
	}
}

func TestPodHopeless(t *testing.T) {
	for _, tc := range []struct {
		name string
		pod  corev1.Pod
		want string
	}{
		{"pull", corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{
			{Name: "client", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull", Message: "not found"}}}}}},
			"ErrImagePull: not found"},
		{"exited", corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
			{Name: "native", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}}}}}},
			"container native exited 1"},
		{"creating", corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{
			{Name: "client", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}}}},
			""},
	} {
		got := podHopeless(&tc.pod)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
