package config

import (
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

// TigerBenchTestConfig is one test of tiger-bench's testconfig.yaml (tiger-bench pkg/config.TestConfig).
// Field names are tiger-bench's, so that encoding/json writes the "config" object of tiger-bench's
// results.json. Keys are matched case-insensitively, as tiger-bench does (it decodes YAML through
// JSON). tiger-bench's defaults are applied: Duration 60, TestNamespace "testns", and for
// thruput-latency and iperf tests without Perf: direct and service on, ports 32000/32001.
type TigerBenchTestConfig struct {
	TestKind            string                `yaml:"testKind"`
	Encap               string                `yaml:"encap"`
	Dataplane           string                `yaml:"dataplane"`
	NumPolicies         int                   `yaml:"numPolicies"`
	NumIdlePolicies     int                   `yaml:"numIdlePolicies" json:",omitempty"`
	NumServices         int                   `yaml:"numServices"`
	NumPods             int                   `yaml:"numPods"`
	HostNetwork         bool                  `yaml:"hostNetwork"`
	TestNamespace       string                `yaml:"testNamespace"`
	Iterations          int                   `yaml:"iterations"`
	Duration            int                   `yaml:"duration"`
	DNSPerf             *TigerBenchDNSConfig  `yaml:"DNSPerf"`
	Perf                *TigerBenchPerfConfig `yaml:"Perf"`
	TTFRConfig          *TigerBenchTTFRConfig `yaml:"TTFRConfig"`
	CalicoNodeCPULimit  string                `yaml:"calicoNodeCPULimit"`
	LeaveStandingConfig bool                  `yaml:"leaveStandingConfig"`

	// IterationsSet is true when the file sets iterations. tiger-bench treats a missing value as
	// 0 (standing config only, no measurement); cnperf runs its default number of samples.
	IterationsSet bool `yaml:"-" json:"-"`
	// Line is the line of the test's first key in the file.
	Line int `yaml:"-" json:"-"`
}

// TigerBenchPerfConfig selects the scenarios of thruput-latency and iperf tests.
type TigerBenchPerfConfig struct {
	Direct           bool   `yaml:"direct"`
	Service          bool   `yaml:"service"`
	External         bool   `yaml:"external"`
	ControlPort      int    `yaml:"ControlPort"`
	TestPort         int    `yaml:"TestPort"`
	ExternalIPOrFQDN string `yaml:"ExternalIPOrFQDN"`
}

// TigerBenchTTFRConfig configures a ttfr test. Rate is in pods per second and may be fractional
// (tiger-bench's README writes 2.5).
type TigerBenchTTFRConfig struct {
	TestDuration    int     `yaml:"TestDuration" json:",omitempty"`
	TestPodsPerNode int     `yaml:"TestPodsPerNode"`
	Rate            float64 `yaml:"Rate"`
}

// TigerBenchDNSConfig configures a dnsperf test. tiger-bench's versions differ in these keys, so
// unknown keys here are warnings, not errors.
type TigerBenchDNSConfig struct {
	NumDomains    int    `yaml:"NumDomains"`
	Mode          string `yaml:"Mode"`
	RunStress     bool   `yaml:"RunStress"`
	TestDNSPolicy bool   `yaml:"TestDNSPolicy"`
	TargetURL     string `yaml:"TargetURL" json:",omitempty"`
	TargetDomain  string `yaml:"TargetDomain" json:",omitempty"`
	NumTargetPods int    `yaml:"NumTargetPods" json:",omitempty"`
	TargetType    string `yaml:"TargetType" json:",omitempty"`
}

// tiger-bench's test kinds and settings.
const (
	TigerBenchThruputLatency = "thruput-latency"
	TigerBenchIperf          = "iperf"
	TigerBenchTTFR           = "ttfr"
	TigerBenchDNSPerf        = "dnsperf"
	// TigerBenchNone runs no test: the standing config and cluster settings only.
	TigerBenchNone = "none"
)

// The tools tiger-bench runs its measuring tests with (its file format names them, as data):
// thruput-latency runs qperf, iperf runs iperf3.
const (
	TigerBenchThruputLatencyDriver = "qperf"
	TigerBenchIperfDriver          = "iperf3"
)

// PortOptions are the driver options that make an external test's servers listen on its
// TestPort (and ControlPort, for thruput-latency's qperf): whatever exposes them must not map
// ports (tiger-bench's rule), so the client dials them as they are. Nil for other tests.
func (t TigerBenchTestConfig) PortOptions() map[string]string {
	if t.Perf == nil || !t.Perf.External {
		return nil
	}
	switch t.TestKind {
	case TigerBenchThruputLatency:
		return map[string]string{
			TigerBenchThruputLatencyDriver + ".port":     fmt.Sprint(t.Perf.ControlPort),
			TigerBenchThruputLatencyDriver + ".dataPort": fmt.Sprint(t.Perf.TestPort),
		}
	case TigerBenchIperf:
		return map[string]string{TigerBenchIperfDriver + ".port": fmt.Sprint(t.Perf.TestPort)}
	}
	return nil
}

var (
	tigerBenchKinds      = []string{TigerBenchNone, TigerBenchDNSPerf, TigerBenchIperf, TigerBenchThruputLatency, TigerBenchTTFR}
	tigerBenchEncaps     = []string{"none", "vxlan", "ipip"}
	tigerBenchDataplanes = []string{"iptables", "nftables", "bpf"}
	tigerBenchDNSModes   = []string{"Inline", "NoDelay", "DelayDeniedPacket", "DelayDNSResponse"}
)

// tiger-bench's iperf test runs "iperf3 -c <ip> -P 8 -J -t <duration>".
const tigerBenchIperfParallel = 8

// readTigerBench converts a testconfig.yaml. thruput-latency (qperf tcp_bw + tcp_lat) becomes
// a group with profiles TCP_STREAM and TCP_RR and driver qperf; iperf (iperf3 -P 8) becomes
// TCP_STREAM, parallel 8, driver iperf3. Paths follow Perf: direct → pod-pod-cross-node
// (host-host with hostNetwork), service → pod-clusterip, external → external-service.
// Iterations become samples, duration (seconds) the duration. ttfr and dnsperf tests, standing
// config, the test namespace and Calico reconfiguration are kept in the returned tests, which
// internal/tigerbench runs; ttfr, dnsperf and iterations-0 tests have no cases, so the plan may
// have no groups at all.
func readTigerBench(d *decoder, root *yaml.Node, lines LineIndex) (*api.Plan, []TigerBenchTestConfig) {
	// tiger-bench decodes YAML through encoding/json: keys in any case, unknown keys ignored
	// (cnperf ignores them too, with a warning naming the line).
	d.fold, d.peer = true, "tiger-bench"
	d.lenient = map[reflect.Type]bool{reflect.TypeOf(TigerBenchTestConfig{}): true, reflect.TypeOf(TigerBenchPerfConfig{}): true,
		reflect.TypeOf(TigerBenchTTFRConfig{}): true, reflect.TypeOf(TigerBenchDNSConfig{}): true}
	defer func() { d.fold, d.lenient, d.peer = false, nil, "" }()

	p := &api.Plan{APIVersion: api.APIVersion, Kind: api.KindPlan}
	var tests []TigerBenchTestConfig
	for i, item := range root.Content {
		item = d.resolve(item)
		ti := tbItem{d: d, item: item, base: fmt.Sprintf("[%d]", i)}
		nerr := len(d.errs)
		var t TigerBenchTestConfig
		d.decodeInto(item, &t, ti.base)
		t.Line = item.Line
		_, t.IterationsSet = ti.pos("iterations")
		ti.check(&t)
		tests = append(tests, t)
		if len(d.errs) > nerr {
			continue
		}
		// Standing config, Calico reconfiguration, ttfr and dnsperf tests and the test namespace
		// are acted on by internal/tigerbench from the returned tests.
		g, ok := ti.group(i, t)
		if !ok {
			continue
		}
		ti.index(lines, fmt.Sprintf("tests[%d]", len(p.Tests)))
		p.Tests = append(p.Tests, g)
	}
	return p, tests
}

// tbItem is one test of a testconfig.yaml as it is read: its node and its place ("[i]").
type tbItem struct {
	d    *decoder
	item *yaml.Node
	base string
}

// pos is the position of a key as written (any case).
func (ti tbItem) pos(field string) (Pos, bool) { return ti.d.posFold(ti.base, field) }

// at is the node an error about field points at: the key's, else the test's.
func (ti tbItem) at(field string) *yaml.Node {
	if ps, ok := ti.pos(field); ok {
		return &yaml.Node{Line: ps.Line, Column: ps.Column}
	}
	return ti.item
}

// fieldName is field as written, or base.field.
func (ti tbItem) fieldName(field string) string {
	if ps, ok := ti.pos(field); ok {
		return ps.Field
	}
	return ti.base + "." + field
}

func (ti tbItem) errorf(field, path, format string, a ...any) {
	ti.d.errorf(ti.at(field), path, format, a...)
}

// check is tiger-bench's own validation (its validator tags and defaultAndValidate), with
// its defaults.
func (ti tbItem) check(t *TigerBenchTestConfig) {
	if !slices.Contains(tigerBenchKinds, t.TestKind) {
		msg := fmt.Sprintf("unknown testKind %q (known: %s)", t.TestKind, strings.Join(tigerBenchKinds, ", "))
		ti.errorf("testKind", ti.fieldName("testKind"), "%s", msg)
	}
	if t.Encap != "" && !slices.Contains(tigerBenchEncaps, t.Encap) {
		ti.errorf("encap", ti.fieldName("encap"), "unknown encap %q (known: %s, or empty to leave the cluster as it is)",
			t.Encap, strings.Join(tigerBenchEncaps, ", "))
	}
	if t.Dataplane != "" && !slices.Contains(tigerBenchDataplanes, t.Dataplane) {
		ti.errorf("dataplane", ti.fieldName("dataplane"), "unknown dataplane %q (known: %s, or empty to leave the cluster as it is)",
			t.Dataplane, strings.Join(tigerBenchDataplanes, ", "))
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"numPolicies", t.NumPolicies}, {"numIdlePolicies", t.NumIdlePolicies}, {"numServices", t.NumServices},
		{"numPods", t.NumPods}, {"iterations", t.Iterations}, {"duration", t.Duration}} {
		if f.v < 0 {
			ti.errorf(f.name, ti.fieldName(f.name), "%s must not be negative, got %d", f.name, f.v)
		}
	}
	if t.Duration == 0 {
		t.Duration = 60
	}
	if t.TestNamespace == "" {
		t.TestNamespace = "testns"
	}
	if t.TestKind == TigerBenchThruputLatency || t.TestKind == TigerBenchIperf {
		ti.checkPerf(t)
	}
	ti.checkDNS(t)
	if tc := t.TTFRConfig; tc != nil && (tc.Rate < 0 || tc.TestPodsPerNode < 0) {
		ti.errorf("TTFRConfig", ti.fieldName("TTFRConfig"), "Rate and TestPodsPerNode must not be negative")
	}
	if t.TestKind == TigerBenchDNSPerf {
		ti.checkDNSPerfTest(t)
	}
}

