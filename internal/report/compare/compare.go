// Package compare matches the cases of two or more runs (two CNIs, two versions, before and
// after a change) and says, per figure, how much each changed against the first (base) run,
// whether the samples support the change (Welch's t-test or Mann–Whitney U) and whether that
// is better or worse.
package compare

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/figure"
	"github.com/cnperf/cnperf/internal/stats"
)

// Input is one column of a comparison: the runs of one file (or one run).
type Input struct {
	// Label names the column; empty picks one (see Labels).
	Label string
	// Source is where the runs came from (a file name), for labels and messages.
	Source string
	Runs   []*api.Run
}

// Options tune a comparison.
type Options struct {
	// Alpha is the significance level of the tests; 0 means 0.05.
	Alpha float64
}

// Verdict is the judgement of one figure of one case against the base.
type Verdict string

// Verdicts.
const (
	Better   Verdict = "better"
	Worse    Verdict = "worse"
	NoChange Verdict = "no significant change"
	// Untested: a side has fewer than two samples carrying the figure, so no test is possible;
	// the change is shown but not judged.
	Untested Verdict = "untested"
	// Failed: the case has no figure in this column though the base has one.
	Failed Verdict = "failed"
	// Missing: the case was not run in this column (or not in the base).
	Missing Verdict = "missing"
	// Invalid: the figure is not a finite number (NaN or infinite) on this side or the base's:
	// nothing can be said, and a gate fails on it.
	Invalid Verdict = "invalid"
)

// Column describes one compared input.
type Column struct {
	Label  string   `json:"label"`
	Source string   `json:"source,omitempty"`
	Runs   []string `json:"runs"`
	CNI    string   `json:"cni,omitempty"`
	// Results is the number of results (cases) the column's runs hold.
	Results int `json:"results"`
	// Interrupted is true when a run of the column was interrupted (an end record saying so,
	// or none: the writer was killed): its later cases are missing and its last may be partial.
	Interrupted bool `json:"interrupted,omitempty"`
}

// Cell is one figure of one case in one column.
type Cell struct {
	Present bool `json:"present"`
	// Value is the summary value (a Stat's mean, or the merged latency figure).
	Value float64 `json:"value,omitempty"`
	// HalfCI is the 95% confidence half-width of a Stat figure (0 for latency figures).
	HalfCI float64 `json:"halfCI,omitempty"`
	// N is the number of successful samples carrying the figure.
	N int `json:"n,omitempty"`
	// Against the base column (not set on the base itself):
	ChangePercent *float64          `json:"changePercent,omitempty"`
	Test          *stats.TestResult `json:"test,omitempty"`
	Verdict       Verdict           `json:"verdict,omitempty"`
	// Note explains an untested, missing, failed or invalid verdict.
	Note string `json:"note,omitempty"`
}

// Metric is one figure of one case across the columns.
type Metric struct {
	Figure figure.Figure `json:"-"`
	Key    string        `json:"key"`
	Label  string        `json:"label"`
	Unit   string        `json:"unit"`
	// HigherIsBetter gives the direction of "better".
	HigherIsBetter bool   `json:"higherIsBetter"`
	Cells          []Cell `json:"cells"`
}

// Case is one matched case.
type Case struct {
	Key   string `json:"key"`
	Label string `json:"label"`
	// Results holds the case's result in each column (nil where it was not run).
	Results []*api.Result `json:"-"`
	// Status per column: "ok", "failed" (no figure), "invalid" (the headline figure is not a
	// finite number) or "missing".
	Status []string `json:"status"`
	// Checks per column: how far its result can be trusted (figure.Checks: confidence target,
	// outliers, trend, ramp-up), "" when there is nothing to say; nil when no column has any.
	Checks  []string `json:"checks,omitempty"`
	Metrics []Metric `json:"metrics"`
}

// Comparison is the outcome of Compare.
type Comparison struct {
	Alpha    float64  `json:"alpha"`
	Columns  []Column `json:"columns"`
	Cases    []Case   `json:"cases"`
	Warnings []string `json:"warnings,omitempty"`
}

