// Package selfexec lets a test binary stand in for the cnperf binary: the local platform
// starts "cnperf ..." commands by re-executing its own executable with SelfExecEnv set, and
// a test's TestMain calls MaybeRun first so that such a child behaves as the CLI.
package selfexec

import (
	"context"
	"os"

	"github.com/cnperf/cnperf/internal/app"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/interrupt"
	"github.com/cnperf/cnperf/internal/iostreams"
	"github.com/cnperf/cnperf/internal/platform/local"
)

// MaybeRun runs the cnperf CLI with the process arguments and exits, when this process was
// started as a cnperf child; otherwise it returns at once.
func MaybeRun() {
	if os.Getenv(local.SelfExecEnv) != "1" {
		return
	}
	streams := iostreams.Safe(iostreams.System())
	ctx, stop := interrupt.Notify(context.Background(), streams.ErrOut, os.Exit)
	err := app.Run(ctx, streams, os.Args[1:])
	stop()
	if err != nil {
		app.WriteError(streams.ErrOut, err, os.Args[1:])
	}
	os.Exit(exit.Code(err))
}
