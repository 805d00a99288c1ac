// Package selfexec lets a test binary stand in for the cnperf binary: the local platform
// starts "cnperf ..." commands by re-executing its own executable with SelfExecEnv set, and
// a test's TestMain calls MaybeRun first so that such a child behaves as the CLI.
package selfexec

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/cnperf/cnperf/internal/app"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/iostreams"
	"github.com/cnperf/cnperf/internal/platform/local"
)

// MaybeRun runs the cnperf CLI with the process arguments and exits, when this process was
// started as a cnperf child; otherwise it returns at once.
func MaybeRun() {
	if os.Getenv(local.SelfExecEnv) != "1" {
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := app.Run(ctx, iostreams.System(), os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "cnperf:", err)
	}
	os.Exit(exit.Code(err))
}
