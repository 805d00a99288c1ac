// Command cnperf measures the network performance of Kubernetes clusters.
package main

import (
	"context"
	"os"

	"github.com/cnperf/cnperf/internal/app"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/interrupt"
	"github.com/cnperf/cnperf/internal/iostreams"
)

func main() {
	streams := iostreams.Safe(iostreams.System())
	// SIGINT and SIGTERM: the first stops the run, the second cuts clean-up short, the third
	// exits at once (see internal/interrupt).
	ctx, stop := interrupt.Notify(context.Background(), streams.ErrOut, os.Exit)
	err := app.Run(ctx, streams, os.Args[1:])
	stop()
	if err != nil {
		app.WriteError(streams.ErrOut, err, os.Args[1:])
	}
	os.Exit(exit.Code(err))
}
