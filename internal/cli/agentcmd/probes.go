package agentcmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/iostreams"
	"github.com/cnperf/cnperf/internal/pathmtu"
	"github.com/cnperf/cnperf/internal/ttfr"
)

type ttfrOptions struct {
	target, listen, protocol string
	timeout, attemptTimeout  time.Duration
	linger                   time.Duration
}

// newTTFRCommand is `cnperf agent ttfr`, the in-pod side of tiger-bench's TTFR test
// (internal/ttfr does the measuring).
func newTTFRCommand(streams iostreams.Streams) *cobra.Command {
	o := &ttfrOptions{}
	c := &cobra.Command{
		Use:   "ttfr (--target HOST:PORT | --listen [ADDR]:PORT)",
		Short: "Time to first response: from process start to the first reply, or serve replies",
		Long: `ttfr measures how long a new pod takes to reach a server: from this process's start
(package initialisation, before main) to the first successful response of --target. It
prints one JSON line on standard output: {"ok":true,"ttfrSeconds":0.0031,...}, or
{"ok":false,"error":"no response within 1m0s: ..."} and exits 1 when nothing answered.

Attempts overlap: one starts every interval (1 ms, growing 2% per attempt up to 100 ms), each
bounded by --attempt-timeout; the first success wins. --protocol http (default) counts any
HTTP response, tcp a completed connect.

With --listen it is the server instead: an HTTP server that answers every request with 200
"ok" and prints "` + ttfr.ServerReadyLine + `" on standard error once it listens.

--linger keeps the client alive after printing (so an orchestrator sees the pod ready), then
it exits; SIGTERM ends it at once.`,
		Example: `  cnperf agent ttfr --listen :8080
  cnperf agent ttfr --target 10.244.1.7:8080 --timeout 60s --linger 2s`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd.Context(), streams)
		},
	}
	f := c.Flags()
	f.StringVar(&o.target, "target", "", "server to reach, HOST:PORT (client mode)")
	f.StringVar(&o.listen, "listen", "", "serve on [ADDR]:PORT instead (server mode), e.g. :8080")
	f.StringVar(&o.protocol, "protocol", "http", "http (any HTTP response) or tcp (a completed connect)")
	f.DurationVar(&o.timeout, "timeout", 60*time.Second, "give up this long after the process start")
	f.DurationVar(&o.attemptTimeout, "attempt-timeout", 100*time.Millisecond, "timeout of one attempt")
	f.DurationVar(&o.linger, "linger", 0, "stay alive this long after printing the result")
	return c
}

func (o *ttfrOptions) run(ctx context.Context, streams iostreams.Streams) error {
	switch {
	case o.listen != "" && o.target != "":
		return exit.Usage("agent ttfr: --target and --listen exclude each other")
	case o.listen != "":
		addr := o.listen
		if !strings.Contains(addr, ":") {
			addr = ":" + addr
		}
		return ttfr.Serve(ctx, addr, func(a net.Addr) {
			fmt.Fprintf(streams.ErrOut, "%s on %s\n", ttfr.ServerReadyLine, a)
		})
	case o.target == "":
		return exit.Usage("agent ttfr: --target HOST:PORT or --listen [ADDR]:PORT is required")
	}
	if _, port, err := net.SplitHostPort(o.target); err != nil || port == "" {
		return exit.Usage("agent ttfr: --target %q is not HOST:PORT", o.target)
	} else if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return exit.Usage("agent ttfr: --target %q: bad port", o.target)
	}
	if o.protocol != "http" && o.protocol != "tcp" {
		return exit.Usage("agent ttfr: --protocol %q: want http or tcp", o.protocol)
	}
	if o.timeout <= 0 || o.attemptTimeout <= 0 || o.linger < 0 {
		return exit.Usage("agent ttfr: --timeout and --attempt-timeout must be positive, --linger not negative")
	}
	res := ttfr.Measure(ctx, ttfr.ClientConfig{Target: o.target, Protocol: o.protocol, Timeout: o.timeout, AttemptTimeout: o.attemptTimeout})
	if err := printAndLinger(ctx, streams.Out, "agent ttfr", res, o.linger); err != nil {
		return err
	}
	if !res.OK {
		return exit.Failure("agent ttfr: %s", res.Error)
	}
	return nil
}

// printAndLinger writes the result as one JSON line, then stays up for linger (or until ctx
// ends) so that whoever watches the pod sees it Ready with its output.
func printAndLinger(ctx context.Context, w io.Writer, what string, res any, linger time.Duration) error {
	line, err := json.Marshal(res)
	if err != nil {
		return fmt.Errorf("%s: encode result: %w", what, err)
	}
	if _, err := fmt.Fprintf(w, "%s\n", line); err != nil {
		return fmt.Errorf("%s: write result: %w", what, err)
	}
	if linger > 0 {
		t := time.NewTimer(linger)
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
		}
	}
	return nil
}

type dnsOptions struct {
	target             string
	port               int
	duration, interval time.Duration
	timeout, linger    time.Duration
	waitReady          time.Duration
}

