// Package gate holds the pass/fail checks on runs: Tolerance (cnperf run --tolerance) is
// k8s-netperf's --tcp-tolerance done per driver, profile and parameters, in both directions,
// with the confidence intervals shown; Regression (cnperf compare --fail-on-regression) fails
// on the regressions a comparison of runs found.
package gate

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/figure"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/text"
)

// Violation is one comparison that failed the gate.
type Violation struct {
	Profile  api.Profile
	Driver   string
	HostPath api.Path // the hostNetwork side
	PodPath  api.Path // the pod-network side
	// Params is a short description of the shared parameters ("1024B x1").
	Params string
	// Metric is the compared figure, e.g. "throughputBitsPerSecond".
	Metric string
	// Host and Pod are the compared summaries; nil when that side has no successful sample
	// or is missing.
	Host, Pod *api.Stat
	// DiffPercent is (pod - host) / host × 100: negative when the pod network is slower.
	DiffPercent      float64
	TolerancePercent float64
	Message          string
}

func (v Violation) String() string { return v.Message }

// side is one result's role in a comparison.
type side struct {
	host  bool
	class string // path class both sides must share
}

// classify says whether a result is a hostNetwork or a pod-network measurement and on which
// path class (the path row's Tolerance), or ok=false when it takes no part in the comparison
// (pod-host, host-pod, NodePort, external, cross-zone, loopback).
func classify(path api.Path, p api.Params) (s side, ok bool) {
	row, _ := path.Row()
	if row.Tolerance == "" {
		return s, false
	}
	s = side{host: row.HostNetwork() || p.HostNetwork, class: row.Tolerance}
	if p.Service && !strings.HasSuffix(s.class, "+service") {
		s.class += "+service"
	}
	return s, true
}

// key is what two results must share to be compared.
type key struct {
	profile      api.Profile
	driver       string
	class        string
	message      int
	response     int
	parallel     int
	burst        int
	rate         float64
	family       string
	optionsFinal string
}

func keyOf(profile api.Profile, drv string, class string, p api.Params) key {
	family := p.IPFamily
	if family == "" {
		family = "ipv4"
	}
	var opts []string
	for _, k := range sortedKeys(p.Options) {
		opts = append(opts, k+"="+p.Options[k])
	}
	return key{profile, drv, class, p.MessageSizeBytes, p.ResponseSizeBytes, p.Parallel, p.Burst, p.RateBitsPerSecond, family, strings.Join(opts, ",")}
}

// metric is the figure a pair is judged by: the headline (figure.Main) of the hostNetwork
// side, or of the pod side when the hostNetwork side has none; both sides are read on it.
func metric(h, p *api.Result) figure.Figure {
	if f, ok := figure.Main(h); ok {
		return f
	}
	f, _ := figure.Main(p)
	return f
}

// Tolerance compares every hostNetwork result with the pod-network result of the same
// profile, driver, path class (cross-node: host-host vs pod-pod-cross-node; same-node; via a
// ClusterIP Service) and parameters. A difference beyond pct percent in either direction is a
// violation, as is a pair where one side has no successful sample, and a run with nothing to
// compare (the gate must not pass silently). report is a table for people that fits 120
// columns: per comparison a line naming the case, then a row for each side, the pod network's
// with the difference and the verdict.
func Tolerance(run *api.Run, pct float64) (report string, violations []Violation) {
	pct = math.Abs(pct)
	order, hosts, pods := sides(run)
	var b strings.Builder
	fmt.Fprintf(&b, "Tolerance %.1f%%: pod network vs hostNetwork, same profile, driver, path class and parameters\n", pct)
	tbl := text.Table{Header: []string{"CASE, PATHS", "MEAN ± 95% CI", "N", "DIFF", "CIs OVERLAP", "RESULT"},
		Right: map[int]bool{2: true, 3: true}, Titles: map[int]string{}}
	compared := 0
	for _, k := range order {
		hs, ps := hosts[k], pods[k]
		if len(hs) == 0 || len(ps) == 0 {
			continue // only one side in the run: nothing to compare for this key
		}
		for i := 0; i < max(len(hs), len(ps)); i++ {
			compared++
			title, rows, v, violated := comparePair(k, hs[min(i, len(hs)-1)], ps[min(i, len(ps)-1)], pct)
			tbl.Titles[len(tbl.Rows)] = title
			tbl.Rows = append(tbl.Rows, rows...)
			if violated {
				violations = append(violations, v)
			}
		}
	}
	_ = tbl.Write(&b, "")
	if compared == 0 {
		msg := "nothing to compare: --tolerance needs hostNetwork and pod-network results of the same profile, driver and parameters " +
			"(e.g. paths host-host and pod-pod-cross-node)"
		violations = append(violations, Violation{TolerancePercent: pct, DiffPercent: math.NaN(), Message: msg})
		return fmt.Sprintf("Tolerance %.1f%%: %s\n", pct, msg), violations
	}
	if len(violations) == 0 {
		fmt.Fprintf(&b, "PASS: %d comparison(s) within %.1f%% (diff = (pod - host) / host)\n", compared, pct)
	} else {
		fmt.Fprintf(&b, "FAIL: %d of %d comparison(s) beyond %.1f%% or without data (diff = (pod - host) / host)\n",
			len(violations), compared, pct)
	}
	return b.String(), violations
}

