package meshcmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/cnperf/cnperf/internal/mesh"
)

// newProfiler sets up --cpu-profile DIR: perf on the nodes when the agents are privileged,
// the agent client's own pprof profile otherwise (checked against one agent first).
func newProfiler(ctx context.Context, dir string, perf bool, env mesh.Env, probe *mesh.Agent, window time.Duration, log io.Writer) (*mesh.FlameProfiler, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("--cpu-profile: %w", err)
	}
	p := &mesh.FlameProfiler{Dir: dir, Perf: perf, Exec: env.Exec, Window: window, Log: log}
	if perf {
		fmt.Fprintf(log, "mesh: --cpu-profile: perf record -a -g on the client and server nodes of every pair (privileged agents)\n")
		return p, nil
	}
	if probe != nil {
		p.PprofUnsupported = mesh.AgentSupportsPprof(ctx, env.Exec(*probe))
	}
	if p.PprofUnsupported != "" {
		fmt.Fprintf(log, "mesh: --cpu-profile: %s\n", p.PprofUnsupported)
	} else {
		fmt.Fprintf(log, "mesh: --cpu-profile: Go CPU profile of the agent client of every pair (no kernel stacks; --privileged uses perf on the nodes)\n")
	}
	return p, nil
}
