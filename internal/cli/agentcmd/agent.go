// Package agentcmd is `cnperf agent`: the built-in load generator's server and client, usable
// by hand like iperf3 and driven by the native driver.
package agentcmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/agenttoken"
	"github.com/cnperf/cnperf/internal/driver/all"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/flame"
	"github.com/cnperf/cnperf/internal/guestexec"
	"github.com/cnperf/cnperf/internal/iostreams"
	"github.com/cnperf/cnperf/internal/loadgen"
	"github.com/cnperf/cnperf/internal/loadgen/control"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/version"
)

// ReadyLine is what `agent serve` prints on stderr once it accepts clients.
const ReadyLine = loadgen.ReadyLine

// NewCommand returns the `agent` command with its `serve` and `client` subcommands.
func NewCommand(streams iostreams.Streams) *cobra.Command {
	c := &cobra.Command{
		Use:   "agent",
		Short: "The built-in load generator: run a server, or a client against one",
		Long: `agent is cnperf's own load generator. 'cnperf agent serve' waits for clients;
'cnperf agent client --host H' runs one test against it and prints the result (or, with
--json, one cnperf Sample as JSON). Server and client agree on the test over a small
versioned control protocol (version ` + strconv.Itoa(control.Version) + `) on one TCP port (default ` + strconv.Itoa(loadgen.DefaultPort) + `);
data flows use one more port, TCP or UDP, that can be fixed with --data-port for firewalls
and Kubernetes Services.

A server runs tests only for clients that present its token: both sides read it from the
environment variable ` + agenttoken.Env + ` or from the file named by --token-file, never from
the command line (every local user can read command lines). 'cnperf agent token' prints a new
one:

  export ` + agenttoken.Env + `=$(cnperf agent token)

Profiles: TCP_STREAM, TCP_SENDFILE, TCP_MAERTS (server sends), UDP_STREAM, TCP_RR, UDP_RR,
TCP_CRR (connect, request, response, close), TCP_STREAM_LAT (small messages timed beside a
stream).`,
		Args: cobra.NoArgs,
	}
	c.AddCommand(newServeCommand(streams), newClientCommand(streams), newTokenCommand(streams),
		newTTFRCommand(streams), newDNSCommand(streams), newMTUCommand(streams), newProbeCommand(streams),
		newNodeHardwareCommand(streams), newExecCommand(streams), newGuestToolsCommand(streams))
	return c
}

func newTokenCommand(streams iostreams.Streams) *cobra.Command {
	return &cobra.Command{
		Use: "token",
		Example: `  export CNPERF_AGENT_TOKEN=$(cnperf agent token)
  cnperf agent token > token && cnperf agent serve --token-file token`,
		Short: "Print a new random agent token (64 hex digits) for " + agenttoken.Env,
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			tok, err := agenttoken.New()
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(streams.Out, tok)
			return err
		},
	}
}

// readToken returns the agent token from file (when named) or the environment.
func readToken(cmd, file string) (string, error) {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return "", exit.Usage("agent %s: --token-file: %v", cmd, err)
		}
		tok := strings.TrimSpace(string(b))
		if tok == "" {
			return "", exit.Usage("agent %s: --token-file %s is empty", cmd, file)
		}
		return tok, nil
	}
	if tok := strings.TrimSpace(os.Getenv(agenttoken.Env)); tok != "" {
		return tok, nil
	}
	return "", exit.Usage("agent %s: no agent token: set %s or --token-file FILE to the token the server was started with ('cnperf agent token' prints a new one)",
		cmd, agenttoken.Env)
}

type serveOptions struct {
	port      int
	bind      string
	dataPort  int
	once      bool
	tokenFile string
	maxConns  int
	execPort  int
}

