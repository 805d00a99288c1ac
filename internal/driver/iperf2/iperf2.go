// Package iperf2 drives iperf 2 (iperf 2.1+, https://sourceforge.net/projects/iperf2/) for
// TCP_RR with its bounce-back test: the client writes -l bytes, the server writes them back,
// and with --bounceback-period 0 the next bounce starts as soon as the last one returns (one
// transaction in flight, like netperf's TCP_RR).
//
// iperf 2 reports the bounce-back count and the mean, minimum, maximum and standard deviation
// of the round trips in milliseconds with three decimals (1 µs resolution). Its histogram has
// 100 µs bins, too coarse for loopback or pod-to-pod percentiles, so none are reported.
// iperf 2 exits 0 when it cannot connect; the parser reads its "connect failed" line.
package iperf2

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/driver/toolkit"
	"github.com/cnperf/cnperf/internal/plan"
)

// Name is the driver's name.
const Name = "iperf2"

// DefaultPort is iperf 2's own default port.
const DefaultPort = 5001

// OptPort is the server port option (plain or "iperf2.port").
const OptPort = "port"

// Driver is the iperf 2 driver.
type Driver struct{}

// KnownOptions implements driver.OptionLister.
func (Driver) KnownOptions() []string { return append([]string(nil), knownOptions...) }

var knownOptions = []string{OptPort, toolkit.OptPort6, toolkit.OptBind}

// Name implements driver.Driver.
func (Driver) Name() string { return Name }

// Capabilities implements driver.Driver.
func (Driver) Capabilities() driver.Capabilities {
	return driver.Capabilities{Profiles: []api.Profile{api.TCPRR}, MessageSize: true, RawOutput: true}
}

// job is an iperf 2 case with its options read.
type job struct {
	c     plan.Case
	port  int
	port6 int    // the IPv6 server's port (toolkit.OptPort6; 0: port+1)
	bind  string // the server's -B ("": every address)
	opts  *toolkit.Options
}

// Job implements driver.Driver.
func (Driver) Job(c plan.Case) (driver.Job, error) {
	return toolkit.Job(Name, c, knownOptions, readJob)
}

func readJob(c plan.Case, o *toolkit.Options) (job, error) {
	j := job{c: c, opts: o}
	j.port, j.bind = o.PortBind(OptPort, DefaultPort)
	j.port6 = o.Port(toolkit.OptPort6, 0)
	return j, nil
}

// Servers implements driver.Job: iperf 2's server listens on IPv4 only unless given -V, and
// with -V on the IPv6 wildcard, which takes the port for IPv4 too; so an IPv6 case has a server
// of its own, "iperf2-v6" with -V on the next port (toolkit.FamilyServer), and a run with both
// families reaches each.
func (j job) Servers() []driver.Server {
	name, port := toolkit.FamilyServer(j.c, Name, j.port, j.port6, DefaultPort)
	argv := []string{"iperf", "-s", "-p", strconv.Itoa(port)}
	if toolkit.IPv6(j.c) {
		argv = append(argv, "-V")
	}
	if j.bind != "" {
		argv = append(argv, "-B", j.bind)
	}
	return []driver.Server{{Name: name, Argv: argv,
		Ports: []driver.Port{{Name: "control", Port: port, Protocol: "TCP"}}}}
}

// Client implements driver.Job.
func (j job) Client(t driver.Target, warmup bool) ([]driver.Command, error) {
	return toolkit.OneCommand(j.argv(t, warmup))
}

// MinBounceBytes is the smallest bounce-back message iperf 2 can send: Debian 12's iperf 2.1.8
// on loopback hung until killed with -l 1, completed no bounce in 1 s with -l 16, and failed at
// once with -l 24 to 63 ("tcp bounce-back read failed: Resource temporarily unavailable");
// -l 64 to 100 work.
const MinBounceBytes = 64

// argv builds the iperf 2 bounce-back client argv.
func (j job) argv(t driver.Target, warmup bool) ([]string, error) {
	c := j.c
	_, p := toolkit.FamilyServer(c, Name, j.port, j.port6, DefaultPort)
	if c.Profile != api.TCPRR {
		return nil, toolkit.Unsupported(Name, c.Profile)
	}
	if t.Host == "" {
		return nil, errors.New("iperf2: no target host")
	}
	if m := c.Params.MessageSizeBytes; m > 0 && m < MinBounceBytes {
		return nil, fmt.Errorf("iperf2: TCP_RR message size %d B: iperf 2's bounce-back needs messages of at least %d B (smaller ones fail with \"tcp bounce-back read failed\"); set --message-size (messageSize) to %d or more, or use another driver for smaller messages",
			m, MinBounceBytes, MinBounceBytes)
	}
	argv := []string{"iperf", "-c", t.Host, "-p", strconv.Itoa(t.Port(p)), "-e", "--bounceback", "--bounceback-period", "0",
		"-t", strconv.Itoa(toolkit.RunSeconds(c, warmup))}
	if c.Params.MessageSizeBytes > 0 {
		argv = append(argv, "-l", strconv.Itoa(c.Params.MessageSizeBytes))
	}
	if toolkit.IPv6(c) {
		argv = append(argv, "-V")
	}
	return argv, nil
}

