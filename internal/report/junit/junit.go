// Package junit writes runs as JUnit XML for CI systems (Jenkins, GitLab, GitHub test
// reporters): one <testsuite> per run, one <testcase> per case, plus one per tiger-bench test
// part that is not a case (standing config, TTFR, DNS, Calico reconfiguration). A failed case
// carries a <failure> with its cause; a case with some failed samples fails too (its figures
// are then over fewer samples than asked), and an interrupted run marks the cases it never
// reached as nothing: JUnit lists only what ran.
//
// The layout follows the de-facto schema JUnit consumers read (the Ant/Maven surefire one):
// testsuites > testsuite(name, tests, failures, errors, skipped, time, timestamp, hostname) >
// properties + testcase(name, classname, time) > failure(message, type) / system-out.
package junit

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/figure"
	"github.com/cnperf/cnperf/internal/safetext"
)

// Format is the output format's name.
const Format = "junit"

// TestSuites is the document root.
type TestSuites struct {
	XMLName  xml.Name    `xml:"testsuites"`
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Time     string      `xml:"time,attr"`
	Suites   []TestSuite `xml:"testsuite"`
}

// TestSuite is one run.
type TestSuite struct {
	Name       string     `xml:"name,attr"`
	Tests      int        `xml:"tests,attr"`
	Failures   int        `xml:"failures,attr"`
	Errors     int        `xml:"errors,attr"`
	Skipped    int        `xml:"skipped,attr"`
	Time       string     `xml:"time,attr"`
	Timestamp  string     `xml:"timestamp,attr,omitempty"`
	Hostname   string     `xml:"hostname,attr,omitempty"`
	Properties []Property `xml:"properties>property,omitempty"`
	Cases      []TestCase `xml:"testcase"`
	SystemErr  *CDATA     `xml:"system-err,omitempty"`
}

// Property is a name/value pair of a suite.
type Property struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

// TestCase is one case (or one tiger-bench test part).
type TestCase struct {
	Name      string   `xml:"name,attr"`
	Classname string   `xml:"classname,attr"`
	Time      string   `xml:"time,attr"`
	Failure   *Failure `xml:"failure,omitempty"`
	SystemOut *CDATA   `xml:"system-out,omitempty"`
}

// CDATA is element text written as CDATA, so multi-line output stays readable.
type CDATA struct {
	Text string `xml:",cdata"`
}

// text returns s as CDATA, or nil when s is empty (no element).
func text(s string) *CDATA {
	if s == "" {
		return nil
	}
	return &CDATA{Text: s}
}

// Failure says why a case failed: message is the cause, the body adds every failed sample.
type Failure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Body    string `xml:",cdata"`
}

// Failure types.
const (
	FailureCase    = "CaseFailed"     // the case failed as a whole (setup, placement, all samples)
	FailureSamples = "SamplesFailed"  // some samples failed; the figures are over the others
	FailurePart    = "TigerBenchTest" // a standing config / TTFR / DNS / Calico part failed
)

// Encode writes runs as one JUnit XML document.
// Characters XML forbids (a control character in a tool's message) are replaced by U+FFFD, so
// the document is always well-formed.
func Encode(w io.Writer, runs []*api.Run) error {
	doc := Build(runs)
	var b bytes.Buffer
	b.WriteString(xml.Header)
	enc := xml.NewEncoder(&b)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("encode junit: %w", err)
	}
	b.WriteString("\n")
	if _, err := w.Write(safetext.XML(b.Bytes())); err != nil {
		return fmt.Errorf("write junit: %w", err)
	}
	return nil
}

// Build converts runs to the JUnit document.
func Build(runs []*api.Run) TestSuites {
	doc := TestSuites{Name: "cnperf"}
	var total float64
	for _, run := range runs {
		s := suite(run)
		doc.Suites = append(doc.Suites, s)
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Errors += s.Errors
		total += runSeconds(run)
	}
	doc.Time = seconds(total)
	return doc
}

func runSeconds(run *api.Run) float64 {
	if run.EndTime.IsZero() || run.StartTime.IsZero() {
		return 0
	}
	return run.EndTime.Sub(run.StartTime).Seconds()
}

func suite(run *api.Run) TestSuite {
	s := TestSuite{Name: "cnperf run " + run.UUID, Time: seconds(runSeconds(run))}
	if !run.StartTime.IsZero() {
		s.Timestamp = run.StartTime.UTC().Format(time.RFC3339)
	}
	if run.Host != nil {
		s.Hostname = run.Host.Hostname
	}
	s.Properties = properties(run)
	// Tiger-bench tests in file order, each followed by its cases; then cases of no test.
	used := make([]bool, len(run.Results))
	for i := range run.TigerBench {
		t := &run.TigerBench[i]
		s.Cases = append(s.Cases, tigerBenchCases(t)...)
		for j := range run.Results {
			if !used[j] && t.Group != "" && run.Results[j].Group == t.Group {
				used[j] = true
				s.Cases = append(s.Cases, resultCase(&run.Results[j]))
			}
		}
	}
	for j := range run.Results {
		if !used[j] {
			s.Cases = append(s.Cases, resultCase(&run.Results[j]))
		}
	}
	for _, c := range s.Cases {
		s.Tests++
		if c.Failure != nil {
			s.Failures++
		}
	}
	var errs []string
	if run.Interrupted {
		errs = append(errs, "the run was interrupted: cases that did not run are not listed")
	}
	errs = append(errs, run.Notes...)
	s.SystemErr = text(strings.Join(errs, "\n"))
	return s
}

