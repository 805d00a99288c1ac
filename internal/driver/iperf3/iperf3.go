// Package iperf3 drives iperf3 (https://software.es.net/iperf/) with JSON output (-J).
//
// Profiles: TCP_STREAM, TCP_SENDFILE (-Z, iperf3's zero-copy mode sends with sendfile(2)),
// TCP_MAERTS (-R) and UDP_STREAM (-u). iperf3 has no request/response test. Throughput is
// taken from the receiving side (end.sum_received), retransmits from the sending side, and
// UDP loss, jitter and packet counts from the receiver's report. A JSON "error" field, a
// non-zero exit or truncated JSON make the sample fail with iperf3's own message.
//
// An iperf3 server runs one test at a time and serves repeatedly (no --one-off); parallel
// flows are iperf3 streams (-P) of one test.
package iperf3

import (
	"fmt"
	"strconv"
	"strings"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/driver/toolkit"
	"github.com/cnperf/cnperf/internal/plan"
)

// Name is the driver's name.
const Name = "iperf3"

// DefaultPort is iperf3's own default port (control over TCP; UDP tests use the same number).
const DefaultPort = 5201

// Ready is what an iperf3 server prints (with --forceflush) once it listens.
const Ready = "Server listening on"

// Option keys (plain or prefixed "iperf3.").
const (
	OptPort     = "port"     // server port, default 5201
	OptBidir    = "bidir"    // --bidir: both directions at once (iperf3 3.7+); figures add up
	OptZerocopy = "zerocopy" // -Z on TCP_STREAM (the same as profile TCP_SENDFILE)
)

var knownOptions = []string{OptPort, OptBidir, OptZerocopy, toolkit.OptBind}

// Driver is the iperf3 driver.
type Driver struct{}

// KnownOptions implements driver.OptionLister.
func (Driver) KnownOptions() []string { return append([]string(nil), knownOptions...) }

// Name implements driver.Driver.
func (Driver) Name() string { return Name }

// Capabilities implements driver.Driver.
func (Driver) Capabilities() driver.Capabilities {
	return driver.Capabilities{
		Profiles:     []api.Profile{api.TCPStream, api.TCPSendfile, api.TCPMaerts, api.UDPStream},
		Parallel:     true,
		MessageSize:  true,
		Rate:         true,
		CPU:          true,
		InlineWarmup: true,
		RawOutput:    true,
	}
}

// job is an iperf3 case with its options read.
type job struct {
	c               plan.Case
	port            int
	bind            string // the server's -B ("": every address)
	bidir, zerocopy bool
	opts            *toolkit.Options
}

// Job implements driver.Driver.
func (Driver) Job(c plan.Case) (driver.Job, error) {
	return toolkit.Job(Name, c, knownOptions, readJob)
}

func readJob(c plan.Case, o *toolkit.Options) (job, error) {
	j := job{c: c, opts: o}
	j.port, j.bind = o.PortBind(OptPort, DefaultPort)
	j.bidir = o.Bool(OptBidir, false)
	j.zerocopy = o.Bool(OptZerocopy, false)
	return j, nil
}

// Servers implements driver.Job: one iperf3 server on the case's port.
func (j job) Servers() []driver.Server {
	argv := ServerArgv(j.port)
	if j.bind != "" {
		argv = append(argv, "-B", j.bind)
	}
	return []driver.Server{{
		Name: toolkit.ServerName(Name, j.port, DefaultPort),
		Argv: argv,
		Ports: []driver.Port{
			{Name: "control", Port: j.port, Protocol: "TCP"},
			{Name: "data-udp", Port: j.port, Protocol: "UDP"},
		},
		Ready: Ready,
	}}
}

// ServerArgv is the server command: it serves test after test (no --one-off) and flushes its
// output so the ready line can be seen through a pipe.
func ServerArgv(port int) []string {
	return []string{"iperf3", "-s", "-p", strconv.Itoa(port), "--forceflush"}
}

// Client implements driver.Job.
func (j job) Client(t driver.Target, warmup bool) ([]driver.Command, error) {
	return toolkit.OneCommand(j.argv(t, warmup))
}

