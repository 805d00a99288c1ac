package kube

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	utilexec "k8s.io/client-go/util/exec"

	"github.com/cnperf/cnperf/internal/capbuf"
	"github.com/cnperf/cnperf/internal/driver"
)

// localStreamer stands in for the exec API, which needs a kubelet: it runs argv with this
// host's shell and coreutils, as the container runtime would in the pod. Like a real exec
// stream, cancelling ctx cuts the stream but does NOT kill the process: only the wrapper's
// kill path may do that, which is what these tests check.
func localStreamer(t *testing.T) Streamer {
	return func(ctx context.Context, ns, pod, container string, argv []string, stdout, stderr io.Writer) error {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Stdout, cmd.Stderr = stdout, stderr
		if err := cmd.Start(); err != nil {
			return err
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			<-done //nolint:errcheck // killed on purpose: the wait error only says so
		})
		select {
		case err := <-done:
			done <- err // for the cleanup
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				return utilexec.CodeExitError{Err: err, Code: ee.ExitCode()}
			}
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func testExecutor(t *testing.T, max int) *PodExecutor {
	return &PodExecutor{Stream: localStreamer(t), Namespace: "cnperf", Pod: "cnperf-cli-pod-c-0b5c3e2a", Container: "client",
		DefaultTimeout: time.Minute, MaxOutput: max}
}

// alive says whether pid still runs: a zombie has exited (it waits for a parent to reap it,
// which for an orphan is PID 1, slow to do so on some machines).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// pid (comm) STATE ...; comm may hold spaces and parentheses
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}

// pidSeen wraps e's streamer and returns a channel closed once the wrapper's first stderr
// line (its PID) has reached the executor. The fake streamer copies stderr in an os/exec
// goroutine that, on a loaded machine, may run after the tool has started and even after the
// stream is cut; a real stream cut before that line arrives leaves the tool to its
// `timeout` deadline (Exec cannot kill a PID it never got), which is not what these tests check.
func pidSeen(e *PodExecutor) <-chan struct{} {
	seen := make(chan struct{})
	var once sync.Once
	inner := e.Stream
	e.Stream = func(ctx context.Context, ns, pod, container string, argv []string, stdout, stderr io.Writer) error {
		return inner(ctx, ns, pod, container, argv, stdout, lineSignal{w: stderr, line: func() { once.Do(func() { close(seen) }) }})
	}
	return seen
}

// lineSignal passes writes on to w and calls line after one that held a newline.
type lineSignal struct {
	w    io.Writer
	line func()
}

func (l lineSignal) Write(p []byte) (int, error) {
	n, err := l.w.Write(p)
	if bytes.IndexByte(p[:n], '\n') >= 0 {
		l.line()
	}
	return n, err
}

// waitPID reads the PID a test command wrote.
func waitPID(t *testing.T, file string) int {
	t.Helper()
	for i := 0; i < 3000; i++ { // 30 s: starting a shell can take seconds on a loaded machine
		if b, err := os.ReadFile(file); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the command never wrote its PID")
	return 0
}

func TestExecOutputs(t *testing.T) {
	e := testExecutor(t, 1<<20)
	argv := []string{"sh", "-c", `printf '%s|' "$@"; echo; echo oops >&2; exit 3`, "sh", "a b", "c'd", "$HOME", ""}
	out := e.Exec(context.Background(), driver.Command{Argv: argv, Timeout: 30 * time.Second})
	if out.Err != nil {
		t.Fatalf("Err = %v (a non-zero exit is not an execution error)", out.Err)
	}
	if out.ExitCode != 3 {
		t.Errorf("exit code %d, want 3", out.ExitCode)
	}
	if got := string(out.Stdout); got != "a b|c'd|$HOME||\n" {
		t.Errorf("stdout %q: the argv was not passed untouched", got)
	}
	if got := string(out.Stderr); got != "oops\n" {
		t.Errorf("stderr %q, want the tool's stderr without the wrapper's PID line", got)
	}
	if strings.Join(out.Argv, " ") != strings.Join(argv, " ") {
		t.Errorf("Argv %q, want the driver's own argv", out.Argv)
	}
	if out.StartTime.IsZero() || out.EndTime.Before(out.StartTime) {
		t.Errorf("times %v %v", out.StartTime, out.EndTime)
	}
}

func TestExecCancelKillsRemoteTool(t *testing.T) {
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		cancel  bool
		want    string
	}{
		{name: "ctrl-c", timeout: time.Minute, cancel: true, want: "stopped: context canceled"},
		// 1 s: time for the wrapper's PID line to reach the executor even on a loaded CI
		// machine (see pidSeen), short enough to keep the test quick
		{name: "timeout", timeout: time.Second, want: "did not finish within 1s and was killed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "pid")
			e := testExecutor(t, 1<<20)
			seen := pidSeen(e)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			argv := []string{"sh", "-c", `echo $$ > "$1"; exec sleep 60`, "sh", pidFile}
			res := make(chan driver.Output, 1)
			go func() { res <- e.Exec(ctx, driver.Command{Argv: argv, Timeout: tc.timeout}) }()
			pid := waitPID(t, pidFile)
			if tc.cancel {
				select { // Ctrl-C once the executor knows the PID and the tool runs
				case <-seen:
				case <-time.After(30 * time.Second):
					t.Fatal("the wrapper's PID line never reached the executor")
				}
				cancel()
			}
			out := <-res
			if out.Err == nil || !strings.Contains(out.Err.Error(), tc.want) {
				t.Fatalf("Err = %v, want %q", out.Err, tc.want)
			}
			var ee *ExecError
			if !errors.As(out.Err, &ee) || ee.Pod != "cnperf-cli-pod-c-0b5c3e2a" || !strings.Contains(ee.Error(), "sleep 60") {
				t.Errorf("error does not carry pod and argv: %v", out.Err)
			}
			// Exec returns after the kill: the tool is gone, not left running in the pod.
			if alive(pid) {
				t.Errorf("remote tool %d still runs after Exec returned", pid)
			}
		})
	}
}

