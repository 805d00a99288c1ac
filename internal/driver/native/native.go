// Package native drives cnperf's built-in load generator (`cnperf agent`, internal/loadgen).
//
// The server is `cnperf agent serve` on a control port (default 7100) with a fixed data port
// (default 7101, TCP and UDP) so Services, NodePorts and firewalls can name both. The client is
// `cnperf agent client --json`, which prints exactly one api.Sample: the driver checks it and
// passes it on. Warm-up runs inside the client's own run (excluded from the measured window),
// latency comes as a mergeable log-linear histogram, and CPU figures come from both sides.
//
// Options (plain or prefixed "native."):
//
//	port        control port (default 7100)
//	dataPort    data port (default 7101)
//	crrClose    TCP_CRR close: "graceful" (default, FIN, TIME_WAIT on the server, like netperf) or "rst"
//	zerocopy    MSG_ZEROCOPY sends for TCP_STREAM / TCP_MAERTS
//	cpu         pin data threads: "CLIENT,SERVER" CPU numbers, e.g. "0,1"
//	sendBuffer  SO_SNDBUF bytes on both sides
//	recvBuffer  SO_RCVBUF bytes on both sides
//	noOffload   no UDP GSO/GRO
//	noHistogram do not time transactions
package native

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/driver/toolkit"
	"github.com/cnperf/cnperf/internal/loadgen"
	"github.com/cnperf/cnperf/internal/loadgen/control"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/stats/hdr"
)

// Name is the driver's name.
const Name = "native"

// Option keys.
const (
	OptPort        = "port"
	OptDataPort    = "dataPort"
	OptCRRClose    = "crrClose"
	OptZeroCopy    = "zerocopy"
	OptCPU         = "cpu"
	OptSendBuffer  = "sendBuffer"
	OptRecvBuffer  = "recvBuffer"
	OptNoOffload   = "noOffload"
	OptNoHistogram = "noHistogram"
	OptBind        = "bind"
)

var knownOptions = []string{OptPort, OptDataPort, OptBind, OptCRRClose, OptZeroCopy, OptCPU, OptSendBuffer, OptRecvBuffer, OptNoOffload, OptNoHistogram}

// Driver is the native driver.
type Driver struct{}

// KnownOptions implements driver.OptionLister.
func (Driver) KnownOptions() []string { return append([]string(nil), knownOptions...) }

// Name implements driver.Driver.
func (Driver) Name() string { return Name }

// DefaultWarmup is the warm-up of a native case whose plan sets none. Measured with the
// samples' per-interval counters (docs/performance.md, "Time to a trustworthy answer"): on
// loopback the first 100–200 ms of a sample ran at a median 0.47× (TCP_RR, 24 of 28 samples
// slower) to 0.9× the rate of the rest, the next interval at the rest's rate: without a
// warm-up a 2 s sample reads some 5 % low. 0.2 s covers that ramp twice over.
const DefaultWarmup = 0.2

// DefaultWarmupSeconds implements driver.Warmer.
func (Driver) DefaultWarmupSeconds() float64 { return DefaultWarmup }

// Capabilities implements driver.Driver.
func (Driver) Capabilities() driver.Capabilities {
	return driver.Capabilities{
		Profiles:         append([]api.Profile(nil), api.Profiles...),
		Parallel:         true,
		Burst:            true,
		MessageSize:      true,
		ResponseSize:     true,
		Rate:             true,
		CPU:              true,
		LatencyHistogram: true,
		InlineWarmup:     true,
	}
}

// job is a native case with its options read.
type job struct {
	c             plan.Case
	control, data int
	bind          string // the agent server's --bind ("": every address)
	opts          *toolkit.Options
	// the client's options, read once: --crr-close, --zerocopy, --cpu, the socket buffers
	// (0: the kernel's), --no-offload, --no-histogram
	crrClose, cpu          string
	zeroCopy               bool
	sendBuf, recvBuf       int
	noOffload, noHistogram bool
}

// Job implements driver.Driver.
func (Driver) Job(c plan.Case) (driver.Job, error) {
	return toolkit.Job(Name, c, knownOptions, readJob)
}

