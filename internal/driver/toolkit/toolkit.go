// Package toolkit holds the small, pure helpers the external-tool drivers (every driver but
// native) share: whole-second durations, driver options, failure messages
// that carry the tool's own words, and pointer helpers for api figures. Nothing here does I/O.
package toolkit

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/span"
)

// Decimal is a regexp for a number a tool prints with %f or %d ("1.21", "7"): ParseFloat reads
// every match, so a garbled one ("1.2.3") matches nothing instead of becoming a zero.
const Decimal = `[0-9]+(?:\.[0-9]+)?`

// F returns a pointer to v.
func F(v float64) *float64 { return &v }

// I returns a pointer to v.
func I(v int64) *int64 { return &v }

// WholeSeconds rounds a duration in seconds up to whole seconds, at least min. Tools such as
// netperf (-l), iperf3 (-t) and sockperf (-t) take integer seconds; Go's "1m0s" must never
// reach them. A value a hair above an integer (float noise) is not rounded up.
func WholeSeconds(seconds float64, min int) int {
	if math.IsNaN(seconds) || seconds <= 0 {
		return min
	}
	n := int(math.Ceil(seconds - 1e-9))
	if n < min {
		return min
	}
	return n
}

// Itoa formats an int for an argv.
func Itoa(n int) string { return strconv.Itoa(n) }

// RunSeconds is the whole-second length of one run of the case: the warm-up time for a
// discarded warm-up run, otherwise the measured duration.
func RunSeconds(c plan.Case, warmup bool) int {
	if warmup {
		return WholeSeconds(c.Params.WarmupSeconds, 1)
	}
	return WholeSeconds(c.Params.DurationSeconds, 1)
}

// Options reads the driver options of a case. Keys are either plain ("bidir") or prefixed
// with a driver name ("iperf3.bidir"). A key prefixed with this driver must be known; keys
// prefixed with another driver are left to that driver; plain keys this driver does not know
// are reported by Unused so the caller can say so in a sample note instead of ignoring them.
//
// The reads (Bool, Int, Port, Addr, PortBind, ControlDataPorts) return the value; a bad value
// reads as the zero value and its error is kept (the first one), which Err returns and Job
// checks: a driver reads all its options in a row and they are checked once.
type Options struct {
	driver string
	vals   map[string]string
	unused []string
	err    error
}

// Job is how every tool driver's Driver.Job starts: the options of c parsed for driver name
// against its known keys (ParseOptions), then read into the driver's job by read, whose error
// is a check of its own (a check made on the zero value of a bad option is superseded by that
// option's error). A bad option is the error, and there is no job.
func Job[J driver.Job](name string, c plan.Case, known []string, read func(c plan.Case, o *Options) (J, error)) (driver.Job, error) {
	o, err := ParseOptions(name, c, known...)
	if err != nil {
		return nil, err
	}
	j, err := read(c, o)
	if o.err != nil {
		return nil, o.err
	}
	if err != nil {
		return nil, err
	}
	return j, nil
}

// Err is the first error of the reads so far (nil when every value read was good).
func (o *Options) Err() error { return o.err }

// fail keeps err when it is the first error of the reads.
func (o *Options) fail(err error) {
	if o.err == nil {
		o.err = err
	}
}

// ParseOptions validates the options of c for driver name against the known keys.
func ParseOptions(name string, c plan.Case, known ...string) (*Options, error) {
	o := &Options{driver: name, vals: map[string]string{}}
	isKnown := func(k string) bool {
		for _, q := range known {
			if q == k {
				return true
			}
		}
		return false
	}
	for _, k := range slices.Sorted(maps.Keys(c.Params.Options)) {
		v := c.Params.Options[k]
		if i := strings.IndexByte(k, '.'); i > 0 {
			if k[:i] != name {
				continue
			}
			bare := k[i+1:]
			if !isKnown(bare) {
				return nil, fmt.Errorf("unknown %s option %q (known: %s)", name, k, strings.Join(known, ", "))
			}
			o.vals[bare] = v
			continue
		}
		if !isKnown(k) {
			o.unused = append(o.unused, k)
			continue
		}
		if _, set := o.vals[k]; !set {
			o.vals[k] = v
		}
	}
	return o, nil
}

// Get returns an option's value and whether it was set.
func (o *Options) Get(key string) (string, bool) {
	v, ok := o.vals[key]
	return v, ok
}

