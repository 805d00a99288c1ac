// Package driver defines the seam between cnperf and a load generator. A driver is pure: it
// builds argv lines and parses outputs; it never performs I/O. Platforms run the commands.
package driver

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/plan"
)

// Capabilities is what a driver can do; the plan validator enforces it before anything runs.
type Capabilities struct {
	Profiles     []api.Profile
	Parallel     bool // can run more than one flow
	Burst        bool // can keep several transactions in flight
	MessageSize  bool
	ResponseSize bool
	Rate         bool // can limit the send rate
	CPU          bool // reports CPU figures
	// LatencyHistogram is true when the driver returns per-transaction latency data that can be
	// merged across samples; otherwise latency percentiles come as the tool printed them.
	LatencyHistogram bool
	// InlineWarmup is true when the driver excludes warm-up from the measured window itself;
	// otherwise the runner runs a separate, discarded warm-up sample.
	InlineWarmup bool
	// RawOutput is true when the client's output is the tool's own report, worth keeping in
	// a sample for audits (the runner keeps a short one); the native agent's JSON sample is not.
	RawOutput bool
}

// Supports reports whether the driver can run profile p.
func (c Capabilities) Supports(p api.Profile) bool {
	for _, q := range c.Profiles {
		if q == p {
			return true
		}
	}
	return false
}

// Port is one port a server listens on.
type Port struct {
	Name     string // unique within the server, e.g. "control", "data-0"
	Port     int
	Protocol string // "TCP" or "UDP"
}

// Server is a long-running server process a driver needs on the server endpoint.
type Server struct {
	// Name is unique per driver, e.g. "iperf3", "sockperf-udp".
	Name  string
	Argv  []string
	Ports []Port
	// Ready is a substring of the server's output that means it accepts connections; empty
	// means "wait until its first TCP port accepts".
	Ready string
}

// Target is what the client dials: an address and, for every server port, the port that
// reaches it from the client (equal unless NAT'ed, e.g. a NodePort).
type Target struct {
	Host  string
	Ports map[int]int
}

// Port maps a server port to the port the client must dial.
func (t Target) Port(serverPort int) int {
	if p, ok := t.Ports[serverPort]; ok {
		return p
	}
	return serverPort
}

// Command is one argv to run. Argv[0] "cnperf" means the cnperf binary itself.
type Command struct {
	Argv []string
	// Timeout bounds the command; 0 lets the platform use the sample timeout.
	Timeout time.Duration
}

// Output is what running a Command produced.
type Output struct {
	Argv     []string
	Stdout   []byte
	Stderr   []byte
	ExitCode int
	// Err is an execution error (could not start, killed by timeout, transport failure).
	Err       error
	StartTime time.Time
	EndTime   time.Time
}

// Driver is a load generator. It turns a case into a Job: the case's options, sizes and
// profile specifics are read and checked once, and the job builds the servers, the client
// commands of every sample and the parser of their outputs.
type Driver interface {
	Name() string
	Capabilities() Capabilities
	// Job reads and checks the case once. An error names the bad option or setting; Check
	// returns it before anything is deployed.
	Job(c plan.Case) (Job, error)
}

// Job is one case as its driver runs it (Driver.Job).
type Job interface {
	// Servers lists the servers the case needs on the server endpoint; Servers (the function)
	// merges those of many cases.
	Servers() []Server
	// Client builds the client commands for one sample; they run concurrently and all their
	// outputs go to Parse. warmup is true for a discarded warm-up run.
	Client(t Target, warmup bool) ([]Command, error)
	// Parse turns the outputs into one sample. An error means the sample failed; the error
	// carries the tool's own message. Parse never returns a zero figure for a failed sample.
	Parse(outs []Output) (api.Sample, error)
}

// Servers lists the servers driver d needs to serve all the given cases: the servers of every
// case's job, one per server name in order of first appearance (the first case's argv), with
// the ports of every case under that name (e.g. the data ports of the widest case). Cases of
// other drivers are left out, and so are cases whose job cannot be built: Check refuses them.
func Servers(d Driver, cases []plan.Case) []Server {
	var out []Server
	at := map[string]int{}
	for _, c := range cases {
		if c.Driver != "" && c.Driver != d.Name() {
			continue
		}
		j, err := d.Job(c)
		if err != nil {
			continue
		}
		for _, s := range j.Servers() {
			i, seen := at[s.Name]
			if !seen {
				at[s.Name] = len(out)
				s.Ports = append([]Port(nil), s.Ports...)
				out = append(out, s)
				continue
			}
			for _, p := range s.Ports {
				if !slices.ContainsFunc(out[i].Ports, func(q Port) bool { return q.Name == p.Name }) {
					out[i].Ports = append(out[i].Ports, p)
				}
			}
		}
	}
	return out
}