// Compare matches the cases of inputs[0] (the base) and every other input by figure.CaseKey
// (profile, path, driver and traffic parameters; not duration or sample count), in the base's
// case order followed by cases only later inputs have. Within one input the first result of a
// key is used and duplicates are reported in Warnings.
func Compare(inputs []Input, opt Options) (*Comparison, error) {
	if len(inputs) < 2 {
		return nil, fmt.Errorf("compare needs a base and at least one other run, got %d", len(inputs))
	}
	alpha := opt.Alpha
	if alpha == 0 {
		alpha = 0.05
	}
	if !(alpha > 0 && alpha < 1) {
		return nil, fmt.Errorf("significance level %v is not between 0 and 1", alpha)
	}
	cmp := &Comparison{Alpha: alpha}
	labels := Labels(inputs)
	type column map[string]*api.Result
	cols := make([]column, len(inputs))
	var order []string
	seen := map[string]bool{}
	for i, in := range inputs {
		c := Column{Label: labels[i], Source: in.Source}
		cols[i] = column{}
		for _, run := range in.Runs {
			c.Runs = append(c.Runs, run.UUID)
			c.Results += len(run.Results)
			if run.Interrupted {
				c.Interrupted = true
				cmp.Warnings = append(cmp.Warnings, fmt.Sprintf("%s: run %s was interrupted: %d finished case(s), later cases missing, the last may be partial",
					labels[i], run.UUID, len(run.Results)))
			}
			for j := range run.Results {
				r := &run.Results[j]
				k := figure.CaseKey(r)
				if _, dup := cols[i][k]; dup {
					cmp.Warnings = append(cmp.Warnings, fmt.Sprintf("%s: %s measured more than once; the first result is compared", labels[i], figure.CaseLabel(r)))
					continue
				}
				cols[i][k] = r
				if !seen[k] {
					seen[k] = true
					order = append(order, k)
				}
			}
		}
		c.CNI = inputCNI(in)
		cmp.Columns = append(cmp.Columns, c)
	}
	cmp.Warnings = append(cmp.Warnings, differsWarnings(inputs, labels, inputEncryption, func(l, v, bl, b string) string {
		return fmt.Sprintf("encryption differs: %s is %s, the base %s is %s; the figures include its cost", l, v, bl, b)
	})...)
	cmp.Warnings = append(cmp.Warnings, differsWarnings(inputs, labels, hardwareOf(inputs), func(l, v, bl, b string) string {
		return fmt.Sprintf("node hardware differs: %s ran on %s, the base %s on %s; the figures include the difference", l, v, bl, b)
	})...)
	for _, k := range order {
		cs := Case{Key: k}
		for i := range inputs {
			r := cols[i][k]
			cs.Results = append(cs.Results, r)
			switch {
			case r == nil:
				cs.Status = append(cs.Status, "missing")
			case !hasFigure(r):
				cs.Status = append(cs.Status, "failed")
			case !mainFinite(r):
				cs.Status = append(cs.Status, "invalid")
			default:
				cs.Status = append(cs.Status, "ok")
			}
			if cs.Label == "" && r != nil {
				cs.Label = figure.WorkloadLabel(r)
			}
		}
		if cs.Status[0] == "missing" {
			cmp.Warnings = append(cmp.Warnings, fmt.Sprintf("%s: not in the base run %s", cs.Label, labels[0]))
		}
		for i := 1; i < len(inputs); i++ {
			if cs.Status[i] == "missing" && cs.Status[0] != "missing" {
				cmp.Warnings = append(cmp.Warnings, fmt.Sprintf("%s: not in %s", cs.Label, labels[i]))
			}
		}
		cs.Checks = caseChecks(cs.Results)
		cs.Metrics = compareCase(cs.Results, alpha)
		cmp.Cases = append(cmp.Cases, cs)
	}
	return cmp, nil
}

// caseChecks is figure.Checks of each column's result, or nil when no column has any.
func caseChecks(results []*api.Result) []string {
	out := make([]string, len(results))
	found := false
	for i, r := range results {
		if r == nil {
			continue
		}
		if c := figure.Checks(r); len(c) > 0 {
			out[i] = strings.Join(c, "; ")
			found = true
		}
	}
	if !found {
		return nil
	}
	return out
}

func hasFigure(r *api.Result) bool {
	_, ok := figure.Main(r)
	return ok
}

