package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/cnperf/cnperf/internal/capbuf"
	"github.com/cnperf/cnperf/internal/driver"
)

// MaxOutputBytes bounds what one command may print; the rest is dropped and the output is
// marked truncated so a runaway tool cannot exhaust memory.
const MaxOutputBytes = 32 << 20

// SelfExecEnv is set in the environment of child processes started as "cnperf ...", so that
// a test binary standing in for cnperf (see internal/selfexec) knows to behave as the CLI.
const SelfExecEnv = "CNPERF_SELF_EXEC"

// Resolver maps a driver argv to the argv to execute (argv[0] "cnperf" → this binary).
type Resolver struct {
	// AgentBinary is the cnperf binary used for "cnperf" commands; empty means this process's
	// own executable.
	AgentBinary string
	// Env is added to the environment of "cnperf" commands (the run's agent token: never on
	// a command line, which every local user can read).
	Env []string
}

// EnvFor is the environment added to argv's process.
func (r Resolver) EnvFor(argv []string) []string {
	if len(argv) > 0 && argv[0] == "cnperf" {
		return r.Env
	}
	return nil
}

// Resolve returns the executable argv for argv.
func (r Resolver) Resolve(argv []string) ([]string, error) {
	if len(argv) == 0 {
		return nil, errors.New("empty command")
	}
	if argv[0] != "cnperf" {
		return argv, nil
	}
	bin := r.AgentBinary
	if bin == "" {
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("find the cnperf binary for %q: %w", argv[0], err)
		}
		bin = self
	}
	out := append([]string{bin}, argv[1:]...)
	return out, nil
}

// prepare builds an *exec.Cmd in its own process group so the whole tree can be killed.
func prepare(argv []string, env []string) *exec.Cmd {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(append(os.Environ(), SelfExecEnv+"=1"), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return cmd
}

// killGroup ends the process group of cmd: SIGTERM, then SIGKILL after grace.
func killGroup(cmd *exec.Cmd, done <-chan struct{}, grace time.Duration) {
	if cmd.Process == nil {
		return
	}
	pgid := cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(grace):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
}

// Exec runs argv (already resolved) with env added to this process's environment to
// completion, bounded by ctx and timeout. start, when not nil, is called to start the command
// (used to start it inside a network namespace).
func Exec(ctx context.Context, argv, env []string, timeout time.Duration, start func(*exec.Cmd) error) driver.Output {
	out := driver.Output{Argv: argv, StartTime: time.Now(), ExitCode: -1}
	if len(argv) == 0 {
		out.Err = errors.New("empty command")
		out.EndTime = time.Now()
		return out
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	cmd := prepare(argv, env)
	stdout := &capbuf.Buffer{Max: MaxOutputBytes}
	stderr := &capbuf.Buffer{Max: MaxOutputBytes}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if start == nil {
		start = (*exec.Cmd).Start
	}
	if err := start(cmd); err != nil {
		out.Err = fmt.Errorf("start %s: %w", argv[0], err)
		out.EndTime = time.Now()
		return out
	}
	done := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		killGroup(cmd, done, 2*time.Second)
		<-done
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			waitErr = fmt.Errorf("%s did not finish within %s and was killed", argv[0], timeout)
		} else {
			waitErr = fmt.Errorf("%s was stopped: %w", argv[0], ctx.Err())
		}
		out.Err = waitErr
	}
	out.EndTime = time.Now()
	out.Stdout, out.Stderr = stdout.Bytes(), stderr.Bytes()
	if cmd.ProcessState != nil {
		out.ExitCode = cmd.ProcessState.ExitCode()
	}
	if out.Err == nil && waitErr != nil {
		var ee *exec.ExitError
		if !errors.As(waitErr, &ee) {
			out.Err = waitErr
		}
	}
	if stdout.Truncated() || stderr.Truncated() {
		out.Stderr = append(out.Stderr, []byte(fmt.Sprintf("\n[cnperf: output truncated at %d bytes]", MaxOutputBytes))...)
	}
	return out
}