// Importer parses a tool's saved raw output (cnperf import). Drivers that can, implement it.
type Importer interface {
	// Import parses one saved output file into cases with their samples; the driver infers
	// the profile and parameters from the output where it can.
	Import(name string, data []byte) ([]ImportedCase, error)
	// ImportFormats says which saved outputs Import reads, for cnperf import's help: lines of
	// at most 100 characters (they are indented by 12), without indentation.
	ImportFormats() string
}

// FailedRun is an error the tool reported about its own run (iperf3's JSON "error": "unable to
// connect to server: Connection refused"): the output is genuine and says the run failed.
// `cnperf import` records such a file as a failed sample with this cause instead of refusing
// it; anything else (garbage, truncated output) still stops the import.
type FailedRun struct {
	Msg string
}

func (e *FailedRun) Error() string { return e.Msg }

// ImportedCase is a case recovered from a tool's raw output.
type ImportedCase struct {
	Profile api.Profile
	Params  api.Params
	Sample  api.Sample
}

// List is a set of drivers with distinct names: the program's is internal/driver/all.List.
// Lookups, help texts and plan checks read it; no driver registers itself.
type List []Driver

// Get returns the driver named name.
func (l List) Get(name string) (Driver, error) {
	for _, d := range l {
		if d.Name() == name {
			return d, nil
		}
	}
	return nil, fmt.Errorf("unknown driver %q (known: %s)", name, strings.Join(l.Names(), ", "))
}

// Names lists the drivers' names, sorted.
func (l List) Names() []string {
	out := make([]string, 0, len(l))
	for _, d := range l {
		out = append(out, d.Name())
	}
	sort.Strings(out)
	return out
}

// WhoCan lists the drivers that support profile p, sorted.
func (l List) WhoCan(p api.Profile) []string {
	var out []string
	for _, d := range l {
		if d.Capabilities().Supports(p) {
			out = append(out, d.Name())
		}
	}
	sort.Strings(out)
	return out
}

// Check reports whether the named driver can run case c, with a message that names the
// drivers that can when it cannot. The plan validator calls it for every case.
func (l List) Check(c plan.Case) error {
	d, err := l.Get(c.Driver)
	if err != nil {
		return err
	}
	if err := l.CheckOptions(c); err != nil {
		return err
	}
	caps := d.Capabilities()
	if !caps.Supports(c.Profile) {
		msg := fmt.Sprintf("driver %q cannot run profile %s", c.Driver, c.Profile)
		if who := l.WhoCan(c.Profile); len(who) > 0 {
			msg += fmt.Sprintf(" (drivers that can: %s)", strings.Join(who, ", "))
		}
		return fmt.Errorf("%s", msg)
	}
	if c.Params.Parallel > 1 && !caps.Parallel {
		return fmt.Errorf("driver %q cannot run parallel flows (parallel %d)", c.Driver, c.Params.Parallel)
	}
	if c.Params.Burst > 0 && !caps.Burst {
		return fmt.Errorf("driver %q cannot keep several transactions in flight (burst %d)", c.Driver, c.Params.Burst)
	}
	if c.Params.RateBitsPerSecond > 0 && !caps.Rate {
		return fmt.Errorf("driver %q cannot limit the send rate", c.Driver)
	}
	if c.Params.ResponseSizeBytes > 0 && !caps.ResponseSize {
		return fmt.Errorf("driver %q cannot set a response size different from the request size", c.Driver)
	}
	// Every driver refuses a case whose job (a bad option value) or client command (a size the
	// tool cannot send) cannot be built here, before anything is deployed, not at its first
	// sample.
	j, err := d.Job(c)
	if err != nil {
		return err
	}
	if _, err := j.Client(validationTarget, false); err != nil {
		return err
	}
	return nil
}

// validationTarget is the target Check builds client commands against: a name that never
// resolves (RFC 6761), since nothing is dialled.
var validationTarget = Target{Host: "validate.invalid"}

// OptionLister is implemented by drivers that take options (case options, --option): the keys
// they read. CheckOptions refuses a key no driver reads.
type OptionLister interface {
	KnownOptions() []string
}

// ErrUnknownOption marks an option key that no driver reads (CheckOptions).
var ErrUnknownOption = errors.New("unknown option")

// CheckOptions refuses the option keys of c that nothing would read: a plain key no driver of
// the list knows, a key prefixed with a name that is not a driver ("netpref.port"), and a key
// prefixed with a driver that does not know it ("iperf3.bidr"). The message suggests the
// nearest known key. A plain key another driver knows is allowed: a group may list several
// drivers, and each reads its own keys (the others note them as unused).
func (l List) CheckOptions(c plan.Case) error {
	all := map[string]bool{}
	var allKeys []string
	for _, n := range l.Names() {
		d, _ := l.Get(n)
		for _, k := range knownOptions(d) {
			if !all[k] {
				all[k] = true
				allKeys = append(allKeys, k)
			}
			allKeys = append(allKeys, n+"."+k)
		}
	}
	sort.Strings(allKeys)
	for _, k := range slices.Sorted(maps.Keys(c.Params.Options)) {
		name, bare, prefixed := strings.Cut(k, ".")
		if !prefixed {
			if !all[k] {
				return unknownOption(k, allKeys, "")
			}
			continue
		}
		d, err := l.Get(name)
		if err != nil {
			return unknownOption(k, allKeys, fmt.Sprintf("no driver is named %q", name))
		}
		if !slices.Contains(knownOptions(d), bare) {
			var own []string
			for _, o := range knownOptions(d) {
				own = append(own, name+"."+o)
			}
			return unknownOption(k, own, "")
		}
	}
	return nil
}

