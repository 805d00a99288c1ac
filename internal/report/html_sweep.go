package report

import (
	"fmt"
	"html/template"
	"math"
	"sort"
	"strconv"
	"strings"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/figure"
	"github.com/cnperf/cnperf/internal/report/sweep"
)

// sweepChart is one parameter sweep drawn against its parameter: the headline rate with its
// confidence interval and, where the profile has latency, the latency mean, p50 and p99.
// Sweeps of the same workload in several runs, or by several drivers, are series of one chart.
type sweepChart struct {
	ID, Title, Param string
	Panels           []template.HTML
	Legend           []legendItem
	Lines            []lineItem
	Note             string
	Failed           []string
}

// sweepSeries is one run · driver's sweep.
type sweepSeries struct {
	name, color string
	points      []sweepPoint
}

type sweepPoint struct {
	x int
	r *api.Result
}

func buildSweepCharts(runs []*api.Run, labels []string) []sweepChart {
	multi := len(runs) > 1
	type chart struct {
		param  sweep.Param
		title  string
		series []sweepSeries
	}
	charts := map[string]*chart{}
	var order []string
	var cols colours
	for i, run := range runs {
		for _, sw := range sweep.Find(run.Results) {
			first := &run.Results[sw.Points[0].Index]
			c := charts[sw.SeriesKey]
			if c == nil {
				c = &chart{param: sw.Param, title: sweep.ChartLabel(first, sw.Param) + " — " + sweep.What(first) + " vs " + sw.Param.Label}
				charts[sw.SeriesKey] = c
				order = append(order, sw.SeriesKey)
			}
			name := seriesName(labels[i], first.Driver, multi)
			if sw.Nodes != "" {
				name += " (" + sw.Nodes + ")"
			}
			s := sweepSeries{name: name, color: cols.get(name)}
			for _, pt := range sw.Points {
				s.points = append(s.points, sweepPoint{x: pt.Value, r: &run.Results[pt.Index]})
			}
			c.series = append(c.series, s)
		}
	}
	var out []sweepChart
	for ci, k := range order {
		c := charts[k]
		sc := sweepChart{ID: fmt.Sprintf("sweep-%d", ci+1), Title: c.title, Param: c.param.Name}
		// The headline figure: the first the successful cases carry.
		var main figure.Figure
		found := false
		hasLatency := false
		for _, s := range c.series {
			for _, p := range s.points {
				if f, ok := figure.Main(p.r); ok && !found {
					main, found = f, true
				}
				if l := p.r.Summary.LatencyMicroseconds; l != nil && (l.P50 != nil || l.Mean != nil || l.P99 != nil) {
					hasLatency = true
				}
				if CaseFailed(p.r) {
					sc.Failed = append(sc.Failed, fmt.Sprintf("%s, %s %s: FAILED: %s", s.name, c.param.Label, c.param.Format(p.x), oneLine(FailureCause(p.r))))
				}
			}
		}
		xs := sweepXAxis(c.series, c.param)
		if hasLatency {
			if svg, ok := sweepLatencySVG(c.series, xs, c.param); ok {
				sc.Panels = append(sc.Panels, svg)
				sc.Lines = []lineItem{{"latency p50", ""}, {"latency mean", "7 4"}, {"latency p99", "2 3"}}
			}
		}
		if found {
			sc.Panels = append(sc.Panels, sweepRateSVG(c.series, xs, c.param, main))
		}
		if len(sc.Panels) == 0 {
			continue
		}
		for _, s := range c.series {
			sc.Legend = append(sc.Legend, legendItem{s.name, s.color})
		}
		sc.Note = "points: mean of the samples, whiskers: 95% confidence interval of the mean"
		if hasLatency {
			sc.Note += "; latency over all transactions of all samples (no interval: one merged distribution)"
		}
		if xs.log {
			sc.Note += "; " + c.param.Label + " on a log scale"
		}
		out = append(out, sc)
	}
	return out
}

// sweepAxis maps the swept values to x positions: linear, or logarithmic when they span a
// factor of 64 or more (message sizes 64 B … 64 KiB).
type sweepAxis struct {
	values []int // every value of every series, ascending
	log    bool
	lo, hi float64
}

