package report

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/figure"
	"github.com/cnperf/cnperf/internal/report/compare"
	"github.com/cnperf/cnperf/internal/safetext"
	"github.com/cnperf/cnperf/internal/version"
)

// The HTML report is one file: the template, its CSS and its JS are inlined, charts are SVG
// drawn here (so they render without scripts and print as they look), and nothing is loaded
// from the network. The script only sorts the raw table, opens details for printing and
// records that the charts laid out (data-charts-rendered on <html>, for tests).

//go:embed htmlassets/report.html.tmpl htmlassets/report.css htmlassets/report.js
var htmlAssets embed.FS

var htmlTemplate = template.Must(template.New("report.html.tmpl").Funcs(template.FuncMap{
	"css": func() template.CSS { b, _ := htmlAssets.ReadFile("htmlassets/report.css"); return template.CSS(b) },
	"js":  func() template.JS { b, _ := htmlAssets.ReadFile("htmlassets/report.js"); return template.JS(b) },
	"pct": func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) },
	"x10": func(v float64) string { return strconv.FormatFloat(v*10, 'f', 1, 64) },
}).ParseFS(htmlAssets, "htmlassets/report.html.tmpl"))

// palette is the Okabe–Ito colour-blind-safe palette.
var palette = []string{"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"}

type htmlPage struct {
	Title     string
	Subtitle  string
	Runs      []htmlRun
	Charts    []barChart
	Latency   []latChart
	Sweeps    []sweepChart
	Heatmaps  []heatmap
	Flames    []flameRow
	Compare   *htmlCompare
	Rows      []htmlRow
	Samples   []htmlCaseSamples
	Generator string
}

type htmlRun struct {
	Label, UUID, Platform, Start, Duration, Version string
	Interrupted, Imported                           bool
	Cases, Failed                                   int
	Cluster                                         *api.ClusterDetails
	Host                                            *api.HostInfo
	Labels                                          []string
	Notes                                           []string
}

type tick struct {
	Pos   float64 // percent of the track
	Label string
}

type bar struct {
	Series, Color string
	Failed        string
	// Cut is the cause when the case failed as a whole but its finished samples have a
	// figure (an interrupted case): the bar is drawn faded and dashed, with the cause.
	Cut         string
	Pos, Lo, Hi float64 // percent of the track
	HasCI       bool
	Value, N    string
}

type barGroup struct {
	Label string
	Bars  []bar
}

type legendItem struct{ Name, Color string }

type barChart struct {
	ID, Title, Note string
	Ticks           []tick
	Groups          []barGroup
	Legend          []legendItem
}

type latChart struct {
	ID, Title string
	SVG       template.HTML
	Legend    []legendItem
	Lines     []lineItem
	Note      string
	// Failed names the drawn series of cases that failed as a whole (an interrupted case's
	// finished samples), with the cause: their lines are not a complete measurement.
	Failed []string
}

type lineItem struct{ Name, Dash string }

type htmlCompareRow struct {
	Case, Metric string
	First        bool
	Cells        []htmlCompareCell
}

type htmlCompareCell struct {
	Text, Class string
}

type htmlCompare struct {
	Columns  []string
	Rows     []htmlCompareRow
	Legend   string
	Warnings []string
}

// htmlRow is a row of the table of all cases: few enough columns to fit a 1400 px window
// (traffic, latency and CPU are one column each; p90 and p99.9 in the latency cell's title).
type htmlRow struct {
	Run, Index, Profile, Driver, Path, Traffic, Samples string
	Main, MainSort, CoV, Latency, LatencyMore, Retrans  string
	Loss, CPU, Checks, Status                           string
	Failed, Partial                                     bool
}

type htmlCaseSamples struct {
	Title string
	Rows  [][]string
}

func encodeHTML(w io.Writer, runs []*api.Run) error {
	page := buildPage(runs)
	var b bytes.Buffer
	if err := htmlTemplate.Execute(&b, page); err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	// Control characters in notes and tool messages are not allowed in HTML (nor in XML,
	// should the page be read as XHTML): replaced by U+FFFD.
	if _, err := w.Write(safetext.XML(b.Bytes())); err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	return nil
}