// mainFinite reports whether a result's headline figure is a finite number.
func mainFinite(r *api.Result) bool {
	f, ok := figure.Main(r)
	if !ok {
		return false
	}
	v, _ := f.Value(&r.Summary)
	return finite(v)
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

func compareCase(results []*api.Result, alpha float64) []Metric {
	var out []Metric
	for _, f := range figure.All {
		present := false
		for _, r := range results {
			if r == nil {
				continue
			}
			if _, ok := f.Value(&r.Summary); ok {
				present = true
			}
		}
		if !present {
			continue
		}
		m := Metric{Figure: f, Key: f.Key, Label: f.Label, Unit: f.Unit.Base, HigherIsBetter: f.HigherIsBetter}
		var baseSamples []float64
		for i, r := range results {
			c := Cell{}
			var samples []float64
			if r != nil {
				if v, ok := f.Value(&r.Summary); ok {
					c.Present, c.Value = true, v
					if st := statOf(f, r); st != nil {
						c.HalfCI = (st.CI95High - st.CI95Low) / 2
						c.N = st.N
					}
					if !finite(c.Value) || !finite(c.HalfCI) {
						// JSON has no NaN or infinity, and no verdict can rest on one.
						c.Verdict, c.Note = Invalid, fmt.Sprintf("%s %v ± %v is not a finite number", f.Label, c.Value, c.HalfCI)
						c.Present, c.Value, c.HalfCI = false, 0, 0
					}
				}
				samples = sampleValues(f, r)
				if c.N == 0 {
					c.N = len(samples)
				}
			}
			if i == 0 {
				baseSamples = samples
				m.Cells = append(m.Cells, c)
				continue
			}
			judge(&c, m.Cells[0], baseSamples, samples, r, results[0], f, alpha)
			m.Cells = append(m.Cells, c)
		}
		out = append(out, m)
	}
	return out
}

func statOf(f figure.Figure, r *api.Result) *api.Stat {
	if f.Stat == nil {
		return nil
	}
	return f.Stat(&r.Summary)
}

// sampleValues reads a figure from every successful sample of a result.
func sampleValues(f figure.Figure, r *api.Result) []float64 {
	var xs []float64
	for i := range r.Samples {
		s := &r.Samples[i]
		if !stats.Successful(s) {
			continue
		}
		if v, ok := f.Sample(s); ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
			xs = append(xs, v)
		}
	}
	return xs
}

func judge(c *Cell, base Cell, baseSamples, samples []float64, r, baseResult *api.Result, f figure.Figure, alpha float64) {
	switch {
	case c.Verdict == Invalid:
		return
	case base.Verdict == Invalid:
		c.Verdict, c.Note = Invalid, "the base: "+base.Note
		return
	case baseResult == nil:
		c.Verdict, c.Note = Missing, "not in the base run"
		return
	case r == nil:
		c.Verdict, c.Note = Missing, "not run"
		return
	case !base.Present:
		c.Verdict, c.Note = Missing, "the base has no value"
		return
	case !c.Present:
		c.Verdict = Failed
		if cause := figure.FailureCause(r); cause != "" {
			c.Note = cause
		}
		return
	}
	ch := figure.ChangePercent(base.Value, c.Value)
	if !math.IsNaN(ch) {
		c.ChangePercent = &ch
	}
	t, err := stats.ChooseAndTest(samples, baseSamples)
	if err != nil {
		c.Verdict = Untested
		c.Note = fmt.Sprintf("%d and %d samples: at least 2 per side are needed for a test", len(baseSamples), len(samples))
		return
	}
	c.Test = &t
	switch {
	case t.PValue >= alpha:
		c.Verdict = NoChange
	case f.Better(base.Value, c.Value):
		c.Verdict = Better
	case f.Better(c.Value, base.Value):
		c.Verdict = Worse
	default:
		// Significant by the test but equal summary values (e.g. merged percentiles that
		// land in one bucket): no direction to report.
		c.Verdict = NoChange
	}
}

// inputCNI is the CNI all runs of an input share, or "".
func inputCNI(in Input) string {
	var cnis []string
	for _, r := range in.Runs {
		if r.Cluster == nil {
			return "" // unknown is not shared
		}
		cnis = append(cnis, r.Cluster.CNI)
	}
	return shared(cnis)
}

