package local

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/driver/all"
	_ "github.com/cnperf/cnperf/internal/driver/iperf3"
	_ "github.com/cnperf/cnperf/internal/driver/native"
	_ "github.com/cnperf/cnperf/internal/driver/qperf"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/report/relative"
	"github.com/cnperf/cnperf/internal/runner"
	"github.com/cnperf/cnperf/internal/stats"
)

// TestLabFigures measures the lab paths for docs/lab.md. It takes minutes, so it runs only
// with CNPERF_LAB_FIGURES set to a list of "profile:driver" pairs, e.g.
//
//	CNPERF_LAB_FIGURES=TCP_STREAM:iperf3,TCP_RR:qperf CNPERF_LAB_PATHS=all \
//	CNPERF_AGENT_BINARY=/tmp/cnperf CNPERF_LAB_RULES=0,1000,10000 go test ./internal/platform/local -run LabFigures -v -timeout 30m
func TestLabFigures(t *testing.T) {
	spec := os.Getenv("CNPERF_LAB_FIGURES")
	if spec == "" {
		t.Skip("set CNPERF_LAB_FIGURES to measure")
	}
	lo := lab.DefaultOptions()
	if v := os.Getenv("CNPERF_LAB_RULES"); v != "" {
		lo.PolicyRules = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(f)
			if err != nil {
				t.Fatal(err)
			}
			lo.PolicyRules = append(lo.PolicyRules, n)
		}
	}
	if v := os.Getenv("CNPERF_LAB_STYLES"); v != "" {
		lo.PolicyStyles = strings.Split(v, ",")
	}
	if v := os.Getenv("CNPERF_LAB_OVERLAYS"); v != "" {
		lo.Overlays = strings.Split(v, ",")
	}
	if v := os.Getenv("CNPERF_LAB_PROXIES"); v != "" {
		lo.ServiceProxies = strings.Split(v, ",")
	}
	paths := append([]api.Path{api.PathLoopback}, lab.Paths...)
	if v := os.Getenv("CNPERF_LAB_PATHS"); v != "" && v != "all" {
		paths = nil
		for _, f := range strings.Split(v, ",") {
			paths = append(paths, api.Path(f))
		}
	}
	dur, samples := 3.0, 3
	if v := os.Getenv("CNPERF_LAB_DURATION"); v != "" {
		dur, _ = strconv.ParseFloat(v, 64)
	}
	if v := os.Getenv("CNPERF_LAB_SAMPLES"); v != "" {
		samples, _ = strconv.Atoi(v)
	}
	// The native driver runs "cnperf agent …": CNPERF_AGENT_BINARY names a built cnperf.
	p := New(Options{Lab: &lo, AgentBinary: os.Getenv("CNPERF_AGENT_BINARY")}, testWriter{t})
	var cases []plan.Case
	drivers := map[string]driver.Driver{}
	for _, pd := range strings.Split(spec, ",") {
		prof, drv, _ := strings.Cut(pd, ":")
		d, err := all.Get(drv)
		if err != nil {
			t.Fatal(err)
		}
		drivers[drv] = d
		for _, path := range paths {
			msg := 1
			switch {
			case api.Profile(prof) == api.UDPStream:
				msg = 1024
			case api.Profile(prof).IsStream():
				msg = 131072
			}
			cases = append(cases, plan.Case{Profile: api.Profile(prof), Path: path, Driver: drv,
				Params: api.Params{DurationSeconds: dur, WarmupSeconds: 1, Samples: samples, MessageSizeBytes: msg, Parallel: 1}})
		}
	}
	cases = p.ExpandCases(cases)
	ctx := context.Background()
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := p.Close(cctx); err != nil {
			t.Error(err)
		}
	}()
	if err := p.Prepare(ctx, cases, drivers); err != nil {
		t.Fatal(err)
	}
	// Rounds run the whole list several times and pool each case's samples, so that a burst of
	// load from elsewhere on the machine spreads over every case instead of hitting a few.
	rounds := 1
	if v := os.Getenv("CNPERF_LAB_ROUNDS"); v != "" {
		rounds, _ = strconv.Atoi(v)
	}
	r := runner.Runner{Platform: p, Drivers: drivers}
	var results []api.Result
	for round := 0; round < rounds; round++ {
		rs, err := r.Run(ctx, cases)
		if err != nil {
			t.Fatal(err)
		}
		if results == nil {
			results = rs
			continue
		}
		for i := range rs {
			results[i].Samples = append(results[i].Samples, rs[i].Samples...)
		}
	}
	for i := range results {
		results[i].Summary = stats.Summarize(results[i].Samples)
		if results[i].Failed() {
			t.Errorf("%s: %s %v", relative.ResultName(results[i]), results[i].Error, results[i].Samples)
		}
	}
	var b strings.Builder
	if err := relative.Write(&b, results); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + b.String())
	for _, res := range results {
		s := res.Summary
		line := string(res.Profile) + " " + relative.ResultName(res)
		if s.ThroughputBitsPerSecond != nil {
			line += " tput(Gbit/s) median " + strconv.FormatFloat(s.ThroughputBitsPerSecond.Median/1e9, 'f', 2, 64) +
				" cov " + strconv.FormatFloat(s.ThroughputBitsPerSecond.CoV, 'f', 3, 64)
		}
		// CPU per byte of both sides (netperf's service demand): less sensitive than the
		// throughput to other load on the machine.
		var sd []float64
		for _, smp := range res.Samples {
			if smp.CPU != nil && smp.CPU.Client != nil && smp.CPU.Server != nil &&
				smp.CPU.Client.ServiceDemandMicrosecondsPerKB != nil && smp.CPU.Server.ServiceDemandMicrosecondsPerKB != nil {
				sd = append(sd, *smp.CPU.Client.ServiceDemandMicrosecondsPerKB+*smp.CPU.Server.ServiceDemandMicrosecondsPerKB)
			}
		}
		if st := stats.Describe(sd); st != nil && res.Profile.IsStream() {
			line += " cpu µs/KB (client+server) median " + strconv.FormatFloat(st.Median, 'f', 3, 64)
		}
		if s.TransactionsPerSecond != nil {
			line += " tps median " + strconv.FormatFloat(s.TransactionsPerSecond.Median, 'f', 0, 64)
		}
		if l := s.LatencyMicroseconds; l != nil && l.P50 != nil {
			line += " p50 " + strconv.FormatFloat(*l.P50, 'f', 1, 64) + "us"
			if l.P99 != nil && l.Max != nil {
				line += " p99 " + strconv.FormatFloat(*l.P99, 'f', 1, 64) + "us max " + strconv.FormatFloat(*l.Max, 'f', 0, 64) + "us"
			}
		}
		t.Log(line)
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}
