package mesh

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/noderes"
	"github.com/cnperf/cnperf/internal/platform"
)

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

// StreamExecutor runs a command whose standard output is consumed while it runs
// (kube.PodExecutor does).
type StreamExecutor interface {
	ExecStream(ctx context.Context, cmd driver.Command, stdout io.Writer) error
}
