// Package sockperf drives sockperf (https://github.com/Mellanox/sockperf):
// ping-pong for TCP_RR and UDP_RR (latency percentiles up to 99.999), throughput for
// TCP_STREAM and UDP_STREAM, and under-load (option mode=under-load) for latency at a fixed
// message rate.
//
// The client runs with --full-rtt so sockperf reports round-trip times. Without it (option
// fullRTT=false) sockperf prints RTT/2 for every observation; cnperf doubles every figure
// and marks the latency "tool-rtt-from-one-way". sockperf's throughput mode counts what the
// client sent, not what the server received.
//
// sockperf exits 0 even when it cannot connect or gets no reply; the parser reads its
// "ERROR:" and "No messages were received" lines instead.
//
// The servers are "sockperf sr --tcp -i 0.0.0.0 -p PORT" and "sockperf sr -i 0.0.0.0 -p PORT"
// (UDP): two processes on the same port number, one per protocol; IPv6 cases have their own on
// "::" and PORT+1 (see Servers).
package sockperf

import (
	"fmt"
	"math"
	"strconv"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/driver/toolkit"
	"github.com/cnperf/cnperf/internal/limits"
	"github.com/cnperf/cnperf/internal/plan"
)

// Name is the driver's name.
const Name = "sockperf"

// DefaultPort is sockperf's own default port.
const DefaultPort = 11111

// Ready is what a sockperf server prints once its sockets are set up.
const Ready = "to block on socket(s)"

// Message size limits: sockperf's header, and its largest payload (MAX_PAYLOAD_SIZE; a larger
// -m makes the server drop the connection: "A connection was forcibly closed by a peer").
const (
	MinMessageSize = limits.SockperfMinMessageSizeBytes
	MaxMessageSize = limits.SockperfMaxMessageSizeBytes
)

// Option keys (plain or prefixed "sockperf.").
const (
	OptPort    = "port"
	OptFullRTT = "fullRTT" // default true: --full-rtt
	OptMode    = "mode"    // "ping-pong" (default for RR) or "under-load"
	OptMPS     = "mps"     // messages per second for under-load (default 10000)
)

// Modes.
const (
	ModePingPong   = "ping-pong"
	ModeUnderLoad  = "under-load"
	ModeThroughput = "throughput"
)

var knownOptions = []string{OptPort, toolkit.OptPort6, OptFullRTT, OptMode, OptMPS, toolkit.OptBind}

// Driver is the sockperf driver.
type Driver struct{}

// KnownOptions implements driver.OptionLister.
func (Driver) KnownOptions() []string { return append([]string(nil), knownOptions...) }

// Name implements driver.Driver.
func (Driver) Name() string { return Name }

// Capabilities implements driver.Driver.
func (Driver) Capabilities() driver.Capabilities {
	return driver.Capabilities{
		Profiles:    []api.Profile{api.TCPStream, api.UDPStream, api.TCPRR, api.UDPRR},
		MessageSize: true,
		Rate:        true,
		RawOutput:   true,
	}
}

// job is a sockperf case with its options read.
type job struct {
	c       plan.Case
	port    int
	port6   int // the IPv6 server's port (toolkit.OptPort6; 0: port+1)
	fullRTT bool
	mode    string
	mps     int
	bind    string // the server's -i ("": every address)
	opts    *toolkit.Options
}

// Job implements driver.Driver.
func (Driver) Job(c plan.Case) (driver.Job, error) {
	return toolkit.Job(Name, c, knownOptions, readJob)
}

func readJob(c plan.Case, o *toolkit.Options) (job, error) {
	j := job{c: c, opts: o}
	j.port = o.Port(OptPort, DefaultPort)
	j.port6 = o.Port(toolkit.OptPort6, 0)
	j.fullRTT = o.Bool(OptFullRTT, true)
	j.mps = o.Int(OptMPS, 10000, 1, 100000000)
	j.bind = o.Addr(toolkit.OptBind)
	mode, _ := o.Get(OptMode)
	switch {
	case c.Profile.IsStream():
		if mode != "" && mode != ModeThroughput {
			return job{}, fmt.Errorf("sockperf: mode %q does not fit %s (stream profiles use %s)", mode, c.Profile, ModeThroughput)
		}
		j.mode = ModeThroughput
	case mode == "" || mode == ModePingPong || mode == "pp":
		j.mode = ModePingPong
	case mode == ModeUnderLoad || mode == "ul":
		j.mode = ModeUnderLoad
	default:
		return job{}, fmt.Errorf("sockperf: unknown mode %q (%s or %s)", mode, ModePingPong, ModeUnderLoad)
	}
	return j, nil
}

// Servers implements driver.Job: a TCP server for a TCP profile, a UDP server for a UDP one,
// on the case's port; an IPv6 case's are "-v6" servers on "::" and the next port
// (toolkit.FamilyServer: one bound to "::" would take the port for IPv4 too), so a run with both
// families reaches each. sockperf 3.7 (Debian 12's) has no IPv6 at all ("'-i' Invalid
// address: ::"); sockperf 3.8 added it.
func (j job) Servers() []driver.Server {
	bind := j.bind
	switch {
	case bind != "":
	case toolkit.IPv6(j.c):
		bind = "::"
	default:
		bind = "0.0.0.0"
	}
	kind, proto := Name+"-tcp", "TCP"
	if j.c.Profile.IsUDP() {
		kind, proto = Name+"-udp", "UDP"
	}
	name, port := toolkit.FamilyServer(j.c, kind, j.port, j.port6, DefaultPort)
	argv := []string{"sockperf", "server", "--tcp", "-i", bind, "-p", strconv.Itoa(port)}
	if j.c.Profile.IsUDP() {
		argv = []string{"sockperf", "server", "-i", bind, "-p", strconv.Itoa(port)}
	}
	return []driver.Server{{Name: name, Argv: argv, Ready: Ready,
		Ports: []driver.Port{{Name: "data", Port: port, Protocol: proto}}}}
}