func readJob(c plan.Case, o *toolkit.Options) (job, error) {
	j := job{c: c, opts: o}
	j.control = o.Port(OptPort, loadgen.DefaultPort)
	j.data = o.Port(OptDataPort, loadgen.DefaultDataPort)
	j.bind = o.Addr(OptBind)
	j.crrClose, _ = o.Get(OptCRRClose)
	j.zeroCopy = o.Bool(OptZeroCopy, false)
	j.cpu, _ = o.Get(OptCPU)
	j.sendBuf = o.Int(OptSendBuffer, 0, 0, control.MaxSocketBuffer)
	j.recvBuf = o.Int(OptRecvBuffer, 0, 0, control.MaxSocketBuffer)
	j.noOffload = o.Bool(OptNoOffload, false)
	j.noHistogram = o.Bool(OptNoHistogram, false)
	switch {
	case j.control == j.data:
		return job{}, fmt.Errorf("native: control port and data port are both %d", j.control)
	case j.crrClose != "" && j.crrClose != control.CloseGraceful && j.crrClose != control.CloseRST:
		return job{}, fmt.Errorf("native option %q: %q, want graceful or rst", OptCRRClose, j.crrClose)
	}
	return j, nil
}

// Servers implements driver.Job: one agent server on the case's pair of ports.
func (j job) Servers() []driver.Server {
	argv := ServerArgv(j.control, j.data)
	if j.bind != "" {
		argv = append(argv, "--bind", j.bind)
	}
	name := Name
	if j.control != loadgen.DefaultPort || j.data != loadgen.DefaultDataPort {
		name = fmt.Sprintf("%s-%d", Name, j.control)
	}
	return []driver.Server{{
		Name: name,
		Argv: argv,
		Ports: []driver.Port{
			{Name: "control", Port: j.control, Protocol: "TCP"},
			{Name: "data-tcp", Port: j.data, Protocol: "TCP"},
			{Name: "data-udp", Port: j.data, Protocol: "UDP"},
		},
		Ready: loadgen.ReadyLine,
	}}
}

// PortOptions implements driver.PortMover: ports are the control and data port.
func (Driver) PortOptions(ports []int) map[string]string {
	return toolkit.PortOptions(ports, OptPort, OptDataPort)
}

// BindOptions implements driver.Binder: the agent server listens on addr only.
func (Driver) BindOptions(addr string) map[string]string { return map[string]string{OptBind: addr} }

// ServerArgv is the agent server command (its token comes from the environment, never argv).
func ServerArgv(port, dataPort int) []string {
	return []string{"cnperf", "agent", "serve", "--port", strconv.Itoa(port), "--data-port", strconv.Itoa(dataPort)}
}

// Client implements driver.Job.
func (j job) Client(t driver.Target, warmup bool) ([]driver.Command, error) {
	return toolkit.OneCommand(j.argv(t, warmup))
}

func seconds(s float64) string { return strconv.FormatFloat(s, 'f', -1, 64) + "s" }

// argv builds the agent client argv for one sample. A discarded warm-up run (the runner only
// asks for one if it ignores InlineWarmup) lasts the warm-up time.
func (j job) argv(t driver.Target, warmup bool) ([]string, error) {
	c := j.c
	if !c.Profile.Valid() {
		return nil, toolkit.Unsupported(Name, c.Profile)
	}
	if t.Host == "" {
		return nil, errors.New("native: no target host")
	}
	dur, wu := c.Params.DurationSeconds, c.Params.WarmupSeconds
	if warmup {
		dur, wu = c.Params.WarmupSeconds, 0
	}
	if !(dur > 0) {
		return nil, fmt.Errorf("native: duration %v s must be positive", dur)
	}
	argv := []string{"cnperf", "agent", "client", "--json",
		"--host", t.Host, "--port", strconv.Itoa(t.Port(j.control)), "--data-port", strconv.Itoa(t.Port(j.data)),
		"--profile", string(c.Profile), "--duration", seconds(dur)}
	if wu > 0 {
		argv = append(argv, "--warmup", seconds(wu))
	}
	if c.Params.MessageSizeBytes > 0 {
		argv = append(argv, "--message-size", strconv.Itoa(c.Params.MessageSizeBytes))
	}
	if c.Params.ResponseSizeBytes > 0 {
		argv = append(argv, "--response-size", strconv.Itoa(c.Params.ResponseSizeBytes))
	}
	argv = append(argv, "--parallel", strconv.Itoa(toolkit.Parallel(c)))
	if c.Params.Burst > 0 {
		argv = append(argv, "--burst", strconv.Itoa(c.Params.Burst))
	}
	if c.Params.RateBitsPerSecond > 0 {
		argv = append(argv, "--rate", strconv.FormatFloat(c.Params.RateBitsPerSecond, 'f', -1, 64))
	}
	if j.crrClose != "" && c.Profile == api.TCPCRR {
		argv = append(argv, "--crr-close", j.crrClose)
	}
	if j.zeroCopy {
		if c.Profile != api.TCPStream && c.Profile != api.TCPMaerts {
			return nil, fmt.Errorf("native option %q applies to TCP_STREAM and TCP_MAERTS, not %s", OptZeroCopy, c.Profile)
		}
		argv = append(argv, "--zerocopy")
	}
	if j.cpu != "" {
		argv = append(argv, "--cpu", j.cpu)
	}
	for _, b := range []struct {
		n    int
		flag string
	}{{j.sendBuf, "--send-buffer"}, {j.recvBuf, "--recv-buffer"}} {
		if b.n > 0 {
			argv = append(argv, b.flag, strconv.Itoa(b.n))
		}
	}
	for _, b := range []struct {
		on   bool
		flag string
	}{{j.noOffload, "--no-offload"}, {j.noHistogram, "--no-histogram"}} {
		if b.on {
			argv = append(argv, b.flag)
		}
	}
	return argv, nil
}

