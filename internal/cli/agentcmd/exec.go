package agentcmd

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/agenttoken"
	"github.com/cnperf/cnperf/internal/driver/all"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/guestexec"
	"github.com/cnperf/cnperf/internal/iostreams"
)

type execOptions struct {
	host       string
	port       int
	timeout    time.Duration
	jsonOut    bool
	tokenFile  string
	background bool
	ready      string
	readyPort  int
	stop       bool
}

// newExecCommand is `cnperf agent exec`: one cnperf command run by the exec server of an agent
// started with --exec-port (the cnperf guest of a VM endpoint), which nothing else can enter.
func newExecCommand(streams iostreams.Streams) *cobra.Command {
	o := &execOptions{}
	c := &cobra.Command{
		Use:   "exec --host HOST [flags] -- COMMAND ARGS...",
		Short: "Run a command in a VM's guest through its agent's exec port",
		Long: `exec asks the exec server of an agent started with --exec-port (the cnperf guest of a VM
endpoint: the Kubernetes platform runs its clients and servers this way, from a pod that
reaches the VM) to run one command, and prints its output. Only cnperf's own commands and the
tools of the drivers the guest carries (` + strings.Join(all.GuestExecTools(), ", ") + `) run
there, named without a path; the guest refuses anything else. It presents the agent token
(` + agenttoken.Env + ` or --token-file), as the agent's clients do. With --background the command
(a driver's server) keeps running in the guest: exec returns once it is ready (--ready TEXT in
its output, or --ready-port accepting on the guest's loopback), and --stop ends every such
command. With --json it prints the answer as one JSON object (exitCode, stdout, stderr, error)
and exits 0 whatever the command's exit code; without, the command's output and exit 1 when it
failed.`,
		Example: `  cnperf agent exec --host 10.244.1.17 -- cnperf version
  cnperf agent exec --host 10.244.1.17 --background --ready-port 12865 -- netserver -D -p 12865
  cnperf agent exec --host 10.244.1.17 --stop`,
		Args: func(cmd *cobra.Command, args []string) error {
			if o.stop {
				return cobra.NoArgs(cmd, args)
			}
			return cobra.MinimumNArgs(1)(cmd, args)
		},
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
	f.BoolVar(&o.background, "background", false, "start the command and leave it running in the guest (a server); return once it is ready")
	f.StringVar(&o.ready, "ready", "", "with --background: the command is ready when its output shows TEXT")
	f.IntVar(&o.readyPort, "ready-port", 0, "with --background: the command is ready when this TCP port accepts in the guest")
	f.BoolVar(&o.stop, "stop", false, "end every command started with --background (no command)")
	return c
}

func (o *execOptions) run(ctx context.Context, streams iostreams.Streams, argv []string) error {
	if o.host == "" {
		return exit.Usage("agent exec: --host is required")
	}
	if o.port < 1 || o.port > 65535 {
		return exit.Usage("agent exec: --port %d is not in 1..65535", o.port)
	}
	if !o.stop && strings.ContainsRune(argv[0], '/') {
		return exit.Usage("agent exec: name the guest's program without a path (cnperf or one of %s), not %q",
			strings.Join(all.GuestExecTools(), ", "), argv[0])
	}
	if (o.ready != "" || o.readyPort != 0) && !o.background {
		return exit.Usage("agent exec: --ready and --ready-port go with --background")
	}
	if o.readyPort < 0 || o.readyPort > 65535 {
		return exit.Usage("agent exec: --ready-port %d is not in 1..65535", o.readyPort)
	}
	tok, err := readToken("exec", o.tokenFile)
	if err != nil {
		return err
	}
	resp, err := guestexec.Do(ctx, guestexec.Addr(o.host, o.port), guestexec.Request{Token: tok, Argv: argv,
		TimeoutNs: int64(o.timeout), Background: o.background, Ready: o.ready, ReadyPort: o.readyPort, Stop: o.stop})
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

// newGuestToolsCommand is `cnperf agent guest-tools`: the tools a cnperf guest carries, which
// its exec port runs (test/e2e/harness/kubevirt.sh build reads it to build the guest).
func newGuestToolsCommand(streams iostreams.Streams) *cobra.Command {
	return &cobra.Command{
		Use:   "guest-tools",
		Short: "List the tools a VM endpoint's guest carries, one per line",
		Long: `guest-tools prints, one per line, the programs beside cnperf that the cnperf guest of a VM
endpoint carries and its agent's exec port runs: the tools of the drivers a VM endpoint can run
(` + strings.Join(all.Guest().Names(), ", ") + `), as those drivers build their servers and clients.
test/e2e/harness/kubevirt.sh build copies them, with their shared libraries, into the guest.`,
		Example: `  cnperf agent guest-tools`,
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			for _, t := range all.GuestExecTools() {
				if _, err := fmt.Fprintln(streams.Out, t); err != nil {
					return err
				}
			}
			return nil
		},
	}
}