func properties(run *api.Run) []Property {
	var ps []Property
	add := func(name, value string) {
		if value != "" {
			ps = append(ps, Property{name, value})
		}
	}
	add("uuid", run.UUID)
	add("cnperfVersion", run.CnperfVersion)
	add("platform", run.Platform)
	if run.Interrupted {
		add("interrupted", "true")
	}
	if c := run.Cluster; c != nil {
		add("kubernetesVersion", c.KubernetesVersion)
		add("cni", c.CNI)
		add("cniVersion", c.CNIVersion)
		add("cniMode", c.CNIMode)
		add("encryption", c.Encryption)
		if c.NodeEncryption {
			add("nodeEncryption", "true")
		}
		add("kubeProxyMode", c.KubeProxyMode)
		if c.NodeCount > 0 {
			add("nodeCount", strconv.Itoa(c.NodeCount))
		}
		if c.Calico != nil {
			add("calicoVersion", c.Calico.Version)
			add("calicoEncapsulation", c.Calico.Encapsulation)
			add("calicoDataplane", c.Calico.Dataplane)
		}
	}
	// Labels in key order: nothing visible may depend on map order.
	keys := make([]string, 0, len(run.Labels))
	for k := range run.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		add("label."+k, run.Labels[k])
	}
	return ps
}

// classname groups cases the way CI tools show packages: cnperf.<group or driver>.
func classname(r *api.Result) string {
	g := r.Group
	if g == "" {
		g = r.Driver
	}
	return "cnperf." + sanitize(g)
}

// sanitize keeps a classname readable as a dotted package path.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '.' || r == ' ' || r == '/' {
			return '_'
		}
		return r
	}, s)
}

func resultCase(r *api.Result) TestCase {
	tc := TestCase{Name: figure.CaseLabel(r), Classname: classname(r)}
	if r.Name != "" && r.Name != r.Group {
		tc.Name = r.Name + ": " + tc.Name
	}
	if !r.StartTime.IsZero() && !r.EndTime.IsZero() {
		tc.Time = seconds(r.EndTime.Sub(r.StartTime).Seconds())
	} else {
		tc.Time = seconds(0)
	}
	tc.SystemOut = text(summaryText(r))
	if !r.Failed() {
		return tc
	}
	cause := figure.FailureCause(r)
	f := &Failure{Type: FailureCase, Message: cause}
	if r.Error == "" {
		f.Type = FailureSamples
		f.Message = figure.FailureSummary(r) + ": " + cause
	}
	var body []string
	for _, s := range r.Samples {
		if s.Error != "" && !s.Warmup {
			body = append(body, fmt.Sprintf("sample %d: %s", s.Index, s.Error))
		}
	}
	f.Body = strings.Join(body, "\n")
	tc.Failure = f
	return tc
}

// summaryText lists the case's figures for people reading the CI log.
func summaryText(r *api.Result) string {
	var lines []string
	for _, f := range figure.Present(&r.Summary) {
		v, _ := f.Value(&r.Summary)
		line := fmt.Sprintf("%s: %s", f.Label, f.Unit.Format(v))
		if st := f.Stat; st != nil {
			if x := st(&r.Summary); x != nil && x.N > 1 {
				line += fmt.Sprintf(" (n=%d, cov %.1f%%)", x.N, x.CoV*100)
			}
		}
		lines = append(lines, line)
	}
	if r.Placement != nil && r.Placement.Target != "" {
		lines = append(lines, "target: "+r.Placement.Target)
	}
	lines = append(lines, r.Notes...)
	return strings.Join(lines, "\n")
}

