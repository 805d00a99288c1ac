//go:build e2e

// Fault tests that break the cluster itself: the client node's kubelet stopped during a run
// (then the node NotReady before a run), and the API server restarted during a run. The
// harness's processes are stopped and started by the PIDs up.sh recorded (harness/proc.sh),
// and every test puts them back, even when it fails. Each ends with "every finished case is
// in the results file, and nothing is left in the cluster".
package e2e

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/runfile"
	"github.com/cnperf/cnperf/internal/text"
)

// nodes is the number of nodes of the cluster.
func (c kpCluster) nodes() int {
	n, _ := strconv.Atoi(os.Getenv("CNPERF_E2E_NODES"))
	return n
}

// harnessProc runs test/e2e/harness/proc.sh OP NAME (stop or start a cluster process).
func harnessProc(t *testing.T, op, name string) error {
	t.Helper()
	out, err := exec.Command(filepath.Join(repoRoot(t), "test", "e2e", "harness", "proc.sh"), op, name).CombinedOutput()
	t.Logf("proc.sh %s %s: %s", op, name, strings.TrimSpace(string(out)))
	if err != nil {
		return errors.New(strings.TrimSpace(string(out)))
	}
	return nil
}

// nodeUsable says whether node is Ready and without the not-ready/unreachable taints (what
// the next test needs), and describes it.
func nodeUsable(ctx context.Context, cs kubernetes.Interface, node string) (bool, string) {
	n, err := cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return false, err.Error()
	}
	ready := false
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			ready = c.Status == corev1.ConditionTrue
		}
	}
	for _, tn := range n.Spec.Taints {
		if tn.Key == corev1.TaintNodeNotReady || tn.Key == corev1.TaintNodeUnreachable {
			return false, "tainted " + tn.Key
		}
	}
	if !ready {
		return false, "not Ready"
	}
	return true, "Ready"
}

// waitFor polls cond every 500 ms until it is true or timeout passes.
func waitFor(timeout time.Duration, cond func() bool) bool {
	end := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(end) {
			return false
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// restoreKubelet starts node's kubelet again and waits until the node can run pods.
func restoreKubelet(t *testing.T, cs kubernetes.Interface, node string) {
	t.Helper()
	start := time.Now()
	if err := harnessProc(t, "start", "kubelet-"+node); err != nil {
		t.Errorf("restart the kubelet of %s: %v", node, err)
		return
	}
	var why string
	if !waitFor(3*time.Minute, func() bool {
		var ok bool
		ok, why = nodeUsable(context.Background(), cs, node)
		return ok
	}) {
		t.Errorf("node %s is not usable 3 min after its kubelet restarted: %s", node, why)
		return
	}
	t.Logf("node %s Ready and untainted %.1fs after its kubelet restarted", node, time.Since(start).Seconds())
}

// faultCnperf starts `cnperf run` with args, calls onLine for every stderr line, and returns
// the lines and the exit error once it ended (killed after limit).
func faultCnperf(t *testing.T, bin string, limit time.Duration, onLine func(string), args ...string) ([]string, error) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(limit, func() {
		t.Errorf("cnperf still running after %s: killed", limit)
		_ = cmd.Process.Kill()
	})
	defer timer.Stop()
	var log []string
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		log = append(log, sc.Text())
		onLine(sc.Text())
	}
	err = cmd.Wait()
	t.Logf("cnperf stderr:\n%s", strings.Join(log, "\n"))
	return log, err
}

// checkFailedSamples: every failed sample has a cause and no figure, every sample that
// succeeded has a rate, and a case whose samples all failed says why.
func checkFailedSamples(t *testing.T, r *api.Result) {
	t.Helper()
	for _, s := range r.Samples {
		if s.Error != "" && (s.TransactionsPerSecond != nil || s.ThroughputBitsPerSecond != nil) {
			t.Errorf("%s: failed sample %d carries a figure", r.Path, s.Index)
		}
		rate := s.TransactionsPerSecond
		if rate == nil {
			rate = s.ThroughputBitsPerSecond
		}
		if s.Error == "" && (rate == nil || *rate <= 0) {
			t.Errorf("%s %s: sample %d succeeded without a rate", r.Profile, r.Path, s.Index)
		}
		t.Logf("%s sample %d: error %q", r.Path, s.Index, s.Error)
	}
	if r.Summary.SamplesFailed == r.Summary.SamplesTotal && r.Error == "" {
		t.Errorf("%s: every sample failed but the case has no cause", r.Path)
	}
}

// klogLine is a client-go/klog line ("E1126 12:00:00.000000  123 file.go:1] …"), which must
// never reach cnperf's stderr.
var klogLine = regexp.MustCompile(`(^|\s)[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+ |Unhandled Error`)

