// Package ttfr is the in-pod side of cnperf's time-to-first-response and DNS latency tests:
// `cnperf agent ttfr` (a tiny HTTP server, or a client that measures from its own process
// start to the first successful response and prints one JSON line) and `cnperf agent dns`
// (lookups of a name and connects to what it resolves to, summarised as one JSON line).
//
// The TTFR clock starts when this package is initialised, before main runs: a few
// milliseconds after the container's process was exec'ed, as tiger-bench's pingo measures
// (its startTime is also a package variable). Attempts overlap: a new one starts every
// interval (1 ms, growing 2% per attempt to 100 ms), each bounded by --attempt-timeout, and
// the first success wins; so a pod whose network is not programmed yet keeps trying, and the
// figure is the time until its traffic first got through.
package ttfr

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/interrupt"
	"github.com/cnperf/cnperf/internal/iostreams"
)

// processStart is the TTFR clock's start: package initialisation, before main.
var processStart = time.Now()

// ServerReadyLine is what the server prints on stderr once it accepts connections.
const ServerReadyLine = "cnperf ttfr server listening"

// DefaultPort is the server's port when none is given.
const DefaultPort = 8080

// Result is the client's JSON line. A failed client has OK false, Error set and no TTFRSeconds.
type Result struct {
	OK bool `json:"ok"`
	// TTFRSeconds is the time from the process start to the first successful response.
	TTFRSeconds *float64 `json:"ttfrSeconds,omitempty"`
	Target      string   `json:"target"`
	Protocol    string   `json:"protocol"`
	Attempts    int      `json:"attempts"`
	// ElapsedSeconds is the time from the process start until the client stopped trying.
	ElapsedSeconds float64 `json:"elapsedSeconds"`
	Error          string  `json:"error,omitempty"`
	// LastError is the last failed attempt's error, when one failed before the success.
	LastError string `json:"lastError,omitempty"`
	// StartTime is the process start (wall clock, for correlating with pod events).
	StartTime time.Time `json:"startTime"`
}

// ClientConfig configures Measure.
type ClientConfig struct {
	Target string // HOST:PORT
	// Protocol is "http" (an HTTP GET that gets any response) or "tcp" (a completed connect).
	Protocol string
	// Timeout bounds the whole measurement; AttemptTimeout one attempt.
	Timeout        time.Duration
	AttemptTimeout time.Duration
	// Start is the clock's start (default: the process start).
	Start time.Time
}

// Measure tries the target until the first success or the timeout and returns the result.
// It never returns an error: a failure is a Result with OK false and the cause.
func Measure(ctx context.Context, cfg ClientConfig) Result {
	if cfg.Start.IsZero() {
		cfg.Start = processStart
	}
	if cfg.Protocol == "" {
		cfg.Protocol = "http"
	}
	if cfg.AttemptTimeout <= 0 {
		cfg.AttemptTimeout = 100 * time.Millisecond
	}
	res := Result{Target: cfg.Target, Protocol: cfg.Protocol, StartTime: cfg.Start}
	deadline := cfg.Start.Add(cfg.Timeout)
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()

	attempt := attemptFunc(cfg)
	type outcome struct {
		at  time.Time
		err error
	}
	results := make(chan outcome, 64)
	var wg sync.WaitGroup
	// On return: attempts still in flight are cancelled, drained and waited for.
	defer func() {
		cancel()
		go func() {
			for range results {
			}
		}()
		wg.Wait()
		close(results)
	}()
	interval := time.Millisecond
	timer := time.NewTimer(0)
	defer timer.Stop()
	var lastErr error
	inFlight := 0
	for {
		select {
		case <-timer.C:
			if inFlight < 256 {
				inFlight++
				res.Attempts++
				wg.Add(1)
				go func() {
					defer wg.Done()
					err := attempt(ctx)
					results <- outcome{time.Now(), err}
				}()
			}
			if interval < 99*time.Millisecond {
				interval = time.Duration(float64(interval) * 1.02)
			}
			timer.Reset(interval)
		case o := <-results:
			inFlight--
			if o.err == nil {
				v := o.at.Sub(cfg.Start).Seconds()
				res.OK, res.TTFRSeconds = true, &v
				res.ElapsedSeconds = v
				if lastErr != nil {
					res.LastError = lastErr.Error()
				}
				return res
			}
			if ctx.Err() == nil {
				lastErr = o.err
			}
		case <-ctx.Done():
			res.ElapsedSeconds = time.Since(cfg.Start).Seconds()
			why := "no response within " + cfg.Timeout.String()
			if errors.Is(ctx.Err(), context.Canceled) {
				why = "interrupted before a response"
			}
			if lastErr != nil {
				why += ": " + lastErr.Error()
			}
			res.Error = why
			return res
		}
	}
}

