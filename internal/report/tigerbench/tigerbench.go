// Package tigerbench writes runs as tiger-bench's results.json: a JSON array with one object
// per test, each with tiger-bench's "config" and "ClusterDetails" and the test kind's summary
// ("thruput-latency", "iperf", "ttfr" or "dnsperf"), statistics min/max/avg/P50/P75/P90/P99
// over the test's iterations (nearest-rank percentiles, as tiger-bench computes them), with
// their unit and number of datapoints.
//
// Where tiger-bench loses information cnperf keeps it, in ways a results.json reader can
// ignore: every summary carries its unit (tiger-bench's iperf throughput has none), failed
// samples and failed TTFR pods are counted ("failures") instead of dropped, figures that were
// not measured are absent (an empty {} or null), never 0, and each object has a "cnperf" key
// with cnperf's own view: the cases with their full summaries, the standing config with its
// creation time and rate, TTFR and DNS details, and the Calico changes made.
//
// Latency follows tiger-bench's meaning: qperf's tcp_lat figure, which is ONE-WAY time (half
// the round trip). cnperf results carry round-trip time, so the latency here is half of
// cnperf's round-trip mean of each sample; the "cnperf" key keeps the round-trip figures.
package tigerbench

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/config"
)

// Format is the output format's name.
const Format = "tiger-bench"

// Scenario keys of tiger-bench's thruput-latency and iperf summaries.
const (
	ScenarioDirect   = "pod-pod"
	ScenarioService  = "pod-svc-pod"
	ScenarioExternal = "ext-svc-pod"
)

// Units as tiger-bench writes them.
const (
	UnitMicroseconds = "us"
	UnitMbps         = "Mb/sec"
	UnitSeconds      = "seconds"
	UnitNone         = "none"
)

// OneWayNote explains the latency figures.
const OneWayNote = "thruput-latency Latency is one-way time (half the round trip), as qperf's tcp_lat and tiger-bench report it; cnperf.cases carry round-trip latency"

// Result is one element of results.json.
type Result struct {
	Config         json.RawMessage  `json:"config"`
	ClusterDetails ClusterDetails   `json:"ClusterDetails"`
	ThruputLatency *ThruputLatency  `json:"thruput-latency,omitempty"`
	Iperf          *Iperf           `json:"iperf,omitempty"`
	TTFR           []TTFRSummary    `json:"ttfr,omitempty"`
	DNSPerf        *DNSPerf         `json:"dnsperf,omitempty"`
	Cnperf         *CnperfExtension `json:"cnperf,omitempty"`
}

// ClusterDetails is tiger-bench's cluster.Details.
type ClusterDetails struct {
	Cloud            string
	Provisioner      string
	NodeType         string
	NodeOS           string
	NodeKernel       string
	NodeArch         string
	NumNodes         int
	Dataplane        string
	IPFamily         string
	Encapsulation    string
	WireguardEnabled bool
	Product          string
	CalicoVersion    string
	K8SVersion       string
	CRIVersion       string
	CNIOption        string
}

// Summary is tiger-bench's stats.ResultSummary (plus datapoints and, for TTFR, failures). A
// summary without datapoints is written as {}.
type Summary struct {
	Min        float64 `json:"min"`
	Max        float64 `json:"max"`
	Avg        float64 `json:"avg"`
	P50        float64 `json:"P50"`
	P75        float64 `json:"P75"`
	P90        float64 `json:"P90"`
	P99        float64 `json:"P99"`
	Unit       string  `json:"unit"`
	Datapoints int     `json:"datapoints"`
	// Failures counts failed measurements (failed samples, TTFR pods without a response).
	Failures *int `json:"failures,omitempty"`
}

// MarshalJSON writes {} for a summary without datapoints (a figure that was not measured is
// absent, never 0), keeping a failure count when there is one.
func (s Summary) MarshalJSON() ([]byte, error) {
	if s.Datapoints == 0 {
		if s.Failures != nil && *s.Failures > 0 {
			return fmt.Appendf(nil, `{"datapoints":0,"failures":%d}`, *s.Failures), nil
		}
		return []byte("{}"), nil
	}
	type plain Summary
	return json.Marshal(plain(s))
}

