package kube

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/procexec"
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
	res, trunc := procexec.Run(ctx, argv, procexec.Options{Env: l.env, Timeout: timeout, MaxOutput: l.maxOutput})
	res.Argv = cmd.Argv
	if res.Err == nil && trunc.Stdout {
		res.Err = fmt.Errorf("output exceeded %d bytes and was truncated", l.maxOutput)
	}
	return res
}