func sweepXAxis(series []sweepSeries, p sweep.Param) sweepAxis {
	seen := map[int]bool{}
	var ax sweepAxis
	for _, s := range series {
		for _, pt := range s.points {
			if !seen[pt.x] {
				seen[pt.x] = true
				ax.values = append(ax.values, pt.x)
			}
		}
	}
	sort.Ints(ax.values)
	ax.lo, ax.hi = float64(ax.values[0]), float64(ax.values[len(ax.values)-1])
	ax.log = ax.lo > 0 && ax.hi/ax.lo >= 64
	return ax
}

// Panel geometry (SVG user units).
const swW, swH, swX0, swX1, swY0, swY1 = 520.0, 320.0, 72.0, 500.0, 16.0, 262.0

func (ax sweepAxis) at(v int) float64 {
	if ax.hi == ax.lo {
		return (swX0 + swX1) / 2
	}
	const pad = 18.0
	f := (float64(v) - ax.lo) / (ax.hi - ax.lo)
	if ax.log {
		f = (math.Log(float64(v)) - math.Log(ax.lo)) / (math.Log(ax.hi) - math.Log(ax.lo))
	}
	return swX0 + pad + (swX1-swX0-2*pad)*f
}

// frame draws the panel's grid, y ticks, x ticks at the swept values and both axis labels.
func (ax sweepAxis) frame(b *strings.Builder, label string, p sweep.Param, ticks []tick, yAt func(pos float64) float64) {
	for _, t := range ticks {
		y := yAt(t.Pos)
		fmt.Fprintf(b, `<line class="grid" x1="%g" x2="%g" y1="%.1f" y2="%.1f"/>`, swX0, swX1, y, y)
		fmt.Fprintf(b, `<text class="axis" x="%g" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>`, swX0-8, y, t.Label)
	}
	fmt.Fprintf(b, `<line class="axisline" x1="%g" x2="%g" y1="%g" y2="%g"/>`, swX0, swX1, swY1, swY1)
	last := -1e9
	for _, v := range ax.values {
		x := ax.at(v)
		fmt.Fprintf(b, `<line class="tickmark" x1="%.1f" x2="%.1f" y1="%g" y2="%g"/>`, x, x, swY1, swY1+5)
		if x-last >= 30 {
			fmt.Fprintf(b, `<text class="axis" x="%.1f" y="%g" text-anchor="middle">%s</text>`, x, swY1+20, template.HTMLEscapeString(p.Format(v)))
			last = x
		}
	}
	xl := p.Label
	if ax.log {
		xl += " (log scale)"
	}
	fmt.Fprintf(b, `<text class="axis title" x="%g" y="%g" text-anchor="middle">%s</text>`, (swX0+swX1)/2, swH-8, template.HTMLEscapeString(xl))
	fmt.Fprintf(b, `<text class="axis title" x="14" y="%g" transform="rotate(-90 14 %g)" text-anchor="middle">%s</text>`,
		(swY0+swY1)/2, (swY0+swY1)/2, template.HTMLEscapeString(label))
}

func sweepYAt(pos float64) float64 { return swY1 - (swY1-swY0)*pos/100 }

func polyline(b *strings.Builder, color, dash string, pts []string) {
	if len(pts) < 2 {
		return
	}
	d := ""
	if dash != "" {
		d = ` stroke-dasharray="` + dash + `"`
	}
	fmt.Fprintf(b, `<polyline class="series" fill="none" stroke="%s"%s points="%s"/>`, color, d, strings.Join(pts, " "))
}