func checkNoKlog(t *testing.T, log []string) {
	t.Helper()
	for _, l := range log {
		if klogLine.MatchString(l) {
			t.Errorf("client-go's log reached cnperf's stderr: %q", l)
		}
	}
}

var crossClients = regexp.MustCompile(`cross-node clients on (\S+)`)

// TestFaultClientKubeletStopped stops the kubelet of the cross-node clients' node during the
// first case: that case's samples fail with the cause, the next case (same-node, on the
// other node) runs, and clean-up finishes although the stopped kubelet can never confirm
// its pods' deletion (cnperf force-deletes them and says so). Then, with the kubelet still
// stopped, the node turns NotReady, and a new run's placement avoids it (3+ nodes) or its
// error names it (2 nodes). The kubelet is started again in any case.
func TestFaultClientKubeletStopped(t *testing.T) {
	cl := kpClusterFromEnv(t)
	bin := kpBuildCnperf(t)
	ctx := context.Background()
	t0 := time.Now()
	runID := uuid.NewString()
	ns := kpNamespace("cnperf-e2e-kubelet")
	results := filepath.Join(t.TempDir(), "run.jsonl")
	var node, said string
	stopped := false
	log, err := faultCnperf(t, bin, 4*time.Minute, func(l string) {
		said += " " + l // stderr is wrapped at 120 columns: the node may be on the next line
		if m := crossClients.FindStringSubmatch(text.Folded(said)); m != nil && node == "" {
			node = strings.TrimSuffix(m[1], ",")
		}
		if !stopped && strings.HasPrefix(l, "case 1/2") && node != "" {
			stopped = true
			time.Sleep(time.Second)
			t.Cleanup(func() { restoreKubelet(t, cl.cs, node) })
			if err := harnessProc(t, "stop", "kubelet-"+node); err != nil {
				t.Errorf("stop the kubelet of %s: %v", node, err)
			}
		}
	}, "run", "--platform", "kube", "--kubeconfig", cl.kubeconfig, "-n", ns, "--uuid", runID,
		"--driver", "native", "--profile", "TCP_RR", "--path", "pod-pod-cross-node,pod-pod-same-node",
		"--duration", "2s", "--samples", "3", "--timeout", "20s", "--results", results, "-o", "json")
	if !stopped {
		t.Fatalf("the kubelet was never stopped (client node %q)", node)
	}
	all := strings.Join(log, "\n")
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exit.Failed {
		t.Errorf("cnperf exited with %v, want 1 (a case failed)", err)
	}
	checkNoKlog(t, log)
	r := faultRunGoesOn(t, results, 2)
	first, second := &r.Results[0], &r.Results[1]
	if first.Summary.SamplesFailed == 0 {
		t.Errorf("no sample of the first case failed after the kubelet of %s stopped", node)
	}
	checkFailedSamples(t, first)
	kubeletNamed := false
	for _, s := range first.Samples {
		kubeletNamed = kubeletNamed || strings.Contains(s.Error, "could not reach the kubelet of node "+node)
	}
	if !kubeletNamed {
		t.Errorf("no failed sample says the kubelet of %s cannot be reached", node)
	}
	if second.Error != "" || second.Summary.SamplesFailed != 0 {
		t.Errorf("the same-node case (not on %s) did not run cleanly: %q", node, second.Error)
	}
	if !text.ContainsFolded(all, "on node "+node+" was still terminating") || !text.ContainsFolded(all, "force-deleted it") {
		t.Errorf("cnperf did not say it force-deleted the pods the stopped kubelet of %s keeps", node)
	}
	if !text.ContainsFolded(all, "kube: cleaned up in") {
		t.Errorf("clean-up did not finish")
	}
	if left := kpLeftovers(ctx, t, cl.cs, runID); len(left) > 0 {
		t.Errorf("left behind with the kubelet of %s stopped: %v", node, left)
	}
	t.Logf("run with the kubelet stopped: %.1fs", time.Since(t0).Seconds())

	// The node turns NotReady (the node controller's grace period, 40-50 s after the last
	// heartbeat): a new run must not place endpoints on it.
	t1 := time.Now()
	var why string
	if !waitFor(2*time.Minute, func() bool {
		n, err := cl.cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return false
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status != corev1.ConditionTrue {
				why = "Ready=" + string(c.Status) + " (" + c.Reason + ")"
				return true
			}
		}
		return false
	}) {
		t.Fatalf("node %s still Ready 2 min after its kubelet stopped", node)
	}
	t.Logf("node %s %s after %.1fs more", node, why, time.Since(t1).Seconds())
	runID2 := uuid.NewString()
	ns2 := kpNamespace("cnperf-e2e-notready")
	results2 := filepath.Join(t.TempDir(), "run2.jsonl")
	log2, err2 := faultCnperf(t, bin, 2*time.Minute, func(string) {},
		"run", "--platform", "kube", "--kubeconfig", cl.kubeconfig, "-n", ns2, "--uuid", runID2,
		"--driver", "native", "--profile", "TCP_RR", "--path", "pod-pod-cross-node",
		"--duration", "1s", "--samples", "1", "--results", results2, "-o", "json")
	all2 := strings.Join(log2, "\n")
	checkNoKlog(t, log2)
	if cl.nodes() >= 3 {
		if err2 != nil {
			t.Errorf("with %s NotReady and %d nodes the run failed: %v", node, cl.nodes(), err2)
		}
		runs2, _, rerr := runfile.ReadWarnings(results2)
		if rerr != nil {
			t.Fatal(rerr)
		}
		for _, res := range runs2[0].Results {
			if pl := res.Placement; pl == nil || pl.Client.Node == node || pl.Server.Node == node {
				t.Errorf("placed on the NotReady node %s: %+v", node, pl)
			}
		}
	} else {
		if !errors.As(err2, &ee) || ee.ExitCode() == exit.OK {
			t.Errorf("with %s NotReady and 2 nodes a cross-node run succeeded", node)
		}
		if !text.ContainsFolded(all2, node+": not Ready") {
			t.Errorf("the error does not name the NotReady node %s", node)
		}
	}
	if left := kpLeftovers(ctx, t, cl.cs, runID2); len(left) > 0 {
		t.Errorf("left behind by the run with %s NotReady: %v", node, left)
	}
	t.Logf("total with the kubelet stopped: %.1fs", time.Since(t0).Seconds())
}