// runLabels names runs for legends and the comparison: the CNI, topology or uuid prefix.
func runLabels(runs []*api.Run) []string {
	in := make([]compare.Input, len(runs))
	for i, r := range runs {
		in[i] = compare.Input{Runs: []*api.Run{r}}
	}
	return compare.Labels(in)
}

func buildPage(runs []*api.Run) *htmlPage {
	labels := runLabels(runs)
	p := &htmlPage{Title: "cnperf report", Generator: "cnperf " + version.Version}
	switch len(runs) {
	case 0:
		p.Subtitle = "no runs"
	case 1:
		p.Subtitle = "run " + runs[0].UUID
	default:
		p.Subtitle = fmt.Sprintf("%d runs: %s", len(runs), strings.Join(labels, ", "))
	}
	for i, r := range runs {
		p.Runs = append(p.Runs, buildRun(r, labels[i]))
	}
	p.Charts = buildBarCharts(runs, labels)
	p.Latency = buildLatencyCharts(runs, labels)
	p.Sweeps = buildSweepCharts(runs, labels)
	p.Heatmaps = buildHeatmaps(runs, labels)
	p.Flames = buildFlames(runs, labels)
	if len(runs) > 1 {
		p.Compare = buildCompare(runs, labels)
	}
	for i, r := range runs {
		markV4 := mixedFamilies(r.Results)
		for j := range r.Results {
			res := &r.Results[j]
			p.Rows = append(p.Rows, buildRow(labels[i], j+1, res, markV4))
			p.Samples = append(p.Samples, buildSamples(labels[i], j+1, res, len(runs) > 1))
		}
	}
	return p
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

func buildRun(r *api.Run, label string) htmlRun {
	h := htmlRun{Label: label, UUID: r.UUID, Platform: r.Platform, Start: fmtTime(r.StartTime),
		Version: r.CnperfVersion, Interrupted: r.Interrupted, Imported: r.Imported, Cases: len(r.Results),
		Cluster: r.Cluster, Host: r.Host, Notes: r.Notes, Duration: "-"}
	if !r.StartTime.IsZero() && !r.EndTime.IsZero() {
		h.Duration = r.EndTime.Sub(r.StartTime).Round(time.Second).String()
	}
	for i := range r.Results {
		if CaseFailed(&r.Results[i]) {
			h.Failed++
		}
	}
	keys := make([]string, 0, len(r.Labels))
	for k := range r.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		h.Labels = append(h.Labels, k+"="+r.Labels[k])
	}
	return h
}

// chartSpec says which results a bar chart shows and with which figure.
type chartSpec struct {
	profile api.Profile
	fig     figure.Figure
	title   string
}

func chartSpecs(runs []*api.Run) []chartSpec {
	present := map[api.Profile]bool{}
	for _, r := range runs {
		for _, res := range r.Results {
			present[res.Profile] = true
		}
	}
	var specs []chartSpec
	// cnperf programming's profiles chart their figure (figure.MainFor: programming seconds)
	for _, p := range slices.Concat(api.Profiles, api.ProgrammingProfiles) {
		if !present[p] {
			continue
		}
		f := figure.MainFor(p)
		what := map[string]string{figure.ConnectionRate.Key: "connection rate", figure.TransactionRate.Key: "transaction rate"}[f.Key]
		if what == "" {
			what = f.Label
		}
		specs = append(specs, chartSpec{p, f, string(p) + " " + what})
		if p == api.UDPStream {
			specs = append(specs, chartSpec{p, figure.PacketRate, "UDP_STREAM packet rate"})
		}
	}
	return specs
}

// groupLabel is a case's workload without the profile (the chart says it): path and traffic.
func groupLabel(r *api.Result) string {
	l := figure.CaseLabel(r)
	// CaseLabel is "PROFILE DRIVER PATH ..."; drop the first two words.
	parts := strings.SplitN(l, " ", 3)
	if len(parts) == 3 {
		return parts[2]
	}
	return l
}

