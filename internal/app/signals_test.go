package app_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/platform/local"
	"github.com/cnperf/cnperf/internal/text"
)

// cnperfCmd is the cnperf CLI as a process of its own: this test binary re-executed with
// local.SelfExecEnv, whose TestMain runs selfexec.MaybeRun — the same lines as cmd/cnperf's
// main (interrupt.Notify, app.Run, exit.Code), so signals reach a real process with the real
// handler, without building the binary once more.
func cnperfCmd(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), local.SelfExecEnv+"=1")
	return cmd
}

// TestSignalWhileBlockedOnInput: report, compare, import and run -c blocked reading a FIFO,
// and report - reading a silent standard input, end at the first SIGINT or SIGTERM with
// 128+signal and print no clean-up message (they have nothing to clean up). Issue 28
// finding 5: they ignored the first two signals and printed the run's clean-up lines.
func TestSignalWhileBlockedOnInput(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		args  []string
		stdin bool
	}{
		{"report FIFO", []string{"report", fifo}, false},
		{"report -", []string{"report", "-"}, true},
		{"compare FIFO", []string{"compare", fifo, fifo}, false},
		{"import FIFO", []string{"import", "--driver", "iperf3", fifo}, false},
		{"run -c FIFO", []string{"run", "--dry-run", "-c", fifo}, false},
		{"run -c FIFO (not dry)", []string{"run", "-c", fifo}, false},
	} {
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
			t.Run(c.name+"/"+sig.String(), func(t *testing.T) {
				cmd := cnperfCmd(c.args...)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				if c.stdin {
					r, w, err := os.Pipe() // never written, open until the end
					if err != nil {
						t.Fatal(err)
					}
					defer w.Close()
					defer r.Close()
					cmd.Stdin = r
				}
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				done := make(chan error, 1)
				go func() { done <- cmd.Wait() }()
				defer func() { _ = cmd.Process.Kill() }()
				waitBlockedOnInput(t, cmd.Process.Pid) // a signal before interrupt.Notify would kill it by signal
				sent := time.Now()
				if err := cmd.Process.Signal(sig); err != nil {
					t.Fatal(err)
				}
				var err error
				select {
				case err = <-done:
				case <-time.After(5 * time.Second):
					t.Fatalf("still running 5s after %s; stderr:\n%s", sig, stderr.String())
				}
				if el := time.Since(sent); el > 3*time.Second {
					t.Errorf("took %s to end after %s", el, sig)
				}
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != 128+int(sig) {
					t.Errorf("exit %v, want code %d", err, 128+int(sig))
				}
				for _, bad := range []string{"clean", "stopping", "finished cases"} {
					if text.ContainsFolded(stderr.String(), bad) {
						t.Errorf("stderr speaks of %q:\n%s", bad, stderr.String())
					}
				}
			})
		}
	}
}

// waitBlockedOnInput waits until a thread of process pid sleeps reading its standard input
// (read on fd 0) or opening a FIFO no writer has opened (openat, waiting for its partner), as
// /proc/PID/task/*/syscall and wchan say: the command then runs past main's interrupt.Notify.
// A fixed pause (1.5 s before) was not enough on a loaded machine, where starting this test
// binary can take longer: a signal before Notify ends the process by the signal, not with
// 128+signal. Where /proc does not say (no access), it waits 1.5 s as before.
func waitBlockedOnInput(t *testing.T, pid int) {
	t.Helper()
	read, openat := strconv.Itoa(syscall.SYS_READ), strconv.Itoa(syscall.SYS_OPENAT)
	deadline := time.Now().Add(30 * time.Second)
	for {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
		readable := false
		for _, task := range tasks {
			b, err := os.ReadFile(filepath.Join(task, "syscall"))
			if err != nil {
				continue
			}
			readable = true
			f := strings.Fields(string(b))
			wchan, _ := os.ReadFile(filepath.Join(task, "wchan"))
			if len(f) >= 2 && (f[0] == read && f[1] == "0x0" || f[0] == openat && string(wchan) == "wait_for_partner") {
				return
			}
		}
		if !readable && len(tasks) > 0 {
			t.Logf("/proc/%d/task/*/syscall unreadable: waiting 1.5 s instead", pid)
			time.Sleep(1500 * time.Millisecond)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d not blocked on its input within 30 s", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
