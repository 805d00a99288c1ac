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
	err := app.Run(ctx, iostreams.System(), os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "cnperf:", err)
	}
	os.Exit(exit.Code(err))
}
