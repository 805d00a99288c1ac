// Package procexec runs one command on this machine the way every platform does: in its own
// process group (so a tool's children end with it), killed with SIGTERM and then SIGKILL when
// its context ends or its timeout passes, its output captured up to a bound, and without
// cnperf's credentials in its environment (Environ).
package procexec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/cnperf/cnperf/internal/capbuf"
	"github.com/cnperf/cnperf/internal/driver"
)

// killGrace is how long a killed tool has between SIGTERM and SIGKILL.
const killGrace = 2 * time.Second

// CredentialEnv are the environment variables through which cnperf takes credentials: the
// OpenSearch and Prometheus sinks' (internal/sink/opensearch EnvUsername, EnvPassword;
// internal/sink/prometheus EnvToken) and the agent token (internal/agenttoken Env). No child
// process inherits them (Environ); the agent token reaches the agents only where a platform
// adds it on purpose. internal/app's tests check that the list holds every one of them.
var CredentialEnv = []string{
	"CNPERF_OPENSEARCH_USERNAME",
	"CNPERF_OPENSEARCH_PASSWORD",
	"CNPERF_PROMETHEUS_TOKEN",
	"CNPERF_AGENT_TOKEN",
}

// Environ is the environment of every child process cnperf starts: this process's
// environment without CredentialEnv, then extra (added on purpose, e.g. a run's agent token
// for its own agents).
func Environ(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); !slices.Contains(CredentialEnv, name) {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// Options say how Run runs a command.
type Options struct {
	// Env is added to this process's environment (without its credentials: Environ).
	Env []string
	// Timeout bounds the command; 0 means only ctx does.
	Timeout time.Duration
	// MaxOutput bounds what is kept of each of stdout and stderr (the rest is dropped).
	MaxOutput int
	// Start starts the command (e.g. inside a network namespace); nil is (*exec.Cmd).Start.
	Start func(*exec.Cmd) error
}

// Truncated says which streams printed more than Options.MaxOutput.
type Truncated struct{ Stdout, Stderr bool }

// Run runs argv (argv[0] an executable, already resolved) to completion. out.Err is set when
// the command could not start or was killed (its timeout passed: "did not finish within";
// ctx ended: "was stopped"), not for a non-zero exit status (out.ExitCode).
func Run(ctx context.Context, argv []string, o Options) (driver.Output, Truncated) {
	out := driver.Output{Argv: argv, StartTime: time.Now(), ExitCode: -1}
	if len(argv) == 0 {
		out.Err, out.EndTime = errors.New("empty command"), time.Now()
		return out, Truncated{}
	}
	ectx := ctx
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ectx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	cmd := Command(argv, o.Env)
	stdout, stderr := &capbuf.Buffer{Max: o.MaxOutput}, &capbuf.Buffer{Max: o.MaxOutput}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	start := o.Start
	if start == nil {
		start = (*exec.Cmd).Start
	}
	if err := start(cmd); err != nil {
		out.Err, out.EndTime = fmt.Errorf("start %s: %w", argv[0], err), time.Now()
		return out, Truncated{}
	}
	done := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-ectx.Done():
		KillGroup(cmd, done, killGrace)
		<-done
		if ctx.Err() == nil {
			out.Err = fmt.Errorf("%s did not finish within %s and was killed", argv[0], o.Timeout)
		} else {
			out.Err = fmt.Errorf("%s was stopped: %w", argv[0], ctx.Err())
		}
	}
	out.EndTime = time.Now()
	out.Stdout, out.Stderr = stdout.Bytes(), stderr.Bytes()
	if cmd.ProcessState != nil {
		out.ExitCode = cmd.ProcessState.ExitCode()
	}
	var ee *exec.ExitError
	if out.Err == nil && waitErr != nil && !errors.As(waitErr, &ee) {
		out.Err = waitErr
	}
	return out, Truncated{Stdout: stdout.Truncated(), Stderr: stderr.Truncated()}
}

// Command builds an *exec.Cmd for argv in its own process group (so the whole tree can be
// killed, and it dies with cnperf), with env added to this process's environment (Environ: no
// credentials). Servers that run in the background are started from it and ended with
// KillGroup.
func Command(argv, env []string) *exec.Cmd {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = Environ(env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return cmd
}

// KillGroup ends the process group of a started cmd: SIGTERM, then SIGKILL if done is not
// closed within grace.
func KillGroup(cmd *exec.Cmd, done <-chan struct{}, grace time.Duration) {
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
