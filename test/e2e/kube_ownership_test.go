//go:build e2e

// End-to-end test of `cnperf cleanup`'s ownership rules on the harness's cluster: a live run
// and kept standing config survive it; a run whose cnperf was killed with SIGKILL is removed
// once its Lease has expired.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/kube"
)

// startRun starts `cnperf run` on the cluster and returns once it prints a line containing
// after (its pods are up); the caller ends the process.
func startRun(t *testing.T, bin, kubeconfig, ns, runID, after string) (*exec.Cmd, *kpSyncBuffer) {
	t.Helper()
	cmd := exec.Command(bin, "run", "--platform", "kube", "--kubeconfig", kubeconfig, "-n", ns, "--uuid", runID,
		"--driver", "native", "--profile", "TCP_RR", "--path", "pod-pod-same-node", "--duration", "120s", "--samples", "1", "-o", "json")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = &bytes.Buffer{}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Signal(syscall.SIGINT)
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(2 * time.Minute):
				_ = cmd.Process.Kill()
			}
		}
	})
	log := &kpSyncBuffer{}
	seen := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		once := false
		for sc.Scan() {
			_, _ = log.Write([]byte(sc.Text() + "\n")) // a bytes.Buffer: never fails
			if !once && strings.Contains(sc.Text(), after) {
				once = true
				close(seen)
			}
		}
	}()
	select {
	case <-seen:
	case <-time.After(3 * time.Minute):
		t.Fatalf("no %q within 3 minutes:\n%s", after, log.b.String())
	}
	return cmd, log
}

func TestKubeCleanupOwnership(t *testing.T) {
	cl := kpClusterFromEnv(t)
	bin := kpBuildCnperf(t)
	ctx := context.Background()
	liveID, deadID := uuid.NewString(), uuid.NewString()
	liveNS, deadNS, standingNS := kpNamespace("cnperf-e2e-live"), kpNamespace("cnperf-e2e-dead"), kpNamespace("cnperf-e2e-standing")

	// kept standing config: policies only (no pods to wait for)
	out, stderr, code := kpRunCLI(ctx, "load", "create", "--kubeconfig", cl.kubeconfig, "-n", standingNS, "--policies", "2", "--idle-policies", "1")
	if code != exit.OK {
		t.Fatalf("load create exited %d:\n%s%s", code, out, stderr)
	}
	defer kpRunCLI(context.Background(), "load", "remove", "--kubeconfig", cl.kubeconfig, "-n", standingNS)

	live, liveLog := startRun(t, bin, cl.kubeconfig, liveNS, liveID, "case 1/")
	dead, deadLog := startRun(t, bin, cl.kubeconfig, deadNS, deadID, "case 1/")
	if err := dead.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = dead.Wait()
	t.Logf("killed cnperf (run %s) with SIGKILL:\n%s", deadID, deadLog.b.String())
	if left := kpLeftovers(ctx, t, cl.cs, deadID); len(left) == 0 {
		t.Fatal("the killed run left nothing: nothing to test")
	}

	// before its Lease expires, the killed run is not provably abandoned
	out, _, _ = kpRunCLI(ctx, "cleanup", "--kubeconfig", cl.kubeconfig, "--dry-run")
	t.Logf("cnperf cleanup --dry-run, right after the kill:\n%s", out)
	if strings.Contains(out, "would remove Namespace "+deadNS) {
		t.Errorf("a run whose Lease has not expired yet would be removed")
	}
	time.Sleep(kube.LeaseDuration + 5*time.Second)

	out, stderr, code = kpRunCLI(ctx, "cleanup", "--kubeconfig", cl.kubeconfig, "--dry-run")
	t.Logf("cnperf cleanup --dry-run, %s after the kill:\n%s%s", kube.LeaseDuration+5*time.Second, out, stderr)
	for _, want := range []string{
		"would remove Namespace " + deadNS + " (run " + deadID + "): run abandoned: lease " + deadNS + "/",
		"kept Namespace " + liveNS + " (run " + liveID + "): run alive: lease " + liveNS + "/",
		"kept Namespace " + standingNS + ": standing config: removed only when named",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run lacks %q", want)
		}
	}
	if code != exit.OK {
		t.Errorf("dry run exited %d", code)
	}

	out, stderr, code = kpRunCLI(ctx, "cleanup", "--kubeconfig", cl.kubeconfig)
	t.Logf("cnperf cleanup:\n%s%s", out, stderr)
	if code != exit.OK {
		t.Errorf("cleanup exited %d", code)
	}
	if left := kpLeftovers(ctx, t, cl.cs, deadID); len(left) > 0 {
		t.Errorf("the abandoned run survived cleanup: %v", left)
	}
	if _, err := cl.cs.CoreV1().Namespaces().Get(ctx, standingNS, metav1.GetOptions{}); err != nil {
		t.Errorf("the standing config's namespace was removed: %v", err)
	}
	pols, err := cl.cs.NetworkingV1().NetworkPolicies(standingNS).List(ctx, metav1.ListOptions{})
	if err != nil || len(pols.Items) < 3 { // 2 policies, 1 idle (and the allow policy)
		t.Errorf("standing policies after cleanup: %d (%v), want them all", len(pols.Items), err)
	}
	pods, err := cl.cs.CoreV1().Pods(liveNS).List(ctx, metav1.ListOptions{LabelSelector: kube.RunSelector(liveID)})
	if err != nil || len(pods.Items) == 0 {
		t.Errorf("the live run's pods are gone: %v", err)
	}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			t.Errorf("the live run's pod %s is being deleted", p.Name)
		}
	}
	if live.ProcessState != nil {
		t.Errorf("the live run ended during cleanup:\n%s", liveLog.b.String())
	}

	// named, the standing config goes
	out, stderr, code = kpRunCLI(ctx, "cleanup", "--kubeconfig", cl.kubeconfig, "--standing", standingNS)
	t.Logf("cnperf cleanup --standing %s:\n%s%s", standingNS, out, stderr)
	if code != exit.OK || !strings.Contains(out, "removed the standing config of namespace "+standingNS) {
		t.Errorf("cleanup --standing exited %d", code)
	}
	if _, err := cl.cs.CoreV1().Namespaces().Get(ctx, standingNS, metav1.GetOptions{}); err == nil {
		t.Errorf("namespace %s survived cleanup --standing", standingNS)
	}
}
