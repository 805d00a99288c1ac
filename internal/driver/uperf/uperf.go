// Package uperf drives uperf (https://github.com/uperf/uperf), which runs XML workload
// profiles. cnperf generates the profile for each case and ships it inside the client
// command (uperf reads profiles from files), so the client argv is
//
//	sh -c 'write the profile to a temp dir; uperf -m profile -a -R -i 1 -P PORT [-X history]; clean up'
//
// Output: with -R uperf prints raw, time-stamped progress lines every second
// ("timestamp_ms:... name:Txn2 nr_bytes:... nr_ops:..."): cumulative bytes and flowop counts
// of the running transaction. Rates come from the measured transaction's (Txn2) lines.
// Latency: with option history=true uperf writes every flowop's start and end time (-X) and
// cnperf builds a per-transaction histogram (write start → read end) from it, so percentiles
// are real. Without it the only valid figure is the mean round trip, threads ÷ transaction rate
// (one transaction in flight per thread). cnperf never turns per-second averages into
// percentiles (k8s-netperf's p99 of per-second means is not a p99 of anything).
//
// The server is "uperf -s -P PORT"; the data connections go to a fixed port (connect option
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
	OptDataPort = "dataPort"
	OptHistory  = "history" // default false: -X per-flowop times for latency percentiles
)

var knownOptions = []string{OptPort, OptDataPort, OptHistory}

// Driver is the uperf driver.
type Driver struct{}

func init() { driver.Register(Driver{}) }

// KnownOptions implements driver.OptionLister.
func (Driver) KnownOptions() []string { return append([]string(nil), knownOptions...) }

// Name implements driver.Driver.
func (Driver) Name() string { return Name }

// Capabilities implements driver.Driver.
func (Driver) Capabilities() driver.Capabilities {
	return driver.Capabilities{
		Profiles:     []api.Profile{api.TCPStream, api.TCPMaerts, api.UDPStream, api.TCPRR, api.UDPRR},
		Parallel:     true,
		MessageSize:  true,
		ResponseSize: true,
		// Per-transaction latency only with option history=true, so not claimed here.
	}
}

type settings struct {
	ctl, data int
	history   bool
	opts      *toolkit.Options
}

func parseSettings(c plan.Case) (settings, error) {
	o, err := toolkit.ParseOptions(Name, c, knownOptions...)
	if err != nil {
		return settings{}, err
	}
	s := settings{opts: o}
	if s.ctl, err = o.Port(OptPort, DefaultPort); err != nil {
		return settings{}, err
	}
	def := DefaultDataPort
	if s.ctl != DefaultPort {
		def = s.ctl + 1
	}
	if s.data, err = o.Port(OptDataPort, def); err != nil {
		return settings{}, err
	}
	if s.data == s.ctl {
		return settings{}, fmt.Errorf("uperf: data port %d must differ from the control port", s.data)
	}
	if s.history, err = o.Bool(OptHistory, false); err != nil {
		return settings{}, err
	}
	return s, nil
}

// Servers implements driver.Driver: one "uperf -s" per control port.
func (Driver) Servers(cases []plan.Case) []driver.Server {
	var out []driver.Server
	seen := map[int]bool{}
	for _, c := range cases {
		if c.Driver != "" && c.Driver != Name {
			continue
		}
		st, err := parseSettings(c)
		if err != nil || seen[st.ctl] {
			continue
		}
		seen[st.ctl] = true
		name := Name
		if st.ctl != DefaultPort {
			name = fmt.Sprintf("%s-%d", Name, st.ctl)
		}
		out = append(out, driver.Server{
			Name: name,
			Argv: []string{"uperf", "-s", "-P", strconv.Itoa(st.ctl)},
			Ports: []driver.Port{
				{Name: "control", Port: st.ctl, Protocol: "TCP"},
				{Name: "data", Port: st.data, Protocol: "TCP"},
				{Name: "data-udp", Port: st.data, Protocol: "UDP"},
			},
		})
	}
	return out
}

// Sizes returns the request (or stream message) size and the response size of a case.
func Sizes(c plan.Case) (req, resp int) {
	req = c.Params.MessageSizeBytes
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

// Profile renders the uperf XML profile of a case: one connection per thread, a measured
// transaction of the given duration, then a disconnect.
func Profile(c plan.Case, host string, dataPort, seconds int) (string, error) {
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
	default:
		return "", toolkit.Unsupported(Name, c.Profile)
	}
	if strings.ContainsAny(host, "\"<>&' \t\n") {
		return "", fmt.Errorf("uperf: target host %q cannot go into a profile", host)
	}
	nodelay := ""
	if c.Profile == api.TCPRR {
		nodelay = " tcp_nodelay"
	}
	return fmt.Sprintf(`<?xml version="1.0"?>
<profile name="cnperf-%s">
  <group nthreads="%d">
    <transaction iterations="1">
      <flowop type="connect" options="remotehost=%s protocol=%s port=%d%s"/>
    </transaction>
    <transaction duration="%ds">
%s    </transaction>
    <transaction iterations="1">
      <flowop type="disconnect"/>
    </transaction>
  </group>
</profile>
`, c.Profile, toolkit.Parallel(c), host, proto, dataPort, nodelay, seconds, ops), nil
}

