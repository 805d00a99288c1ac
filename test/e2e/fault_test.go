//go:build e2e

// Fault tests on the harness's cluster: the server pod deleted during a sample, cnperf
// stopped by a second signal during clean-up, and killed with SIGKILL. Each ends with "every finished case is in the results file, and
// nothing is left in the cluster" (after the command cnperf names has run).
package e2e

import (
	"bufio"
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/runfile"
	"github.com/cnperf/cnperf/internal/text"
)

// faultRun starts `cnperf run` with two cases (pod-pod-same-node, then pod-pod-cross-node)
// and a results file; at the stderr line containing trigger it calls act once; it returns
// cnperf's stderr and exit error once it ended.
func faultRun(t *testing.T, bin, kubeconfig, ns, runID, results, trigger string, act func(cmd *exec.Cmd, line string) bool) ([]string, error) {
	t.Helper()
	cmd := exec.Command(bin, "run", "--platform", "kube", "--kubeconfig", kubeconfig, "-n", ns, "--uuid", runID,
		"--driver", "native", "--profile", "TCP_RR", "--path", "pod-pod-same-node,pod-pod-cross-node",
		"--duration", "3s", "--samples", "2", "--results", results, "-o", "json")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(5*time.Minute, func() { _ = cmd.Process.Kill() })
	defer timer.Stop()
	var log []string
	armed := false
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		l := sc.Text()
		log = append(log, l)
		if strings.Contains(l, trigger) {
			armed = true
		}
		if armed && act(cmd, l) {
			armed = false
			trigger = "\x00never"
		}
	}
	err = cmd.Wait()
	t.Logf("cnperf stderr:\n%s", strings.Join(log, "\n"))
	return log, err
}

// faultFinishedCases checks the results file: the first case finished with both samples.
func faultFinishedCases(t *testing.T, results string) {
	t.Helper()
	runs, warnings, err := runfile.ReadWarnings(results)
	if err != nil {
		t.Fatalf("results file: %v", err)
	}
	t.Logf("results file warnings: %q", warnings)
	r := runs[0]
	if len(r.Results) < 1 {
		t.Fatalf("the finished case is not in the results file")
	}
	if first := r.Results[0]; first.Error != "" || len(first.Samples) != 2 || first.Summary.SamplesFailed != 0 {
		t.Errorf("the finished case is not whole: error %q, %d samples", first.Error, len(first.Samples))
	}
}

// faultRunGoesOn reads the results file of a run that met a fault: it must not be marked
// interrupted and must hold every one of its cases (the run went on past the fault).
func faultRunGoesOn(t *testing.T, results string, cases int) *api.Run {
	t.Helper()
	runs, _, err := runfile.ReadWarnings(results)
	if err != nil {
		t.Fatal(err)
	}
	r := runs[0]
	if r.Interrupted || len(r.Results) != cases {
		t.Fatalf("interrupted %v, %d results: the run did not go on", r.Interrupted, len(r.Results))
	}
	return r
}

// TestFaultSecondSignalCutsCleanup: SIGINT during the second case, SIGTERM as soon as cnperf
// says it is cleaning up. cnperf must stop cleaning, say exactly what may be left and the
// command that removes it, and exit; that command must then leave nothing.
func TestFaultSecondSignalCutsCleanup(t *testing.T) {
	cl := kpClusterFromEnv(t)
	bin := kpBuildCnperf(t)
	runID := uuid.NewString()
	ns := kpNamespace("cnperf-e2e-sig2")
	results := filepath.Join(t.TempDir(), "run.jsonl")
	step := 0
	log, err := faultRun(t, bin, cl.kubeconfig, ns, runID, results, "case 2/2", func(cmd *exec.Cmd, line string) bool {
		switch {
		case step == 0:
			time.Sleep(2 * time.Second) // into the second case's first sample
			_ = cmd.Process.Signal(syscall.SIGINT)
			step++
		case step == 1 && strings.Contains(line, "SIGINT: stopping; finished cases are kept; cleaning up"):
			_ = cmd.Process.Signal(syscall.SIGTERM)
			step++
			return true
		}
		return false
	})
	all := strings.Join(log, "\n")
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exit.Failed {
		t.Errorf("cnperf exited with %v, want exit code 1", err)
	}
	if !text.ContainsFolded(all, "cnperf: second signal (SIGTERM): cutting clean-up and result shipping short") {
		t.Errorf("cnperf did not say it cuts clean-up short")
	}
	// The line is wrapped to 120 columns (or $COLUMNS) at spaces, its continuations indented
	// two spaces: it is read whole, its white space folded.
	wantLeft := "cnperf: clean-up did not finish; may be left in the cluster: namespace " + ns + " (created by run " + runID + ") with its pods and Services; remove them with: "
	said := ""
	for i, l := range log {
		if strings.HasPrefix(l, "cnperf: clean-up did not finish;") {
			said = l
			for _, c := range log[i+1:] {
				if !strings.HasPrefix(c, "  ") {
					break
				}
				said += c
			}
			break
		}
	}
	command, found := strings.CutPrefix(text.Folded(said), wantLeft)
	if !found {
		t.Fatalf("cnperf did not say what may be left (%q)", wantLeft)
	}
	if want := "cnperf cleanup --run " + runID + " --kubeconfig " + cl.kubeconfig; command != want {
		t.Errorf("command %q, want %q", command, want)
	}
	faultFinishedCases(t, results)
	// Run exactly the command cnperf printed.
	argv := strings.Fields(command)
	out, cerr := exec.Command(bin, argv[1:]...).CombinedOutput()
	t.Logf("%s:\n%s", command, out)
	if cerr != nil {
		t.Errorf("%s: %v", command, cerr)
	}
	if left := kpLeftovers(context.Background(), t, cl.cs, runID); len(left) > 0 {
		t.Errorf("left behind after %s: %v", command, left)
	}
}