// Bool reads a boolean option ("true"/"false"/"1"/"0"/"yes"/"no"), def when unset.
func (o *Options) Bool(key string, def bool) bool {
	v, ok := o.vals[key]
	if !ok || v == "" {
		return def
	}
	switch strings.ToLower(v) {
	case "true", "1", "yes", "on":
		return true
	case "false", "0", "no", "off":
		return false
	}
	o.fail(fmt.Errorf("%s option %q: %q is not a boolean", o.driver, key, v))
	return false
}

// Int reads an integer option within [min, max], def when unset.
func (o *Options) Int(key string, def, min, max int) int {
	v, ok := o.vals[key]
	if !ok || v == "" {
		return def
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		o.fail(fmt.Errorf("%s option %q: %q is not an integer", o.driver, key, v))
		return 0
	}
	if n < min || n > max {
		o.fail(fmt.Errorf("%s option %q: %d is outside [%d, %d]", o.driver, key, n, min, max))
		return 0
	}
	return n
}

// UnusedNote is a sample note naming unused options, or "".
func (o *Options) UnusedNote() string {
	if len(o.unused) == 0 {
		return ""
	}
	return fmt.Sprintf("options not used by %s: %s", o.driver, strings.Join(o.unused, ", "))
}

// OptBind is the option that gives a driver's servers the one address to listen on
// (driver.Binder; the local platform sets 127.0.0.1); unset: every address.
const OptBind = "bind"

// Addr reads an IP address option ("" when unset): nothing else may reach a server's argv.
func (o *Options) Addr(key string) string {
	v := strings.TrimSpace(o.vals[key])
	if v == "" {
		return ""
	}
	if net.ParseIP(v) == nil {
		o.fail(fmt.Errorf("%s option %q: %q is not an IP address", o.driver, key, v))
		return ""
	}
	return v
}

// Port reads a port option (1..65535), def when unset.
func (o *Options) Port(key string, def int) int { return o.Int(key, def, 1, 65535) }

// ControlDataPorts reads the ports of a tool with one control port and one data port per
// flow (netperf, uperf): the control port (ctlKey, defCtl when unset) and the first data port
// (dataKey; when unset, defData, or the port after a moved control port). The data ports of
// every flow of c must fit below 65536 and must not include the control port.
func (o *Options) ControlDataPorts(tool string, c plan.Case, ctlKey string, defCtl int, dataKey string, defData int) (ctl, data int) {
	if ctl = o.Port(ctlKey, defCtl); ctl != defCtl {
		defData = ctl + 1
	}
	data = o.Port(dataKey, defData)
	n := Parallel(c)
	switch {
	case o.err != nil:
		return 0, 0
	case data+n-1 > 65535:
		o.fail(fmt.Errorf("%s: data ports %d..%d exceed 65535", tool, data, data+n-1))
		return 0, 0
	case ctl >= data && ctl < data+n:
		o.fail(fmt.Errorf("%s: control port %d is among the data ports %d..%d", tool, ctl, data, data+n-1))
		return 0, 0
	}
	return ctl, data
}

