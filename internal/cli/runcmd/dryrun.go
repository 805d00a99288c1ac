package runcmd

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/config"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/text"
)

// DryRunCase is one case as `cnperf run --dry-run -o json` prints it.
type DryRunCase struct {
	Index    int               `json:"index"`
	Name     string            `json:"name"`
	Group    string            `json:"group,omitempty"`
	Profile  api.Profile       `json:"profile"`
	Path     api.Path          `json:"path"`
	Driver   string            `json:"driver"`
	Platform string            `json:"platform"`
	Params   api.Params        `json:"params"`
	Topology *api.Topology     `json:"topology,omitempty"`
	Test     *DryRunTigerBench `json:"tigerBench,omitempty"`
}

// DryRunTigerBench is a tiger-bench test without cnperf cases (ttfr, dnsperf, standing config
// only): what internal/tigerbench would run, with the file's settings.
type DryRunTigerBench struct {
	Index  int                         `json:"index"` // the test's position in the file, from 0
	Line   int                         `json:"line"`
	Kind   string                      `json:"testKind"`
	Config config.TigerBenchTestConfig `json:"config"`
}

// dryRunFormats are the -o values --dry-run prints (wide prints the table: it has no
// narrower view).
var dryRunFormats = []string{"table", "wide", "json", "yaml"}

