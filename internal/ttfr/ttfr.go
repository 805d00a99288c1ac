// Package ttfr is the in-pod side of cnperf's time-to-first-response and DNS latency tests,
// behind `cnperf agent ttfr` (a tiny HTTP server, or a client that measures from its own
// process start to the first successful response and prints one JSON line) and `cnperf agent
// dns` (lookups of a name and connects to what it resolves to, summarised as one JSON line);
// the commands and their flags are in internal/cli/agentcmd.
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
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cnperf/cnperf/internal/measure"
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
	// On return: attempts still in flight are cancelled, drained and waited for.
	pool := newAttempts[outcome](ctx, 64)
	defer pool.stop()
	interval := time.Millisecond
	timer := time.NewTimer(0)
	defer timer.Stop()
	var lastErr error
	for {
		select {
		case <-timer.C:
			if pool.inFlight < 256 {
				res.Attempts++
				pool.start(func(ctx context.Context) outcome {
					err := attempt(ctx)
					return outcome{time.Now(), err}
				})
			}
			if interval < 99*time.Millisecond {
				interval = time.Duration(float64(interval) * 1.02)
			}
			timer.Reset(interval)
		case o := <-pool.out:
			pool.received()
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

// connectStampKey is the context key of an attempt's connect stamp (withConnectStamp).
type connectStampKey struct{}

// withConnectStamp returns ctx carrying at, which an attempt of attemptFunc sets to the moment
// it issues its connect system call (the first one, when the target resolves to several
// addresses): after the socket's creation and whatever delayed the attempt's goroutine, so a
// change made before it is never seen by an attempt that seems to have started earlier.
func withConnectStamp(ctx context.Context, at *atomic.Pointer[time.Time]) context.Context {
	return context.WithValue(ctx, connectStampKey{}, at)
}

// stampConnect is the attempts' net.Dialer ControlContext, called just before connect.
func stampConnect(ctx context.Context, _, _ string, _ syscall.RawConn) error {
	if at, ok := ctx.Value(connectStampKey{}).(*atomic.Pointer[time.Time]); ok {
		now := time.Now()
		at.CompareAndSwap(nil, &now)
	}
	return nil
}

func attemptFunc(cfg ClientConfig) func(context.Context) error {
	dialer := &net.Dialer{Timeout: cfg.AttemptTimeout, ControlContext: stampConnect}
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
		sctx, cancel := measure.Cleanup(ctx, 2*time.Second)
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