// argv builds the iperf3 client argv for one sample.
func (j job) argv(t driver.Target, warmup bool) ([]string, error) {
	c, p, bidir, zerocopy := j.c, j.port, j.bidir, j.zerocopy
	if zerocopy && c.Profile != api.TCPStream && c.Profile != api.TCPSendfile {
		return nil, fmt.Errorf("iperf3: option %q applies to TCP_STREAM (it is what TCP_SENDFILE runs), not %s", OptZerocopy, c.Profile)
	}
	if t.Host == "" {
		return nil, fmt.Errorf("iperf3: no target host")
	}
	argv := []string{"iperf3", "-c", t.Host, "-p", strconv.Itoa(t.Port(p)), "-J"}
	if toolkit.IPv6(c) {
		argv = append(argv, "-6")
	}
	argv = append(argv, "-t", strconv.Itoa(toolkit.RunSeconds(c, warmup)))
	if !warmup && c.Params.WarmupSeconds > 0 {
		argv = append(argv, "-O", strconv.Itoa(toolkit.WholeSeconds(c.Params.WarmupSeconds, 1)))
	}
	n := toolkit.Parallel(c)
	if n > 1 {
		argv = append(argv, "-P", strconv.Itoa(n))
	}
	switch c.Profile {
	case api.TCPStream:
		if zerocopy {
			argv = append(argv, "-Z")
		}
	case api.TCPSendfile:
		argv = append(argv, "-Z")
	case api.TCPMaerts:
		if bidir {
			return nil, fmt.Errorf("iperf3: option %q makes no sense with TCP_MAERTS (use TCP_STREAM with bidir)", OptBidir)
		}
		argv = append(argv, "-R")
	case api.UDPStream:
		argv = append(argv, "-u")
	default:
		return nil, toolkit.Unsupported(Name, c.Profile)
	}
	if c.Params.MessageSizeBytes > 0 {
		argv = append(argv, "-l", strconv.Itoa(c.Params.MessageSizeBytes))
	}
	// -b is per stream in iperf3; cnperf's rate is the total. UDP defaults to 1 Mbit/s in
	// iperf3, so "no limit" must be said explicitly with -b 0.
	if r := toolkit.RatePerFlow(c.Params.RateBitsPerSecond, n); r > 0 {
		argv = append(argv, "-b", strconv.FormatInt(r, 10))
	} else if c.Profile == api.UDPStream {
		argv = append(argv, "-b", "0")
	}
	if bidir {
		argv = append(argv, "--bidir")
	}
	return argv, nil
}

// Parse implements driver.Job.
func (j job) Parse(outs []driver.Output) (api.Sample, error) {
	res, _, err := toolkit.ParseOne(Name, outs, func(o driver.Output) (Result, error) { return ParseJSON(o.Stdout) }, explainParse)
	if err != nil {
		return api.Sample{}, err
	}
	if want := j.c.Profile.IsUDP(); want != (res.Protocol == "UDP") {
		return api.Sample{}, fmt.Errorf("iperf3 ran a %s test but the case is %s", res.Protocol, j.c.Profile)
	}
	return toolkit.Finished(res.Sample, outs, j.opts)
}

// explainParse adds the exit code and the end of stderr to an output iperf3 printed no
// result in.
func explainParse(o driver.Output, err error) error {
	if o.ExitCode != 0 {
		return fmt.Errorf("%w (exit code %d; stderr: %s)", err, o.ExitCode, toolkit.Tail(o.Stderr, 4))
	}
	return err
}

// BindOptions implements driver.Binder: the iperf3 server listens on addr only (-B).
func (Driver) BindOptions(addr string) map[string]string { return toolkit.BindOptions(addr) }

// PortOptions implements driver.PortMover: the server has one port number (TCP control and
// UDP data share it).
func (Driver) PortOptions(ports []int) map[string]string {
	return toolkit.PortOptions(ports, OptPort)
}

// Retryable implements driver.Retrier: iperf3's server refuses a test while it is still
// finishing the previous one ("the server is busy running a test. try again later").
func (Driver) Retryable(err error) bool {
	return err != nil && strings.Contains(err.Error(), "server is busy")
}
