package tigerbench

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
)

// fakeKubelet plays the nodes for TTFR tests on a fake clientset (no real kubelet can run
// here): server pods become Ready with an IP; client pods become Ready and then end, and their
// "log" is what result(seq) says. With hang set, client pods start but never end.
type fakeKubelet struct {
	cs     kubernetes.Interface
	ns     string
	result func(name string) string
	hang   bool

	mu   sync.Mutex
	logs map[string]string
}

// run starts watching at once (so no pod is missed) and plays the kubelet in the background.
func (k *fakeKubelet) run(ctx context.Context, t *testing.T) {
	w, err := k.cs.CoreV1().Pods(k.ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	go k.loop(ctx, w)
}

func (k *fakeKubelet) loop(ctx context.Context, w watch.Interface) {
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.ResultChan():
			if !ok {
				return
			}
			if ev.Type != watch.Added {
				continue
			}
			pod := ev.Object.(*corev1.Pod).DeepCopy()
			go k.start(ctx, pod)
		}
	}
}

func (k *fakeKubelet) start(ctx context.Context, pod *corev1.Pod) {
	ready := []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.244.1.5", HostIP: "10.123.0.11", Conditions: ready,
		ContainerStatuses: []corev1.ContainerStatus{{Name: TTFRContainer, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}
	if _, err := k.cs.CoreV1().Pods(k.ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil || pod.Labels[LabelTTFR] != "client" || k.hang {
		return
	}
	time.Sleep(5 * time.Millisecond) // the client pod runs a moment before it completes, as a real one (its pace, not a wait for anything)
	k.mu.Lock()
	k.logs[pod.Name] = k.result(pod.Name)
	k.mu.Unlock()
	pod.Status.Phase = corev1.PodSucceeded
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "PodCompleted"}}
	pod.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}
	_, _ = k.cs.CoreV1().Pods(k.ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
}

func (k *fakeKubelet) log(_ context.Context, _, pod, _ string) ([]byte, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return []byte(k.logs[pod]), nil
}

func seqOf(name string) int {
	n, err := strconv.Atoi(name[strings.LastIndex(name, "-")+1:])
	if err != nil {
		return -1 // not a sequence number: no pod of the test has it
	}
	return n
}

