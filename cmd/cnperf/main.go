// Command cnperf measures the network performance of Kubernetes clusters.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/cnperf/cnperf/internal/app"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/iostreams"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	streams := iostreams.Safe(iostreams.System())
	err := app.Run(ctx, streams, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(streams.ErrOut, "cnperf:", err)
	}
	os.Exit(exit.Code(err))
}
