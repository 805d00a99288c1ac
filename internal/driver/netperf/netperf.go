// Package netperf drives netperf 2.7 (https://github.com/HewlettPackard/netperf).
//
// TCP_STREAM, TCP_MAERTS, UDP_STREAM, TCP_RR, UDP_RR and TCP_CRR are netperf's "migrated"
// omni tests: cnperf asks for keyval output (test-specific -k) with an explicit list of output
// selectors and no banner (-P 0), checks THROUGHPUT_UNITS and converts every figure to base
// units. TCP_STREAM and UDP_STREAM also ask for netperf's latency selectors, as k8s-netperf does
// (its -k list has P99_LATENCY): netperf then times every send call, and the statistics are the
// send-call time (Sample.SendCallMicroseconds), not a round trip (option sendTiming=false
// leaves them out, and netperf's timing with them). Streams request -f m ("10^6bits/s",
// understood by every netperf 2.x; -f b only exists from 2.7 on); RR tests report "Trans/s".
// RR tests add the global -j so netperf keeps the latency statistics (MIN, MEAN,
// P50, P90, P99, MAX, STDDEV_LATENCY, in µs, round-trip per transaction). TCP_SENDFILE is not
// migrated in netperf 2.7: it is run with its classic output (banner kept so the units column
// can be checked).
//
// The data connection uses a fixed remote port (test-specific -P ,PORT) so a Service or a
// firewall can carry it. Parallel flows are separate netperf processes started together, one
// command each, flow i on data port base+i; their outputs are summed (throughput and rates
// add) while latency percentiles, which cannot be combined without the histograms, are kept
// per flow in Sample.Flows (see Aggregate).
//
// The server is "netserver -D -p PORT" (foreground); it forks a child per test, so flows run
// concurrently.
package netperf

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/driver/toolkit"
	"github.com/cnperf/cnperf/internal/plan"
)

// Name is the driver's name.
const Name = "netperf"

// Default ports: netserver's control port and the first data port.
const (
	DefaultPort     = 12865
	DefaultDataPort = 12866
)

// Option keys (plain or prefixed "netperf.").
const (
	OptPort     = "port"     // netserver control port, global -p
	OptDataPort = "dataPort" // first data port; flow i uses dataPort+i
	OptCPU      = "cpu"      // default true: -c -C (CPU utilisation and service demand)
	// OptSendTiming, default true: TCP_STREAM and UDP_STREAM ask for netperf's latency
	// selectors, so netperf times each send call (k8s-netperf's P99 of a stream).
	OptSendTiming = "sendTiming"
)

var knownOptions = []string{OptPort, OptDataPort, OptCPU, OptSendTiming, toolkit.OptBind}

// Output selectors requested with -k (netperf manual, "Omni Output Selectors").
var (
	streamSelectors = []string{
		"THROUGHPUT", "THROUGHPUT_UNITS", "LOCAL_SEND_THROUGHPUT", "LOCAL_RECV_THROUGHPUT",
		"REMOTE_SEND_THROUGHPUT", "REMOTE_RECV_THROUGHPUT", "ELAPSED_TIME", "PROTOCOL", "DIRECTION",
		"LOCAL_SEND_SIZE", "LOCAL_BYTES_SENT", "LOCAL_BYTES_RECVD", "REMOTE_BYTES_SENT", "REMOTE_BYTES_RECVD",
		"LOCAL_SEND_CALLS", "REMOTE_RECV_CALLS", "LOCAL_TRANSPORT_RETRANS", "REMOTE_TRANSPORT_RETRANS",
		"LOCAL_CPU_UTIL", "REMOTE_CPU_UTIL", "LOCAL_SD", "REMOTE_SD", "SD_UNITS", "LOCAL_CPU_COUNT", "REMOTE_CPU_COUNT",
	}
	// latencySelectors are netperf's per-operation statistics. Asking for any of them makes
	// netperf keep its histogram (nettest_omni.c: OMNI_WANT_STATS sets keep_histogram), which
	// on a send test times every send call.
	latencySelectors = []string{
		"MIN_LATENCY", "MEAN_LATENCY", "P50_LATENCY", "P90_LATENCY", "P99_LATENCY", "MAX_LATENCY", "STDDEV_LATENCY",
	}
	sendSelectors = append(append([]string(nil), streamSelectors...), latencySelectors...)
	rrSelectors   = []string{
		"THROUGHPUT", "THROUGHPUT_UNITS", "TRANSACTION_RATE", "RT_LATENCY",
		"MIN_LATENCY", "MEAN_LATENCY", "P50_LATENCY", "P90_LATENCY", "P99_LATENCY", "MAX_LATENCY", "STDDEV_LATENCY",
		"ELAPSED_TIME", "PROTOCOL", "DIRECTION", "REQUEST_SIZE", "RESPONSE_SIZE", "BURST_SIZE",
		"LOCAL_SEND_CALLS", "LOCAL_RECV_CALLS", "LOCAL_TRANSPORT_RETRANS", "REMOTE_TRANSPORT_RETRANS",
		"LOCAL_CPU_UTIL", "REMOTE_CPU_UTIL", "LOCAL_SD", "REMOTE_SD", "SD_UNITS", "LOCAL_CPU_COUNT", "REMOTE_CPU_COUNT",
	}
)