// newDNSCommand is `cnperf agent dns`, the in-pod side of tiger-bench's DNS test
// (internal/ttfr does the measuring).
func newDNSCommand(streams iostreams.Streams) *cobra.Command {
	o := &dnsOptions{}
	c := &cobra.Command{
		Use:   "dns --target NAME [--port PORT]",
		Short: "DNS latency: look a name up and connect to it repeatedly, print the times as JSON",
		Long: `dns looks --target up with Go's resolver (no cache: every lookup goes to the DNS
server in /etc/resolv.conf, through its search list for short names) and connects over TCP to
the first address on --port, again and again for --duration, pausing --interval in between.
It prints one JSON line: every lookup and connect time in seconds, the counts, and the
failures grouped by cause. It exits 1 when any lookup or connect failed.`,
		Example: `  cnperf agent dns --target my-svc --port 80 --duration 30s
  cnperf agent dns --target www.example.com --port 443 --interval 100ms`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd.Context(), streams)
		},
	}
	f := c.Flags()
	f.StringVar(&o.target, "target", "", "name to look up (required)")
	f.IntVar(&o.port, "port", 80, "TCP port to connect to after each lookup (0: lookups only)")
	f.DurationVar(&o.duration, "duration", 30*time.Second, "how long to keep measuring")
	f.DurationVar(&o.interval, "interval", 100*time.Millisecond, "pause between one lookup+connect and the next")
	f.DurationVar(&o.timeout, "timeout", 5*time.Second, "timeout of one lookup and of one connect")
	f.DurationVar(&o.linger, "linger", 0, "stay alive this long after printing the result")
	f.DurationVar(&o.waitReady, "wait-ready", 0, "first wait up to this long, unmeasured, until one lookup and connect succeed (a target still being set up)")
	return c
}

func (o *dnsOptions) run(ctx context.Context, streams iostreams.Streams) error {
	if o.target == "" {
		return exit.Usage("agent dns: --target is required")
	}
	if o.port < 0 || o.port > 65535 || o.duration <= 0 || o.interval < 0 || o.timeout <= 0 || o.linger < 0 || o.waitReady < 0 {
		return exit.Usage("agent dns: --port must be 0-65535, --duration and --timeout positive, --interval and --linger not negative")
	}
	res := ttfr.MeasureDNS(ctx, ttfr.DNSConfig{Name: o.target, Port: o.port, Duration: o.duration, Interval: o.interval, Timeout: o.timeout, WaitReady: o.waitReady})
	if err := printAndLinger(ctx, streams.Out, "agent dns", res, o.linger); err != nil {
		return err
	}
	if res.Lookups == 0 {
		return exit.Failure("agent dns: no lookup was made")
	}
	if res.LookupFailures > 0 || res.ConnectFailures > 0 {
		return exit.Failure("agent dns: %d of %d lookups and %d of %d connects failed", res.LookupFailures, res.Lookups, res.ConnectFailures, res.Connects)
	}
	return nil
}

type mtuOptions struct {
	target string
	probe  pathmtu.Options
}

// newMTUCommand is `cnperf agent mtu`, one direction of the path-MTU check (internal/pathmtu
// does the probing).
func newMTUCommand(streams iostreams.Streams) *cobra.Command {
	o := &mtuOptions{probe: pathmtu.DefaultOptions()}
	c := &cobra.Command{
		Use:   "mtu --target ADDR",
		Short: "Path MTU: the largest packet with don't-fragment set that reaches ADDR, as JSON",
		Long: `mtu sends ICMP echo requests with don't-fragment set to --target and finds the largest one
that is answered: first the size of this host's (or pod's) interface MTU, then, when that is
not answered, a binary search down to IPv4's 68 bytes (IPv6: 1280). Sizes are whole IP packets.
An ICMP "fragmentation needed" (IPv6 "packet too big") that comes back is recorded: with it,
path-MTU discovery works; without it, larger packets vanish (a black hole).

It prints one JSON line on standard output: {"from":"10.244.1.5","to":"10.244.2.7",
"interfaceMTUBytes":1500,"largestBytes":1450,...}, or with "error" and exit 1 when nothing
answered. It needs CAP_NET_RAW (a raw ICMP socket), or else a group in
net.ipv4.ping_group_range (an unprivileged ping socket, which sees no ICMP errors itself:
the route's learned MTU is read instead).`,
		Example: `  cnperf agent mtu --target 10.244.2.7
  cnperf agent mtu --target fd00::7 --max-bytes 9000 --attempts 5`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd.Context(), streams)
		},
	}
	f := c.Flags()
	f.StringVar(&o.target, "target", "", "address that answers the echo requests (required)")
	f.IntVar(&o.probe.MaxBytes, "max-bytes", 0, "largest packet to try (0: the interface MTU)")
	f.IntVar(&o.probe.Attempts, "attempts", o.probe.Attempts, "unanswered requests before a size counts as not passing")
	f.DurationVar(&o.probe.Timeout, "timeout", o.probe.Timeout, "how long one request waits for its reply")
	return c
}