// Scenarios holds one summary per scenario, in tiger-bench's order.
type Scenarios struct {
	Direct   Summary `json:"pod-pod"`
	Service  Summary `json:"pod-svc-pod"`
	External Summary `json:"ext-svc-pod"`
}

func (s *Scenarios) get(name string) *Summary {
	switch name {
	case ScenarioDirect:
		return &s.Direct
	case ScenarioService:
		return &s.Service
	case ScenarioExternal:
		return &s.External
	}
	return nil
}

// ThruputLatency is a thruput-latency test's summary (qperf tcp_lat and tcp_bw).
type ThruputLatency struct {
	Latency    Scenarios
	Throughput Scenarios
}

// Iperf is an iperf test's summary (iperf3 -P 8).
type Iperf struct {
	Retries    Scenarios
	Throughput Scenarios
}

// TTFRSummary is one element of a ttfr test's list.
type TTFRSummary struct {
	TTFRSummary Summary `json:"ttfrSummary"`
}

// DNSPerf is a dnsperf test's results (tiger-bench's dnsperf.Results). DuplicateSYN and
// DuplicateSYNACK are null when they were not captured.
type DNSPerf struct {
	LookupTime      Summary
	ConnectTime     Summary
	DuplicateSYN    *int
	DuplicateSYNACK *int
	FailedCurls     int
	SuccessfulCurls int
}

// CnperfExtension is cnperf's own view of the test.
type CnperfExtension struct {
	RunUUID  string              `json:"runUUID,omitempty"`
	Group    string              `json:"group,omitempty"`
	Error    string              `json:"error,omitempty"`
	Standing *api.StandingConfig `json:"standing,omitempty"`
	Calico   *api.CalicoChange   `json:"calico,omitempty"`
	TTFR     *api.TTFRResult     `json:"ttfr,omitempty"`
	DNS      *api.DNSResult      `json:"dns,omitempty"`
	Cases    []Case              `json:"cases,omitempty"`
	Warnings []string            `json:"warnings,omitempty"`
	Notes    []string            `json:"notes,omitempty"`
}

// Case is one cnperf case of the test, with cnperf's full summary.
type Case struct {
	Profile  api.Profile `json:"profile"`
	Driver   string      `json:"driver"`
	Path     api.Path    `json:"path"`
	Scenario string      `json:"scenario,omitempty"`
	Target   string      `json:"target,omitempty"`
	Error    string      `json:"error,omitempty"`
	Summary  api.Summary `json:"summary"`
}

// Encode writes the runs' tests as one results.json array.
func Encode(w io.Writer, runs []*api.Run) error {
	out, err := Build(runs)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("encode tiger-bench results: %w", err)
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("write tiger-bench results: %w", err)
	}
	return nil
}