// TestFaultAPIServerRestart stops the API server one second into the first case and starts
// it again two seconds later: samples that needed it fail with the cause, the others run, the
// run ends with every case in the results file, clean-up works, and nothing of client-go's
// own logging reaches the terminal.
func TestFaultAPIServerRestart(t *testing.T) {
	cl := kpClusterFromEnv(t)
	bin := kpBuildCnperf(t)
	ctx := context.Background()
	t0 := time.Now()
	runID := uuid.NewString()
	ns := kpNamespace("cnperf-e2e-apisrv")
	results := filepath.Join(t.TempDir(), "run.jsonl")
	restarted := make(chan time.Duration, 1)
	stopped := false
	log, err := faultCnperf(t, bin, 4*time.Minute, func(l string) {
		if stopped || !strings.HasPrefix(l, "case 1/2") {
			return
		}
		stopped = true
		time.Sleep(time.Second)
		t.Cleanup(func() {
			if err := harnessProc(t, "start", "kube-apiserver"); err != nil {
				t.Errorf("restart kube-apiserver: %v", err)
			}
		})
		if err := harnessProc(t, "stop", "kube-apiserver"); err != nil {
			t.Errorf("stop kube-apiserver: %v", err)
		}
		go func() {
			time.Sleep(2 * time.Second)
			start := time.Now()
			if err := harnessProc(t, "start", "kube-apiserver"); err != nil {
				t.Errorf("start kube-apiserver: %v", err)
			}
			waitFor(2*time.Minute, func() bool {
				_, err := cl.cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
				return err == nil
			})
			restarted <- time.Since(start)
		}()
	}, "run", "--platform", "kube", "--kubeconfig", cl.kubeconfig, "-n", ns, "--uuid", runID,
		"--driver", "native", "--profile", "TCP_RR", "--path", "pod-pod-cross-node,pod-pod-same-node",
		"--duration", "2s", "--samples", "3", "--timeout", "10s", "--results", results, "-o", "json")
	if !stopped {
		t.Fatal("the API server was never stopped")
	}
	select {
	case d := <-restarted:
		t.Logf("API server ready %.1fs after its restart", d.Seconds())
	case <-time.After(3 * time.Minute):
		t.Fatal("the API server is not ready 3 min after its restart")
	}
	var ee *exec.ExitError
	if err != nil && (!errors.As(err, &ee) || ee.ExitCode() != exit.Failed) {
		t.Errorf("cnperf exited with %v, want 0, or 1 for a failed case", err)
	}
	checkNoKlog(t, log)
	r := faultRunGoesOn(t, results, 2)
	failed := 0
	for i := range r.Results {
		checkFailedSamples(t, &r.Results[i])
		failed += r.Results[i].Summary.SamplesFailed
	}
	t.Logf("%d samples failed while the API server restarted", failed)
	all := strings.Join(log, "\n")
	if !text.ContainsFolded(all, "kube: cleaned up in") {
		t.Errorf("clean-up did not finish")
	}
	if left := kpLeftovers(ctx, t, cl.cs, runID); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
	t.Logf("total: %.1fs", time.Since(t0).Seconds())
}
