package lab

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cnperf/cnperf/internal/procexec"
)

// NetNSDir is where iproute2 keeps named network namespaces (`ip netns add`).
const NetNSDir = "/run/netns"

// NetNS is a named network namespace created by `ip netns add`.
type NetNS struct {
	Name string
}

// Path is the namespace's bind mount.
func (n NetNS) Path() string { return filepath.Join(NetNSDir, n.Name) }

// String is the namespace's name.
func (n NetNS) String() string { return n.Name }

// Do runs fn on an OS thread that has entered the namespace. Sockets fn creates belong to
// the namespace, processes it starts are born in it, and /proc/sys/net files it opens are the
// namespace's. The thread goes back to the caller's namespace afterwards; if it cannot, it is
// left locked so the Go runtime destroys it instead of reusing it.
func (n NetNS) Do(fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("open this thread's network namespace: %w", err)
			return
		}
		defer orig.Close()
		target, err := os.Open(n.Path())
		if err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("open network namespace %s: %w", n.Name, err)
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("enter network namespace %s (setns): %w", n.Name, err)
			return
		}
		ferr := fn()
		if err := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); err != nil {
			// Never unlock a thread left in another namespace: the goroutine ends locked and
			// the runtime terminates the thread.
			errc <- errors.Join(ferr, fmt.Errorf("return from network namespace %s (setns): %w", n.Name, err))
			return
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

// Start starts cmd inside the namespace: it is forked from a thread that has entered it, so
// the child and everything it starts live there. Unless the caller set its own, the child
// gets SIGKILL when cnperf dies (so a kill -9'd run leaves no servers behind).
func (n NetNS) Start(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	if cmd.SysProcAttr.Pdeathsig == 0 {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
	return n.Do(cmd.Start)
}

// Dial connects from inside the namespace.
func (n NetNS) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var c net.Conn
	err := n.Do(func() error {
		var err error
		c, err = (&net.Dialer{}).DialContext(ctx, network, addr)
		return err
	})
	return c, err
}

// WriteSysctl sets a sysctl of the namespace (key as in sysctl(8): "net.ipv4.ip_forward").
func (n NetNS) WriteSysctl(key, value string) error {
	path := "/proc/sys/" + strings.ReplaceAll(key, ".", "/")
	err := n.Do(func() error { return os.WriteFile(path, []byte(value), 0o644) })
	if err != nil {
		return fmt.Errorf("sysctl -w %s=%s in netns %s: %w", key, value, n.Name, err)
	}
	return nil
}

// ReadSysctl reads a sysctl of the namespace.
func (n NetNS) ReadSysctl(key string) (string, error) {
	path := "/proc/sys/" + strings.ReplaceAll(key, ".", "/")
	var b []byte
	err := n.Do(func() error {
		var err error
		b, err = os.ReadFile(path)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("sysctl %s in netns %s: %w", key, n.Name, err)
	}
	return strings.TrimSpace(string(b)), nil
}

// Run runs argv inside the namespace to completion. The error names the command, the
// namespace and carries the command's output.
func (n NetNS) Run(ctx context.Context, stdin []byte, argv ...string) ([]byte, error) {
	return runWith(ctx, stdin, n.Start, " (in netns "+n.Name+")", argv...)
}

// Pids lists the processes living in the namespace (`ip netns pids`).
func (n NetNS) Pids(ctx context.Context) ([]int, error) {
	out, err := run(ctx, nil, "ip", "netns", "pids", n.Name)
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("ip netns pids %s: unexpected output %q", n.Name, out)
		}
		pids = append(pids, pid)
	}
	sort.Ints(pids)
	return pids, nil
}

// createNetNS creates a named namespace with its loopback up.
func createNetNS(ctx context.Context, name string) (NetNS, error) {
	if _, err := run(ctx, nil, "ip", "netns", "add", name); err != nil {
		return NetNS{}, err
	}
	n := NetNS{Name: name}
	if _, err := run(ctx, nil, "ip", "-n", name, "link", "set", "lo", "up"); err != nil {
		return n, err
	}
	return n, nil
}

// deleteNetNS kills what still runs in the namespace (only cnperf's own children can be
// there) and deletes it; the kernel then destroys every interface, route, rule and conntrack
// entry in it.
func deleteNetNS(ctx context.Context, name string) error {
	n := NetNS{Name: name}
	if _, err := os.Stat(n.Path()); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if pids, err := n.Pids(ctx); err == nil {
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if len(pids) > 0 {
			waitGone(pids, 2*time.Second)
		}
	}
	if _, err := run(ctx, nil, "ip", "netns", "delete", name); err != nil {
		if _, serr := os.Stat(n.Path()); errors.Is(serr, os.ErrNotExist) {
			return nil
		}
		return err
	}
	return nil
}

// waitGone waits until the processes have exited (or the grace period ends).
func waitGone(pids []int, grace time.Duration) {
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		alive := false
		for _, pid := range pids {
			if syscall.Kill(pid, 0) == nil {
				alive = true
				break
			}
		}
		if !alive {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// listNetNS lists the names of the named namespaces, sorted.
func listNetNS() ([]string, error) {
	entries, err := os.ReadDir(NetNSDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list network namespaces: %w", err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out, nil
}

// run runs argv in cnperf's own namespace.
func run(ctx context.Context, stdin []byte, argv ...string) ([]byte, error) {
	return runWith(ctx, stdin, (*exec.Cmd).Start, "", argv...)
}

// maxErrOutput bounds how much of a failed command's output an error carries.
const maxErrOutput = 2000

func runWith(ctx context.Context, stdin []byte, start func(*exec.Cmd) error, where string, argv ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = procexec.Environ() // no credentials for ip, nft, iptables, sysctl
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	if err := start(cmd); err != nil {
		return nil, fmt.Errorf("%s%s: %w", strings.Join(argv, " "), where, err)
	}
	if err := cmd.Wait(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = strings.TrimSpace(stdout.String())
		}
		if len(msg) > maxErrOutput {
			msg = msg[:maxErrOutput] + "…"
		}
		if msg == "" {
			msg = "(no output)"
		}
		return stdout.Bytes(), fmt.Errorf("%s%s: %w: %s", strings.Join(argv, " "), where, err, msg)
	}
	return stdout.Bytes(), nil
}