func attemptFunc(cfg ClientConfig) func(context.Context) error {
	dialer := &net.Dialer{Timeout: cfg.AttemptTimeout}
	if cfg.Protocol == "tcp" {
		return func(ctx context.Context) error {
			c, err := dialer.DialContext(ctx, "tcp", cfg.Target)
			if err != nil {
				return err
			}
			return c.Close()
		}
	}
	client := &http.Client{
		Timeout: cfg.AttemptTimeout,
		Transport: &http.Transport{
			DisableKeepAlives: true,
			DialContext:       dialer.DialContext,
			Proxy:             nil, // never through a proxy from the environment
		},
	}
	url := "http://" + cfg.Target + "/"
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		return resp.Body.Close()
	}
}

// Serve runs the HTTP server that answers every request with 200 "ok" until ctx ends.
// ready, when set, is called once it listens.
func Serve(ctx context.Context, addr string, ready func(net.Addr)) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, "ok\n")
		}),
		ReadHeaderTimeout: 5 * time.Second,
	}
	if ready != nil {
		ready(ln.Addr())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(interrupt.Cleanup(ctx), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		return nil
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return fmt.Errorf("serve on %s: %w", addr, err)
	}
}

type agentOptions struct {
	target, listen, protocol string
	timeout, attemptTimeout  time.Duration
	linger                   time.Duration
}

// NewAgentCommand returns `ttfr`, to attach under `cnperf agent`.
func NewAgentCommand(streams iostreams.Streams) *cobra.Command {
	o := &agentOptions{}
	c := &cobra.Command{
		Use:   "ttfr (--target HOST:PORT | --listen [ADDR]:PORT)",
		Short: "Time to first response: measure from process start to the first reply, or serve replies",
		Long: `ttfr measures how long a new pod takes to reach a server: from this process's start
(package initialisation, before main) to the first successful response of --target. It
prints one JSON line on standard output: {"ok":true,"ttfrSeconds":0.0031,...}, or
{"ok":false,"error":"no response within 1m0s: ..."} and exits 1 when nothing answered.

Attempts overlap: one starts every interval (1 ms, growing 2% per attempt up to 100 ms), each
bounded by --attempt-timeout; the first success wins. --protocol http (default) counts any
HTTP response, tcp a completed connect.

With --listen it is the server instead: an HTTP server that answers every request with 200
"ok" and prints "` + ServerReadyLine + `" on standard error once it listens.

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

func (o *agentOptions) run(ctx context.Context, streams iostreams.Streams) error {
	if ctx == nil {
		ctx = context.Background()
	}
	switch {
	case o.listen != "" && o.target != "":
		return exit.Usage("agent ttfr: --target and --listen exclude each other")
	case o.listen != "":
		addr := o.listen
		if !strings.Contains(addr, ":") {
			addr = ":" + addr
		}
		return Serve(ctx, addr, func(a net.Addr) {
			fmt.Fprintf(streams.ErrOut, "%s on %s\n", ServerReadyLine, a)
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
	res := Measure(ctx, ClientConfig{Target: o.target, Protocol: o.protocol, Timeout: o.timeout, AttemptTimeout: o.attemptTimeout})
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