// Selectors is the -k selector list for a profile; sendTiming adds the latency selectors to
// TCP_STREAM and UDP_STREAM (the send tests whose calls netperf then times).
func Selectors(p api.Profile, sendTiming bool) []string {
	switch {
	case p.IsRR():
		return rrSelectors
	case sendTiming && timesSends(p):
		return sendSelectors
	}
	return streamSelectors
}

// timesSends reports whether netperf's histogram times send calls in profile p: the omni send
// tests (TCP_MAERTS's would be netperf's receive calls; TCP_SENDFILE is a classic test).
func timesSends(p api.Profile) bool { return p == api.TCPStream || p == api.UDPStream }

// Driver is the netperf driver.
type Driver struct{}

// KnownOptions implements driver.OptionLister.
func (Driver) KnownOptions() []string { return append([]string(nil), knownOptions...) }

// Name implements driver.Driver.
func (Driver) Name() string { return Name }

// Capabilities implements driver.Driver.
func (Driver) Capabilities() driver.Capabilities {
	return driver.Capabilities{
		// every profile but TCP_STREAM_LAT, which k8s-netperf's netperf driver skips too
		Profiles:     []api.Profile{api.TCPStream, api.TCPSendfile, api.TCPMaerts, api.UDPStream, api.TCPRR, api.UDPRR, api.TCPCRR},
		Parallel:     true,
		Burst:        true,
		MessageSize:  true,
		ResponseSize: true,
		CPU:          true,
		RawOutput:    true,
	}
}

// job is a netperf case with its options read.
type job struct {
	c         plan.Case
	ctl, data int
	cpu       bool
	sendTime  bool   // the latency selectors on send tests (OptSendTiming)
	bind      string // netserver -L: the address its control socket listens on ("": every address)
	opts      *toolkit.Options
}

// Job implements driver.Driver.
func (Driver) Job(c plan.Case) (driver.Job, error) {
	return toolkit.Job(Name, c, knownOptions, readJob)
}

func readJob(c plan.Case, o *toolkit.Options) (job, error) {
	j := job{c: c, opts: o}
	j.ctl, j.data = o.ControlDataPorts(Name, c, OptPort, DefaultPort, OptDataPort, DefaultDataPort)
	j.cpu = o.Bool(OptCPU, true)
	j.sendTime = o.Bool(OptSendTiming, true)
	j.bind = o.Addr(toolkit.OptBind)
	return j, nil
}

// Servers implements driver.Job: one netserver on the control port, exposing one data port
// (TCP and UDP) per parallel flow.
func (j job) Servers() []driver.Server {
	argv := []string{"netserver", "-D", "-p", strconv.Itoa(j.ctl)}
	if j.bind != "" {
		// the control socket; a test's data socket listens on the address netperf names
		// with its test-specific -H, every address when it names none (docs/drivers.md)
		argv = append(argv, "-L", j.bind)
	}
	return []driver.Server{toolkit.PortServer(Name, DefaultPort, j.ctl, j.data, toolkit.Parallel(j.c), argv)}
}

// BindOptions implements driver.Binder: netserver's control socket listens on addr only (-L).
func (Driver) BindOptions(addr string) map[string]string { return toolkit.BindOptions(addr) }

// Client implements driver.Job: one netperf command per flow.
func (j job) Client(t driver.Target, warmup bool) ([]driver.Command, error) {
	n := toolkit.Parallel(j.c)
	cmds := make([]driver.Command, 0, n)
	for i := 0; i < n; i++ {
		argv, err := j.argv(t, warmup, i)
		if err != nil {
			return nil, err
		}
		cmds = append(cmds, driver.Command{Argv: argv})
	}
	return cmds, nil
}