// sweepRateSVG draws the headline figure's mean with its 95% CI against the swept value.
func sweepRateSVG(series []sweepSeries, ax sweepAxis, p sweep.Param, f figure.Figure) template.HTML {
	maxHi := 0.0
	for _, s := range series {
		for _, pt := range s.points {
			if st := f.Stat(&pt.r.Summary); st != nil {
				maxHi = math.Max(maxHi, math.Max(st.Mean, st.CI95High))
			}
		}
	}
	top, ticks, scale := niceAxis(maxHi, f.Unit)
	pos := func(v float64) float64 { return math.Max(0, math.Min(100, v/top*100)) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart sweep" viewBox="0 0 %g %g" role="img" aria-label="%s against %s" data-figure="%s">`,
		swW, swH, template.HTMLEscapeString(f.Label), template.HTMLEscapeString(p.Label), f.Key)
	ax.frame(&b, f.Label+" ("+scale.Name+")", p, ticks, sweepYAt)
	for _, s := range series {
		var pts []string
		var marks strings.Builder
		for _, pt := range s.points {
			st := f.Stat(&pt.r.Summary)
			if st == nil {
				continue
			}
			x, y := ax.at(pt.x), sweepYAt(pos(st.Mean))
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, y))
			if st.N > 1 && st.CI95High > st.CI95Low {
				lo, hi := sweepYAt(pos(st.CI95Low)), sweepYAt(pos(st.CI95High))
				fmt.Fprintf(&marks, `<line class="ci" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, x, x, lo, hi)
				fmt.Fprintf(&marks, `<line class="ci" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, x-5, x+5, lo, lo)
				fmt.Fprintf(&marks, `<line class="ci" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, x-5, x+5, hi, hi)
			}
			tip := fmt.Sprintf("%s, %s %s: %s %s (n=%d", s.name, p.Label, p.Format(pt.x), f.Label,
				f.Unit.FormatCI(st.Mean, (st.CI95High-st.CI95Low)/2), st.N)
			if pt.r.Summary.SamplesFailed > 0 {
				tip += fmt.Sprintf(", %d failed", pt.r.Summary.SamplesFailed)
			}
			tip += ")"
			if st.N > 1 {
				tip += fmt.Sprintf("; 95%% CI %s – %s", f.Unit.Format(st.CI95Low), f.Unit.Format(st.CI95High))
			}
			fmt.Fprintf(&marks, `<circle class="dot" data-kind="rate" data-x="%d" data-value="%s" cx="%.1f" cy="%.1f" r="4.5" fill="%s"><title>%s</title></circle>`,
				pt.x, strconv.FormatFloat(st.Mean, 'g', -1, 64), x, y, s.color, template.HTMLEscapeString(tip))
		}
		polyline(&b, s.color, "", pts)
		b.WriteString(marks.String())
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// sweepLatencySVG draws latency p50 (solid), mean (dashed) and p99 (dotted) against the
// swept value, on a linear scale from 0 as seed 003 tabulates it.
func sweepLatencySVG(series []sweepSeries, ax sweepAxis, p sweep.Param) (template.HTML, bool) {
	type line struct {
		name, dash string
		get        func(*api.Latency) *float64
	}
	lines := []line{
		{"p50", "", func(l *api.Latency) *float64 { return l.P50 }},
		{"mean", "7 4", func(l *api.Latency) *float64 { return l.Mean }},
		{"p99", "2 3", func(l *api.Latency) *float64 { return l.P99 }},
	}
	maxV := 0.0
	for _, s := range series {
		for _, pt := range s.points {
			if l := pt.r.Summary.LatencyMicroseconds; l != nil && !CaseFailed(pt.r) {
				for _, ln := range lines {
					if v := ln.get(l); v != nil {
						maxV = math.Max(maxV, *v)
					}
				}
			}
		}
	}
	if maxV <= 0 {
		return "", false
	}
	top, ticks, _ := niceAxis(maxV, figure.Microseconds)
	pos := func(v float64) float64 { return math.Max(0, math.Min(100, v/top*100)) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart sweep" viewBox="0 0 %g %g" role="img" aria-label="latency against %s" data-figure="latencyMicroseconds">`,
		swW, swH, template.HTMLEscapeString(p.Label))
	ax.frame(&b, "round-trip latency (µs)", p, ticks, sweepYAt)
	for _, s := range series {
		var marks strings.Builder
		for _, ln := range lines {
			var pts []string
			for _, pt := range s.points {
				l := pt.r.Summary.LatencyMicroseconds
				if l == nil || CaseFailed(pt.r) {
					continue
				}
				v := ln.get(l)
				if v == nil {
					continue
				}
				x, y := ax.at(pt.x), sweepYAt(pos(*v))
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, y))
				tip := fmt.Sprintf("%s, %s %s: latency %s %s µs", s.name, p.Label, p.Format(pt.x), ln.name, figure.Number(*v))
				if l.Method != "" && l.Method != "histogram" {
					tip += " (method " + l.Method + ")"
				}
				fmt.Fprintf(&marks, `<circle class="dot" data-kind="latency-%s" data-x="%d" data-value="%s" cx="%.1f" cy="%.1f" r="3.5" fill="%s"><title>%s</title></circle>`,
					ln.name, pt.x, strconv.FormatFloat(*v, 'g', -1, 64), x, y, s.color, template.HTMLEscapeString(tip))
			}
			polyline(&b, s.color, ln.dash, pts)
		}
		b.WriteString(marks.String())
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()), true
}