// inputEncryption is the encryption all runs of an input share as
// api.ClusterDetails.EncryptionText names it ("WireGuard", "unencrypted"), or "".
func inputEncryption(in Input) string {
	var encs []string
	for _, r := range in.Runs {
		encs = append(encs, r.Cluster.EncryptionText())
	}
	return shared(encs)
}

// hardwareOf returns inputHardware over the fields every node's hardware in inputs has: a
// field one reading lacks is not read there, not different (node-exporter reads no NIC driver
// or offloads, nor the CPU model without --collector.cpu.info; an agent in a pod-network pod
// reads no uplink).
func hardwareOf(inputs []Input) func(Input) string {
	all := api.NodeHardware{CPUModel: "x", Uplink: "x", Driver: "x", SpeedBitsPerSecond: 1, Offloads: map[string]bool{"x": true}}
	for _, in := range inputs {
		for _, r := range in.Runs {
			if r.Cluster == nil {
				continue
			}
			for _, n := range r.Cluster.Nodes {
				if n.Hardware.Text() != "" {
					all = readIn(all, *n.Hardware)
				}
			}
		}
	}
	return func(in Input) string { return inputHardware(in, all) }
}

// readIn is h without the fields that read lacks (CPU model, uplink, NIC driver, speed,
// offloads: what node-exporter, or an agent in a pod-network pod, does not read).
func readIn(h, read api.NodeHardware) api.NodeHardware {
	if read.CPUModel == "" {
		h.CPUModel = ""
	}
	if read.Uplink == "" {
		h.Uplink = ""
	}
	if read.Driver == "" {
		h.Driver = ""
	}
	if read.SpeedBitsPerSecond <= 0 && read.SpeedUnknown != api.SpeedNotReported {
		h.SpeedBitsPerSecond, h.SpeedUnknown = 0, ""
	}
	if len(read.Offloads) == 0 {
		h.Offloads = nil
	}
	return h
}

// inputHardware is the node hardware all runs of an input share, its nodes' distinct
// api.NodeHardware.Text joined ("" when not read, or not the same in all its runs), over the
// fields that every reading has (those of keep that are not empty: hardwareOf).
func inputHardware(in Input, keep api.NodeHardware) string {
	var hws []string
	for _, r := range in.Runs {
		if r.Cluster == nil {
			return ""
		}
		var texts []string
		for _, n := range r.Cluster.Nodes {
			if n.Hardware == nil {
				continue
			}
			h := readIn(*n.Hardware, keep)
			if t := h.Text(); t != "" && !slices.Contains(texts, t) {
				texts = append(texts, t)
			}
		}
		sort.Strings(texts)
		hws = append(hws, strings.Join(texts, "; "))
	}
	return shared(hws)
}

// differsWarnings say which inputs differ from the base in what value reads (encryption:
// their figures differ by its cost; node hardware: CPU, kernel, the uplink's driver, speed,
// MTU or offloads), one sentence each, as say words it from the input's label and value and
// the base's label and value. Inputs whose value is not known (or not the same in all their
// runs: value returns "") are not compared.
func differsWarnings(inputs []Input, labels []string, value func(Input) string, say func(label, v, baseLabel, base string) string) []string {
	base := value(inputs[0])
	if base == "" {
		return nil
	}
	var out []string
	for i := 1; i < len(inputs); i++ {
		if v := value(inputs[i]); v != "" && v != base {
			out = append(out, say(labels[i], v, labels[0], base))
		}
	}
	return out
}

// shared is the one value all of vs share, or "" when one is empty or two differ.
func shared(vs []string) string {
	s := ""
	for _, v := range vs {
		if v == "" || (s != "" && v != s) {
			return ""
		}
		s = v
	}
	return s
}