func (o *mtuOptions) run(ctx context.Context, streams iostreams.Streams) error {
	if o.target == "" {
		return exit.Usage("agent mtu: --target is required")
	}
	a, err := netip.ParseAddr(o.target)
	if err != nil {
		return exit.Usage("agent mtu: --target %q is not an IP address", o.target)
	}
	o.probe.Target = a
	if err := o.probe.Validate(); err != nil {
		return exit.Usage("agent mtu: %v", err)
	}
	res := pathmtu.Probe(ctx, o.probe)
	if err := printAndLinger(ctx, streams.Out, "agent mtu", res, 0); err != nil {
		return err
	}
	if res.Error != "" {
		return exit.Failure("agent mtu: %s", res.Error)
	}
	return nil
}

type probeOptions struct {
	target, expect           string
	interval, attemptTimeout time.Duration
	settle, timeout          time.Duration
	confirm                  int
	clock                    bool
	fromStart                bool
}

// newProbeCommand is `cnperf agent probe`, the in-pod side of `cnperf programming`
// (internal/ttfr.Watch does the probing).
func newProbeCommand(streams iostreams.Streams) *cobra.Command {
	o := &probeOptions{}
	c := &cobra.Command{
		Use:   "probe (--target HOST:PORT --expect open|closed | --clock)",
		Short: "Watch a target change state: the first connect that shows it, confirmed, as JSON",
		Long: `probe starts a TCP connect to --target every --interval (attempts overlap, each with its
own start time on this node's clock, each bounded by --attempt-timeout: a connect still
pending then counts as closed). Once the state other than --expect has held for --confirm+1
attempts in a row (within --settle) it prints "` + ttfr.WatchReadyLine + ` SINCE" on standard
output: the change may be made now. It then waits (up to --timeout) for the first attempt that
shows --expect and is confirmed by the --confirm attempts after it, and prints one JSON line:
{"ok":true,"changeAt":"...","lastOtherAt":"...",...}; the change happened between the two.
It exits 1 when the old state never held or the change never came.

--from-start skips the wait for the old state: the probe is ready at once and reports the
first confirmed attempt in --expect (for a target that did not exist before: a new pod's IP;
without "lastOtherAt" when the very first attempt showed it).

--clock prints this node's wall clock and kernel boot id instead ({"now":"...","bootID":"..."}),
for measuring clock offsets.`,
		Example: `  cnperf agent probe --target 10.96.0.42:8080 --expect open --interval 5ms --timeout 30s
  cnperf agent probe --clock`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd.Context(), streams)
		},
	}
	f := c.Flags()
	f.StringVar(&o.target, "target", "", "HOST:PORT to connect to")
	f.StringVar(&o.expect, "expect", "", "the state to wait for: open (connects complete) or closed (they fail)")
	f.DurationVar(&o.interval, "interval", ttfr.DefaultWatchInterval, "time between the starts of two attempts")
	f.DurationVar(&o.attemptTimeout, "attempt-timeout", ttfr.DefaultWatchAttemptTimeout, "timeout of one connect (then it counts as closed)")
	f.IntVar(&o.confirm, "confirm", ttfr.DefaultWatchConfirm, "attempts after the first one in the new state that must show it too")
	f.DurationVar(&o.settle, "settle", 30*time.Second, "how long the old state may take to hold before the probe is ready")
	f.DurationVar(&o.timeout, "timeout", 30*time.Second, "how long to wait for the change once ready")
	f.BoolVar(&o.fromStart, "from-start", false, "ready at once: do not wait for the old state to hold first")
	f.BoolVar(&o.clock, "clock", false, "print this node's wall clock as JSON and exit")
	return c
}

func (o *probeOptions) run(ctx context.Context, streams iostreams.Streams) error {
	if o.clock {
		return printAndLinger(ctx, streams.Out, "agent probe", ttfr.ReadClock(), 0)
	}
	if _, port, err := net.SplitHostPort(o.target); err != nil || port == "" {
		return exit.Usage("agent probe: --target %q is not HOST:PORT", o.target)
	}
	if !ttfr.State(o.expect).Valid() {
		return exit.Usage("agent probe: --expect %q: want open or closed", o.expect)
	}
	if o.interval <= 0 || o.attemptTimeout <= 0 || o.settle <= 0 || o.timeout <= 0 || o.confirm < 1 {
		return exit.Usage("agent probe: --interval, --attempt-timeout, --settle and --timeout must be positive, --confirm at least 1")
	}
	var werr error
	rep := ttfr.Watch(ctx, ttfr.WatchConfig{Target: o.target, Expect: ttfr.State(o.expect), Interval: o.interval,
		AttemptTimeout: o.attemptTimeout, Confirm: o.confirm, Settle: o.settle, Timeout: o.timeout, FromStart: o.fromStart,
		Ready: func(since time.Time) {
			_, werr = fmt.Fprintf(streams.Out, "%s %s\n", ttfr.WatchReadyLine, since.UTC().Format(time.RFC3339Nano))
		}})
	if werr != nil {
		return fmt.Errorf("agent probe: write ready line: %w", werr)
	}
	if err := printAndLinger(ctx, streams.Out, "agent probe", rep, 0); err != nil {
		return err
	}
	if !rep.OK {
		return exit.Failure("agent probe: %s", rep.Error)
	}
	return nil
}
