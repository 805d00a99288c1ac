package app_test

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/sink/pushgateway/pushgatewaytest"
	"github.com/cnperf/cnperf/internal/testdaemon"
	"github.com/cnperf/cnperf/internal/text"
)

// TestSIGTERMPushesInterruptedRun is what happens to a scheduled run that is cut (a CronJob's
// activeDeadlineSeconds deletes the pod: SIGTERM): cnperf, a process of its own with the real
// signal handler, is sent SIGTERM once its first case is in the results file; it stops, keeps
// the finished case, and pushes the run to Debian's real Pushgateway with
// cnperf_run_interrupted 1 and the finished case's figure, then exits 1.
func TestSIGTERMPushesInterruptedRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Pushgateway and measures on loopback; skipped with -short")
	}
	u := pushgatewaytest.Start(t)
	results := filepath.Join(t.TempDir(), "run.jsonl")
	cmd := cnperfCmd("run", "--platform", "local", "--no-progress", "-o", "json", "--results", results,
		"--profile", "TCP_STREAM,TCP_RR,UDP_STREAM", "--duration", "1s", "--samples", "2",
		"--label", "schedule=cut", "--push-gateway", u, "--push-job", "cnperf-sigterm")
	proc := testdaemon.Run(t, cmd)
	proc.CutAfterFirstCase(t, results, 0)
	err := proc.Wait(t, 30*time.Second)
	stderr := proc.Stderr
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exit.Failed {
		t.Errorf("exit %v, want code %d; stderr:\n%s", err, exit.Failed, stderr.String())
	}
	if !text.ContainsFolded(stderr.String(), "pushgateway: run ") || !text.ContainsFolded(stderr.String(), "/metrics/job/cnperf-sigterm/label_schedule/cut") {
		t.Errorf("stderr does not say where the run was pushed:\n%s", stderr.String())
	}
	scraped := pushgatewaytest.Scrape(t, u)
	for _, want := range []string{
		`cnperf_run_interrupted{instance="",job="cnperf-sigterm",label_schedule="cut"} 1`,
		`cnperf_throughput_bytes_per_second{burst="0",client_node=`,
		`job="cnperf-sigterm",label_schedule="cut",message_size_bytes="131072",parallel="1",path="loopback",profile="TCP_STREAM"`,
	} {
		if !strings.Contains(scraped, want) {
			t.Errorf("the Pushgateway lacks %s; its cnperf series:\n%s", want, cnperfLines(scraped))
		}
	}
	t.Logf("stderr:\n%s\nthe Pushgateway's cnperf series:\n%s", stderr.String(), cnperfLines(scraped))
}

func cnperfLines(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "cnperf_") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