// checkPerf defaults Perf, and checks an external test's address and ports.
func (ti tbItem) checkPerf(t *TigerBenchTestConfig) {
	if t.Perf == nil {
		t.Perf = &TigerBenchPerfConfig{Direct: true, Service: true, ControlPort: 32000, TestPort: 32001}
		return
	}
	if !t.Perf.External {
		return
	}
	pf := ti.fieldName("Perf")
	if t.Perf.ExternalIPOrFQDN == "" {
		ti.errorf("Perf", pf+".ExternalIPOrFQDN", "ExternalIPOrFQDN is required for an external %s test", t.TestKind)
	}
	if t.TestKind == TigerBenchThruputLatency && (t.Perf.ControlPort < 1 || t.Perf.ControlPort > 65535) {
		ti.errorf("Perf", pf+".ControlPort", "ControlPort must be between 1 and 65535 for an external thruput-latency test, got %d", t.Perf.ControlPort)
	}
	if t.Perf.TestPort < 1 || t.Perf.TestPort > 65535 {
		ti.errorf("Perf", pf+".TestPort", "TestPort must be between 1 and 65535 for an external %s test, got %d", t.TestKind, t.Perf.TestPort)
	}
}

// checkDNS checks DNSPerf: its validator dives into it whatever the test kind.
func (ti tbItem) checkDNS(t *TigerBenchTestConfig) {
	dc := t.DNSPerf
	if dc == nil {
		return
	}
	df := ti.fieldName("DNSPerf")
	if dc.Mode != "" && !slices.Contains(tigerBenchDNSModes, dc.Mode) {
		ti.errorf("DNSPerf", df+".Mode", "unknown DNSPerf mode %q (known: %s)", dc.Mode, strings.Join(tigerBenchDNSModes, ", "))
	}
	if dc.NumDomains < 0 {
		ti.errorf("DNSPerf", df+".NumDomains", "NumDomains must not be negative, got %d", dc.NumDomains)
	}
	if dc.TargetURL != "" {
		if u, err := url.Parse(dc.TargetURL); err != nil || u.Scheme == "" {
			ti.errorf("DNSPerf", df+".TargetURL", "TargetURL %q is not a URL (tiger-bench's validator wants one with a scheme, e.g. http://www.example.com)", dc.TargetURL)
		}
	}
}