func newServeCommand(streams iostreams.Streams) *cobra.Command {
	o := &serveOptions{}
	c := &cobra.Command{
		Use:   "serve",
		Short: "Serve tests to agent clients (one test at a time)",
		Long: `serve listens on the control port and runs the tests clients ask for, one at a time
(a second client waits up to 10s, then gets "busy"). It prints "` + ReadyLine + `" on
standard error once it accepts clients, and one line per test. It stops on SIGINT/SIGTERM,
or after the first test with --once.

It answers, and runs a test, only for a client whose hello presents its token (` + agenttoken.Env + `
or --token-file; required); others get one error and nothing about the agent, and are logged
once, then summed up every ` + loadgen.DefaultRefusalSummaryEvery.String() + `. Limits: at most --max-connections control connections that
proved the token at once (more are refused at once), ` + strconv.Itoa(loadgen.DefaultMaxHandshakes) + ` waiting for their hello (a new one
closes the oldest), ` + loadgen.DefaultSetupTimeout.String() + ` to complete hello and setup, a test holds
the server for its warm-up and duration plus ` + loadgen.DefaultHoldMargin.String() + ` at most, socket buffers
no larger than the kernel's net.core.wmem_max/rmem_max (never forced), CPU pinning only to
CPUs the agent may run on; out of file descriptors it waits and goes on accepting.`,
		Example: `  export ` + agenttoken.Env + `=$(cnperf agent token)
  cnperf agent serve --bind 127.0.0.1
  cnperf agent serve --port 7100 --data-port 7101 --bind 10.0.0.5 --token-file /run/cnperf/token`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd.Context(), streams)
		},
	}
	f := c.Flags()
	f.IntVar(&o.port, "port", loadgen.DefaultPort, "control port (TCP)")
	f.StringVar(&o.bind, "bind", "", "address to listen on (default: all addresses)")
	f.IntVar(&o.dataPort, "data-port", 0, "fixed data port for every test, TCP and UDP (0: a free port per test)")
	f.BoolVar(&o.once, "once", false, "exit after one test")
	f.StringVar(&o.tokenFile, "token-file", "", "read the agent token from FILE (default: $"+agenttoken.Env+")")
	f.IntVar(&o.maxConns, "max-connections", loadgen.DefaultMaxConns, "connections with the token at once; more are refused")
	f.IntVar(&o.execPort, "exec-port", 0, "also run cnperf commands and the tools of the guest's drivers ("+
		strings.Join(all.GuestExecTools(), ", ")+") for clients with the token on this port "+
		"(the cnperf guest of a VM endpoint: `cnperf agent exec`); 0: off")
	return c
}

func (o *serveOptions) run(ctx context.Context, streams iostreams.Streams) error {
	if o.port < 0 || o.port > 65535 || o.dataPort < 0 || o.dataPort > 65535 || o.execPort < 0 || o.execPort > 65535 {
		return exit.Usage("agent serve: ports must be in 0..65535")
	}
	if o.maxConns < 1 {
		return exit.Usage("agent serve: --max-connections must be at least 1")
	}
	if o.bind != "" {
		// bad input (exit 2) like the other flags; loadgen checks it again for its other callers
		if _, err := netip.ParseAddr(o.bind); err != nil {
			return exit.Usage("agent serve: --bind %q: want an IP address", o.bind)
		}
	}
	tok, err := readToken("serve", o.tokenFile)
	if err != nil {
		return err
	}
	s, err := loadgen.NewServer(loadgen.ServerConfig{Bind: o.bind, Port: o.port, DataPort: o.dataPort, Once: o.once,
		Log: streams.ErrOut, Software: "cnperf " + version.Version, Token: tok, MaxConns: o.maxConns})
	if err != nil {
		return fmt.Errorf("agent serve: %w", err)
	}
	data := "a free port per test"
	if o.dataPort > 0 {
		data = strconv.Itoa(o.dataPort)
	}
	if o.execPort > 0 {
		l, err := net.Listen("tcp", net.JoinHostPort(o.bind, strconv.Itoa(o.execPort)))
		if err != nil {
			return fmt.Errorf("agent serve: --exec-port: %w", err)
		}
		ectx, cancel := context.WithCancel(ctx)
		defer cancel()
		tools := all.GuestExecTools()
		go func() { _ = (&guestexec.Server{Token: tok, Tools: tools, Log: streams.ErrOut}).Serve(ectx, l) }()
		fmt.Fprintf(streams.ErrOut, "agent exec listening on port %d (cnperf and the guest drivers' tools %s only, with the token)\n",
			o.execPort, strings.Join(tools, ", "))
	}
	fmt.Fprintf(streams.ErrOut, "%s on port %d (protocol version %d, data port %s)\n", ReadyLine, s.Port(), control.Version, data)
	if err := s.Serve(ctx); err != nil {
		return fmt.Errorf("agent serve: %w", err)
	}
	return nil
}

type clientOptions struct {
	host, profile               string
	port, dataPort              int
	duration, warmup, connectTO time.Duration
	msgSize, respSize           int
	parallel, burst             int
	rate                        string
	sendBuf, recvBuf            int
	cpu, crrClose               string
	zeroCopy, noOffload, noHist bool
	jsonOut                     bool
	cpuProfile                  string
	tokenFile                   string
}

