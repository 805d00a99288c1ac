// Command cnperf-agent is `cnperf agent` alone: the benchmark harness builds it so that it
// measures the built-in load generator without depending on the rest of cnperf compiling.
// `cnperf-agent agent serve|client ...` behaves exactly like `cnperf agent serve|client ...`.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/cli/agentcmd"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/iostreams"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	cmd := &cobra.Command{Use: "cnperf-agent", Short: "cnperf's built-in load generator alone (see `cnperf agent`)"}
	cmd.AddCommand(agentcmd.NewCommand(iostreams.System()))
	cmd.SilenceUsage = true
	cmd.SilenceErrors = true
	err := cmd.ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
	}
	os.Exit(exit.Code(err))
}
