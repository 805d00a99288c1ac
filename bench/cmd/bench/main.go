// Command bench compares cnperf's built-in load generator with the C tools people trust
// (iperf3, sockperf, qperf, iperf 2, and a C connect/request/response/close loop), profile by
// profile, on loopback and on a veth pair between two network namespaces.
//
//	go run ./bench/cmd/bench [-reps 3] [-duration 3s] [-warmup 1s] [-paths loopback,veth] [-only REGEXP]
//
// It installs nothing: peers missing from PATH are skipped (and said so). It builds
// cnperf-agent (./bench/cmd/cnperf-agent) and the C reference loop (bench/crr/crr.c, with gcc)
// into a temporary directory. Each scenario runs cnperf and its peer alternately (ABBA order),
// -reps times each; the table shows medians and the ratio of medians (cnperf / peer). CPU is
// measured the same way for every tool: user+system time of the client process and of the
// server process (from /proc/PID/stat, children included) over the client's run, in percent
// of one CPU.
//
// Both paths run in network namespaces the command creates and removes itself (prefix
// "cnpb-", addresses 198.18.0.0/30): "loopback" is the lo device of one namespace, "veth" a
// veth pair between a client and a server namespace. It needs root.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/cnperf/cnperf/internal/agenttoken"
)

type options struct {
	reps     int
	duration time.Duration
	warmup   time.Duration
	paths    []string
	only     *regexp.Regexp
	verbose  bool
}

func main() {
	var o options
	var paths, only string
	flag.IntVar(&o.reps, "reps", 3, "repetitions of each tool per scenario (alternating)")
	flag.DurationVar(&o.duration, "duration", 3*time.Second, "measured time per run")
	flag.DurationVar(&o.warmup, "warmup", time.Second, "warm-up per run (for tools that have one)")
	flag.StringVar(&paths, "paths", "loopback,veth", "paths to run: loopback, veth")
	flag.StringVar(&only, "only", "", "run only scenarios whose name matches this regular expression")
	flag.BoolVar(&o.verbose, "v", false, "print every run on stderr")
	flag.Parse()
	o.paths = strings.Split(paths, ",")
	if only != "" {
		re, err := regexp.Compile(only)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench: -only:", err)
			os.Exit(2)
		}
		o.only = re
	}
	if o.reps < 1 || o.duration <= 0 {
		fmt.Fprintln(os.Stderr, "bench: -reps must be ≥ 1 and -duration positive")
		os.Exit(2)
	}
	// the cnperf agents it starts take their token from the environment they inherit
	tok, err := agenttoken.ForRun()
	if err == nil {
		err = os.Setenv(agenttoken.Env, tok)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err = run(ctx, o)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}
