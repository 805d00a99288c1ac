// Package testdaemon starts a real server (Prometheus, its Pushgateway, OpenSearch) for a test
// in a process group of its own and stops the whole group at cleanup: SIGTERM, then SIGKILL
// when it has not ended within a grace period; and it runs cnperf itself as a process a test
// can cut as a scheduler does (Run, Process.CutAfterFirstCase). Only tests import it.
package testdaemon

import (
	"bytes"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// Start starts cmd (its output goes to the returned buffer) and stops its process group when
// the test ends, waiting up to grace after SIGTERM. done is closed when the process has ended.
func Start(t testing.TB, cmd *exec.Cmd, grace time.Duration) (logs *bytes.Buffer, done <-chan struct{}) {
	t.Helper()
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	logs = &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{})
	go func() { _ = cmd.Wait(); close(ended) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-ended:
		case <-time.After(grace):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-ended
		}
	})
	return logs, ended
}