func newClientCommand(streams iostreams.Streams) *cobra.Command {
	o := &clientOptions{}
	c := &cobra.Command{
		Use:   "client --host HOST [flags]",
		Short: "Run one test against an agent server",
		Long: `client runs one test against 'cnperf agent serve' and prints the result. With --json it
prints exactly one cnperf Sample (the v1alpha1 schema) on standard output; a failed test
prints a Sample holding only the error and exits 1.

The measured window starts after --warmup and lasts --duration; both sides take their
counters and CPU figures at the window's edges, which the client announces over the control
connection. Throughput is what the receiver read; RR and CRR latency is the round-trip time
of every transaction in the window (merged log-linear histogram).`,
		Example: `  cnperf agent client --host 10.0.0.5 --profile TCP_STREAM --duration 10s
  cnperf agent client --host 10.0.0.5 --profile TCP_RR --burst 16 --parallel 4 --json
  cnperf agent client --host 10.0.0.5 --profile UDP_STREAM --message-size 64 --rate 0
  cnperf agent client --host 127.0.0.1 --profile TCP_RR --cpu 0,0`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd.Context(), streams)
		},
	}
	f := c.Flags()
	f.StringVar(&o.host, "host", "", "server address or name (required)")
	f.StringVar(&o.cpuProfile, "cpu-profile", "", "write a Go CPU profile of this client to FILE (cnperf mesh --cpu-profile renders it as a flame graph)")
	f.IntVar(&o.port, "port", loadgen.DefaultPort, "server control port")
	f.IntVar(&o.dataPort, "data-port", 0, "dial this data port instead of the one the server announces (NAT, NodePort)")
	f.StringVar(&o.profile, "profile", "TCP_STREAM", "TCP_STREAM, TCP_SENDFILE, TCP_MAERTS, UDP_STREAM, TCP_RR, UDP_RR, TCP_CRR or TCP_STREAM_LAT")
	f.DurationVar(&o.duration, "duration", 10*time.Second, "measured time")
	f.DurationVar(&o.warmup, "warmup", 0, "traffic before the measured window, not counted")
	f.IntVar(&o.msgSize, "message-size", 0, "bytes per send (stream) or per request (RR); 0: 128KiB stream, 1400 UDP_STREAM, 1 RR")
	f.IntVar(&o.respSize, "response-size", 0, "RR/CRR response bytes (0: the message size); TCP_STREAM_LAT: its small messages' bytes (0: 1)")
	f.IntVar(&o.parallel, "parallel", 1, "parallel flows (connections, or UDP flows)")
	f.IntVar(&o.burst, "burst", 0, "extra RR transactions in flight per flow (netperf -b)")
	f.StringVar(&o.rate, "rate", "0", "total send rate limit in bits/s, with k/M/G suffixes (0: unlimited)")
	f.IntVar(&o.sendBuf, "send-buffer", 0, "SO_SNDBUF bytes on both sides (0: kernel default)")
	f.IntVar(&o.recvBuf, "recv-buffer", 0, "SO_RCVBUF bytes on both sides (0: kernel default)")
	f.StringVar(&o.cpu, "cpu", "", `pin data threads: "CLIENT,SERVER" CPU numbers, e.g. "0,1" or "0,0"; either may be empty`)
	f.StringVar(&o.crrClose, "crr-close", control.CloseGraceful, "TCP_CRR close: graceful (FIN, the server closes first and keeps TIME_WAIT, like netperf) or rst (SO_LINGER 0)")
	f.BoolVar(&o.zeroCopy, "zerocopy", false, "send with MSG_ZEROCOPY (TCP_STREAM, TCP_MAERTS)")
	f.BoolVar(&o.noOffload, "no-offload", false, "do not use UDP GSO/GRO")
	f.BoolVar(&o.noHist, "no-histogram", false, "do not time transactions (to measure what the histogram costs)")
	f.DurationVar(&o.connectTO, "connect-timeout", 5*time.Second, "timeout for connecting to the server")
	f.BoolVar(&o.jsonOut, "json", false, "print one cnperf Sample as JSON on stdout")
	f.StringVar(&o.tokenFile, "token-file", "", "read the agent token from FILE (default: $"+agenttoken.Env+")")
	return c
}