func TestExecOutputLimit(t *testing.T) {
	e := testExecutor(t, 100)
	out := e.Exec(context.Background(), driver.Command{Argv: []string{"sh", "-c", "head -c 100000 /dev/zero | tr '\\0' x"}, Timeout: 30 * time.Second})
	if len(out.Stdout) != 100 {
		t.Errorf("kept %d bytes, want the 100-byte limit", len(out.Stdout))
	}
	if out.Err == nil || !strings.Contains(out.Err.Error(), "exceeded 100 bytes") {
		t.Errorf("Err = %v, want the truncation said", out.Err)
	}
}

func TestExecMissingTool(t *testing.T) {
	e := testExecutor(t, 1<<20)
	out := e.Exec(context.Background(), driver.Command{Argv: []string{"no-such-tool-cnperf", "-x"}, Timeout: 30 * time.Second})
	if out.ExitCode != 127 || !strings.Contains(string(out.Stderr), "no-such-tool-cnperf") {
		t.Errorf("exit %d stderr %q, want 127 and the shell's message", out.ExitCode, out.Stderr)
	}
}

func TestPIDCapture(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		pid    int
		rest   string
	}{
		{"one write", []string{pidMarker + "42\nhello\n"}, 42, "hello\n"},
		{"split marker", []string{"@cnperf", "-pid=7", "\n", "x"}, 7, "x"},
		{"no marker", []string{"error: something\nmore"}, 0, "error: something\nmore"},
		{"long line without newline", []string{strings.Repeat("y", 100)}, 0, strings.Repeat("y", 100)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &pidCapture{out: &capbuf.Buffer{Max: 1 << 10}}
			for _, w := range tt.writes {
				if n, err := c.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			if c.PID() != tt.pid || string(c.out.Bytes()) != tt.rest {
				t.Errorf("pid %d rest %q, want %d %q", c.PID(), c.out.Bytes(), tt.pid, tt.rest)
			}
		})
	}
}

func TestShellJoin(t *testing.T) {
	got := ShellJoin([]string{"iperf3", "-c", "10.0.0.1", "--title", "a b", "it's", ""})
	want := `iperf3 -c 10.0.0.1 --title 'a b' 'it'\''s' ''`
	if got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// TestExecStream: mesh's node-resource and profile streams run through the same executor; the
// output arrives as it is printed, a failing command is an ExecError naming the pod and the
// tool's words, and ctx ending is the normal end of a stream.
func TestExecStream(t *testing.T) {
	e := testExecutor(t, 1<<20)
	var out strings.Builder
	if err := e.ExecStream(context.Background(), driver.Command{Argv: []string{"sh", "-c", "echo one; echo two"}}, &out); err != nil {
		t.Fatal(err)
	}
	if out.String() != "one\ntwo\n" {
		t.Errorf("stream %q", out.String())
	}
	err := e.ExecStream(context.Background(), driver.Command{Argv: []string{"sh", "-c", "echo broken >&2; exit 3"}}, io.Discard)
	var ee *ExecError
	if !errors.As(err, &ee) || ee.Pod != "cnperf-cli-pod-c-0b5c3e2a" || !strings.Contains(err.Error(), "broken") {
		t.Errorf("failing command: %v, want an ExecError with its stderr", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := e.ExecStream(ctx, driver.Command{Argv: []string{"sh", "-c", "echo x; sleep 1"}}, io.Discard); err != nil {
		t.Errorf("stream ended by ctx: %v", err)
	}
	if err := e.ExecStream(context.Background(), driver.Command{}, io.Discard); err == nil {
		t.Error("empty command accepted")
	}
}
