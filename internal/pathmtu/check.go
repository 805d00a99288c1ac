package pathmtu

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/platform"
)

// CommandTimeout bounds one direction's `cnperf agent mtu` (a black hole costs a few
// unanswered sizes of Attempts × Timeout each).
const CommandTimeout = 60 * time.Second

// Argv is the agent command that probes towards target.
func Argv(target string, o Options) []string {
	argv := []string{"cnperf", "agent", "mtu", "--target", target}
	if o.Attempts > 0 {
		argv = append(argv, "--attempts", strconv.Itoa(o.Attempts))
	}
	if o.Timeout > 0 {
		argv = append(argv, "--timeout", o.Timeout.String())
	}
	return argv
}

// Check probes pair's path in both directions, the client towards the server's own address
// and the server towards the client's, and assesses it. Through a Service the probe goes to the
// backend pod itself: ICMP echo is not load-balanced, and the packets take the same links.
func Check(ctx context.Context, path api.Path, pair *platform.Pair, o Options) api.PathMTU {
	out := api.PathMTU{Path: path, Topology: pair.Topology}
	var clientAddr, serverAddr string
	if pl := pair.Placement; pl != nil {
		clientAddr, serverAddr = endpointAddr(pl.Client), endpointAddr(pl.Server)
	}
	out.Forward.To, out.Reverse.To = serverAddr, clientAddr
	var why string
	switch {
	case pair.Server == nil:
		why = "not probed: cnperf cannot run commands beside this path's server"
	case serverAddr == "":
		why = "not probed: the server has no single address of its own (several backends, or outside the cluster)"
	case clientAddr == "":
		why = "not probed: the client has no address the server can reach"
	}
	if why != "" {
		out.Forward.Error, out.Reverse.Error = why, why
		return out
	}
	done := make(chan api.PathMTUProbe, 1)
	go func() { done <- run(ctx, pair.Server, clientAddr, o) }()
	out.Forward = run(ctx, pair.Client, serverAddr, o)
	out.Reverse = <-done
	out.Finding, out.Consequence = Assess(out.Forward, out.Reverse)
	return out
}

// endpointAddr is the address an endpoint has on the path: its pod's, else its node's.
func endpointAddr(e api.Endpoint) string {
	if e.PodIP != "" {
		return e.PodIP
	}
	return e.HostIP
}

// run runs `cnperf agent mtu` on ex and reads its JSON line.
func run(ctx context.Context, ex platform.Executor, target string, o Options) api.PathMTUProbe {
	res := ex.Exec(ctx, driver.Command{Argv: Argv(target, o), Timeout: CommandTimeout})
	p, err := Parse(res)
	if err != nil {
		return api.PathMTUProbe{To: target, Error: err.Error()}
	}
	return p
}

// Parse reads what `cnperf agent mtu` printed: its JSON line (which carries the probe's own
// error when it failed), or the reason it printed none.
func Parse(res driver.Output) (api.PathMTUProbe, error) {
	var p api.PathMTUProbe
	line := strings.TrimSpace(string(res.Stdout))
	if i := strings.LastIndexByte(line, '\n'); i >= 0 {
		line = line[i+1:]
	}
	if line != "" {
		if err := json.Unmarshal([]byte(line), &p); err == nil && p.To != "" {
			return p, nil
		}
	}
	why := strings.TrimSpace(string(res.Stderr))
	if res.Err != nil {
		why = strings.TrimSpace(res.Err.Error() + " " + why)
	}
	if why == "" {
		why = fmt.Sprintf("exit code %d, no output", res.ExitCode)
	}
	const max = 300
	if len(why) > max {
		why = why[:max] + "…"
	}
	return p, fmt.Errorf("cnperf agent mtu printed no result: %s", why)
}