// ParseCPU reads "--cpu CLIENT,SERVER"; an empty side is -1 (no pinning).
func ParseCPU(s string) (client, server int, err error) {
	client, server = -1, -1
	if strings.TrimSpace(s) == "" {
		return client, server, nil
	}
	parts := strings.Split(s, ",")
	if len(parts) > 2 {
		return 0, 0, fmt.Errorf("--cpu %q: want CLIENT,SERVER", s)
	}
	vals := []*int{&client, &server}
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n > control.MaxCPU {
			return 0, 0, fmt.Errorf("--cpu %q: %q is not a CPU number", s, p)
		}
		*vals[i] = n
	}
	return client, server, nil
}

func (o *clientOptions) config() (loadgen.ClientConfig, error) {
	if o.host == "" {
		return loadgen.ClientConfig{}, exit.Usage("agent client: --host is required")
	}
	p := strings.ToUpper(strings.TrimSpace(o.profile))
	if !control.IsProfile(p) {
		return loadgen.ClientConfig{}, exit.Usage("agent client: unknown profile %q (known: %s)", o.profile, strings.Join(control.Profiles, ", "))
	}
	rate, err := plan.ParseRate(o.rate)
	if err != nil {
		return loadgen.ClientConfig{}, exit.Usage("agent client: %v", err)
	}
	cc, sc, err := ParseCPU(o.cpu)
	if err != nil {
		return loadgen.ClientConfig{}, exit.Usage("agent client: %v", err)
	}
	if o.crrClose != control.CloseGraceful && o.crrClose != control.CloseRST {
		return loadgen.ClientConfig{}, exit.Usage("agent client: --crr-close %q: want graceful or rst", o.crrClose)
	}
	if o.duration <= 0 {
		return loadgen.ClientConfig{}, exit.Usage("agent client: --duration must be positive")
	}
	if o.warmup < 0 {
		return loadgen.ClientConfig{}, exit.Usage("agent client: --warmup must not be negative")
	}
	if o.parallel < 1 || o.burst < 0 || o.msgSize < 0 || o.respSize < 0 || o.sendBuf < 0 || o.recvBuf < 0 {
		return loadgen.ClientConfig{}, exit.Usage("agent client: --parallel must be ≥ 1 and sizes, buffers and --burst ≥ 0")
	}
	tok, err := readToken("client", o.tokenFile)
	if err != nil {
		return loadgen.ClientConfig{}, err
	}
	return loadgen.ClientConfig{
		Host: o.host, Port: o.port, DataPort: o.dataPort, Profile: p,
		Duration: o.duration, Warmup: o.warmup,
		MessageSize: o.msgSize, ResponseSize: o.respSize, Parallel: o.parallel, Burst: o.burst,
		RateBitsPerSecond: rate, SendBuffer: o.sendBuf, RecvBuffer: o.recvBuf,
		CRRClose: o.crrClose, ZeroCopy: o.zeroCopy, NoOffload: o.noOffload, NoHistogram: o.noHist,
		ClientCPU: cc, ServerCPU: sc, ConnectTimeout: o.connectTO, Software: "cnperf " + version.Version, Token: tok,
	}, nil
}

func (o *clientOptions) run(ctx context.Context, streams iostreams.Streams) (err error) {
	if o.cpuProfile != "" {
		stop, perr := flame.ProfileCPU(o.cpuProfile)
		if perr != nil {
			return exit.Usage("--cpu-profile: %v", perr)
		}
		defer func() {
			if serr := stop(); serr != nil && err == nil {
				err = fmt.Errorf("--cpu-profile: %w", serr)
			}
		}()
	}
	cfg, err := o.config()
	if err != nil {
		return err
	}
	started := time.Now()
	rep, err := loadgen.Run(ctx, cfg)
	if err != nil {
		err = fmt.Errorf("agent client: %s to %s:%d: %w", cfg.Profile, cfg.Host, cfg.Port, err)
		if o.jsonOut {
			s := api.Sample{StartTime: started.UTC(), EndTime: time.Now().UTC(), Error: err.Error()}
			_ = writeJSON(streams.Out, s)
		}
		return exit.Failure("%w", err)
	}
	if o.jsonOut {
		return writeJSON(streams.Out, rep.Sample)
	}
	PrintHuman(streams.Out, cfg, rep)
	return nil
}

func writeJSON(w io.Writer, s api.Sample) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("agent client: encode sample: %w", err)
	}
	b = append(b, '\n')
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("agent client: write sample: %w", err)
	}
	return nil
}