// checkDNSPerfTest is defaultAndValidate's checks of a dnsperf test.
func (ti tbItem) checkDNSPerfTest(t *TigerBenchTestConfig) {
	df := ti.fieldName("DNSPerf")
	dc := t.DNSPerf
	if dc == nil {
		ti.d.errorf(ti.item, df, "DNSPerf is required for a dnsperf test (tiger-bench's validator: required_if=TestKind dnsperf)")
		return
	}
	if dc.TargetURL == "" && dc.TargetDomain == "" {
		dc.TargetURL = "http://www.example.com"
	}
	if dc.TestDNSPolicy && dc.Mode == "" {
		ti.errorf("DNSPerf", df+".Mode", "Mode must be set for a dnsperf test with TestDNSPolicy enabled")
	}
	switch {
	case t.Dataplane == "bpf" && (dc.Mode == "DelayDeniedPacket" || dc.Mode == "DelayDNSResponse"):
		ti.errorf("DNSPerf", df+".Mode", "%s mode is not supported on BPF dataplane (BPF supports Inline and NoDelay)", dc.Mode)
	case t.Dataplane == "nftables" && dc.Mode == "Inline":
		ti.errorf("DNSPerf", df+".Mode", "Inline mode is not supported on Nftables dataplane (Nftables supports NoDelay, DelayDeniedPacket and DelayDNSResponse)")
	}
}