// Build converts runs to results.json's elements: a run of a tiger-bench testconfig.yaml gives
// one element per test, in file order; another run gives one element per group of cases
// (thruput-latency, or iperf for iperf3 cases), with a config made from the cases.
func Build(runs []*api.Run) ([]Result, error) {
	out := []Result{}
	for _, run := range runs {
		cd := Details(run.Cluster)
		if len(run.TigerBench) > 0 {
			for i := range run.TigerBench {
				t := &run.TigerBench[i]
				r, err := fromTest(run, t, cd)
				if err != nil {
					return nil, err
				}
				out = append(out, r)
			}
			continue
		}
		for _, g := range groups(run.Results) {
			r, err := fromGroup(run, g, cd)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
	}
	return out, nil
}

func fromTest(run *api.Run, t *api.TigerBenchTest, cd ClusterDetails) (Result, error) {
	r := Result{Config: t.Config, ClusterDetails: withChange(cd, t.Calico)}
	if len(r.Config) == 0 {
		r.Config = json.RawMessage("null")
	}
	ext := &CnperfExtension{RunUUID: run.UUID, Group: t.Group, Error: t.Error, Standing: t.Standing, Calico: t.Calico,
		TTFR: t.TTFR, DNS: t.DNS, Warnings: t.Warnings}
	var results []*api.Result
	for i := range run.Results {
		if t.Group != "" && run.Results[i].Group == t.Group {
			results = append(results, &run.Results[i])
		}
	}
	switch t.Kind {
	case config.TigerBenchThruputLatency:
		r.ThruputLatency = thruputLatency(results)
		ext.Notes = append(ext.Notes, OneWayNote)
	case config.TigerBenchIperf:
		r.Iperf = iperf(results)
	case config.TigerBenchTTFR:
		r.TTFR = ttfr(t.TTFR)
	case config.TigerBenchDNSPerf:
		r.DNSPerf = dnsPerf(t.DNS)
	}
	ext.Cases = cases(results)
	r.Cnperf = ext
	return r, nil
}

// group is the results of one plan group, in order.
type group struct {
	name    string
	results []*api.Result
}

func groups(rs []api.Result) []group {
	var out []group
	index := map[string]int{}
	for i := range rs {
		name := rs[i].Group
		if name == "" {
			name = rs[i].Name
		}
		j, ok := index[name]
		if !ok {
			j = len(out)
			index[name] = j
			out = append(out, group{name: name})
		}
		out[j].results = append(out[j].results, &rs[i])
	}
	return out
}

// fromGroup makes an element from the cases of a run that did not come from testconfig.yaml.
func fromGroup(run *api.Run, g group, cd ClusterDetails) (Result, error) {
	kind := config.TigerBenchThruputLatency
	iperf3 := true
	for _, r := range g.results {
		iperf3 = iperf3 && r.Driver == config.TigerBenchIperfDriver
	}
	if iperf3 {
		kind = config.TigerBenchIperf
	}
	first := g.results[0]
	t := config.TigerBenchTestConfig{TestKind: kind, HostNetwork: first.Params.HostNetwork, TestNamespace: "",
		Iterations: first.Params.Samples, Duration: int(math.Round(first.Params.DurationSeconds)),
		Perf: &config.TigerBenchPerfConfig{}}
	for _, r := range g.results {
		if r.Placement != nil && r.Placement.Client.Namespace != "" && t.TestNamespace == "" {
			t.TestNamespace = r.Placement.Client.Namespace
		}
		switch scenario(r.Path) {
		case ScenarioDirect:
			t.Perf.Direct = true
		case ScenarioService:
			t.Perf.Service = true
		case ScenarioExternal:
			t.Perf.External = true
			if r.Placement != nil {
				t.Perf.ExternalIPOrFQDN = r.Placement.Target
			}
		}
	}
	cfg, err := json.Marshal(t)
	if err != nil {
		return Result{}, fmt.Errorf("encode tiger-bench config of group %q: %w", g.name, err)
	}
	res := Result{Config: cfg, ClusterDetails: cd}
	ext := &CnperfExtension{RunUUID: run.UUID, Group: g.name, Cases: cases(g.results),
		Notes: []string{"this run did not come from a tiger-bench testconfig.yaml: config is made from its cases"}}
	if kind == config.TigerBenchIperf {
		res.Iperf = iperf(g.results)
	} else {
		res.ThruputLatency = thruputLatency(g.results)
		ext.Notes = append(ext.Notes, OneWayNote)
	}
	res.Cnperf = ext
	return res, nil
}

// scenario maps a cnperf path to tiger-bench's scenario by how the client reaches the server
// ("" for paths it has no name for).
func scenario(p api.Path) string {
	row, ok := p.Row()
	switch {
	case !ok:
		return ""
	case row.Service():
		return ScenarioService
	case row.Access == api.AccessExternal:
		return ScenarioExternal
	}
	return ScenarioDirect
}

// collector gathers per-sample values per scenario.
type collector struct {
	values   map[string][]float64
	failures map[string]int
}

func newCollector() *collector {
	return &collector{values: map[string][]float64{}, failures: map[string]int{}}
}

func (c *collector) scenarios(unit string) Scenarios {
	var s Scenarios
	for _, name := range []string{ScenarioDirect, ScenarioService, ScenarioExternal} {
		sum := SummaryOf(c.values[name], unit)
		if f := c.failures[name]; f > 0 {
			sum.Failures = &f
		}
		*s.get(name) = sum
	}
	return s
}

// thruputLatency summarises stream throughput (Mb/sec) and RR one-way latency (us) per scenario.
func thruputLatency(results []*api.Result) *ThruputLatency {
	lat, bw := newCollector(), newCollector()
	for _, r := range results {
		sc := scenario(r.Path)
		if sc == "" {
			continue
		}
		switch {
		case r.Profile.IsStream():
			collect(bw, sc, r, func(s *api.Sample) (float64, bool) {
				if s.ThroughputBitsPerSecond == nil {
					return 0, false
				}
				return *s.ThroughputBitsPerSecond / 1e6, true
			})
		case r.Profile.IsRR():
			collect(lat, sc, r, func(s *api.Sample) (float64, bool) {
				if s.Latency == nil || s.Latency.Mean == nil {
					return 0, false
				}
				return *s.Latency.Mean / 2, true
			})
		}
	}
	return &ThruputLatency{Latency: lat.scenarios(UnitMicroseconds), Throughput: bw.scenarios(UnitMbps)}
}

// iperf summarises stream throughput (Mb/sec) and retransmits per scenario.
func iperf(results []*api.Result) *Iperf {
	retr, bw := newCollector(), newCollector()
	for _, r := range results {
		sc := scenario(r.Path)
		if sc == "" || !r.Profile.IsStream() {
			continue
		}
		collect(bw, sc, r, func(s *api.Sample) (float64, bool) {
			if s.ThroughputBitsPerSecond == nil {
				return 0, false
			}
			return *s.ThroughputBitsPerSecond / 1e6, true
		})
		collect(retr, sc, r, func(s *api.Sample) (float64, bool) {
			if s.Retransmits == nil {
				return 0, false
			}
			return *s.Retransmits, true
		})
	}
	return &Iperf{Retries: retr.scenarios(UnitNone), Throughput: bw.scenarios(UnitMbps)}
}

// collect adds the successful samples' values of one result; failed samples (and a case that
// failed without samples) are counted as failures.
func collect(c *collector, sc string, r *api.Result, get func(*api.Sample) (float64, bool)) {
	measured := 0
	for i := range r.Samples {
		s := &r.Samples[i]
		if s.Warmup {
			continue
		}
		if s.Error != "" {
			c.failures[sc]++
			continue
		}
		if v, ok := get(s); ok {
			c.values[sc] = append(c.values[sc], v)
			measured++
		}
	}
	if measured == 0 && r.Error != "" && len(r.Samples) == 0 {
		c.failures[sc]++
	}
}

func ttfr(t *api.TTFRResult) []TTFRSummary {
	if t == nil {
		return []TTFRSummary{{}}
	}
	s := SummaryOf(t.Values, UnitSeconds)
	if s.Datapoints == 0 && t.TTFRSeconds != nil {
		// Values were not kept: use the stored distribution.
		s = fromDistribution(t.TTFRSeconds, UnitSeconds)
	}
	f := t.Failures
	s.Failures = &f
	return []TTFRSummary{{TTFRSummary: s}}
}

func dnsPerf(d *api.DNSResult) *DNSPerf {
	if d == nil {
		return &DNSPerf{}
	}
	out := &DNSPerf{
		FailedCurls:     d.LookupFailures + d.ConnectFailures,
		SuccessfulCurls: d.Connects - d.ConnectFailures,
		DuplicateSYN:    d.DuplicateSYN,
	}
	if d.LookupSeconds != nil {
		out.LookupTime = fromDistribution(d.LookupSeconds, UnitSeconds)
	}
	if d.ConnectSeconds != nil {
		out.ConnectTime = fromDistribution(d.ConnectSeconds, UnitSeconds)
	}
	return out
}

func fromDistribution(d *api.Distribution, unit string) Summary {
	if d == nil || d.N == 0 {
		return Summary{}
	}
	return Summary{Min: d.Min, Max: d.Max, Avg: d.Mean, P50: d.P50, P75: d.P75, P90: d.P90, P99: d.P99, Unit: unit, Datapoints: d.N}
}

func cases(results []*api.Result) []Case {
	var out []Case
	for _, r := range results {
		c := Case{Profile: r.Profile, Driver: r.Driver, Path: r.Path, Scenario: scenario(r.Path), Error: r.Error, Summary: r.Summary}
		if r.Placement != nil {
			c.Target = r.Placement.Target
		}
		out = append(out, c)
	}
	return out
}

// SummaryOf summarises values as tiger-bench does: min, max, mean and nearest-rank percentiles.
func SummaryOf(values []float64, unit string) Summary {
	d := Distribute(values)
	if d == nil {
		return Summary{}
	}
	return fromDistribution(d, unit)
}

// Distribute computes a distribution: min, max, mean and nearest-rank percentiles (the value
// at rank ceil(n·p/100)); nil for no values. The input is not modified.
func Distribute(values []float64) *api.Distribution {
	if len(values) == 0 {
		return nil
	}
	s := slices.Clone(values)
	slices.Sort(s)
	sum := 0.0
	for _, v := range s {
		sum += v
	}
	rank := func(p float64) float64 {
		pos := int(math.Ceil(float64(len(s)) * p / 100))
		if pos < 1 {
			pos = 1
		}
		return s[pos-1]
	}
	return &api.Distribution{N: len(s), Min: s[0], Max: s[len(s)-1], Mean: sum / float64(len(s)),
		P50: rank(50), P75: rank(75), P90: rank(90), P99: rank(99)}
}

// withChange describes the cluster as a test ran on it: tiger-bench reads ClusterDetails after
// it reconfigured Calico for the test, cnperf describes the cluster once (as the run found it)
// and records each test's changes.
func withChange(cd ClusterDetails, ch *api.CalicoChange) ClusterDetails {
	if ch == nil || ch.Error != "" {
		return cd
	}
	if e := map[string]string{"none": "None", "vxlan": "VXLAN", "ipip": "IPIP"}[ch.Encap]; e != "" {
		cd.Encapsulation = e
	}
	if ch.Dataplane != "" {
		cd.Dataplane = ch.Dataplane
	}
	return cd
}

// Details maps cnperf's cluster details to tiger-bench's. Fields cnperf does not know are
// "unknown" where tiger-bench writes "unknown", else empty.
func Details(c *api.ClusterDetails) ClusterDetails {
	d := ClusterDetails{Cloud: "unknown", Provisioner: "unknown"}
	if c == nil {
		return d
	}
	if c.Cloud != "" && c.Cloud != "none" {
		d.Cloud = c.Cloud
	}
	d.NumNodes = c.NodeCount
	d.IPFamily = c.IPFamily
	d.K8SVersion = c.KubernetesVersion
	d.CNIOption = c.CNI
	if len(c.Nodes) > 0 {
		n := c.Nodes[0]
		d.NodeType = cmp.Or(n.Labels["kubernetes.io/os"], "linux")
		d.NodeOS = n.OSImage
		d.NodeKernel = n.Kernel
		d.NodeArch = n.Arch
		d.CRIVersion = n.ContainerRuntime
		d.K8SVersion = cmp.Or(n.KubeletVersion, d.K8SVersion)
	}
	if cal := c.Calico; cal != nil {
		d.Product = cal.Product
		d.CalicoVersion = cal.Version
		d.Dataplane = cal.Dataplane
		d.Encapsulation = cal.Encapsulation
		d.WireguardEnabled = cal.WireguardEnabled
		d.IPFamily = cmp.Or(cal.IPFamily, d.IPFamily)
		d.CNIOption = cmp.Or(cal.CNIType, d.CNIOption)
		if strings.Contains(cal.ClusterType, "kubeadm") {
			d.Provisioner = "kubeadm"
		}
	}
	if d.IPFamily == "dual-stack" {
		d.IPFamily = "dual"
	}
	return d
}
