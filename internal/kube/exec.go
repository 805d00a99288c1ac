package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/client-go/util/exec"

	"github.com/cnperf/cnperf/internal/capbuf"
	"github.com/cnperf/cnperf/internal/driver"
)

// pidMarker starts the first stderr line the exec wrapper prints: the remote tool's PID, so
// the tool can be killed when the exec is cancelled (closing the stream does not kill it).
const pidMarker = "@cnperf-pid="

// wrapperScript runs the tool with its PID announced and, when the image has `timeout`,
// under a hard kill deadline that holds even if cnperf loses the API connection.
// $1 is the deadline in seconds; the rest is the tool's argv, passed untouched.
const wrapperScript = `echo "` + pidMarker + `$$" >&2; t=$1; shift; ` +
	`if command -v timeout >/dev/null 2>&1; then exec timeout -s KILL "$t" "$@"; fi; exec "$@"`

// killScript ends a remote PID and the process group it leads, if it leads one: TERM, then
// KILL when either is still there after ~2 s. GNU timeout puts itself and the tool in a group
// of their own, and a signal that reaches it after its fork but before it has recorded the
// child's PID makes it exit without passing the signal on (coreutils 9.1, seen under load):
// the tool, orphaned, would then run on with no deadline at all. The group holds only what
// the wrapper started; where the wrapper leads no group (busybox timeout, which execs the tool
// in place; no timeout) there is no group to signal and the PID is the tool.
const killScript = `p=$1; g=; kill -TERM "-$p" 2>/dev/null && g=-$p; kill -TERM "$p" 2>/dev/null || [ -n "$g" ] || exit 0; i=0; ` +
	`while [ $i -lt 20 ]; do kill -0 "$p" 2>/dev/null || { [ -n "$g" ] && kill -0 "$g" 2>/dev/null; } || exit 0; ` +
	`sleep 0.1 2>/dev/null || sleep 1; i=$((i+1)); done; ` +
	`kill -KILL "$p" 2>/dev/null; [ -z "$g" ] || kill -KILL "$g" 2>/dev/null; exit 0`

// killGrace is how long a remote tool may outlive its deadline before `timeout` kills it.
const killGrace = 10 * time.Second

// DefaultMaxOutputBytes bounds what one exec may print on each stream when nothing else does.
const DefaultMaxOutputBytes = 32 << 20

// Streamer runs argv in a container with stdout and stderr attached. It is the seam the
// unit tests replace (exec needs a kubelet; the fake clientset has none); cnperf mesh runs
// its agents' commands through it too.
type Streamer func(ctx context.Context, ns, pod, container string, argv []string, stdout, stderr io.Writer) error

// RemoteStreamer execs through the API server: WebSocket first (Kubernetes >= 1.30), SPDY
// when the server or a proxy refuses the upgrade.
func RemoteStreamer(cs kubernetes.Interface, cfg *rest.Config) Streamer {
	return func(ctx context.Context, ns, pod, container string, argv []string, stdout, stderr io.Writer) error {
		req := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name(pod).SubResource("exec").
			VersionedParams(&corev1.PodExecOptions{Container: container, Command: argv, Stdout: true, Stderr: true}, scheme.ParameterCodec)
		u := req.URL()
		ws, err := remotecommand.NewWebSocketExecutor(cfg, "GET", u.String())
		if err != nil {
			return fmt.Errorf("websocket executor: %w", err)
		}
		spdy, err := remotecommand.NewSPDYExecutor(cfg, "POST", u)
		if err != nil {
			return fmt.Errorf("spdy executor: %w", err)
		}
		ex, err := remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
			return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
		})
		if err != nil {
			return err
		}
		// An API server that refuses the connection (restarting) ran nothing: try again
		// until it answers or ctx ends, rather than fail every sample until it is back.
		for {
			err = ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: stdout, Stderr: stderr})
			if err == nil || !apiRefused(err, u.Host) {
				return err
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("%w (the API server at %s refused the connection until the command's time was up)", err, u.Host)
			case <-time.After(apiRetryEvery):
			}
		}
	}
}

// apiRetryEvery is how often a refused connection to the API server is tried again.
var apiRetryEvery = time.Second

// apiRefused says whether err is the API server at hostport refusing the connection (nothing
// was sent: safe to repeat), as opposed to the API server failing to reach a kubelet, or a
// stream cut after the command started.
func apiRefused(err error, hostport string) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" && utilnet.IsConnectionRefused(err) {
		return true
	}
	// some executors format the dial error into their own (%v, not %w)
	return strings.Contains(err.Error(), "dial tcp "+hostport+": connect: connection refused")
}

// PodExecutor runs commands in one container of one pod (platform.Executor): the platform's
// clients and servers, mesh's agents.
type PodExecutor struct {
	Stream         Streamer
	Namespace, Pod string
	Container      string
	// DefaultTimeout applies when a command has none.
	DefaultTimeout time.Duration
	// MaxOutput bounds what one exec keeps of each stream.
	MaxOutput int
}