// BindOptions implements driver.Binder: sockperf's server listens on addr only (-i).
func (Driver) BindOptions(addr string) map[string]string { return toolkit.BindOptions(addr) }

// Client implements driver.Job.
func (j job) Client(t driver.Target, warmup bool) ([]driver.Command, error) {
	return toolkit.OneCommand(j.argv(t, warmup))
}

// argv builds the sockperf client argv for one sample.
func (j job) argv(t driver.Target, warmup bool) ([]string, error) {
	c := j.c
	switch c.Profile {
	case api.TCPStream, api.UDPStream, api.TCPRR, api.UDPRR:
	default:
		return nil, toolkit.Unsupported(Name, c.Profile)
	}
	if t.Host == "" {
		return nil, fmt.Errorf("sockperf: no target host")
	}
	size := c.Params.MessageSizeBytes
	if size != 0 && size < MinMessageSize {
		return nil, fmt.Errorf("sockperf: message size %d B is below sockperf's minimum of %d B (its header)", size, MinMessageSize)
	}
	if size > MaxMessageSize {
		return nil, fmt.Errorf("sockperf: message size %d B is above sockperf's maximum of %d B (set a smaller message size)", size, MaxMessageSize)
	}
	argv := []string{"sockperf", j.mode}
	if !c.Profile.IsUDP() {
		argv = append(argv, "--tcp")
	}
	_, port := toolkit.FamilyServer(c, Name, j.port, j.port6, DefaultPort)
	argv = append(argv, "-i", t.Host, "-p", strconv.Itoa(t.Port(port)), "-t", strconv.Itoa(toolkit.RunSeconds(c, warmup)))
	if size > 0 {
		argv = append(argv, "-m", strconv.Itoa(size))
	}
	switch j.mode {
	case ModeThroughput:
		if r := c.Params.RateBitsPerSecond; r > 0 {
			if size == 0 {
				return nil, fmt.Errorf("sockperf: a rate limit needs a message size (sockperf limits messages per second)")
			}
			mps := int64(math.Round(r / float64(8*size)))
			if mps < 1 {
				mps = 1
			}
			argv = append(argv, "--mps", strconv.FormatInt(mps, 10))
		}
	case ModeUnderLoad:
		mps := int64(j.mps)
		if r := c.Params.RateBitsPerSecond; r > 0 {
			if _, set := j.opts.Get(OptMPS); set {
				return nil, fmt.Errorf("sockperf: give the under-load rate either as a rate or as option %s, not both", OptMPS)
			}
			if size == 0 {
				return nil, fmt.Errorf("sockperf: a rate needs a message size (sockperf sets messages per second)")
			}
			if mps = int64(math.Round(r / float64(8*size))); mps < 1 {
				mps = 1
			}
		}
		argv = append(argv, "--mps", strconv.FormatInt(mps, 10))
	case ModePingPong:
		if c.Params.RateBitsPerSecond > 0 {
			return nil, fmt.Errorf("sockperf: ping-pong runs as fast as replies come; use mode=under-load with mps for a fixed rate")
		}
	}
	if j.mode != ModeThroughput && j.fullRTT {
		argv = append(argv, "--full-rtt")
	}
	return argv, nil
}

// Parse implements driver.Job.
func (j job) Parse(outs []driver.Output) (api.Sample, error) {
	c := j.c
	r, _, err := toolkit.ParseOne(Name, outs, func(o driver.Output) (Result, error) { return ParseOutput(o.Stdout, o.Stderr) }, nil)
	if err != nil {
		return api.Sample{}, err
	}
	if r.Throughput != (j.mode == ModeThroughput) {
		return api.Sample{}, fmt.Errorf("sockperf output does not match mode %s", j.mode)
	}
	if r.Protocol != "" && r.Protocol != protocol(c.Profile) {
		return api.Sample{}, fmt.Errorf("sockperf ran over %s but the case is %s", r.Protocol, c.Profile)
	}
	s, err := r.ToSample(c.Params.MessageSizeBytes, j.mode)
	if err != nil {
		return api.Sample{}, err
	}
	return toolkit.Finished(s, outs, j.opts)
}

func protocol(p api.Profile) string {
	if p.IsUDP() {
		return "UDP"
	}
	return "TCP"
}

// Port6Options implements driver.FamilyPorter.
func (Driver) Port6Options(port int) map[string]string { return toolkit.Port6Options(port) }

// PortOptions implements driver.PortMover: the one port of a TCP or a UDP server.
func (Driver) PortOptions(ports []int) map[string]string {
	return toolkit.PortOptions(ports, OptPort)
}

// DefaultMessageSize implements driver.MessageSizer: cnperf's generic defaults (1 B for RR,
// 128 KiB for TCP streams) are outside what sockperf accepts, so its own bounds are used.
func (Driver) DefaultMessageSize(p api.Profile) (int, bool) {
	switch {
	case p.IsRR():
		return MinMessageSize, true
	case p == api.TCPStream:
		return MaxMessageSize, true
	}
	return 0, false
}