func unknownOption(key string, known []string, why string) error {
	msg := fmt.Sprintf("%v %q", ErrUnknownOption, key)
	if why != "" {
		msg += ": " + why
	}
	if s := plan.Closest(key, known); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	var plain []string
	for _, k := range known {
		if !strings.Contains(k, ".") {
			plain = append(plain, k)
		}
	}
	if len(plain) == 0 {
		plain = known
	}
	if len(plain) == 0 {
		return errors.New(msg)
	}
	return fmt.Errorf("%s (known: %s)", msg, strings.Join(plain, ", "))
}

func knownOptions(d Driver) []string {
	if l, ok := d.(OptionLister); ok {
		return l.KnownOptions()
	}
	return nil
}

// PortMover is implemented by drivers whose server ports can be chosen through case options,
// so a platform can move servers off ports that are already taken on a shared host.
type PortMover interface {
	// PortOptions returns the case options that make the driver's (single) server listen on
	// ports: the distinct port numbers of its Ports, in order of first appearance, replaced.
	PortOptions(ports []int) map[string]string
}

// Binder is implemented by drivers whose servers can be told the one address to listen on, so
// a platform can keep them off addresses that other hosts reach (the local platform: loopback).
type Binder interface {
	// BindOptions returns the case options that make the driver's servers listen on addr only.
	BindOptions(addr string) map[string]string
}

// MessageSizer is implemented by drivers whose tool cannot use cnperf's generic default
// message size for a profile (e.g. sockperf: 14 B minimum, 65507 B maximum).
type MessageSizer interface {
	DefaultMessageSize(p api.Profile) (size int, ok bool)
}

// DefaultMessageSize returns the named driver's own default message size for p, if it has one.
func (l List) DefaultMessageSize(driverName string, p api.Profile) (int, bool) {
	d, err := l.Get(driverName)
	if err != nil {
		return 0, false
	}
	if m, ok := d.(MessageSizer); ok {
		return m.DefaultMessageSize(p)
	}
	return 0, false
}

// Warmer is implemented by drivers whose samples were measured to need a warm-up: the
// default when a plan sets none (see docs/performance.md, "Time to a trustworthy answer").
type Warmer interface {
	DefaultWarmupSeconds() float64
}

// DefaultWarmup returns the named driver's own default warm-up in seconds, if it has one.
func (l List) DefaultWarmup(driverName string) (float64, bool) {
	d, err := l.Get(driverName)
	if err != nil {
		return 0, false
	}
	if w, ok := d.(Warmer); ok {
		return w.DefaultWarmupSeconds(), true
	}
	return 0, false
}

// Retrier is implemented by drivers whose tool may refuse a run for a moment, e.g. iperf3's
// "the server is busy running a test" just after the previous test ended; the runner runs
// such a sample again, a few times, before recording the failure.
type Retrier interface {
	Retryable(err error) bool
}

// Tools lists the programs d runs (its servers' and clients' argv[0], sorted, without "cnperf",
// the binary itself), as its jobs for each profile it supports build them with default
// settings: what a host or guest must carry for d to run there.
func Tools(d Driver) []string {
	var out []string
	add := func(argv []string) {
		if len(argv) > 0 && argv[0] != "cnperf" && !slices.Contains(out, argv[0]) {
			out = append(out, argv[0])
		}
	}
	for _, p := range d.Capabilities().Profiles {
		j, err := d.Job(plan.Case{Driver: d.Name(), Profile: p, Path: api.PathPodPodCrossNode,
			Params: api.Params{DurationSeconds: 1, MessageSizeBytes: 1024, Parallel: 1}})
		if err != nil {
			continue
		}
		for _, s := range j.Servers() {
			add(s.Argv)
		}
		cmds, _ := j.Client(Target{Host: "127.0.0.1"}, false)
		for _, c := range cmds {
			add(c.Argv)
		}
	}
	sort.Strings(out)
	return out
}

// DistinctTools is every tool of byDriver (a driver's name → its Tools), once each, sorted.
func DistinctTools(byDriver map[string][]string) []string {
	var out []string
	for _, tools := range byDriver {
		for _, t := range tools {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	slices.Sort(out)
	return out
}