// TestFaultSIGKILLThenCleanup: cnperf killed with SIGKILL during the second case keeps the
// finished first case in its results file, and `cnperf cleanup --run` removes everything.
func TestFaultSIGKILLThenCleanup(t *testing.T) {
	cl := kpClusterFromEnv(t)
	bin := kpBuildCnperf(t)
	runID := uuid.NewString()
	ns := kpNamespace("cnperf-e2e-kill")
	results := filepath.Join(t.TempDir(), "run.jsonl")
	_, err := faultRun(t, bin, cl.kubeconfig, ns, runID, results, "case 2/2", func(cmd *exec.Cmd, _ string) bool {
		time.Sleep(2 * time.Second)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		return true
	})
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ProcessState.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("cnperf was not killed: %v", err)
	}
	faultFinishedCases(t, results)
	if left := kpLeftovers(context.Background(), t, cl.cs, runID); len(left) == 0 {
		t.Fatalf("a killed run left nothing: the test means nothing")
	}
	out, cerr := exec.Command(bin, "cleanup", "--kubeconfig", cl.kubeconfig, "--run", runID).CombinedOutput()
	t.Logf("cnperf cleanup:\n%s", out)
	if cerr != nil || !text.ContainsFolded(string(out), ns) {
		t.Errorf("cleanup: %v", cerr)
	}
	if left := kpLeftovers(context.Background(), t, cl.cs, runID); len(left) > 0 {
		t.Errorf("left behind after cnperf cleanup: %v", left)
	}
}

// TestFaultServerPodDeleted: the pod-network server pod is deleted during the first case's
// first sample. That sample fails with the cause, the case recovers or fails with the cause
// (never a zero), the run goes on with the next case (host-host, another server), every case
// is in the results file and nothing is left. cnperf's endpoints are bare pods, recreated by
// nothing, so the case fails: every later sample fails too, each error saying the server pod
// is gone (the network error alone — connection closed, i/o timeout, no route to host — did
// not say why).
func TestFaultServerPodDeleted(t *testing.T) {
	cl := kpClusterFromEnv(t)
	bin := kpBuildCnperf(t)
	runID := uuid.NewString()
	ns := kpNamespace("cnperf-e2e-del")
	results := filepath.Join(t.TempDir(), "run.jsonl")
	cmd := exec.Command(bin, "run", "--platform", "kube", "--kubeconfig", cl.kubeconfig, "-n", ns, "--uuid", runID,
		"--driver", "native", "--profile", "TCP_RR", "--path", "pod-pod-cross-node,host-host",
		"--duration", "3s", "--samples", "3", "--timeout", "20s", "--results", results, "-o", "json")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(6*time.Minute, func() { _ = cmd.Process.Kill() })
	defer timer.Stop()
	var log []string
	deleted := false
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		l := sc.Text()
		log = append(log, l)
		if !deleted && strings.HasPrefix(l, "case 1/2") {
			time.Sleep(1500 * time.Millisecond)
			sel := "cnperf.dev/run=" + runID + ",cnperf.dev/role=server,cnperf.dev/network=pod"
			zero := int64(0)
			if err := cl.cs.CoreV1().Pods(ns).DeleteCollection(context.Background(),
				metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{LabelSelector: sel}); err != nil {
				t.Errorf("delete the server pod: %v", err)
			}
			deleted = true
		}
	}
	err = cmd.Wait()
	t.Logf("cnperf stderr:\n%s", strings.Join(log, "\n"))
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exit.Failed {
		t.Errorf("cnperf exited with %v, want 1 (a case failed)", err)
	}
	r := faultRunGoesOn(t, results, 2)
	first := r.Results[0]
	if first.Summary.SamplesFailed == 0 {
		t.Errorf("no sample of the first case failed after its server was deleted: %+v", first.Summary)
	}
	for _, s := range first.Samples {
		if s.Error != "" && (s.TransactionsPerSecond != nil || s.ThroughputBitsPerSecond != nil) {
			t.Errorf("failed sample %d carries a figure", s.Index)
		}
		// the cause, not only the network error it made (connection closed, no route to host)
		if s.Error != "" && !strings.Contains(s.Error, "(server pod "+ns+"/") {
			t.Errorf("failed sample %d does not say what happened to the server pod: %q", s.Index, s.Error)
		}
		if s.Error == "" && (s.TransactionsPerSecond == nil || *s.TransactionsPerSecond <= 0) {
			t.Errorf("sample %d succeeded without a rate", s.Index)
		}
		t.Logf("case 1 sample %d: error %q", s.Index, s.Error)
	}
	if first.Summary.SamplesFailed == first.Summary.SamplesTotal && first.Error == "" {
		t.Errorf("every sample failed but the case has no cause")
	}
	if second := r.Results[1]; second.Error != "" || second.Summary.SamplesFailed != 0 {
		t.Errorf("the next case (another server) did not run cleanly: %q", second.Error)
	}
	if left := kpLeftovers(context.Background(), t, cl.cs, runID); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}
