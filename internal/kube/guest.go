package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/guestexec"
)

// GuestExecutor runs commands in a VM's guest: through Relay, a pod that reaches the guest's
// address, `cnperf agent exec` asks the guest's agent (its exec port, with the run's token, which
// the relay pod has in its environment) to run the command, and hands back the command's own
// output and exit code. Only cnperf commands run in the guest (the native driver's client).
type GuestExecutor struct {
	Relay *PodExecutor
	Host  string
	Port  int // 0: guestexec.DefaultPort
}

// relayMargin is what the relay adds to a command's own bound: the dial and the answer.
const relayMargin = 30 * time.Second

// Exec implements platform.Executor.
func (g *GuestExecutor) Exec(ctx context.Context, cmd driver.Command) driver.Output {
	timeout := cmd.Timeout
	if timeout <= 0 {
		timeout = g.Relay.DefaultTimeout
	}
	port := g.Port
	if port == 0 {
		port = guestexec.DefaultPort
	}
	argv := append([]string{"cnperf", "agent", "exec", "--json", "--host", g.Host, "--port", strconv.Itoa(port),
		"--timeout", timeout.String(), "--"}, cmd.Argv...)
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
