// Package uperf drives uperf (https://github.com/uperf/uperf), which runs XML workload
// profiles. cnperf generates the profile for each case and ships it inside the client
// command (uperf reads profiles from files), so the client argv is
//
//	sh -c 'write the profile to a temp dir; uperf -m profile -a -R -i 1 -P PORT [-X history]; clean up'
//
// Flows: one <group nthreads="1"> per parallel flow, flow i connecting to data port base+i.
// Not one group of N threads on one fixed port: uperf 1.0.8's slave then hands the same
// listening socket to all N strands and every strand frees it at its end (src/strand.c
// strand_fini, "FIXME: need to do reference counting"): the slave dies of a double free before
// its goodbye and the master prints "Error saying goodbye". nprocs="N" fails the same way.
// Without a fixed port uperf picks random data ports, which no Service or firewall can carry.
//
// Output: with -R uperf prints raw, time-stamped progress lines every second
// ("timestamp_ms:... name:Txn2 nr_bytes:... nr_ops:..."): cumulative bytes and flowop counts
// of the running transaction, summed over all groups. The measured transaction (Txn2) starts
// at the last line of Txn1 and its strands stop exactly its duration later; the last Txn2 line
// comes when uperf's master notices, up to one interval (1 s) later (src/master.c
// master_poll), so the rate is the last line's count over the profile's duration.
// Latency: with option history=true uperf writes every flowop's start and end time (-X) and
// cnperf builds a per-transaction histogram (write start → read end) from it, so percentiles
// are real. Without it the only valid figure is the mean round trip, threads ÷ transaction rate
// (one transaction in flight per thread). cnperf never turns per-second averages into
// percentiles (k8s-netperf's p99 of per-second means is not a p99 of anything).
//
// The server is "uperf -s -P PORT"; the data connections go to fixed ports (connect option
// port=) so Services can carry them.
package uperf

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
const Name = "uperf"

// Default ports: uperf's master (control) port and the data port cnperf uses.
const (
	DefaultPort     = 20000
	DefaultDataPort = 20001
)

// Default message sizes when the case leaves them to the driver.
const (
	DefaultTCPStreamSize = 65536
	DefaultUDPStreamSize = 1024
	DefaultRRSize        = 1
)

// HistoryMarker separates uperf's output from the -X history the client command appends.
const HistoryMarker = "### cnperf: uperf -X history"

// Option keys (plain or prefixed "uperf.").
const (
	OptPort     = "port"
	OptDataPort = "dataPort" // first data port; flow i uses dataPort+i
	OptHistory  = "history"  // default false: -X per-flowop times for latency percentiles
)

var knownOptions = []string{OptPort, OptDataPort, OptHistory}

// Driver is the uperf driver.
type Driver struct{}

// KnownOptions implements driver.OptionLister.
func (Driver) KnownOptions() []string { return append([]string(nil), knownOptions...) }

// Name implements driver.Driver.
func (Driver) Name() string { return Name }

// Capabilities implements driver.Driver.
func (Driver) Capabilities() driver.Capabilities {
	return driver.Capabilities{
		Profiles:     []api.Profile{api.TCPStream, api.TCPMaerts, api.UDPStream, api.TCPRR, api.UDPRR, api.TCPStreamLat},
		Parallel:     true,
		MessageSize:  true,
		ResponseSize: true,
		RawOutput:    true,
		// Per-transaction latency only with option history=true, so not claimed here.
	}
}

// job is a uperf case with its options read.
type job struct {
	c         plan.Case
	ctl, data int
	history   bool
	opts      *toolkit.Options
}

// Job implements driver.Driver.
func (Driver) Job(c plan.Case) (driver.Job, error) {
	return toolkit.Job(Name, c, knownOptions, readJob)
}