func TestTTFRCountsEveryPod(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs := fake.NewClientset()
	k := &fakeKubelet{cs: cs, ns: "testns", logs: map[string]string{}, result: func(name string) string {
		n := seqOf(name)
		if n%4 == 3 {
			return fmt.Sprintf(`{"ok":false,"error":"no response within 1m0s: dial tcp 10.244.1.%d:8080: connect: connection refused","attempts":99}`+"\n", n)
		}
		return fmt.Sprintf("some noise\n"+`{"ok":true,"ttfrSeconds":0.00%d1,"attempts":1}`+"\n", n%10)
	}}
	k.run(ctx, t)
	r := &TTFRRunner{Client: cs, Logs: k.log}
	res, err := r.Run(ctx, TTFRSpec{PodTestSpec: PodTestSpec{Namespace: "testns", ID: "t1", Nodes: []string{"node1", "node2"}, Image: "img",
		StartTimeout: 5 * time.Second}, Rate: 40, PodsPerNode: 20, Duration: 500 * time.Millisecond, ResponseTimeout: time.Second, ReportGrace: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// 0.5 s at 40/s: 20 creations due.
	missed := 0
	for _, w := range res.Warnings {
		if strings.Contains(w, "skipped") {
			if _, err := fmt.Sscanf(w[strings.Index(w, ": ")+2:], "%d", &missed); err != nil {
				t.Fatal(err)
			}
		}
	}
	if res.PodsCreated+missed != 20 {
		t.Errorf("created %d + skipped %d, want 20 creations due: %+v", res.PodsCreated, missed, res)
	}
	if res.Datapoints+res.Failures != res.PodsCreated {
		t.Errorf("datapoints %d + failures %d != pods %d: a pod was dropped", res.Datapoints, res.Failures, res.PodsCreated)
	}
	if res.Failures != res.PodsCreated/4 || len(res.FailureReasons) != 1 ||
		res.FailureReasons[0].What != "no response within 1m0s: dial tcp connect: connection refused" {
		t.Errorf("failures %d %+v", res.Failures, res.FailureReasons)
	}
	if res.TTFRSeconds == nil || res.TTFRSeconds.N != res.Datapoints || len(res.Values) != res.Datapoints || res.Values[0] != 0.0001 || res.Values[1] != 0.0011 {
		t.Errorf("values %v dist %+v (want creation order)", res.Values, res.TTFRSeconds)
	}
	if res.PodCreateToReadySeconds == nil || res.PodCreateToReadySeconds.N != res.PodsCreated {
		t.Errorf("create-to-ready %+v", res.PodCreateToReadySeconds)
	}
	left, _ := cs.CoreV1().Pods("testns").List(ctx, metav1.ListOptions{})
	if len(left.Items) != 0 {
		t.Errorf("%d pods left after the test", len(left.Items))
	}
}

// With pods that never answer and one slot per node, the rate cannot be met: the warning says
// why, and the pods that never reported are failures.
func TestTTFRSlotsAndTimeouts(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs := fake.NewClientset()
	k := &fakeKubelet{cs: cs, ns: "ns", logs: map[string]string{}, hang: true}
	k.run(ctx, t)
	r := &TTFRRunner{Client: cs, Logs: k.log}
	res, err := r.Run(ctx, TTFRSpec{PodTestSpec: PodTestSpec{Namespace: "ns", ID: "t2", Nodes: []string{"a", "b"}, Image: "img",
		StartTimeout: time.Second}, Rate: 20, PodsPerNode: 1, Duration: 500 * time.Millisecond, ResponseTimeout: 100 * time.Millisecond, ReportGrace: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Datapoints != 0 || res.Failures != res.PodsCreated || res.PodsCreated < 2 {
		t.Errorf("%+v", res)
	}
	if len(res.FailureReasons) != 1 || !strings.HasPrefix(res.FailureReasons[0].What, "no result within") {
		t.Errorf("reasons %+v", res.FailureReasons)
	}
	if len(res.Warnings) == 0 || !strings.Contains(res.Warnings[0], "all 2 pod slots (1 per node x 2 nodes) were busy") {
		t.Errorf("warnings %q", res.Warnings)
	}
}

func TestTTFRInterruptedCleansUp(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cs := fake.NewClientset()
	k := &fakeKubelet{cs: cs, ns: "ns", logs: map[string]string{}, hang: true}
	kctx, kcancel := context.WithCancel(context.Background())
	defer kcancel()
	k.run(kctx, t)
	// Interrupt once the run is under way, with client pods that hang: a fixed second could end
	// a slow start before its first pod, which tests nothing of the clean-up.
	go func() {
		defer cancel()
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if pods, err := cs.CoreV1().Pods("ns").List(ctx, metav1.ListOptions{LabelSelector: LabelTTFR + "=client"}); err == nil && len(pods.Items) > 0 {
				return
			}
		}
	}()
	r := &TTFRRunner{Client: cs, Logs: k.log}
	res, err := r.Run(ctx, TTFRSpec{PodTestSpec: PodTestSpec{Namespace: "ns", ID: "t3", Nodes: []string{"a"}, Image: "img"},
		Rate: 10, PodsPerNode: 100, Duration: time.Hour})
	if err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Errorf("error %v", err)
	}
	if res.Failures != 0 {
		t.Errorf("pods cut short by the interruption counted as failures: %+v", res)
	}
	left, _ := cs.CoreV1().Pods("ns").List(context.Background(), metav1.ListOptions{})
	if len(left.Items) != 0 {
		t.Errorf("%d pods left after an interruption", len(left.Items))
	}
}

func TestTTFRValidates(t *testing.T) {
	r := &TTFRRunner{Client: fake.NewClientset()}
	for _, spec := range []TTFRSpec{
		{PodTestSpec: PodTestSpec{Nodes: []string{"a"}}, Rate: 0, PodsPerNode: 1, Duration: time.Second},
		{PodTestSpec: PodTestSpec{Nodes: []string{"a"}}, Rate: 1, PodsPerNode: 0, Duration: time.Second},
		{Rate: 1, PodsPerNode: 1, Duration: time.Second},
	} {
		if _, err := r.Run(context.Background(), spec); err == nil {
			t.Errorf("%+v accepted", spec)
		}
	}
}

func TestParseClientLog(t *testing.T) {
	v, f := parseClientLog([]byte(`{"ok":true,"ttfrSeconds":0.25}`), nil, "")
	if v == nil || *v != 0.25 || f != "" {
		t.Errorf("%v %q", v, f)
	}
	_, f = parseClientLog([]byte("exec /usr/local/bin/cnperf: no such file\n"), nil, "exit code 127 (Error)")
	if f != "no result line in the log (exit code 127 (Error)); last line: exec /usr/local/bin/cnperf: no such file" {
		t.Errorf("%q", f)
	}
	_, f = parseClientLog(nil, fmt.Errorf("boom"), "")
	if f != "read pod log: boom" {
		t.Errorf("%q", f)
	}
	if g := genericError("no response within 1m0s: dial tcp [fd00::5]:8080: connect: connection refused"); g != "no response within 1m0s: dial tcp connect: connection refused" {
		t.Errorf("%q", g)
	}
}

// A test pod whose container cannot start within the run fails at once, with the kubelet's
// words; one still being created, or whose Secret cache the kubelet retries, is waited for.
func TestPodFatal(t *testing.T) {
	for _, tc := range []struct{ reason, message, want string }{
		{"ErrImagePull", "pull access denied", "ErrImagePull: pull access denied"},
		{"ErrImageNeverPull", `Container image "img" is not present with pull policy of Never`,
			`ErrImageNeverPull: Container image "img" is not present with pull policy of Never`},
		{"CreateContainerConfigError", `configmap "x" not found`, `CreateContainerConfigError: configmap "x" not found`},
		{"CreateContainerConfigError", "failed to sync configmap cache: timed out waiting for the condition", ""},
		{"ContainerCreating", "", ""},
	} {
		p := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{Name: TTFRContainer,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: tc.reason, Message: tc.message}}}}}}
		if got := podFatal(p); got != tc.want {
			t.Errorf("%s %q: podFatal = %q, want %q", tc.reason, tc.message, got, tc.want)
		}
	}
}