// sides sorts a run's results that Tolerance compares by key into the hostNetwork and the
// pod-network side; order is the keys in their first appearance in the run, which the report
// follows.
func sides(run *api.Run) (order []key, hosts, pods map[key][]*api.Result) {
	hosts, pods = map[key][]*api.Result{}, map[key][]*api.Result{}
	seen := map[key]bool{}
	for i := range run.Results {
		r := &run.Results[i]
		s, ok := classify(r.Path, r.Params)
		if !ok {
			continue
		}
		k := keyOf(r.Profile, r.Driver, s.class, r.Params)
		if !seen[k] {
			seen[k] = true
			order = append(order, k)
		}
		if s.host {
			hosts[k] = append(hosts[k], r)
		} else {
			pods[k] = append(pods[k], r)
		}
	}
	return order, hosts, pods
}

// comparePair compares a hostNetwork result h with a pod-network one p of key k: the report's
// title line (the case) and rows (hostNetwork, then pod network with the verdict), and the
// violation when the difference is beyond pct or a side has no data.
func comparePair(k key, h, p *api.Result, pct float64) (title string, rows [][]string, v Violation, violated bool) {
	f := metric(h, p)
	mname, hst, pst, unit := f.Key, f.Stat(&h.Summary), f.Stat(&p.Summary), f.Unit.Format
	params := describeParams(h.Params)
	paths := fmt.Sprintf("%s vs %s", pathLabel(h), pathLabel(p))
	v = Violation{Profile: k.profile, Driver: k.driver, HostPath: h.Path, PodPath: p.Path, Params: params,
		Metric: mname, Host: hst, Pod: pst, TolerancePercent: pct}
	if hst == nil || pst == nil || hst.N == 0 || pst.N == 0 || hst.Mean == 0 {
		var missing []string
		if hst == nil || hst.N == 0 || hst.Mean == 0 {
			missing = append(missing, pathLabel(h))
		}
		if pst == nil || pst.N == 0 {
			missing = append(missing, pathLabel(p))
		}
		v.DiffPercent = math.NaN()
		v.Message = fmt.Sprintf("%s %s %s (%s): cannot compare, no successful %s on %s",
			k.profile, k.driver, paths, params, mname, strings.Join(missing, " and "))
		title, rows = tableRows(k, params, h, p, hst, pst, f, "-", "-", "FAIL (no data)")
		return title, rows, v, true
	}
	v.DiffPercent = (pst.Mean - hst.Mean) / hst.Mean * 100
	overlap := "yes"
	if pst.CI95High < hst.CI95Low || hst.CI95High < pst.CI95Low {
		overlap = "no"
	}
	verdict := "pass"
	if math.Abs(v.DiffPercent) > pct {
		verdict, violated = "FAIL", true
		dir := "slower"
		if v.DiffPercent > 0 {
			dir = "faster"
		}
		v.Message = fmt.Sprintf("%s %s %s (%s): pod network %s is %.1f%% %s than hostNetwork %s, beyond the %.1f%% tolerance",
			k.profile, k.driver, paths, params, unit(pst.Mean), math.Abs(v.DiffPercent), dir, unit(hst.Mean), pct)
		if overlap == "yes" {
			v.Message += " (the 95% confidence intervals overlap: more samples may show the difference is noise)"
		}
	}
	title, rows = tableRows(k, params, h, p, hst, pst, f, fmt.Sprintf("%+.1f%%", v.DiffPercent), overlap, verdict)
	return title, rows, v, violated
}

// tableRows are a comparison's title line in the report (the case) and its rows: the
// hostNetwork side, and the pod network's with the verdict (diff, overlap, result).
func tableRows(k key, params string, h, p *api.Result, hst, pst *api.Stat, f figure.Figure, verdict ...string) (string, [][]string) {
	hm, hn := statText(hst, f.Unit)
	pm, pn := statText(pst, f.Unit)
	return fmt.Sprintf("%s %s %s", k.profile, k.driver, params), [][]string{
		{"  hostNetwork  " + pathLabel(h), hm, hn},
		append([]string{"  pod network  " + pathLabel(p), pm, pn}, verdict...),
	}
}

// CheckPlan reports, before anything runs, whether a plan gives Tolerance something to
// compare, so `--tolerance` never silently does nothing.
func CheckPlan(cases []plan.Case) error {
	hosts, pods := map[key]bool{}, map[key]bool{}
	for _, c := range cases {
		s, ok := classify(c.Path, c.Params)
		if !ok {
			continue
		}
		k := keyOf(c.Profile, c.Driver, s.class, c.Params)
		if s.host {
			hosts[k] = true
		} else {
			pods[k] = true
		}
	}
	for k := range hosts {
		if pods[k] {
			return nil
		}
	}
	return fmt.Errorf("--tolerance compares hostNetwork with pod network, but the plan has no such pair: " +
		"add paths host-host and pod-pod-cross-node (same profile, driver and parameters)")
}

func pathLabel(r *api.Result) string {
	s := string(r.Path)
	row, _ := r.Path.Row()
	if r.Params.HostNetwork && !row.HostNetwork() {
		s += "+hostNetwork"
	}
	if r.Params.Service && row.Access != api.AccessClusterIP {
		s += "+service"
	}
	return s
}

func describeParams(p api.Params) string {
	s := fmt.Sprintf("%dB x%d", p.MessageSizeBytes, p.Parallel)
	if p.Burst > 0 {
		s += fmt.Sprintf(" burst %d", p.Burst)
	}
	if p.IPFamily == "ipv6" {
		s += " ipv6"
	}
	return s
}

// statText is a side's MEAN ± 95% CI and N cells: the mean and the half-width of its
// interval in the mean's scale, as the results table prints them.
func statText(s *api.Stat, u figure.Unit) (mean, n string) {
	if s == nil || s.N == 0 {
		return "no data", "-"
	}
	return u.FormatCI(s.Mean, (s.CI95High-s.CI95Low)/2), strconv.Itoa(s.N)
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