// Client implements driver.Driver.
func (Driver) Client(c plan.Case, t driver.Target, warmup bool) ([]driver.Command, error) {
	argv, err := ClientArgv(c, t, warmup)
	if err != nil {
		return nil, err
	}
	return []driver.Command{{Argv: argv}}, nil
}

// ClientArgv builds the client command: a shell that writes the profile and runs uperf.
func ClientArgv(c plan.Case, t driver.Target, warmup bool) ([]string, error) {
	st, err := parseSettings(c)
	if err != nil {
		return nil, err
	}
	if t.Host == "" {
		return nil, fmt.Errorf("uperf: no target host")
	}
	if c.Params.Burst > 0 || c.Params.RateBitsPerSecond > 0 {
		return nil, fmt.Errorf("uperf: burst and rate limits are not supported")
	}
	seconds := toolkit.RunSeconds(c, warmup)
	if seconds < 2 {
		seconds = 2 // two progress lines at least: rates are measured between them
	}
	prof, err := Profile(c, t.Host, t.Port(st.data), seconds)
	if err != nil {
		return nil, err
	}
	uperf := fmt.Sprintf(`uperf -m "$d/profile.xml" -a -R -i 1 -P %d`, t.Port(st.ctl))
	if st.history {
		uperf += ` -X "$d/history"`
	}
	var b strings.Builder
	b.WriteString("d=$(mktemp -d) || exit 1\n")
	b.WriteString("cat > \"$d/profile.xml\" <<'CNPERF_PROFILE'\n")
	b.WriteString(prof)
	b.WriteString("CNPERF_PROFILE\n")
	b.WriteString(uperf + "\n")
	b.WriteString("rc=$?\n")
	if st.history {
		b.WriteString("echo '" + HistoryMarker + "'\n")
		b.WriteString("cat \"$d/history\" 2>/dev/null\n")
	}
	b.WriteString("rm -rf \"$d\"\n")
	b.WriteString("exit $rc\n")
	return []string{"sh", "-c", b.String()}, nil
}

// Parse implements driver.Driver.
func (Driver) Parse(c plan.Case, outs []driver.Output) (api.Sample, error) {
	if err := toolkit.ExpectOutputs(Name, outs, 1); err != nil {
		return api.Sample{}, err
	}
	o := outs[0]
	st, err := parseSettings(c)
	if err != nil {
		return api.Sample{}, err
	}
	r, perr := ParseOutput(o.Stdout)
	if e := toolkit.Failed(Name, o); e != nil {
		if perr != nil {
			return api.Sample{}, fmt.Errorf("%w (output: %v)", e, perr)
		}
		return api.Sample{}, e
	}
	if perr != nil {
		return api.Sample{}, fmt.Errorf("%w (%s)", perr, toolkit.Describe(o))
	}
	if o.ExitCode != 0 {
		return api.Sample{}, fmt.Errorf("uperf exited with code %d: %s", o.ExitCode, toolkit.Describe(o))
	}
	if len(r.Hosts) == 0 {
		return api.Sample{}, fmt.Errorf("uperf output is incomplete: no Run Statistics table (cut short?): %s", toolkit.Describe(o))
	}
	if st.history && !r.HasHistory {
		return api.Sample{}, fmt.Errorf("uperf history (-X) missing from the output: %s", toolkit.Describe(o))
	}
	s, err := r.ToSample(c.Profile, toolkit.Parallel(c))
	if err != nil {
		return api.Sample{}, err
	}
	s.StartTime, s.EndTime = toolkit.Window(outs)
	toolkit.AddNote(&s, st.opts.UnusedNote())
	return s, nil
}

// Validate implements driver.Validator.
func (Driver) Validate(c plan.Case) error {
	_, err := ClientArgv(c, driver.Target{Host: "validate.invalid"}, false)
	return err
}

// PortOptions implements driver.PortMover: control (-P) and data (connect port=) ports.
func (Driver) PortOptions(ports []int) map[string]string {
	if len(ports) != 2 {
		return nil
	}
	return map[string]string{OptPort: strconv.Itoa(ports[0]), OptDataPort: strconv.Itoa(ports[1])}
}