// Labels names the columns: the given Label; else the run label (cnperf run --label
// KEY=VALUE) whose value differs between the inputs, as "KEY=VALUE" (see runLabelCandidates);
// else the CNI from the runs' cluster details (with its version, encapsulation, encryption or
// mode when that tells columns apart); else the local topology flavour every result shares (e.g. "routed",
// "vxlan"); else the source's file name without extension. The first of these that tells all
// columns apart wins. Labels that still clash get "#2", "#3".
func Labels(inputs []Input) []string {
	cand := make([][]string, len(inputs))
	byRunLabel := runLabelCandidates(inputs)
	for i, in := range inputs {
		if in.Label != "" {
			cand[i] = []string{in.Label}
			continue
		}
		cand[i] = append(cand[i], byRunLabel[i]...)
		if cni := inputCNI(in); cni != "" {
			c := in.Runs[0].Cluster
			cand[i] = append(cand[i], cni)
			if c.CNIVersion != "" {
				cand[i] = append(cand[i], cni+" "+c.CNIVersion)
			}
			if c.Calico != nil && c.Calico.Encapsulation != "" {
				cand[i] = append(cand[i], cni+" "+c.Calico.Encapsulation)
			}
			if e := inputEncryption(in); e != "" {
				cand[i] = append(cand[i], cni+" "+e)
			}
			if c.CNIMode != "" {
				cand[i] = append(cand[i], cni+" "+c.CNIMode)
			}
		}
		if fl := inputFlavour(in); fl != "" {
			cand[i] = append(cand[i], fl)
		}
		if in.Source != "" && in.Source != "-" {
			base := filepath.Base(in.Source)
			cand[i] = append(cand[i], strings.TrimSuffix(base, filepath.Ext(base)))
		}
		if len(in.Runs) > 0 && in.Runs[0].UUID != "" {
			u := in.Runs[0].UUID
			if len(u) > 8 {
				u = u[:8]
			}
			cand[i] = append(cand[i], u)
		}
		if len(cand[i]) == 0 {
			cand[i] = []string{fmt.Sprintf("run %d", i+1)}
		}
	}
	// Take, for every input, the first candidate level at which all labels differ; inputs
	// with explicit labels keep them.
	out := make([]string, len(inputs))
	for level := 0; ; level++ {
		done := true
		for i := range inputs {
			c := cand[i]
			out[i] = c[min(level, len(c)-1)]
			if level < len(c)-1 {
				done = false
			}
		}
		if unique(out) || done {
			break
		}
	}
	count := map[string]int{}
	for i, l := range out {
		count[l]++
		if count[l] > 1 {
			out[i] = fmt.Sprintf("%s #%d", l, count[l])
		}
	}
	return out
}

// commonLabels are the run labels every run of an input carries with the same value; nil
// when the input has no runs.
func commonLabels(in Input) map[string]string {
	if len(in.Runs) == 0 {
		return nil
	}
	common := map[string]string{}
	for k, v := range in.Runs[0].Labels {
		common[k] = v
	}
	for _, r := range in.Runs[1:] {
		for k, v := range common {
			if w, ok := r.Labels[k]; !ok || w != v {
				delete(common, k)
			}
		}
	}
	return common
}

// runLabelCandidates are, per input, the column labels its run labels offer: the keys every
// input carries (on all its runs, with one value) whose values are not the same everywhere,
// in key order, each alone ("cni=routed"), then all of them together ("cni=routed,mtu=9000")
// when there are several. Every input gets the same number of candidates, so Labels' levels
// line up; none when no key differs.
func runLabelCandidates(inputs []Input) [][]string {
	out := make([][]string, len(inputs))
	if len(inputs) < 2 {
		return out
	}
	common := make([]map[string]string, len(inputs))
	for i, in := range inputs {
		common[i] = commonLabels(in)
	}
	var keys []string
	for k, v := range common[0] {
		shared, differs := true, false
		for _, c := range common[1:] {
			w, ok := c[k]
			shared = shared && ok
			differs = differs || (ok && w != v)
		}
		if shared && differs {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for i := range inputs {
		all := make([]string, len(keys))
		for j, k := range keys {
			all[j] = k + "=" + common[i][k]
		}
		out[i] = append(out[i], all...)
		if len(all) > 1 {
			out[i] = append(out[i], strings.Join(all, ","))
		}
	}
	return out
}

func unique(s []string) bool {
	seen := map[string]bool{}
	for _, x := range s {
		if seen[x] {
			return false
		}
		seen[x] = true
	}
	return true
}

// inputFlavour is the topology flavour every result of the input shares, or "".
func inputFlavour(in Input) string {
	var fls []string
	for _, run := range in.Runs {
		for _, r := range run.Results {
			if r.Topology == nil {
				return "" // unknown is not shared
			}
			fls = append(fls, r.Topology.Flavour)
		}
	}
	return shared(fls)
}