func readJob(c plan.Case, o *toolkit.Options) (job, error) {
	j := job{c: c, opts: o}
	j.ctl, j.data = o.ControlDataPorts(Name, c, OptPort, DefaultPort, OptDataPort, DefaultDataPort)
	if j.history = o.Bool(OptHistory, false); j.history && c.Profile == api.TCPStreamLat {
		return job{}, fmt.Errorf("uperf option %s=true: not with %s (its latency is uperf's own per-transaction time)", OptHistory, c.Profile)
	}
	return j, nil
}

// Servers implements driver.Job: "uperf -s" on the control port, exposing one data port
// (TCP and UDP) per parallel flow.
func (j job) Servers() []driver.Server {
	argv := []string{"uperf", "-s", "-P", strconv.Itoa(j.ctl)}
	return []driver.Server{toolkit.PortServer(Name, DefaultPort, j.ctl, j.data, toolkit.Parallel(j.c), argv)}
}

// StreamLatCount is how many writes of the message and reads of the small message one
// TCP_STREAM_LAT transaction makes (k8s-netperf's profile: count=16).
const StreamLatCount = 16

// Sizes returns the request (or stream message) size and the response size of a case
// (TCP_STREAM_LAT: the message and the small message read back, default 1 as k8s-netperf's
// messagereadsize).
func Sizes(c plan.Case) (req, resp int) {
	req = c.Params.MessageSizeBytes
	if c.Profile == api.TCPStreamLat {
		if req <= 0 {
			req = DefaultTCPStreamSize
		}
		resp = c.Params.ResponseSizeBytes
		if resp <= 0 {
			resp = 1
		}
		return req, resp
	}
	if c.Profile.IsRR() {
		if req <= 0 {
			req = DefaultRRSize
		}
		resp = req
		if c.Params.ResponseSizeBytes > 0 {
			resp = c.Params.ResponseSizeBytes
		}
		return req, resp
	}
	if req <= 0 {
		req = DefaultTCPStreamSize
		if c.Profile.IsUDP() {
			req = DefaultUDPStreamSize
		}
	}
	return req, 0
}

// Profile renders the uperf XML profile of a case: one group of one thread per flow, flow i
// connecting to dataPorts[i]; in each, a connect, a measured transaction of the given
// duration, then a disconnect.
func Profile(c plan.Case, host string, dataPorts []int, seconds int) (string, error) {
	proto := "tcp"
	if c.Profile.IsUDP() {
		proto = "udp"
	}
	req, resp := Sizes(c)
	var ops string
	switch c.Profile {
	case api.TCPStream, api.UDPStream:
		ops = fmt.Sprintf("      <flowop type=\"write\" options=\"size=%d\"/>\n", req)
	case api.TCPMaerts:
		ops = fmt.Sprintf("      <flowop type=\"read\" options=\"size=%d\"/>\n", req)
	case api.TCPRR, api.UDPRR:
		ops = fmt.Sprintf("      <flowop type=\"write\" options=\"size=%d\"/>\n      <flowop type=\"read\" options=\"size=%d\"/>\n", req, resp)
	case api.TCPStreamLat:
		// k8s-netperf's profile (pkg/drivers/uperf.go createUperfProfile): 16 writes of the
		// message, then 16 reads of the small message the slave writes back
		ops = fmt.Sprintf("      <flowop type=\"write\" options=\"count=%d size=%d\"/>\n      <flowop type=\"read\" options=\"count=%d size=%d\"/>\n",
			StreamLatCount, req, StreamLatCount, resp)
	default:
		return "", toolkit.Unsupported(Name, c.Profile)
	}
	if strings.ContainsAny(host, "\"<>&' \t\n") {
		return "", fmt.Errorf("uperf: target host %q cannot go into a profile", host)
	}
	if len(dataPorts) != toolkit.Parallel(c) {
		return "", fmt.Errorf("uperf: %d data ports for %d flows", len(dataPorts), toolkit.Parallel(c))
	}
	nodelay := ""
	if c.Profile == api.TCPRR {
		nodelay = " tcp_nodelay"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<?xml version=\"1.0\"?>\n<profile name=\"cnperf-%s\">\n", c.Profile)
	for _, port := range dataPorts {
		fmt.Fprintf(&b, `  <group nthreads="1">
    <transaction iterations="1">
      <flowop type="connect" options="remotehost=%s protocol=%s port=%d%s"/>
    </transaction>
    <transaction duration="%ds">
%s    </transaction>
    <transaction iterations="1">
      <flowop type="disconnect"/>
    </transaction>
  </group>
`, host, proto, port, nodelay, seconds, ops)
	}
	b.WriteString("</profile>\n")
	return b.String(), nil
}

