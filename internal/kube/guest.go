package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/guestexec"
)

// GuestExecutor runs commands in a VM's guest: through Relay, a pod that reaches the guest's
// address, `cnperf agent exec` asks the guest's agent (its exec port, with the run's token, which
// the relay pod has in its environment) to run the command, and hands back the command's own
// output and exit code. Only cnperf commands and the tools of the guest's drivers run in the
// guest (a driver's client; its servers through Start).
type GuestExecutor struct {
	Relay *PodExecutor
	Host  string
	Port  int // 0: guestexec.DefaultPort
}

// relayMargin is what the relay adds to a command's own bound: the dial and the answer.
const relayMargin = 30 * time.Second

// Exec implements platform.Executor.
func (g *GuestExecutor) Exec(ctx context.Context, cmd driver.Command) driver.Output {
	return g.exec(ctx, cmd, nil)
}

// Start starts a driver's server in the guest, left running there until the guest's agent ends
// or Stop: it returns once the server is ready (its Ready text in its output, else its first TCP
// port accepting in the guest), or its error.
func (g *GuestExecutor) Start(ctx context.Context, srv driver.Server, timeout time.Duration) error {
	flags := []string{"--background"}
	if srv.Ready != "" {
		flags = append(flags, "--ready", srv.Ready)
	} else {
		for _, p := range srv.Ports {
			if p.Protocol == "TCP" {
				flags = append(flags, "--ready-port", strconv.Itoa(p.Port))
				break
			}
		}
	}
	out := g.exec(ctx, driver.Command{Argv: srv.Argv, Timeout: timeout}, flags)
	if err := g.failed(out); err != nil {
		return fmt.Errorf("start server %s (%s): %w%s", srv.Name, strings.Join(srv.Argv, " "), err, tailOf(out))
	}
	return nil
}

// Stop ends the servers Start started in the guest.
func (g *GuestExecutor) Stop(ctx context.Context) error {
	if err := g.failed(g.exec(ctx, driver.Command{Timeout: 30 * time.Second}, []string{"--stop"})); err != nil {
		return fmt.Errorf("stop the servers: %w", err)
	}
	return nil
}

// failed is why a command Start or Stop ran in the guest failed (its error, or its exit code), or nil.
func (g *GuestExecutor) failed(out driver.Output) error {
	if out.Err == nil && out.ExitCode != 0 {
		return fmt.Errorf("in VM %s: exited %d", g.Host, out.ExitCode)
	}
	return out.Err
}

// tailOf is ": " and the end of a failed command's output, or "".
func tailOf(out driver.Output) string {
	if t := strings.TrimSpace(Tail(append(out.Stdout, out.Stderr...), 300)); t != "" {
		return ": " + t
	}
	return ""
}

// exec runs `cnperf agent exec --json [flags] -- argv` in the relay.
func (g *GuestExecutor) exec(ctx context.Context, cmd driver.Command, flags []string) driver.Output {
	timeout := cmd.Timeout
	if timeout <= 0 {
		timeout = g.Relay.DefaultTimeout
	}
	port := g.Port
	if port == 0 {
		port = guestexec.DefaultPort
	}
	argv := append([]string{"cnperf", "agent", "exec", "--json", "--host", g.Host, "--port", strconv.Itoa(port),
		"--timeout", timeout.String()}, flags...)
	if len(cmd.Argv) > 0 {
		argv = append(append(argv, "--"), cmd.Argv...)
	}
	out := g.Relay.Exec(ctx, driver.Command{Argv: argv, Timeout: timeout + relayMargin})
	out.Argv = cmd.Argv
	if out.Err != nil {
		out.Err = fmt.Errorf("in VM %s through pod %s: %w", g.Host, g.Relay.Pod, out.Err)
		return out
	}
	if out.ExitCode != 0 {
		out.Err = fmt.Errorf("could not reach the agent of VM %s from pod %s (cnperf agent exec exited %d): %s",
			g.Host, g.Relay.Pod, out.ExitCode, Tail(out.Stderr, 400))
		return out
	}
	var r guestexec.Response
	if err := json.Unmarshal(out.Stdout, &r); err != nil {
		out.Err = fmt.Errorf("VM %s: the relay's answer is not JSON: %w", g.Host, err)
		return out
	}
	out.Stdout, out.Stderr, out.ExitCode = r.Stdout, r.Stderr, r.ExitCode
	if r.Error != "" {
		out.Err = fmt.Errorf("in VM %s: %s", g.Host, r.Error)
	}
	return out
}