// Text returns b as valid UTF-8 (invalid bytes replaced), with NULs removed, so a tool's
// garbage can go into an error message or a JSON document safely.
func Text(b []byte) string {
	b = bytes.ReplaceAll(b, []byte{0}, nil)
	if utf8.Valid(b) {
		return string(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// Tail returns the last n non-empty lines of b as one line joined by " | ", at most 600
// characters, for error messages.
func Tail(b []byte, n int) string {
	lines := strings.Split(strings.ReplaceAll(Text(b), "\r", ""), "\n")
	var keep []string
	for i := len(lines) - 1; i >= 0 && len(keep) < n; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			keep = append(keep, l)
		}
	}
	for i, j := 0, len(keep)-1; i < j; i, j = i+1, j-1 {
		keep[i], keep[j] = keep[j], keep[i]
	}
	s := strings.Join(keep, " | ")
	if len(s) > 600 {
		s = "…" + s[len(s)-600:]
		s = strings.ToValidUTF8(s, "")
	}
	return s
}

// Describe names what an output shows for an error: its exit code, execution error and the
// last lines of stderr and stdout.
func Describe(o driver.Output) string {
	var parts []string
	if o.Err != nil {
		parts = append(parts, o.Err.Error())
	}
	if o.ExitCode != 0 {
		parts = append(parts, fmt.Sprintf("exit code %d", o.ExitCode))
	}
	if t := Tail(o.Stderr, 4); t != "" {
		parts = append(parts, "stderr: "+t)
	}
	if t := Tail(o.Stdout, 4); t != "" {
		parts = append(parts, "stdout: "+t)
	}
	if len(parts) == 0 {
		return "no output"
	}
	return strings.Join(parts, "; ")
}

// Failed reports an execution failure of o (could not start, killed by a timeout, transport
// error) as an error naming the command, or nil.
func Failed(tool string, o driver.Output) error {
	if o.Err == nil {
		return nil
	}
	return fmt.Errorf("%s failed: %s", tool, Describe(o))
}

// Window returns the earliest start and the latest end of the outputs.
func Window(outs []driver.Output) (start, end time.Time) {
	return span.Of(outs, func(o driver.Output) (time.Time, time.Time) { return o.StartTime, o.EndTime })
}

// AddNote appends a non-empty note.
func AddNote(s *api.Sample, note string) {
	if note != "" {
		s.Notes = append(s.Notes, note)
	}
}

// ExpectOutputs checks that Parse got exactly n outputs.
func ExpectOutputs(tool string, outs []driver.Output, n int) error {
	if len(outs) != n {
		return fmt.Errorf("%s: expected %d command output(s), got %d", tool, n, len(outs))
	}
	return nil
}

// RatePerFlow splits a total rate limit in bits/s over n flows, rounded to whole bits/s and
// at least 1. It returns 0 when there is no limit.
func RatePerFlow(total float64, n int) int64 {
	if total <= 0 {
		return 0
	}
	if n < 1 {
		n = 1
	}
	r := int64(math.Round(total / float64(n)))
	if r < 1 {
		r = 1
	}
	return r
}

// Parallel is the number of flows of a case (at least 1).
func Parallel(c plan.Case) int {
	if c.Params.Parallel < 1 {
		return 1
	}
	return c.Params.Parallel
}

// IPv6 reports whether the case asks for IPv6.
func IPv6(c plan.Case) bool { return strings.EqualFold(c.Params.IPFamily, "ipv6") }

// Unsupported is the error for a profile a driver cannot build (driver.List.Check refuses
// such a case first, naming the drivers that can).
func Unsupported(name string, p api.Profile) error {
	return fmt.Errorf("driver %q cannot run profile %s", name, p)
}

// ServerName names a driver's server: the driver's name on its default port, "name-PORT"
// on another, so servers on different ports never share a name (driver.Servers merges
// servers by name).
func ServerName(name string, port, defaultPort int) string {
	if port == defaultPort {
		return name
	}
	return fmt.Sprintf("%s-%d", name, port)
}

// OptPort6 is the option that puts the IPv6 server of a FamilyServer driver on a port of its
// own; unset, it is the case's port + 1. driver.AllocatePorts sets it when that port is another
// server's.
const OptPort6 = "port6"

// FamilyServer is the name and port of the server of a case whose tool listens on one address
// family per server (iperf 2 without -V, sockperf, each bound to one address): for IPv4 the name
// ServerName gives and port; for IPv6 port6 (OptPort6; 0: port+1) and the name with "-v6" that
// ServerName gives for port6-1. A run with both families needs a server of each, and the two
// cannot share a port: a server on the IPv6 wildcard ("::") takes the port for IPv4 too (neither
// tool sets IPV6_V6ONLY), and one on the IPv4 wildcard never sees IPv6.
func FamilyServer(c plan.Case, name string, port, port6, defaultPort int) (string, int) {
	if IPv6(c) {
		if port6 == 0 {
			port6 = port + 1
		}
		return ServerName(name+"-v6", port6-1, defaultPort), port6
	}
	return ServerName(name, port, defaultPort), port
}

// Port6Options is the driver.FamilyPorter answer of a FamilyServer driver.
func Port6Options(port int) map[string]string { return map[string]string{OptPort6: strconv.Itoa(port)} }

// PortServer is the server of a tool that listens on a control port and whose flows each use
// their own data port (netperf, uperf): it exposes the control port and, per flow, one data
// port (TCP and UDP) counting up from the first. driver.Servers merges the servers of the
// cases on one control port, so the widest case's data ports are all exposed.
func PortServer(name string, defaultCtl, ctl, data, flows int, argv []string) driver.Server {
	ports := []driver.Port{{Name: "control", Port: ctl, Protocol: "TCP"}}
	for i := 0; i < flows; i++ {
		ports = append(ports,
			driver.Port{Name: fmt.Sprintf("data-%d", i), Port: data + i, Protocol: "TCP"},
			driver.Port{Name: fmt.Sprintf("data-%d-udp", i), Port: data + i, Protocol: "UDP"})
	}
	return driver.Server{Name: ServerName(name, ctl, defaultCtl), Argv: argv, Ports: ports}
}

// OneCommand is the client of a tool that runs one command per sample: the argv built by
// the driver, or the error that kept it from being built.
func OneCommand(argv []string, err error) ([]driver.Command, error) {
	if err != nil {
		return nil, err
	}
	return []driver.Command{{Argv: argv}}, nil
}

// Single checks that Parse got exactly one output and returns it.
func Single(tool string, outs []driver.Output) (driver.Output, error) {
	if err := ExpectOutputs(tool, outs, 1); err != nil {
		return driver.Output{}, err
	}
	return outs[0], nil
}

// FailedParse is Failed naming perr too, the error of parsing o's output, when there is one.
func FailedParse(tool string, o driver.Output, perr error) error {
	e := Failed(tool, o)
	if e != nil && perr != nil {
		return fmt.Errorf("%w (output: %v)", e, perr)
	}
	return e
}

// ParseOne is the start of a one-output job's Parse: the one output, read by parse, and its
// fate checked by CheckParse.
func ParseOne[T any](tool string, outs []driver.Output, parse func(o driver.Output) (T, error), explain func(driver.Output, error) error) (T, driver.Output, error) {
	o, err := Single(tool, outs)
	if err != nil {
		var zero T
		return zero, o, err
	}
	v, perr := parse(o)
	return v, o, CheckParse(tool, o, perr, explain)
}

// CheckParse is what a parse of o's output leaves once the command's fate is known: a failed
// command's error (naming perr, the parse error, when there is one); else perr as explain words
// it (nil explain: as it is); else o's non-zero exit; else nil.
func CheckParse(tool string, o driver.Output, perr error, explain func(driver.Output, error) error) error {
	if e := FailedParse(tool, o, perr); e != nil {
		return e
	}
	if perr != nil {
		if explain != nil {
			return explain(o, perr)
		}
		return perr
	}
	return Exited(tool, o)
}

// WithStderr adds the last n lines of o's stderr to err, when there are any.
func WithStderr(o driver.Output, err error, n int) error {
	if t := Tail(o.Stderr, n); t != "" {
		return fmt.Errorf("%w; stderr: %s", err, t)
	}
	return err
}

// WithExitCode adds o's exit code to err when it is not zero.
func WithExitCode(o driver.Output, err error) error {
	if o.ExitCode != 0 {
		return fmt.Errorf("%w (exit code %d)", err, o.ExitCode)
	}
	return err
}

// Finished is the end of a job's Parse: the sample timed by the outputs' window and noting the
// options that were set but not used.
func Finished(s api.Sample, outs []driver.Output, o *Options) (api.Sample, error) {
	s.StartTime, s.EndTime = Window(outs)
	AddNote(&s, o.UnusedNote())
	return s, nil
}

// Exited reports a non-zero exit code of o as an error naming the command, or nil.
func Exited(tool string, o driver.Output) error {
	if o.ExitCode == 0 {
		return nil
	}
	return fmt.Errorf("%s exited with code %d: %s", tool, o.ExitCode, Describe(o))
}

// PortOptions is the driver.PortMover answer of a driver whose server's ports are set by the
// options keys, in order: each key set to its port, or nil when the number of ports differs
// (such a server is not moved).
func PortOptions(ports []int, keys ...string) map[string]string {
	if len(ports) != len(keys) {
		return nil
	}
	m := make(map[string]string, len(keys))
	for i, k := range keys {
		m[k] = strconv.Itoa(ports[i])
	}
	return m
}

// PortServerOptions is the driver.PortMover answer of a driver whose server is a PortServer:
// ports are its control port, then its data ports, one per flow, which must be consecutive
// (flow i listens on the data port + i), set through ctlKey and dataKey; nil when they are
// not (such a server is not moved).
func PortServerOptions(ports []int, ctlKey, dataKey string) map[string]string {
	if len(ports) < 2 {
		return nil
	}
	for i := 2; i < len(ports); i++ {
		if ports[i] != ports[1]+i-1 {
			return nil
		}
	}
	return PortOptions(ports[:2], ctlKey, dataKey)
}

// BindOptions is the driver.Binder answer of a driver whose servers listen on the address
// option OptBind names.
func BindOptions(addr string) map[string]string { return map[string]string{OptBind: addr} }

// PortBind reads the options of a tool whose server has one port: the port (portKey, def
// when unset) and the address it listens on (OptBind, "" for every address).
func (o *Options) PortBind(portKey string, def int) (port int, bind string) {
	return o.Port(portKey, def), o.Addr(OptBind)
}
