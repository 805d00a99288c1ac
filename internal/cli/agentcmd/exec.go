package agentcmd

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/agenttoken"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/guestexec"
	"github.com/cnperf/cnperf/internal/iostreams"
)

type execOptions struct {
	host      string
	port      int
	timeout   time.Duration
	jsonOut   bool
	tokenFile string
}

// newExecCommand is `cnperf agent exec`: one cnperf command run by the exec server of an agent
// started with --exec-port (the cnperf guest of a VM endpoint), which nothing else can enter.
func newExecCommand(streams iostreams.Streams) *cobra.Command {
	o := &execOptions{}
	c := &cobra.Command{
		Use:   "exec --host HOST [flags] -- cnperf ARGS...",
		Short: "Run a cnperf command in a VM's guest through its agent's exec port",
		Long: `exec asks the exec server of an agent started with --exec-port (the cnperf guest of a VM
endpoint: the Kubernetes platform runs its clients this way, from a pod that reaches the VM)
to run one cnperf command, and prints its output. Only cnperf's own commands run there. It
presents the agent token (` + agenttoken.Env + ` or --token-file), as the agent's clients do.
With --json it prints the answer as one JSON object (exitCode, stdout, stderr, error) and
exits 0 whatever the command's exit code; without, the command's output and exit 1 when it
failed.`,
		Example: `  cnperf agent exec --host 10.244.1.17 -- cnperf version`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd.Context(), streams, args)
		},
	}
	f := c.Flags()
	f.StringVar(&o.host, "host", "", "the guest's address (required)")
	f.IntVar(&o.port, "port", guestexec.DefaultPort, "the exec port")
	f.DurationVar(&o.timeout, "timeout", guestexec.DefaultTimeout, "bound on the command")
	f.BoolVar(&o.jsonOut, "json", false, "print the answer as JSON")
	f.StringVar(&o.tokenFile, "token-file", "", "read the agent token from FILE (default: $"+agenttoken.Env+")")
	return c
}

func (o *execOptions) run(ctx context.Context, streams iostreams.Streams, argv []string) error {
	if o.host == "" {
		return exit.Usage("agent exec: --host is required")
	}
	if o.port < 1 || o.port > 65535 {
		return exit.Usage("agent exec: --port %d is not in 1..65535", o.port)
	}
	if argv[0] != "cnperf" || len(argv) < 2 {
		return exit.Usage("agent exec: only a cnperf command runs in the guest (cnperf SUBCOMMAND ...), not %q", argv)
	}
	tok, err := readToken("exec", o.tokenFile)
	if err != nil {
		return err
	}
	resp, err := guestexec.Run(ctx, guestexec.Addr(o.host, o.port), tok, argv, o.timeout)
	if err != nil {
		return fmt.Errorf("agent exec: %w", err)
	}
	if o.jsonOut {
		b, _ := json.Marshal(resp)
		_, err := fmt.Fprintln(streams.Out, string(b))
		return err
	}
	_, _ = streams.Out.Write(resp.Stdout)
	_, _ = streams.ErrOut.Write(resp.Stderr)
	switch {
	case resp.Error != "":
		return exit.Failure("agent exec: %s", resp.Error)
	case resp.ExitCode != 0:
		return exit.Failure("agent exec: the command exited %d", resp.ExitCode)
	}
	return nil
}