// Client implements driver.Job.
func (j job) Client(t driver.Target, warmup bool) ([]driver.Command, error) {
	return toolkit.OneCommand(j.argv(t, warmup))
}

// argv builds the client command: a shell that writes the profile and runs uperf.
func (j job) argv(t driver.Target, warmup bool) ([]string, error) {
	c := j.c
	if t.Host == "" {
		return nil, fmt.Errorf("uperf: no target host")
	}
	if c.Params.Burst > 0 || c.Params.RateBitsPerSecond > 0 {
		return nil, fmt.Errorf("uperf: burst and rate limits are not supported")
	}
	seconds := toolkit.RunSeconds(c, warmup)
	ports := make([]int, toolkit.Parallel(c))
	for i := range ports {
		ports[i] = t.Port(j.data + i)
	}
	prof, err := Profile(c, t.Host, ports, seconds)
	if err != nil {
		return nil, err
	}
	uperf := fmt.Sprintf(`uperf -m "$d/profile.xml" -a -R -i 1 -P %d`, t.Port(j.ctl))
	if j.history {
		uperf += ` -X "$d/history"`
	}
	var b strings.Builder
	b.WriteString("d=$(mktemp -d) || exit 1\n")
	b.WriteString("cat > \"$d/profile.xml\" <<'CNPERF_PROFILE'\n")
	b.WriteString(prof)
	b.WriteString("CNPERF_PROFILE\n")
	b.WriteString(uperf + "\n")
	b.WriteString("rc=$?\n")
	if j.history {
		b.WriteString("echo '" + HistoryMarker + "'\n")
		b.WriteString("cat \"$d/history\" 2>/dev/null\n")
	}
	b.WriteString("rm -rf \"$d\"\n")
	b.WriteString("exit $rc\n")
	return []string{"sh", "-c", b.String()}, nil
}

// Parse implements driver.Job.
func (j job) Parse(outs []driver.Output) (api.Sample, error) {
	c := j.c
	r, o, err := toolkit.ParseOne(Name, outs, func(o driver.Output) (Result, error) { return ParseOutput(o.Stdout) },
		func(o driver.Output, perr error) error { return fmt.Errorf("%w (%s)", perr, toolkit.Describe(o)) })
	if err != nil {
		return api.Sample{}, err
	}
	if len(r.Hosts) == 0 {
		return api.Sample{}, fmt.Errorf("uperf output is incomplete: no Run Statistics table (cut short?): %s", toolkit.Describe(o))
	}
	if j.history && !r.HasHistory {
		return api.Sample{}, fmt.Errorf("uperf history (-X) missing from the output: %s", toolkit.Describe(o))
	}
	req, resp := Sizes(c)
	s, err := r.ToSample(c.Profile, toolkit.Parallel(c), float64(toolkit.RunSeconds(c, false)), req, resp)
	if err != nil {
		return api.Sample{}, err
	}
	return toolkit.Finished(s, outs, j.opts)
}

// PortOptions implements driver.PortMover: control (-P), then the data (connect port=) ports
// of the flows, consecutive (toolkit.PortServerOptions).
func (Driver) PortOptions(ports []int) map[string]string {
	return toolkit.PortServerOptions(ports, OptPort, OptDataPort)
}