// group is the plan's group of the i-th test, valid t; false when the test has no cases
// (ttfr and dnsperf tests, no iterations, no path), with a warning where the file says so.
func (ti tbItem) group(i int, t TigerBenchTestConfig) (api.TestGroup, bool) {
	warn := func(field, format string, a ...any) {
		ti.d.warnf(ti.at(field), ti.fieldName(field), format, a...)
	}
	var g api.TestGroup
	switch t.TestKind {
	case TigerBenchThruputLatency:
		g.Profiles = []api.Profile{api.TCPStream, api.TCPRR}
		g.Drivers = []string{TigerBenchThruputLatencyDriver}
	case TigerBenchIperf:
		g.Profiles = []api.Profile{api.TCPStream}
		g.Drivers = []string{TigerBenchIperfDriver}
		g.Parallel = []int{tigerBenchIperfParallel}
	default:
		// ttfr and dnsperf tests have no cases: internal/tigerbench runs them.
		return g, false
	}
	if t.Iterations == 0 {
		// Standing config only: tiger-bench runs its iterations loop zero times. A file
		// without iterations gets 0 too (its default:"1" tag is not applied to the file;
		// its TestDefaults expects 0).
		if !t.IterationsSet {
			warn("testKind", "iterations is not set: tiger-bench runs no iteration then (it reads a missing iterations as 0), so only the standing config is set up; so does cnperf. Set iterations to measure")
		}
		return g, false
	}
	if t.Perf.Direct {
		if t.HostNetwork {
			g.Paths = append(g.Paths, api.PathHostHost)
		} else {
			g.Paths = append(g.Paths, api.PathPodPodCrossNode)
		}
	}
	if t.Perf.Service {
		g.Paths = append(g.Paths, api.PathPodClusterIP)
	}
	if t.Perf.External {
		// The address and ports reach the kube platform through the test itself
		// (internal/tigerbench), not through case options no driver reads.
		g.Paths = append(g.Paths, api.PathExternalService)
	}
	if len(g.Paths) == 0 {
		warn("Perf", "direct, service and external are all false: nothing to measure (standing config only)")
		return g, false
	}
	g.Name = TigerBenchGroup(i, t.TestKind)
	g.Duration = strconv.Itoa(t.Duration) + "s"
	n := t.Iterations
	g.Samples = &n
	if t.HostNetwork {
		hn := true
		g.HostNetwork = &hn
	}
	return g, true
}

// index records where the plan group gp's fields stand in the file.
func (ti tbItem) index(lines LineIndex, gp string) {
	itemPos := Pos{Line: ti.item.Line, Column: ti.item.Column, Field: ti.base}
	lines[gp] = itemPos
	lines[gp+".name"] = itemPos
	for _, f := range [][2]string{{"profiles", "testKind"}, {"drivers", "testKind"}, {"parallel", "testKind"},
		{"paths", "Perf"}, {"duration", "duration"}, {"samples", "iterations"}, {"hostNetwork", "hostNetwork"}} {
		if ps, ok := ti.pos(f[1]); ok {
			lines[gp+"."+f[0]] = ps
		}
	}
}

// TigerBenchGroup is the Group (and Name) of the cases of the i-th test (from 0) of a
// testconfig.yaml, e.g. "thruput-latency-1": how results are matched to their test.
func TigerBenchGroup(i int, kind string) string { return fmt.Sprintf("%s-%d", kind, i+1) }

// posFold finds the position of base.field whatever the case of the key in the file.
func (d *decoder) posFold(base, field string) (Pos, bool) {
	want := strings.ToLower(join(base, field))
	for k, pos := range d.lines {
		if strings.ToLower(k) == want {
			return pos, true
		}
	}
	return Pos{}, false
}