type colours struct {
	byName map[string]string
	order  []legendItem
}

func (c *colours) get(name string) string {
	if c.byName == nil {
		c.byName = map[string]string{}
	}
	if col, ok := c.byName[name]; ok {
		return col
	}
	col := palette[len(c.byName)%len(palette)]
	c.byName[name] = col
	c.order = append(c.order, legendItem{name, col})
	return col
}

func seriesName(label, driver string, multi bool) string {
	if multi {
		return label + " · " + driver
	}
	return driver
}

func buildBarCharts(runs []*api.Run, labels []string) []barChart {
	var charts []barChart
	multi := len(runs) > 1
	for ci, spec := range chartSpecs(runs) {
		ch := barChart{ID: fmt.Sprintf("chart-%d", ci+1), Title: spec.title}
		var cols colours
		type entry struct {
			r     *api.Result
			label string
		}
		groups := map[string][]entry{}
		var order []string
		maxHi := 0.0
		for i, run := range runs {
			for j := range run.Results {
				r := &run.Results[j]
				if r.Profile != spec.profile {
					continue
				}
				st := spec.fig.Stat(&r.Summary)
				if st == nil && !CaseFailed(r) {
					continue // e.g. a UDP case without a packet rate
				}
				k := figure.Workload(r) + figure.TopologyKey(r)
				if _, ok := groups[k]; !ok {
					order = append(order, k)
				}
				groups[k] = append(groups[k], entry{r, labels[i]})
				if st != nil {
					maxHi = math.Max(maxHi, math.Max(st.CI95High, st.Mean))
				}
			}
		}
		if len(order) == 0 {
			continue
		}
		top, ticks, scale := niceAxis(maxHi, spec.fig.Unit)
		ch.Ticks = ticks
		ch.Note = "bars: mean of the samples; whiskers: 95% confidence interval of the mean; unit " + scale.Name
		for _, k := range order {
			g := barGroup{Label: groupLabel(groups[k][0].r)}
			for _, e := range groups[k] {
				name := seriesName(e.label, e.r.Driver, multi)
				b := bar{Series: name, Color: cols.get(name)}
				st := spec.fig.Stat(&e.r.Summary)
				if st == nil {
					b.Failed = "FAILED: " + oneLine(FailureCause(e.r))
					g.Bars = append(g.Bars, b)
					continue
				}
				pos := func(v float64) float64 { return math.Max(0, math.Min(100, v/top*100)) }
				b.Pos = pos(st.Mean)
				b.Lo, b.Hi = pos(st.CI95Low), pos(st.CI95High)
				b.HasCI = st.N > 1 && st.CI95High > st.CI95Low
				b.Value = figure.FormatIn(st.Mean, (st.CI95High-st.CI95Low)/2, scale)
				b.N = fmt.Sprintf("n=%d", st.N)
				if CaseFailed(e.r) {
					b.Cut = "FAILED: " + oneLine(FailureCause(e.r))
				}
				if e.r.Summary.SamplesFailed > 0 {
					b.N += fmt.Sprintf(", %d failed", e.r.Summary.SamplesFailed)
				}
				g.Bars = append(g.Bars, b)
			}
			ch.Groups = append(ch.Groups, g)
		}
		ch.Legend = cols.order
		charts = append(charts, ch)
	}
	return charts
}

// niceAxis picks the axis top and ticks for values up to max in unit u.
func niceAxis(max float64, u figure.Unit) (float64, []tick, figure.Scale) {
	scale := u.Pick(max)
	if max <= 0 {
		return 1, []tick{{0, "0"}, {100, "1"}}, scale
	}
	m := max / scale.Factor
	step := niceStep(m / 5)
	top := math.Ceil(m/step) * step
	var ticks []tick
	for v := 0.0; v <= top+step/2; v += step {
		ticks = append(ticks, tick{Pos: v / top * 100, Label: strconv.FormatFloat(v, 'f', -1, 64)})
	}
	// Round tick labels of fractional steps to the step's precision.
	dec := int(math.Max(0, -math.Floor(math.Log10(step))))
	for i := range ticks {
		ticks[i].Label = strconv.FormatFloat(ticks[i].Pos*top/100, 'f', dec, 64)
	}
	return top * scale.Factor, ticks, scale
}