// argv builds the netperf argv of flow i of one sample.
func (j job) argv(t driver.Target, warmup bool, flow int) ([]string, error) {
	c := j.c
	if !c.Profile.Valid() {
		return nil, toolkit.Unsupported(Name, c.Profile)
	}
	if t.Host == "" {
		return nil, fmt.Errorf("netperf: no target host")
	}
	if c.Params.RateBitsPerSecond > 0 {
		return nil, fmt.Errorf("netperf cannot limit the send rate (it needs a build with --enable-intervals)")
	}
	if c.Profile.IsStream() && c.Params.Burst > 0 {
		return nil, fmt.Errorf("netperf: burst applies to request/response tests, not %s", c.Profile)
	}
	sendfile := c.Profile == api.TCPSendfile
	argv := []string{"netperf"}
	if !sendfile {
		argv = append(argv, "-P", "0") // no banner: keyval lines only
	}
	argv = append(argv, "-H", t.Host, "-p", strconv.Itoa(t.Port(j.ctl)))
	if toolkit.IPv6(c) {
		argv = append(argv, "-6")
	}
	argv = append(argv, "-t", string(c.Profile), "-l", strconv.Itoa(toolkit.RunSeconds(c, warmup)))
	if c.Profile.IsStream() {
		argv = append(argv, "-f", "m")
	} else {
		argv = append(argv, "-j")
	}
	if j.cpu && !sendfile {
		argv = append(argv, "-c", "-C")
	}
	argv = append(argv, "--")
	if !sendfile {
		argv = append(argv, "-k", strings.Join(Selectors(c.Profile, j.sendTime), ","))
	}
	argv = append(argv, "-P", ","+strconv.Itoa(t.Port(j.data+flow)))
	if toolkit.IPv6(c) {
		argv = append(argv, "-6")
	}
	size := c.Params.MessageSizeBytes
	switch {
	case c.Profile.IsRR():
		if size > 0 || c.Params.ResponseSizeBytes > 0 {
			req := size
			if req <= 0 {
				req = 1 // netperf's default request size
			}
			argv = append(argv, "-r", fmt.Sprintf("%d,%d", req, responseSize(c, req)))
		}
		if c.Params.Burst > 0 {
			argv = append(argv, "-b", strconv.Itoa(c.Params.Burst))
		}
	case c.Profile == api.TCPMaerts:
		if size > 0 {
			argv = append(argv, "-m", ","+strconv.Itoa(size)) // netserver's send size
		}
	default:
		if size > 0 {
			argv = append(argv, "-m", strconv.Itoa(size))
		}
	}
	if c.Profile == api.UDPStream {
		// netperf keeps UDP_STREAM off routed paths unless told otherwise; pod and service
		// paths are routed.
		argv = append(argv, "-R", "1")
	}
	return argv, nil
}

func responseSize(c plan.Case, req int) int {
	if c.Params.ResponseSizeBytes > 0 {
		return c.Params.ResponseSizeBytes
	}
	return req
}

// Parse implements driver.Job.
func (j job) Parse(outs []driver.Output) (api.Sample, error) {
	c := j.c
	n := toolkit.Parallel(c)
	if err := toolkit.ExpectOutputs(Name, outs, n); err != nil {
		return api.Sample{}, err
	}
	flows := make([]api.Sample, 0, n)
	for i, o := range outs {
		s, err := parseFlow(c, j.sendTime, o)
		if err != nil {
			if n > 1 {
				return api.Sample{}, fmt.Errorf("flow %d of %d: %w", i+1, n, err)
			}
			return api.Sample{}, err
		}
		s.Index = i
		s.StartTime, s.EndTime = o.StartTime, o.EndTime
		flows = append(flows, s)
	}
	var s api.Sample
	if n == 1 {
		s = flows[0]
		s.Index = 0
	} else {
		var err error
		s, err = Aggregate(c.Profile, flows)
		if err != nil {
			return api.Sample{}, err
		}
	}
	return toolkit.Finished(s, outs, j.opts)
}

// explainParse words a failed parse of netperf's output: netperf's perror() messages go to
// stderr and nothing to stdout.
func explainParse(o driver.Output, err error) error {
	if len(strings.TrimSpace(string(o.Stdout))) == 0 && len(strings.TrimSpace(string(o.Stderr))) > 0 {
		msg := toolkit.Tail(o.Stderr, 3)
		if !strings.HasPrefix(msg, "netperf") {
			msg = "netperf: " + msg
		}
		err = errors.New(msg)
	} else {
		err = toolkit.WithStderr(o, err, 2)
	}
	return toolkit.WithExitCode(o, err)
}

func parseFlow(c plan.Case, sendTiming bool, o driver.Output) (api.Sample, error) {
	var (
		r   Result
		err error
	)
	if c.Profile == api.TCPSendfile {
		r, err = ParseClassic(o.Stdout)
	} else {
		r, err = ParseKeyval(o.Stdout)
	}
	if err := toolkit.CheckParse(Name, o, err, explainParse); err != nil {
		return api.Sample{}, err
	}
	if c.Profile != api.TCPSendfile {
		var missing []string
		for _, k := range Selectors(c.Profile, sendTiming) {
			if _, ok := r.Values[k]; !ok {
				missing = append(missing, k)
			}
		}
		if len(missing) > 0 {
			return api.Sample{}, fmt.Errorf("netperf output is incomplete (cut short?): no %s", strings.Join(missing, ", "))
		}
	}
	return r.ToSample(c.Profile)
}

// PortOptions implements driver.PortMover: the control port, then the data ports of the flows,
// consecutive (toolkit.PortServerOptions).
func (Driver) PortOptions(ports []int) map[string]string {
	return toolkit.PortServerOptions(ports, OptPort, OptDataPort)
}
