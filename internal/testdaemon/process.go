package testdaemon

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Process is a command a test started whose end is awaited in the background (Run): cnperf
// itself, which the test may cut as a scheduler does (CutAfterFirstCase).
type Process struct {
	Cmd    *exec.Cmd
	Stderr *bytes.Buffer
	done   chan error
}

// Run starts cmd with its standard error kept in Stderr; a process still running when the
// test ends is killed.
func Run(t testing.TB, cmd *exec.Cmd) *Process {
	t.Helper()
	p := &Process{Cmd: cmd, Stderr: &bytes.Buffer{}, done: make(chan error, 1)}
	cmd.Stderr = p.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return p
}

// CutAfterFirstCase sends the process SIGTERM once cnperf's first finished case is in its
// results file (waited for 60 s at most) and after more: a CronJob's activeDeadlineSeconds
// cutting a run.
func (p *Process) CutAfterFirstCase(t testing.TB, results string, after time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(results)
		if bytes.Count(b, []byte(`"type":"result"`)) >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no case finished within 60s; stderr:\n%s", p.Stderr.String())
		}
	}
	time.Sleep(after)
	if err := p.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
}

// Wait returns how the process ended; the test fails when it runs longer than timeout.
func (p *Process) Wait(t testing.TB, timeout time.Duration) error {
	t.Helper()
	select {
	case err := <-p.done:
		return err
	case <-time.After(timeout):
		t.Fatalf("%s still running after %v; stderr:\n%s", filepath.Base(p.Cmd.Path), timeout, p.Stderr.String())
		return nil
	}
}
