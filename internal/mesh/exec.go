package mesh

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	utilexec "k8s.io/client-go/util/exec"

	"github.com/cnperf/cnperf/internal/capbuf"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/noderes"
	"github.com/cnperf/cnperf/internal/platform"
	"github.com/cnperf/cnperf/internal/platform/kube"
)

// killGrace is how long a remote command may outlive its deadline before `timeout` kills it
// in the pod (closing the exec stream does not end the remote process).
const killGrace = 5 * time.Second

// maxOutput bounds what one exec keeps per stream.
const maxOutput = 32 << 20

// PodExecutor runs commands in one container of one pod (platform.Executor).
type PodExecutor struct {
	Stream                    kube.Streamer
	Namespace, Pod, Container string
	DefaultTimeout            time.Duration
}

// Exec implements platform.Executor: the command runs under `timeout -s KILL` so it ends in
// the pod even when cnperf goes away.
func (e *PodExecutor) Exec(ctx context.Context, cmd driver.Command) driver.Output {
	out := driver.Output{Argv: cmd.Argv, StartTime: time.Now(), ExitCode: -1}
	if len(cmd.Argv) == 0 {
		out.Err = errors.New("empty command")
		out.EndTime = time.Now()
		return out
	}
	timeout := cmd.Timeout
	if timeout <= 0 {
		timeout = e.DefaultTimeout
	}
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	deadline := int(math.Ceil((timeout + killGrace).Seconds()))
	argv := append([]string{"timeout", "-s", "KILL", strconv.Itoa(deadline)}, cmd.Argv...)
	stdout, stderr := &capbuf.Buffer{Max: maxOutput}, &capbuf.Buffer{Max: maxOutput}
	ectx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := e.Stream(ectx, e.Namespace, e.Pod, e.Container, argv, stdout, stderr)
	out.EndTime = time.Now()
	switch {
	case ectx.Err() != nil && ctx.Err() == nil:
		out.Err = fmt.Errorf("did not finish within %s", timeout)
	case ctx.Err() != nil:
		out.Err = fmt.Errorf("stopped: %w", context.Cause(ctx))
	case err != nil:
		var ee utilexec.ExitError
		if errors.As(err, &ee) && ee.Exited() {
			out.ExitCode = ee.ExitStatus()
		} else {
			out.Err = err
		}
	default:
		out.ExitCode = 0
	}
	out.Stdout, out.Stderr = stdout.Bytes(), stderr.Bytes()
	if out.Err != nil {
		msg := strings.TrimSpace(string(out.Stderr))
		if len(msg) > 400 {
			msg = "..." + msg[len(msg)-400:]
		}
		out.Err = fmt.Errorf("exec in pod %s/%s: %s: %w (stderr: %s)", e.Namespace, e.Pod, strings.Join(cmd.Argv, " "), out.Err, msg)
	}
	return out
}

// ProcReader reads a node's /proc through an agent pod on it (noderes.Reader).
type ProcReader struct{ Exec platform.Executor }

// Read implements noderes.Reader.
func (r ProcReader) Read(ctx context.Context) (noderes.Snapshot, error) {
	out := r.Exec.Exec(ctx, driver.Command{Argv: []string{"sh", "-c", noderes.BundleScript}, Timeout: 20 * time.Second})
	if out.Err != nil {
		return noderes.Snapshot{}, fmt.Errorf("read /proc: %w", out.Err)
	}
	if out.ExitCode != 0 {
		return noderes.Snapshot{}, fmt.Errorf("read /proc: exit %d: %s", out.ExitCode, strings.TrimSpace(string(out.Stderr)))
	}
	return noderes.ParseBundle(out.Stdout)
}

// StreamExecutor runs a command whose standard output is consumed while it runs.
type StreamExecutor interface {
	ExecStream(ctx context.Context, cmd driver.Command, stdout io.Writer) error
}

// ExecStream runs cmd with its standard output streamed to stdout until it ends or ctx
// ends (then the remote command dies of SIGPIPE on its next write, or of its `timeout`).
func (e *PodExecutor) ExecStream(ctx context.Context, cmd driver.Command, stdout io.Writer) error {
	if len(cmd.Argv) == 0 {
		return errors.New("empty command")
	}
	timeout := cmd.Timeout
	if timeout <= 0 {
		timeout = e.DefaultTimeout
	}
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	deadline := int(math.Ceil((timeout + killGrace).Seconds()))
	argv := append([]string{"timeout", "-s", "KILL", strconv.Itoa(deadline)}, cmd.Argv...)
	stderr := &capbuf.Buffer{Max: maxOutput}
	ectx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := e.Stream(ectx, e.Namespace, e.Pod, e.Container, argv, stdout, stderr)
	if err != nil && ectx.Err() == nil {
		return fmt.Errorf("exec in pod %s/%s: %s: %w (stderr: %s)", e.Namespace, e.Pod, strings.Join(cmd.Argv, " "), err,
			strings.TrimSpace(string(stderr.Bytes())))
	}
	return nil
}