// Exec implements platform.Executor. The remote tool runs under a wrapper that announces
// its PID and bounds it with `timeout`; when ctx ends or the timeout passes, the tool is
// killed in the pod before Exec returns.
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
	deadline := int(math.Ceil((timeout + killGrace).Seconds()))
	argv := append([]string{"sh", "-c", wrapperScript, "cnperf-exec", strconv.Itoa(deadline)}, cmd.Argv...)

	stdout := &capbuf.Buffer{Max: e.MaxOutput}
	stderr := &pidCapture{out: &capbuf.Buffer{Max: e.MaxOutput}}
	ectx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := e.Stream(ectx, e.Namespace, e.Pod, e.Container, argv, stdout, stderr)
	out.EndTime = time.Now()

	if ectx.Err() != nil {
		// The stream was cut: the tool may still run in the pod. Kill it with a context of
		// its own, since ctx may be the cancelled run context.
		kerr := e.kill(stderr.PID())
		if errors.Is(ectx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
			out.Err = fmt.Errorf("did not finish within %s and was killed", timeout)
		} else {
			out.Err = fmt.Errorf("stopped: %w", context.Cause(ctx))
		}
		if kerr != nil {
			out.Err = fmt.Errorf("%w; killing it in the pod failed too: %v", out.Err, kerr)
		}
	} else if err != nil {
		var ee utilexec.ExitError
		if errors.As(err, &ee) && ee.Exited() {
			out.ExitCode = ee.ExitStatus()
			err = nil
		}
		out.Err = err
	} else {
		out.ExitCode = 0
	}
	out.Stdout, out.Stderr = stdout.Bytes(), stderr.out.Bytes()
	if stdout.Truncated() || stderr.out.Truncated() {
		msg := fmt.Sprintf("output exceeded %d bytes and was truncated", e.MaxOutput)
		out.Stderr = append(out.Stderr, []byte("\n[cnperf: "+msg+"]")...)
		if out.Err == nil && stdout.Truncated() {
			out.Err = errors.New(msg)
		}
	}
	if out.Err != nil {
		out.Err = &ExecError{Namespace: e.Namespace, Pod: e.Pod, Argv: cmd.Argv, Stderr: Tail(out.Stderr, 512), Err: out.Err}
	}
	return out
}

// kill ends the remote process pid and the group it leads (0 = unknown: nothing to do;
// `timeout` still bounds it).
func (e *PodExecutor) kill(pid int) error {
	if pid <= 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var stderr bytes.Buffer
	argv := []string{"sh", "-c", killScript, "cnperf-kill", strconv.Itoa(pid)}
	if err := e.Stream(ctx, e.Namespace, e.Pod, e.Container, argv, io.Discard, &stderr); err != nil {
		return fmt.Errorf("kill %d in %s/%s: %w %s", pid, e.Namespace, e.Pod, err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// ExecStream runs cmd with its standard output streamed to stdout until it ends or ctx ends
// (then the remote command dies of SIGPIPE on its next write, or of its `timeout`): mesh's
// node-resource and profile streams.
func (e *PodExecutor) ExecStream(ctx context.Context, cmd driver.Command, stdout io.Writer) error {
	if len(cmd.Argv) == 0 {
		return errors.New("empty command")
	}
	timeout := cmd.Timeout
	if timeout <= 0 {
		timeout = e.DefaultTimeout
	}
	deadline := int(math.Ceil((timeout + killGrace).Seconds()))
	argv := append([]string{"timeout", "-s", "KILL", strconv.Itoa(deadline)}, cmd.Argv...)
	stderr := &capbuf.Buffer{Max: e.MaxOutput}
	ectx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := e.Stream(ectx, e.Namespace, e.Pod, e.Container, argv, stdout, stderr)
	if err != nil && ectx.Err() == nil {
		return &ExecError{Namespace: e.Namespace, Pod: e.Pod, Argv: cmd.Argv, Stderr: Tail(stderr.Bytes(), 512), Err: err}
	}
	return nil
}

// ExecError is a failed exec: where, what, and what the tool said.
type ExecError struct {
	Namespace, Pod string
	Argv           []string
	Stderr         string
	Err            error
}

func (e *ExecError) Error() string {
	msg := fmt.Sprintf("exec in pod %s/%s: %s: %v", e.Namespace, e.Pod, ShellJoin(e.Argv), e.Err)
	if s := strings.TrimSpace(e.Stderr); s != "" {
		msg += " (stderr: " + s + ")"
	}
	return msg
}

func (e *ExecError) Unwrap() error { return e.Err }

// ShellJoin quotes argv for messages so it can be pasted into a shell.
func ShellJoin(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && !strings.ContainsAny(a, " \t\n'\"\\$`*?[]{}()<>|&;#~!") {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}

// Tail is the last n bytes of b, trimmed, marked "..." when cut.
func Tail(b []byte, n int) string {
	s := strings.TrimSpace(string(b))
	if len(s) > n {
		s = "..." + s[len(s)-n:]
	}
	return s
}

// pidCapture takes the wrapper's PID line off the front of stderr and passes the rest on.
type pidCapture struct {
	mu   sync.Mutex
	out  *capbuf.Buffer
	head []byte
	done bool
	pid  int
}

func (c *pidCapture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return c.out.Write(p)
	}
	c.head = append(c.head, p...)
	i := bytes.IndexByte(c.head, '\n')
	if i < 0 {
		if len(c.head) > 64 {
			c.done = true
			_, _ = c.out.Write(c.head)
		}
		return len(p), nil
	}
	c.done = true
	line := string(c.head[:i])
	rest := c.head[i+1:]
	if v, ok := strings.CutPrefix(line, pidMarker); ok {
		c.pid, _ = strconv.Atoi(strings.TrimSpace(v))
	} else {
		rest = c.head
	}
	_, _ = c.out.Write(rest)
	c.head = nil
	return len(p), nil
}

// PID returns the remote PID, 0 when the wrapper did not print it (yet).
func (c *pidCapture) PID() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pid
}
