package kube

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

// localExecutor runs external-service clients on this machine (--external-client local), as
// tiger-bench's external test does: the traffic enters the cluster from outside.
type localExecutor struct {
	defaultTimeout time.Duration
	maxOutput      int
	env            []string // added to this process's environment (the agent token)
}

// Exec implements platform.Executor. argv[0] "cnperf" is this binary; the tool runs in its
// own process group, which is killed when ctx ends or the timeout passes.
func (l localExecutor) Exec(ctx context.Context, cmd driver.Command) driver.Output {
	out := driver.Output{Argv: cmd.Argv, StartTime: time.Now(), ExitCode: -1}
	fail := func(err error) driver.Output {
		out.Err, out.EndTime = err, time.Now()
		return out
	}
	if len(cmd.Argv) == 0 {
		return fail(errors.New("empty command"))
	}
	argv := append([]string(nil), cmd.Argv...)
	if argv[0] == "cnperf" {
		self, err := os.Executable()
		if err != nil {
			return fail(fmt.Errorf("find the cnperf binary: %w", err))
		}
		argv[0] = self
	}
	timeout := cmd.Timeout
	if timeout <= 0 {
		timeout = l.defaultTimeout
	}
	ectx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c := exec.Command(argv[0], argv[1:]...)
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	c.Env = append(os.Environ(), l.env...)
	stdout, stderr := &capbuf.Buffer{Max: l.maxOutput}, &capbuf.Buffer{Max: l.maxOutput}
	c.Stdout, c.Stderr = stdout, stderr
	if err := c.Start(); err != nil {
		return fail(fmt.Errorf("start %s: %w", argv[0], err))
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	var werr error
	select {
	case werr = <-done:
	case <-ectx.Done():
		_ = syscall.Kill(-c.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
			<-done
		}
		if ctx.Err() == nil {
			out.Err = fmt.Errorf("%s did not finish within %s and was killed", argv[0], timeout)
		} else {
			out.Err = fmt.Errorf("%s was stopped: %w", argv[0], ctx.Err())
		}
	}
	out.EndTime = time.Now()
	out.Stdout, out.Stderr = stdout.Bytes(), stderr.Bytes()
	if c.ProcessState != nil {
		out.ExitCode = c.ProcessState.ExitCode()
	}
	var ee *exec.ExitError
	if out.Err == nil && werr != nil && !errors.As(werr, &ee) {
		out.Err = werr
	}
	if out.Err == nil && stdout.Truncated() {
		out.Err = fmt.Errorf("output exceeded %d bytes and was truncated", l.maxOutput)
	}
	return out
}