// printDryRun writes the cases that would run: a table, or a JSON array with -o json (YAML with -o yaml). It runs
// nothing and creates nothing.
//
// The table (-o table) fits columns (iostreams.Columns, text.FitWidth): GROUP and BURST show
// only when a case has one; when the rows are still too wide each case's OTHER settings move
// under the table by case number, then WARMUP, DURATION, PAR and SIZE are left out (a line
// says which). -o wide prints every column in the rows.
//
// notes are the table's lines under the platform (what every pod gets from --pod-labels and
// --pod-annotations, which endpoints are VMs), each wrapped to fit.
func printDryRun(w io.Writer, format, platformName string, notes []string, cases []plan.Case, tests []DryRunTigerBench, columns int) error {
	out := make([]DryRunCase, 0, len(cases)+len(tests))
	for _, c := range cases {
		out = append(out, DryRunCase{Index: c.Index, Name: c.Name, Group: c.Group, Profile: c.Profile, Path: c.Path,
			Driver: c.Driver, Platform: platformName, Params: c.Params, Topology: c.Topology})
	}
	if format == "json" || format == "yaml" {
		for i := range tests {
			t := tests[i]
			out = append(out, DryRunCase{Index: len(out), Name: config.TigerBenchGroup(t.Index, t.Kind), Group: config.TigerBenchGroup(t.Index, t.Kind),
				Platform: platformName, Test: &t})
		}
		if format == "yaml" { // the JSON fields, as kubectl -o yaml
			b, err := yaml.Marshal(out)
			if err != nil {
				return err
			}
			_, err = w.Write(b)
			return err
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	fmt.Fprintf(w, "platform: %s\n", platformName)
	width := text.FitWidth(columns)
	for _, n := range notes {
		for _, l := range text.Wrap(n, width, "", "    ") {
			fmt.Fprintln(w, l)
		}
	}
	const colGroup, colSize, colPar, colBurst, colDuration, colWarmup, colOther = 1, 5, 6, 7, 8, 9, 11
	t := &text.Table{Header: []string{"#", "GROUP", "PROFILE", "DRIVER", "PATH", "SIZE", "PAR", "BURST", "DURATION", "WARMUP", "SAMPLES", "OTHER"},
		Hide: map[int]bool{}}
	wide := format == "wide"
	t.Hide[colGroup], t.Hide[colBurst] = !wide, !wide
	var totalSeconds float64 // in seconds: a sum of many long cases can exceed a time.Duration
	for _, c := range out {
		p := c.Params
		totalSeconds += float64(p.Samples)*p.DurationSeconds + p.WarmupSeconds
		path := string(c.Path)
		if path == "" {
			path = "(platform's choice)"
		}
		samples := strconv.Itoa(p.Samples)
		if t := p.Confidence; t != nil {
			// a confidence target: the least and the most samples, and the target
			samples = fmt.Sprintf("%d-%d until ±%g%% at %g%%", p.Samples, p.MaxSamples, t.HalfWidthPercent, t.Level)
		}
		t.Rows = append(t.Rows, []string{strconv.Itoa(c.Index + 1), c.Group, string(c.Profile), c.Driver, path,
			size(p), strconv.Itoa(p.Parallel), strconv.Itoa(p.Burst), secs(p.DurationSeconds), secs(p.WarmupSeconds), samples, other(c)})
		if c.Group != "" {
			t.Hide[colGroup] = false
		}
		if p.Burst != 0 {
			t.Hide[colBurst] = false
		}
	}
	var below []string
	if !wide && t.LineWidth("") > width {
		t.Hide[colOther] = true
		for _, r := range t.Rows {
			if r[colOther] != "-" && r[colOther] != "" {
				below = append(below, text.Wrap("#"+r[0]+" "+r[colOther], width, "", "    ")...)
			}
		}
	}
	if !wide {
		if hid := t.Fit(width, "", []int{colWarmup, colDuration, colPar, colSize}); len(hid) > 0 {
			below = append(below, text.Wrap(fmt.Sprintf("not shown to fit %d columns: %s (-o wide shows every column)", width,
				strings.Join(hid, ", ")), width, "", "    ")...)
		}
	}
	if err := t.Write(w, ""); err != nil {
		return err
	}
	for _, l := range below {
		fmt.Fprintln(w, l)
	}
	for _, t := range tests {
		fmt.Fprintf(w, "tiger-bench test %d (line %d): %s%s\n", t.Index+1, t.Line, t.Kind, tigerBenchSettings(t.Config))
	}
	fmt.Fprintf(w, "%d cases, at least %s of measurement\n", len(out), longSecs(totalSeconds))
	return nil
}

func size(p api.Params) string {
	s := strconv.Itoa(p.MessageSizeBytes)
	if p.ResponseSizeBytes > 0 && p.ResponseSizeBytes != p.MessageSizeBytes {
		s += "/" + strconv.Itoa(p.ResponseSizeBytes)
	}
	return s
}

// longSecs is secs for sums that may not fit a time.Duration (about 292 years): those in hours.
func longSecs(s float64) string {
	if s >= float64(math.MaxInt64/int64(time.Second)) {
		return fmt.Sprintf("%.0fh", s/3600)
	}
	// a float sum of many cases: rounded to the millisecond (no 7m32.999999999s)
	return time.Duration(s * float64(time.Second)).Round(time.Millisecond).String()
}

func secs(s float64) string { return time.Duration(s * float64(time.Second)).String() }

// other lists the parameters a case sets beyond the table's columns.
func other(c DryRunCase) string {
	p := c.Params
	var s []string
	if p.RateBitsPerSecond > 0 {
		s = append(s, "rate="+strconv.FormatFloat(p.RateBitsPerSecond, 'g', -1, 64))
	}
	if p.HostNetwork {
		s = append(s, "hostNetwork")
	}
	if p.Service {
		s = append(s, "service")
	}
	if p.IPFamily != "" {
		s = append(s, p.IPFamily)
	}
	if p.Network != "" {
		s = append(s, "network="+p.Network)
	}
	if p.TimeoutSeconds > 0 {
		s = append(s, "timeout="+secs(p.TimeoutSeconds))
	}
	for _, k := range slices.Sorted(maps.Keys(p.Options)) {
		s = append(s, k+"="+p.Options[k])
	}
	if t := c.Topology; t != nil {
		top := t.Flavour
		if t.PolicyRules > 0 {
			top += fmt.Sprintf(" %d rules %s", t.PolicyRules, t.PolicyStyle)
		}
		s = append(s, "["+top+"]")
	}
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, " ")
}

// tigerBenchSettings is the settings of a test without cases, for one line of the table.
func tigerBenchSettings(t config.TigerBenchTestConfig) string {
	var s []string
	switch {
	case t.TTFRConfig != nil:
		s = append(s, fmt.Sprintf("TestPodsPerNode=%d Rate=%g TestDuration=%d", t.TTFRConfig.TestPodsPerNode, t.TTFRConfig.Rate, t.TTFRConfig.TestDuration))
	case t.DNSPerf != nil:
		s = append(s, fmt.Sprintf("Mode=%s NumDomains=%d RunStress=%t TestDNSPolicy=%t", t.DNSPerf.Mode, t.DNSPerf.NumDomains, t.DNSPerf.RunStress, t.DNSPerf.TestDNSPolicy))
	}
	if t.NumPods+t.NumServices+t.NumPolicies+t.NumIdlePolicies > 0 {
		s = append(s, fmt.Sprintf("standing config: %d pods, %d services, %d policies, %d idle policies", t.NumPods, t.NumServices, t.NumPolicies, t.NumIdlePolicies))
	}
	if t.Encap != "" || t.Dataplane != "" || t.CalicoNodeCPULimit != "" {
		s = append(s, fmt.Sprintf("calico: encap=%s dataplane=%s calicoNodeCPULimit=%s", t.Encap, t.Dataplane, t.CalicoNodeCPULimit))
	}
	if len(s) == 0 {
		return ""
	}
	return ": " + strings.Join(s, "; ")
}

// tigerBenchTestsWithoutCases lists the tests of a testconfig that give no cnperf case.
func tigerBenchTestsWithoutCases(loaded *config.Loaded, cases []plan.Case) []DryRunTigerBench {
	groups := map[string]bool{}
	for _, c := range cases {
		groups[c.Group] = true
	}
	var out []DryRunTigerBench
	for i, t := range loaded.TigerBench {
		if !groups[config.TigerBenchGroup(i, t.TestKind)] {
			out = append(out, DryRunTigerBench{Index: i, Line: t.Line, Kind: t.TestKind, Config: t})
		}
	}
	return out
}

// dryRunNotes are the dry run's lines about the platform: what every pod gets (podMeta, from
// --pod-labels and --pod-annotations) and which endpoints are VMs (the kube platform's --vm).
func dryRunNotes(plat any, podMeta string) []string {
	var notes []string
	if podMeta != "" {
		notes = append(notes, "every pod gets "+podMeta)
	}
	if v, ok := plat.(interface{ DescribeVMs() string }); ok {
		if d := v.DescribeVMs(); d != "" {
			notes = append(notes, d)
		}
	}
	return notes
}