func niceStep(raw float64) float64 {
	exp := math.Pow(10, math.Floor(math.Log10(raw)))
	f := raw / exp
	switch {
	case f <= 1:
		return exp
	case f <= 2:
		return 2 * exp
	case f <= 5:
		return 5 * exp
	}
	return 10 * exp
}

// latPoint is one percentile of api.Latency: its name in HTML, its Prometheus quantile label.
type latPoint struct {
	name, q string
	get     func(*api.Latency) *float64
}

var latPoints = []latPoint{
	{"p50", "0.5", func(l *api.Latency) *float64 { return l.P50 }},
	{"p75", "0.75", func(l *api.Latency) *float64 { return l.P75 }},
	{"p90", "0.9", func(l *api.Latency) *float64 { return l.P90 }},
	{"p99", "0.99", func(l *api.Latency) *float64 { return l.P99 }},
	{"p99.9", "0.999", func(l *api.Latency) *float64 { return l.P999 }},
	{"p99.99", "0.9999", func(l *api.Latency) *float64 { return l.P9999 }},
}

type latSeries struct {
	name, color, dash string
	values            []*float64 // per latPoint
}

// dashes tell the paths (workloads) of a latency chart apart; colours tell run · driver, as
// in the bar charts.
var dashes = []string{"", "8 4", "2 3", "12 3 2 3", "4 4", "1 6"}

func buildLatencyCharts(runs []*api.Run, labels []string) []latChart {
	var charts []latChart
	multi := len(runs) > 1
	for _, p := range api.Profiles {
		var cols colours
		var series []latSeries
		notes := map[string]bool{}
		dashOf := map[string]string{}
		var dashOrder []string
		noPercentiles := false
		var failed []string
		for i, run := range runs {
			for j := range run.Results {
				r := &run.Results[j]
				l := r.Summary.LatencyMicroseconds
				if r.Profile != p || l == nil {
					continue
				}
				hasPoint := false
				for _, lp := range latPoints {
					if v := lp.get(l); v != nil && *v > 0 {
						hasPoint = true
					}
				}
				if !hasPoint {
					noPercentiles = true
					continue // e.g. qperf: a mean only, no percentiles to draw
				}
				colour := seriesName(labels[i], r.Driver, multi)
				wl := groupLabel(r)
				if _, ok := dashOf[wl]; !ok {
					dashOf[wl] = dashes[len(dashOrder)%len(dashes)]
					dashOrder = append(dashOrder, wl)
				}
				s := latSeries{name: colour + " · " + wl, color: cols.get(colour), dash: dashOf[wl]}
				if CaseFailed(r) {
					s.name += " (FAILED)"
					failed = append(failed, fmt.Sprintf("%s · %s: FAILED: %s; drawn from the samples it finished", colour, wl, oneLine(FailureCause(r))))
				}
				for _, lp := range latPoints {
					s.values = append(s.values, lp.get(l))
				}
				series = append(series, s)
				if l.Method != "" && l.Method != "histogram" {
					notes[l.Method] = true
				}
			}
		}
		if len(series) == 0 {
			continue
		}
		svg, ok := latencySVG(series)
		if !ok {
			continue
		}
		c := latChart{ID: "lat-" + strings.ToLower(string(p)), Title: string(p) + " latency percentiles (round trip)",
			SVG: svg, Legend: cols.order, Failed: failed}
		for _, wl := range dashOrder {
			c.Lines = append(c.Lines, lineItem{Name: wl, Dash: dashOf[wl]})
		}
		var ms []string
		for m := range notes {
			ms = append(ms, m)
		}
		sort.Strings(ms)
		c.Note = "all transactions of all samples, log scale"
		if len(ms) > 0 {
			c.Note += "; some cases carry no per-transaction data (method " + strings.Join(ms, ", ") + "): their percentiles are per-sample medians or tool figures"
		}
		if noPercentiles {
			c.Note += "; cases whose tool reports no percentiles (only a mean) are not drawn"
		}
		charts = append(charts, c)
	}
	return charts
}