// tigerBenchCases are the parts of a tiger-bench test that are not cases.
func tigerBenchCases(t *api.TigerBenchTest) []TestCase {
	class := "tiger-bench." + sanitize(t.Kind)
	prefix := t.Group
	if prefix == "" {
		prefix = fmt.Sprintf("%s-%d", t.Kind, t.Index+1)
	}
	var out []TestCase
	if c := t.Calico; c != nil {
		var asked []string
		for _, kv := range [][2]string{{"encap", c.Encap}, {"dataplane", c.Dataplane}, {"calicoNodeCPULimit", c.CalicoNodeCPULimit}} {
			if kv[1] != "" {
				asked = append(asked, kv[0]+" "+kv[1])
			}
		}
		tc := TestCase{Name: fmt.Sprintf("%s: Calico reconfiguration (%s)", prefix, strings.Join(asked, ", ")), Classname: class, Time: seconds(0)}
		tc.SystemOut = text(strings.Join(c.Changes, "\n"))
		if c.Error != "" {
			tc.Failure = &Failure{Type: FailurePart, Message: c.Error}
		}
		out = append(out, tc)
	}
	if sc := t.Standing; sc != nil {
		tc := TestCase{Name: fmt.Sprintf("%s: standing config (%d pods, %d services, %d policies, %d idle policies)",
			prefix, sc.Pods, sc.Services, sc.Policies, sc.IdlePolicies), Classname: class, Time: seconds(sc.ReadySeconds)}
		tc.SystemOut = text(fmt.Sprintf("namespace %s: %d objects applied in %.2fs (%.1f objects/s), all pods ready after %.2fs; %d deleted",
			sc.Namespace, sc.ObjectsApplied, sc.ApplySeconds, sc.ObjectsPerSecond, sc.ReadySeconds, sc.ObjectsDeleted))
		if sc.Error != "" {
			tc.Failure = &Failure{Type: FailurePart, Message: sc.Error}
		}
		out = append(out, tc)
	}
	if r := t.TTFR; r != nil {
		tc := TestCase{Name: fmt.Sprintf("%s: time to first response (%.4g pods/s, %d pods per node)", prefix, r.RequestedPodsPerSecond, r.PodsPerNode),
			Classname: class, Time: seconds(r.DurationSeconds)}
		tc.SystemOut = probeOut(fmt.Sprintf("pods created: %d (%.3g pods/s achieved), datapoints: %d, failures: %d", r.PodsCreated, r.AchievedPodsPerSecond, r.Datapoints, r.Failures),
			r.Warnings, "ttfr", r.TTFRSeconds, "pod create to ready", r.PodCreateToReadySeconds)
		switch {
		case r.Datapoints == 0:
			tc.Failure = &Failure{Type: FailurePart, Message: "no pod got a response" + reasons(r.FailureReasons), Body: strings.Join(r.Warnings, "\n")}
		case r.Failures > 0:
			tc.Failure = &Failure{Type: FailurePart, Message: fmt.Sprintf("%d of %d pods got no response%s", r.Failures, r.Failures+r.Datapoints, reasons(r.FailureReasons))}
		}
		out = append(out, tc)
	}
	if r := t.DNS; r != nil {
		tc := TestCase{Name: fmt.Sprintf("%s: DNS lookup and connect to %s", prefix, r.Target), Classname: class, Time: seconds(0)}
		tc.SystemOut = probeOut(fmt.Sprintf("lookups: %d (%d failed), connects: %d (%d failed), pods: %d", r.Lookups, r.LookupFailures, r.Connects, r.ConnectFailures, r.Pods),
			r.Warnings, "lookup", r.LookupSeconds, "connect", r.ConnectSeconds)
		switch {
		case r.Lookups == 0:
			tc.Failure = &Failure{Type: FailurePart, Message: "no lookup was made" + reasons(r.FailureReasons)}
		case r.LookupFailures > 0 || r.ConnectFailures > 0:
			tc.Failure = &Failure{Type: FailurePart, Message: fmt.Sprintf("%d of %d lookups and %d of %d connects failed%s",
				r.LookupFailures, r.Lookups, r.ConnectFailures, r.Connects, reasons(r.FailureReasons))}
		}
		out = append(out, tc)
	}
	if t.Error != "" {
		out = append(out, TestCase{Name: prefix + ": test", Classname: class, Time: seconds(0),
			Failure: &Failure{Type: FailurePart, Message: t.Error, Body: strings.Join(t.Warnings, "\n")}})
	}
	return out
}

func reasons(cs []api.Count) string {
	if len(cs) == 0 {
		return ""
	}
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = fmt.Sprintf("%d× %s", c.Count, c.What)
	}
	return ": " + strings.Join(parts, "; ")
}

// probeOut is the system-out of a TTFR or DNS test: its summary line, each distribution it
// has (seconds), then its warnings.
func probeOut(summary string, warnings []string, name1 string, d1 *api.Distribution, name2 string, d2 *api.Distribution) *CDATA {
	lines := []string{summary}
	for _, d := range []struct {
		name string
		d    *api.Distribution
	}{{name1, d1}, {name2, d2}} {
		if d.d != nil {
			lines = append(lines, d.name+": "+distText(d.d, "s"))
		}
	}
	lines = append(lines, warnings...)
	return text(strings.Join(lines, "\n"))
}

func distText(d *api.Distribution, unit string) string {
	return fmt.Sprintf("n=%d min %.6g%s mean %.6g%s p50 %.6g%s p90 %.6g%s p99 %.6g%s max %.6g%s",
		d.N, d.Min, unit, d.Mean, unit, d.P50, unit, d.P90, unit, d.P99, unit, d.Max, unit)
}

// seconds formats a duration the way JUnit readers parse it (decimal seconds).
func seconds(s float64) string { return strconv.FormatFloat(s, 'f', 3, 64) }