// BindOptions implements driver.Binder: the iperf 2 server listens on addr only (-B).
func (Driver) BindOptions(addr string) map[string]string { return toolkit.BindOptions(addr) }

// Port6Options implements driver.FamilyPorter.
func (Driver) Port6Options(port int) map[string]string { return toolkit.Port6Options(port) }

// PortOptions implements driver.PortMover.
func (Driver) PortOptions(ports []int) map[string]string {
	return toolkit.PortOptions(ports, OptPort)
}

// "[  1] 0.0000-1.0011 sec  65.4 MBytes   548 Mbits/sec    33484=0.029/0.019/7.592/0.106 ms ..."
var (
	bbRE = regexp.MustCompile(`^\[\s*\d+\]\s+(` + toolkit.Decimal + `)-(` + toolkit.Decimal + `) sec\s.*?\s(\d+)=(` + toolkit.Decimal + `)/(` + toolkit.Decimal + `)/(` + toolkit.Decimal + `)/(` + toolkit.Decimal + `) ms`)
	// "(bb w/quickack len/hold=1024/0)": the bounce-back size.
	lenHoldRE = regexp.MustCompile(`len/hold=(\d+)/`)
	failRE    = regexp.MustCompile(`(?i)(connect failed|failed|error|refused|timed out|unknown option|invalid)`)
)

// ParseOutput reads iperf 2's enhanced (-e) bounce-back report: the last whole-run line.
func ParseOutput(data []byte) (api.Sample, error) {
	text := strings.ReplaceAll(toolkit.Text(data), "\r", "")
	var line []string
	var bad []string
	for _, l := range strings.Split(text, "\n") {
		t := strings.TrimSpace(l)
		if m := bbRE.FindStringSubmatch(t); m != nil {
			if strings.HasPrefix(m[1], "0.0") {
				line = m
			}
			continue
		}
		if failRE.MatchString(t) {
			bad = append(bad, t)
		}
	}
	if len(bad) > 0 {
		return api.Sample{}, fmt.Errorf("iperf2: %s", strings.Join(bad, " | "))
	}
	if line == nil {
		return api.Sample{}, fmt.Errorf("iperf2 printed no bounce-back report: %s", toolkit.Tail(data, 3))
	}
	f := func(i int) float64 { v, _ := strconv.ParseFloat(line[i], 64); return v }
	start, end := f(1), f(2)
	n, _ := strconv.ParseInt(line[3], 10, 64)
	secs := end - start
	if n <= 0 || secs <= 0 {
		return api.Sample{}, fmt.Errorf("iperf2 completed %d bounce-backs in %.4f s", n, secs)
	}
	us := func(ms float64) *float64 { return toolkit.F(ms * 1000) }
	s := api.Sample{
		DurationSeconds:       secs,
		Transactions:          toolkit.I(n),
		TransactionsPerSecond: toolkit.F(float64(n) / secs),
		Latency: &api.Latency{
			Count: toolkit.I(n), Mean: us(f(4)), Min: us(f(5)), Max: us(f(6)), Stddev: us(f(7)),
			Method:     "tool",
			Provenance: api.LatencyMeasured,
			Note:       "iperf 2 bounce-back round trips, printed in ms with 3 decimals (1 µs resolution); its 100 µs histogram bins are too coarse for percentiles",
		},
	}
	return s, nil
}

// Parse implements driver.Job.
func (j job) Parse(outs []driver.Output) (api.Sample, error) {
	s, _, err := toolkit.ParseOne(Name, outs, func(o driver.Output) (api.Sample, error) { return ParseOutput(o.Stdout) },
		func(o driver.Output, perr error) error { return toolkit.WithStderr(o, perr, 2) })
	if err != nil {
		return api.Sample{}, err
	}
	return toolkit.Finished(s, outs, j.opts)
}

var _ driver.Importer = Driver{}

// ImportFormats implements driver.Importer.
func (Driver) ImportFormats() string {
	return `a bounce-back client's enhanced output (iperf -c HOST -e --bounceback)`
}

// Import implements driver.Importer for one saved "iperf -e --bounceback" client output.
func (Driver) Import(name string, data []byte) ([]driver.ImportedCase, error) {
	s, err := ParseOutput(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	p := api.Params{Samples: 1, Parallel: 1, DurationSeconds: float64(int(s.DurationSeconds + 0.5))}
	if n := lenHoldRE.FindStringSubmatch(string(data)); n != nil {
		p.MessageSizeBytes, _ = strconv.Atoi(n[1])
	}
	return []driver.ImportedCase{{Profile: api.TCPRR, Params: p, Sample: s}}, nil
}