// latencySVG draws percentile ladders on a log scale: x = percentile, y = µs.
func latencySVG(series []latSeries) (template.HTML, bool) {
	// Columns with data in any series.
	var cols []int
	lo, hi := math.Inf(1), math.Inf(-1)
	for k := range latPoints {
		has := false
		for _, s := range series {
			if v := s.values[k]; v != nil && *v > 0 {
				has = true
				lo, hi = math.Min(lo, *v), math.Max(hi, *v)
			}
		}
		if has {
			cols = append(cols, k)
		}
	}
	if len(cols) == 0 {
		return "", false
	}
	// The axis spans 1-2-5 steps around the data; gridlines at every 1, 2 and 5 × 10^k,
	// all labelled when the range is short.
	yLo, yHi := step125Below(lo), step125Above(hi)
	if yHi <= yLo {
		yHi = step125Above(yLo * 1.01)
	}
	labelAll := math.Log10(yHi/yLo) <= 2.01
	const W, H, x0, x1, y0, y1 = 640.0, 320.0, 78.0, 590.0, 16.0, 280.0
	xAt := func(i int) float64 {
		if len(cols) == 1 {
			return (x0 + x1) / 2
		}
		return x0 + (x1-x0)*float64(i)/float64(len(cols)-1)
	}
	yAt := func(v float64) float64 {
		return y1 - (y1-y0)*(math.Log10(v)-math.Log10(yLo))/(math.Log10(yHi)-math.Log10(yLo))
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart latency" viewBox="0 0 %g %g" role="img" aria-label="latency percentiles">`, W, H)
	// Grid: decades (labelled) and 2×, 5× (light).
	for d := math.Pow(10, math.Floor(math.Log10(yLo))); d <= yHi*1.0001; d *= 10 {
		for _, m := range []float64{1, 2, 5} {
			v := d * m
			if v < yLo*0.9999 {
				continue
			}
			if v > yHi*1.0001 {
				break
			}
			y := yAt(v)
			cls := "grid minor"
			if m == 1 {
				cls = "grid"
			}
			if m == 1 || labelAll {
				fmt.Fprintf(&b, `<text class="axis" x="%g" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>`, x0-8, y, trimNum(v))
			}
			fmt.Fprintf(&b, `<line class="%s" x1="%g" x2="%g" y1="%.1f" y2="%.1f"/>`, cls, x0, x1, y, y)
		}
	}
	fmt.Fprintf(&b, `<text class="axis" x="14" y="%.1f" transform="rotate(-90 14 %.1f)" text-anchor="middle">µs</text>`, (y0+y1)/2, (y0+y1)/2)
	for i, k := range cols {
		fmt.Fprintf(&b, `<text class="axis" x="%.1f" y="%g" text-anchor="middle">%s</text>`, xAt(i), y1+24, latPoints[k].name)
	}
	for _, s := range series {
		var pts []string
		var dots strings.Builder
		for i, k := range cols {
			v := s.values[k]
			if v == nil || *v <= 0 {
				continue
			}
			x, y := xAt(i), yAt(*v)
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, y))
			fmt.Fprintf(&dots, `<circle class="dot" cx="%.1f" cy="%.1f" r="4" fill="%s"><title>%s %s: %s µs</title></circle>`,
				x, y, s.color, template.HTMLEscapeString(s.name), latPoints[k].name, figure.Number(*v))
		}
		if len(pts) > 1 {
			dash := ""
			if s.dash != "" {
				dash = ` stroke-dasharray="` + s.dash + `"`
			}
			fmt.Fprintf(&b, `<polyline class="series" fill="none" stroke="%s"%s points="%s"/>`, s.color, dash, strings.Join(pts, " "))
		}
		b.WriteString(dots.String())
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()), true
}

// step125Below is the largest 1, 2 or 5 × 10^k not above v (v > 0).
func step125Below(v float64) float64 {
	d := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{5, 2, 1} {
		if d*m <= v*1.0000001 {
			return d * m
		}
	}
	return d
}

