// Package qperf drives qperf (https://github.com/linux-rdma/qperf) socket tests:
// tcp_bw (TCP_STREAM), udp_bw (UDP_STREAM), tcp_lat (TCP_RR) and udp_lat (UDP_RR).
//
// The client runs with -vv -uu -un -e 6: every figure in base units (bytes/sec, ns, bytes),
// six significant digits, local/remote naming. qperf's "latency" is ONE-WAY time: the
// measured time divided by the number of messages both sides received, i.e. half the
// round-trip; cnperf doubles it (Method "tool-rtt-from-one-way") and says so in a note.
// qperf's msg_rate of a latency test counts the messages of both directions, so the
// transaction rate is half of it. CPU figures are system-wide (qperf reads /proc/stat) in
// percent of one CPU ("% cpus").
//
// The server is "qperf -lp PORT": control over TCP on PORT; the data port (-ip) is fixed so
// Services and firewalls can carry it. qperf's server tells the client which data port to
// dial, so the data port must be reachable under its own number.
package qperf

import (
	"fmt"
	"strconv"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/driver/toolkit"
	"github.com/cnperf/cnperf/internal/plan"
)

// Name is the driver's name.
const Name = "qperf"

// Default ports: qperf's own listen port and the next one for data.
const (
	DefaultPort     = 19765
	DefaultDataPort = 19766
)

// Option keys (plain or prefixed "qperf.").
const (
	OptPort     = "port"     // control (listen) port, -lp
	OptDataPort = "dataPort" // data port, -ip
)

var knownOptions = []string{OptPort, OptDataPort}

// Driver is the qperf driver.
type Driver struct{}

// KnownOptions implements driver.OptionLister.
func (Driver) KnownOptions() []string { return append([]string(nil), knownOptions...) }

// Name implements driver.Driver.
func (Driver) Name() string { return Name }

// DefaultTCPBandwidthMessageSize is qperf's own message size for tcp_bw when -m is not given
// (its output says "msg_size = 64 KiB (65,536)"; testdata/captured/tcp_bw_default_units).
// tiger-bench's thruput-latency test runs qperf without -m, so this is what it measures.
const DefaultTCPBandwidthMessageSize = 64 << 10

// DefaultMessageSize implements driver.MessageSizer: qperf's own default for tcp_bw instead
// of cnperf's generic 128 KiB, so a plan that sets no size measures what a bare qperf does.
// (tcp_lat's default, 1 byte, is cnperf's too.)
func (Driver) DefaultMessageSize(p api.Profile) (int, bool) {
	if p == api.TCPStream {
		return DefaultTCPBandwidthMessageSize, true
	}
	return 0, false
}

// Capabilities implements driver.Driver.
func (Driver) Capabilities() driver.Capabilities {
	return driver.Capabilities{
		Profiles:    []api.Profile{api.TCPStream, api.UDPStream, api.TCPRR, api.UDPRR},
		MessageSize: true,
		CPU:         true,
		RawOutput:   true,
	}
}

// Test is the qperf test name for a profile, or "".
func Test(p api.Profile) string {
	switch p {
	case api.TCPStream:
		return "tcp_bw"
	case api.UDPStream:
		return "udp_bw"
	case api.TCPRR:
		return "tcp_lat"
	case api.UDPRR:
		return "udp_lat"
	}
	return ""
}

// job is a qperf case with its options read.
type job struct {
	c         plan.Case
	ctl, data int
	opts      *toolkit.Options
}

// Job implements driver.Driver.
func (Driver) Job(c plan.Case) (driver.Job, error) {
	return toolkit.Job(Name, c, knownOptions, readJob)
}

func readJob(c plan.Case, o *toolkit.Options) (job, error) {
	j := job{c: c, opts: o}
	def := DefaultDataPort
	if j.ctl = o.Port(OptPort, DefaultPort); j.ctl != DefaultPort {
		def = j.ctl + 1
	}
	if j.data = o.Port(OptDataPort, def); j.data == j.ctl {
		return job{}, fmt.Errorf("qperf: data port %d must differ from the control port", j.data)
	}
	return j, nil
}

// Servers implements driver.Job: "qperf -lp PORT" on the case's control port.
func (j job) Servers() []driver.Server {
	return []driver.Server{{
		Name: toolkit.ServerName(Name, j.ctl, DefaultPort),
		Argv: []string{"qperf", "-lp", strconv.Itoa(j.ctl)},
		Ports: []driver.Port{
			{Name: "control", Port: j.ctl, Protocol: "TCP"},
			{Name: "data", Port: j.data, Protocol: "TCP"},
			{Name: "data-udp", Port: j.data, Protocol: "UDP"},
		},
	}}
}

// Client implements driver.Job.
func (j job) Client(t driver.Target, warmup bool) ([]driver.Command, error) {
	return toolkit.OneCommand(j.argv(t, warmup))
}

// argv builds the qperf client argv for one sample.
func (j job) argv(t driver.Target, warmup bool) ([]string, error) {
	c, ctl, data := j.c, j.ctl, j.data
	test := Test(c.Profile)
	if test == "" {
		return nil, toolkit.Unsupported(Name, c.Profile)
	}
	if t.Host == "" {
		return nil, fmt.Errorf("qperf: no target host")
	}
	if p := t.Port(data); p != data {
		return nil, fmt.Errorf("qperf: the data port %d is reached as %d, but the qperf server tells the client to dial %d itself; expose it under the same number", data, p, data)
	}
	argv := []string{"qperf", t.Host, "-lp", strconv.Itoa(t.Port(ctl)), "-ip", strconv.Itoa(data),
		"-t", strconv.Itoa(toolkit.RunSeconds(c, warmup))}
	if c.Params.MessageSizeBytes > 0 {
		argv = append(argv, "-m", strconv.Itoa(c.Params.MessageSizeBytes))
	}
	argv = append(argv, "-vv", "-uu", "-un", "-e", "6", test)
	return argv, nil
}

// Parse implements driver.Job.
func (j job) Parse(outs []driver.Output) (api.Sample, error) {
	c := j.c
	r, _, err := toolkit.ParseOne(Name, outs, func(o driver.Output) (Result, error) { return ParseOutput(o.Stdout, true) }, toolkit.WithExitCode)
	if err != nil {
		return api.Sample{}, err
	}
	if want := Test(c.Profile); r.Test != want {
		return api.Sample{}, fmt.Errorf("qperf ran %s but the case %s needs %s", r.Test, c.Profile, want)
	}
	return toolkit.Finished(r.Sample, outs, j.opts)
}

// PortOptions implements driver.PortMover: control (-lp) and data (-ip) ports.
func (Driver) PortOptions(ports []int) map[string]string {
	return toolkit.PortOptions(ports, OptPort, OptDataPort)
}
