//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/runfile"
	"github.com/cnperf/cnperf/internal/text"
)

// TestProgrammingInterrupted: `cnperf programming` (the cnperf binary, so that real signals
// reach it) stopped by SIGINT once its pods are up and changes are being measured. One
// signal: it removes what it created, keeps the finished results in the results file (the
// run marked interrupted) and exits 1 saying "interrupted" (it used to say "context
// canceled"). Two signals at once with -q: clean-up is cut short, and what may be left is
// still said with the command that removes it (-q used to hide it); that command then
// leaves nothing.
func TestProgrammingInterrupted(t *testing.T) {
	kc, _ := meshCluster(t)
	bin := kpBuildCnperf(t)
	cs, _, err := kube.NewClientset(kc, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		quiet   bool
		signals int
	}{{"one signal", false, 1}, {"two signals, -q", true, 2}} {
		t.Run(c.name, func(t *testing.T) {
			ns := fmt.Sprintf("cnperf-e2e-prog-int-%d-%d", os.Getpid()%10000, time.Now().UnixNano()%100000)
			results := filepath.Join(t.TempDir(), "programming.jsonl")
			args := []string{"programming", "--kubeconfig", kc, "-n", ns, "--kind", "service", "--count", "50",
				"--results", results, "-o", "json", "--image", os.Getenv("CNPERF_E2E_AGENT_IMAGE")}
			if c.quiet {
				args = append(args, "-q")
			}
			cmd := exec.Command(bin, args...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			kill := time.AfterFunc(5*time.Minute, func() { _ = cmd.Process.Kill() })
			defer kill.Stop()
			// -q prints no progress: the cluster says when the changes are being measured (the
			// first Service exists); a few seconds later some have finished.
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			if err := waitService(ctx, cs, ns); err != nil {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				t.Fatalf("no Service in %s: %v\n%s", ns, err, stderr.String())
			}
			time.Sleep(3 * time.Second)
			for i := 0; i < c.signals; i++ {
				// apart: two signals pending at once are delivered as one
				_ = cmd.Process.Signal(syscall.SIGINT)
				time.Sleep(200 * time.Millisecond)
			}
			err := cmd.Wait()
			all := stderr.String()
			t.Logf("cnperf stderr:\n%s", all)
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != exit.Failed {
				t.Errorf("cnperf exited with %v, want exit code %d", err, exit.Failed)
			}
			if !text.ContainsFolded(all, "cnperf: interrupted") || text.ContainsFolded(all, "cnperf: context canceled") {
				t.Errorf("cnperf did not end saying it was interrupted")
			}
			runs, _, rerr := runfile.ReadWarnings(results)
			if rerr != nil || len(runs) != 1 || !runs[0].Interrupted || len(runs[0].Results) == 0 {
				t.Errorf("results file: %v; want one run marked interrupted with the finished results", rerr)
			}
			if c.signals == 1 {
				checkGone(t, kc, ns)
				return
			}
			left := fmt.Sprintf("cnperf: clean-up did not finish; namespace %s (delete it with: kubectl delete namespace %s)", ns, ns)
			if !text.ContainsFolded(all, left) {
				t.Errorf("with -q, cnperf did not say what may be left (%q)", left)
			}
			// What the line says removes everything (kubectl delete namespace, through the API).
			if err := kube.DeleteNamespace(context.Background(), cs, ns, true); err != nil {
				t.Errorf("delete namespace %s: %v", ns, err)
			}
			checkGone(t, kc, ns)
		})
	}
}

// waitService waits until ns has a Service (programming's service kind creates one per change).
func waitService(ctx context.Context, cs kubernetes.Interface, ns string) error {
	return wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		l, err := cs.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
		return err == nil && len(l.Items) > 0, nil
	})
}