// step125Above is the smallest 1, 2 or 5 × 10^k not below v (v > 0).
func step125Above(v float64) float64 {
	d := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if d*m >= v*0.9999999 {
			return d * m
		}
	}
	return d * 10
}

func trimNum(v float64) string {
	switch {
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', -1, 64) + "M"
	case v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'f', -1, 64) + "k"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

func buildCompare(runs []*api.Run, labels []string) *htmlCompare {
	in := make([]compare.Input, len(runs))
	for i, r := range runs {
		in[i] = compare.Input{Label: labels[i], Runs: []*api.Run{r}}
	}
	c, err := compare.Compare(in, compare.Options{})
	if err != nil {
		return nil
	}
	h := &htmlCompare{Warnings: c.Warnings}
	for i, col := range c.Columns {
		l := col.Label
		if i == 0 {
			l += " (base)"
		}
		h.Columns = append(h.Columns, l)
	}
	h.Legend = fmt.Sprintf("Against %s: change in percent, verdict at α=%g and the test: W = Welch's t-test, U = Mann–Whitney U (skewed samples, n ≥ 4). "+
		"n.s. = no significant change; untested = under 2 samples on a side. ↑ higher is better, ↓ lower is better.", c.Columns[0].Label, c.Alpha)
	for _, cs := range c.Cases {
		for mi, m := range cs.Metrics {
			dir := " ↑"
			if !m.HigherIsBetter {
				dir = " ↓"
			}
			row := htmlCompareRow{Case: cs.Label, Metric: m.Label + dir, First: mi == 0}
			for i := range c.Columns {
				cell := htmlCompareCell{Text: compare.CellText(m, i)}
				if i > 0 {
					cell.Class = verdictClass(m.Cells[i].Verdict)
				}
				row.Cells = append(row.Cells, cell)
			}
			h.Rows = append(h.Rows, row)
		}
		if cs.Checks != nil {
			row := htmlCompareRow{Case: cs.Label, Metric: "checks", First: len(cs.Metrics) == 0}
			for _, ch := range cs.Checks {
				row.Cells = append(row.Cells, htmlCompareCell{Text: ch})
			}
			h.Rows = append(h.Rows, row)
		}
	}
	return h
}

func verdictClass(v compare.Verdict) string {
	switch v {
	case compare.Better:
		return "better"
	case compare.Worse, compare.Failed:
		return "worse"
	case compare.NoChange:
		return "same"
	}
	return "untested"
}

func optNum(v *float64) string {
	if v == nil {
		return "-"
	}
	return figure.Number(*v)
}

func statNum(s *api.Stat, unit string) string {
	if s == nil {
		return "-"
	}
	return figure.Number(s.Mean) + unit
}

func buildRow(run string, idx int, r *api.Result, markV4 bool) htmlRow {
	traffic := figure.Bytes(r.Params.MessageSizeBytes) + " ×" + strconv.Itoa(r.Params.Parallel)
	if r.Params.Burst != 0 {
		traffic += " burst " + strconv.Itoa(r.Params.Burst)
	}
	row := htmlRow{Run: run, Index: strconv.Itoa(idx), Profile: string(r.Profile), Driver: r.Driver, Path: pathCell(r, markV4),
		Traffic: traffic, Samples: fmt.Sprintf("%d/%d", r.Summary.SamplesTotal-r.Summary.SamplesFailed, r.Summary.SamplesTotal),
		Main: "-", MainSort: "", CoV: "-", Latency: "-",
		Status: statusCell(r), Failed: CaseFailed(r), Partial: !CaseFailed(r) && r.Summary.SamplesFailed > 0}
	if f, ok := figure.Main(r); ok {
		st := f.Stat(&r.Summary)
		row.Main = f.Unit.FormatCI(st.Mean, (st.CI95High-st.CI95Low)/2)
		row.MainSort = strconv.FormatFloat(st.Mean, 'g', -1, 64)
		if st.N > 1 {
			row.CoV = strconv.FormatFloat(st.CoV*100, 'f', 1, 64) + "%"
		}
	}
	if l := r.Summary.LatencyMicroseconds; l != nil && (l.P50 != nil || l.P99 != nil) {
		row.Latency = optNum(l.P50) + " / " + optNum(l.P99)
		row.LatencyMore = "p90 " + optNum(l.P90) + " µs, p99.9 " + optNum(l.P999) + " µs"
	}
	row.Retrans = "-"
	if st := r.Summary.Retransmits; st != nil {
		row.Retrans = figure.CountNumber(st.Mean)
	}
	row.Loss = statNum(r.Summary.LossPercent, "%")
	row.Checks = strings.Join(figure.Checks(r), "; ")
	row.CPU = "-"
	if c := r.Summary.CPUPercent; c != nil {
		row.CPU = statNum(c.Client, "%") + " / " + statNum(c.Server, "%")
	}
	return row
}

// sampleFlags are a sample's outlier, exclusion and steady-state remarks.
func sampleFlags(s *api.Sample) []string {
	var out []string
	if s.Excluded {
		out = append(out, "OUTLIER, excluded from the summary")
	} else if s.Outlier {
		out = append(out, "OUTLIER (outside median ± 3·MAD)")
	}
	if ss := s.SteadyState; ss != nil && ss.RampUp {
		out = append(out, fmt.Sprintf("ramp-up: first interval %+.1f%% from the rest (noise ±%.1f%%)", ss.FirstIntervalPercent, ss.NoisePercent))
	}
	return out
}

func buildSamples(run string, idx int, r *api.Result, multi bool) htmlCaseSamples {
	title := fmt.Sprintf("#%d %s", idx, figure.CaseLabel(r))
	if multi {
		title = run + " " + title
	}
	cs := htmlCaseSamples{Title: title}
	for _, s := range r.Samples {
		kind := strconv.Itoa(s.Index)
		if s.Warmup {
			kind += " (warm-up)"
		}
		row := []string{kind}
		if s.Error != "" {
			row = append(row, "FAILED: "+oneLine(s.Error))
			cs.Rows = append(cs.Rows, row)
			continue
		}
		var figs []string
		for _, f := range figure.All {
			if v, ok := f.Sample(&s); ok {
				figs = append(figs, f.Label+" "+f.Unit.Format(v))
			}
		}
		figs = append(figs, sampleFlags(&s)...)
		row = append(row, strings.Join(figs, ", "))
		cs.Rows = append(cs.Rows, row)
	}
	if m := r.Metrics; m != nil {
		for _, n := range m.Nodes {
			name := n.Instance
			if n.Node != "" {
				name = n.Node
			}
			var figs []string
			add := func(label string, v *float64, unit figure.Unit) {
				if v != nil {
					figs = append(figs, label+" "+unit.Format(*v))
				}
			}
			add("CPU busy", n.CPUBusyPercent, figure.Percent)
			add("max", n.CPUBusyMaxPercent, figure.Percent)
			add("user", n.CPUUserPercent, figure.Percent)
			add("system", n.CPUSystemPercent, figure.Percent)
			add("softirq", n.CPUSoftIRQPercent, figure.Percent)
			add("rx drops/s", n.RxDropsPerSecond, figure.Count)
			add("tx drops/s", n.TxDropsPerSecond, figure.Count)
			cs.Rows = append(cs.Rows, []string{"node " + name, strings.Join(figs, ", ")})
		}
		for _, p := range m.Pods {
			var figs []string
			if p.CPUCores != nil {
				figs = append(figs, "CPU "+figure.Number(*p.CPUCores)+" cores")
			}
			if p.MemoryMaxBytes != nil {
				figs = append(figs, "memory max "+figure.Number(*p.MemoryMaxBytes/(1<<20))+" MiB")
			}
			cs.Rows = append(cs.Rows, []string{"pod " + p.Namespace + "/" + p.Pod, strings.Join(figs, ", ")})
		}
		for _, w := range m.Warnings {
			cs.Rows = append(cs.Rows, []string{"prometheus", "warning: " + w})
		}
	}
	return cs
}