// Parse implements driver.Job: the client's stdout must be exactly one Sample with the
// figures of the case's profile; anything else fails the sample with the agent's own words.
func (j job) Parse(outs []driver.Output) (api.Sample, error) {
	c := j.c
	o, err := toolkit.Single(Name, outs)
	if err != nil {
		return api.Sample{}, err
	}
	if e := toolkit.Failed("cnperf agent client", o); e != nil {
		return api.Sample{}, e
	}
	s, perr := ParseSample(o.Stdout)
	if perr == nil && s.Error != "" {
		return api.Sample{}, fmt.Errorf("cnperf agent client: %s", s.Error)
	}
	if err := toolkit.Exited("cnperf agent client", o); err != nil {
		return api.Sample{}, err
	}
	if perr != nil {
		return api.Sample{}, fmt.Errorf("%w (%s)", perr, toolkit.Describe(o))
	}
	if err := Check(c.Profile, s); err != nil {
		return api.Sample{}, fmt.Errorf("%w (%s)", err, toolkit.Describe(o))
	}
	toolkit.AddNote(&s, j.opts.UnusedNote())
	return s, nil
}

// ParseSample decodes the client's --json output: exactly one JSON object.
func ParseSample(b []byte) (api.Sample, error) {
	var s api.Sample
	if len(bytes.TrimSpace(b)) == 0 {
		return s, errors.New("cnperf agent client printed nothing")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&s); err != nil {
		return api.Sample{}, fmt.Errorf("cnperf agent client output is not a sample: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return api.Sample{}, errors.New("cnperf agent client output has data after the sample")
	}
	return s, nil
}

// Check verifies that a successful sample carries the figures its profile needs, all positive,
// and a valid histogram if any.
func Check(p api.Profile, s api.Sample) error {
	need := func(name string, v *float64) error {
		if v == nil {
			return fmt.Errorf("cnperf agent client: sample has no %s", name)
		}
		if !(*v > 0) {
			return fmt.Errorf("cnperf agent client: %s is %v", name, *v)
		}
		return nil
	}
	var err error
	switch p {
	case api.TCPStream, api.TCPSendfile, api.TCPMaerts:
		err = need("throughputBitsPerSecond", s.ThroughputBitsPerSecond)
	case api.UDPStream:
		err = need("packetsPerSecond", s.PacketsPerSecond)
		if err == nil && (s.LossPercent == nil || s.JitterMicroseconds == nil) {
			err = errors.New("cnperf agent client: UDP sample without loss or jitter")
		}
	case api.TCPRR, api.UDPRR:
		err = need("transactionsPerSecond", s.TransactionsPerSecond)
	case api.TCPCRR:
		err = need("connectionsPerSecond", s.ConnectionsPerSecond)
	case api.TCPStreamLat:
		err = need("throughputBitsPerSecond", s.ThroughputBitsPerSecond)
		if err == nil {
			err = need("transactionsPerSecond", s.TransactionsPerSecond)
		}
	default:
		err = toolkit.Unsupported(Name, p)
	}
	if err != nil {
		return err
	}
	if s.Histogram != nil {
		if _, err := hdr.FromAPI(s.Histogram); err != nil {
			return fmt.Errorf("cnperf agent client: %w", err)
		}
	}
	return nil
}
