package ttfr

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"
)

// DNSReport is `agent dns`'s JSON line: every lookup and connect time, in seconds, and the
// failures by cause, from one pod. A connect is tried only after a successful lookup.
// tiger-bench merges the pods' reports into the test's api.DNSResult.
type DNSReport struct {
	Target          string         `json:"target"`
	Port            int            `json:"port"`
	Lookups         int            `json:"lookups"`
	LookupFailures  int            `json:"lookupFailures"`
	Connects        int            `json:"connects"`
	ConnectFailures int            `json:"connectFailures"`
	LookupSeconds   []float64      `json:"lookupSeconds"`
	ConnectSeconds  []float64      `json:"connectSeconds"`
	Failures        map[string]int `json:"failures,omitempty"`
	DurationSeconds float64        `json:"durationSeconds"`
	// WaitedSeconds is the time spent waiting for the target before measuring (--wait-ready).
	WaitedSeconds float64 `json:"waitedSeconds,omitempty"`
}

// DNSConfig configures MeasureDNS.
type DNSConfig struct {
	// Name is looked up as written: a short name goes through resolv.conf's search list, as an
	// application's lookup would.
	Name string
	// Port is connected to at the first address of each lookup; 0 skips the connects.
	Port     int
	Duration time.Duration
	// Interval is the pause between one lookup+connect and the next.
	Interval time.Duration
	// Timeout bounds one lookup and one connect.
	Timeout time.Duration
	// Resolver does the lookups (default: Go's own resolver, which caches nothing).
	Resolver *net.Resolver
	// MaxValues bounds the values kept (default 100000).
	MaxValues int
	// WaitReady, when positive, first waits (up to that long, not measured) until a lookup and
	// a connect succeed once, so that a target still being set up (a Service whose endpoints
	// kube-proxy has not programmed yet) is not counted as a failure. Duration starts after it.
	WaitReady time.Duration
}

// MeasureDNS looks Name up and connects to it repeatedly for Duration.
func MeasureDNS(ctx context.Context, cfg DNSConfig) DNSReport {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Second
	}
	if cfg.MaxValues <= 0 {
		cfg.MaxValues = 100000
	}
	r := cfg.Resolver
	if r == nil {
		r = &net.Resolver{PreferGo: true}
	}
	res := DNSReport{Target: cfg.Name, Port: cfg.Port, LookupSeconds: []float64{}, ConnectSeconds: []float64{}, Failures: map[string]int{}}
	dialer := &net.Dialer{Timeout: cfg.Timeout}
	if cfg.WaitReady > 0 {
		res.WaitedSeconds = waitReady(ctx, r, dialer, cfg).Seconds()
	}
	start := time.Now()
	end := start.Add(cfg.Duration)
	for ctx.Err() == nil && time.Now().Before(end) {
		lctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
		t := time.Now()
		addrs, err := r.LookupHost(lctx, cfg.Name)
		took := time.Since(t)
		cancel()
		if ctx.Err() != nil {
			break // interrupted: not a failure of the lookup
		}
		res.Lookups++
		if err == nil && len(addrs) == 0 {
			err = fmt.Errorf("no addresses")
		}
		if err != nil {
			res.LookupFailures++
			res.Failures["lookup: "+errText(err)]++
		} else {
			if len(res.LookupSeconds) < cfg.MaxValues {
				res.LookupSeconds = append(res.LookupSeconds, took.Seconds())
			}
			if cfg.Port > 0 {
				t := time.Now()
				c, err := dialer.DialContext(ctx, "tcp", net.JoinHostPort(addrs[0], strconv.Itoa(cfg.Port)))
				took := time.Since(t)
				if ctx.Err() != nil {
					break
				}
				res.Connects++
				if err != nil {
					res.ConnectFailures++
					res.Failures["connect: "+errText(err)]++
				} else {
					_ = c.Close()
					if len(res.ConnectSeconds) < cfg.MaxValues {
						res.ConnectSeconds = append(res.ConnectSeconds, took.Seconds())
					}
				}
			}
		}
		if cfg.Interval > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(cfg.Interval):
			}
		}
	}
	res.DurationSeconds = time.Since(start).Seconds()
	if len(res.Failures) == 0 {
		res.Failures = nil
	}
	return res
}

// waitReady tries a lookup and a connect until both succeed once, or WaitReady passes.
func waitReady(ctx context.Context, r *net.Resolver, dialer *net.Dialer, cfg DNSConfig) time.Duration {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, cfg.WaitReady)
	defer cancel()
	for ctx.Err() == nil {
		addrs, err := r.LookupHost(ctx, cfg.Name)
		if err == nil && len(addrs) > 0 {
			if cfg.Port == 0 {
				break
			}
			if c, err := dialer.DialContext(ctx, "tcp", net.JoinHostPort(addrs[0], strconv.Itoa(cfg.Port))); err == nil {
				_ = c.Close()
				break
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
	return time.Since(start)
}

// errText is an error without the parts that differ per attempt (addresses, ports), so
// failures group by cause.
func errText(err error) string {
	if de, ok := err.(*net.DNSError); ok {
		switch {
		case de.IsNotFound:
			return "no such host"
		case de.IsTimeout:
			return "i/o timeout"
		}
		return de.Err
	}
	if oe, ok := err.(*net.OpError); ok && oe.Err != nil {
		return oe.Op + ": " + oe.Err.Error()
	}
	return err.Error()
}
