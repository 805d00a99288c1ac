package report

import (
	"fmt"
	"html/template"
	"math"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/figure"
	"github.com/cnperf/cnperf/internal/meshview"
)

// heatmap is one mesh matrix drawn as a node × node grid: rows are client nodes, columns
// server nodes, each cell coloured by its value on a scale from the matrix's worst to its
// best value. The cells, spread and outlier flags are the ones cnperf mesh stored in
// run.Mesh (internal/mesh computes them); nothing is recomputed here.
type heatmap struct {
	ID, Title, Caption, Spread string
	SVG                        template.HTML
	Outliers, Failed           []string
}

// flameRow is one CPU profile of a result, linked from the report.
type flameRow struct {
	Run, Case, Kind, KindNote, Node, Samples, Href, SVG, Error string
}

// viridis runs from dark (worst) to bright (best): colour-blind safe and readable in grey.
var viridis = [][3]float64{
	{0x44, 0x01, 0x54}, {0x48, 0x28, 0x78}, {0x3e, 0x4a, 0x89}, {0x31, 0x68, 0x8e}, {0x26, 0x82, 0x8e},
	{0x1f, 0x9e, 0x89}, {0x35, 0xb7, 0x79}, {0x6d, 0xcd, 0x59}, {0xb4, 0xde, 0x2c}, {0xfd, 0xe7, 0x25},
}

// ramp is the colour at t in [0, 1] (1 = best) and whether text on it should be dark.
func ramp(t float64) (string, bool) {
	t = math.Max(0, math.Min(1, t))
	f := t * float64(len(viridis)-1)
	i := int(math.Floor(f))
	if i >= len(viridis)-1 {
		i = len(viridis) - 2
	}
	u := f - float64(i)
	var c [3]int
	for k := 0; k < 3; k++ {
		c[k] = int(math.Round(viridis[i][k]*(1-u) + viridis[i+1][k]*u))
	}
	return fmt.Sprintf("#%02x%02x%02x", c[0], c[1], c[2]), t > 0.55
}

// meshUnit is the unit of a mesh's metric: the figure the metric names, else its own unit.
func meshUnit(m *api.Mesh) (figure.Unit, string) {
	if f, ok := figure.ByKey(m.Metric); ok {
		return f.Unit, f.Label
	}
	return figure.Unit{Base: m.Unit, Scales: []figure.Scale{{Factor: 1, Name: m.Unit}}}, m.Metric
}

func buildHeatmaps(runs []*api.Run, labels []string) []heatmap {
	var out []heatmap
	for ri, run := range runs {
		m := run.Mesh
		if m == nil {
			continue
		}
		for mi := range m.Matrices {
			mat := &m.Matrices[mi]
			h := buildHeatmap(run, m, mat)
			h.ID = fmt.Sprintf("heatmap-%d-%d", ri+1, mi+1)
			if len(runs) > 1 {
				h.Title = labels[ri] + ": " + h.Title
			}
			out = append(out, h)
		}
	}
	return out
}

func nodeCPU(role string, n *api.NodeResources) string {
	if n == nil {
		return ""
	}
	s := fmt.Sprintf("%s node %s: CPU %.1f%% of %d CPUs (user %.1f, system %.1f, irq %.1f, softirq %.1f, steal %.1f, iowait %.1f)",
		role, n.Node, n.CPUTotalPercent, n.CPUs, n.CPUUserPercent, n.CPUSystemPercent, n.CPUIRQPercent, n.CPUSoftIRQPercent,
		n.CPUStealPercent, n.CPUIOWaitPercent)
	if n.MemoryTotalBytes > 0 {
		s += fmt.Sprintf(", memory used %.2f of %.2f GiB", float64(n.MemoryUsedEndBytes)/(1<<30), float64(n.MemoryTotalBytes)/(1<<30))
	}
	return s
}

// matrixView is one mesh matrix as its heatmap draws it: the cells by client and server,
// the rows (client nodes with a cell) and columns, the range of the successful values and
// the scale and direction of the metric.
type matrixView struct {
	run            *api.Run
	m              *api.Mesh
	mat            *api.MeshMatrix
	unit           figure.Unit
	metric, better string
	scale          figure.Scale
	cells          map[[2]string]*api.MeshCell
	lo, hi         float64 // +Inf, -Inf: no successful cell
	rows, cols     []string
}

func newMatrixView(run *api.Run, m *api.Mesh, mat *api.MeshMatrix) *matrixView {
	v := &matrixView{run: run, m: m, mat: mat, cells: map[[2]string]*api.MeshCell{}, lo: math.Inf(1), hi: math.Inf(-1)}
	v.unit, v.metric = meshUnit(m)
	for i := range mat.Cells {
		c := &mat.Cells[i]
		v.cells[[2]string{c.Client, c.Server}] = c
		if c.Value != nil && c.Error == "" {
			v.lo, v.hi = math.Min(v.lo, *c.Value), math.Max(v.hi, *c.Value)
		}
	}
	v.scale = v.unit.Pick(math.Max(math.Abs(v.lo), math.Abs(v.hi)))
	if math.IsInf(v.hi, 0) {
		v.scale = v.unit.Pick(0)
	}
	v.better = "higher is better"
	if !m.HigherIsBetter {
		v.better = "lower is better"
	}
	v.cols = m.Columns(mat)
	for _, cl := range m.Nodes {
		for _, sv := range v.cols {
			if v.cells[[2]string{cl, sv}] != nil {
				v.rows = append(v.rows, cl)
				break
			}
		}
	}
	return v
}

// format writes a value in the matrix's scale.
func (v *matrixView) format(x float64) string { return figure.FormatValue(x, v.scale) }

func buildHeatmap(run *api.Run, m *api.Mesh, mat *api.MeshMatrix) heatmap {
	v := newMatrixView(run, m, mat)
	h := heatmap{Title: meshview.Title(m, mat) + ": " + v.metric + " (" + v.scale.Name + ")"}
	h.Caption = fmt.Sprintf("Rows: client (source) node; columns: server node. Colour: %s, %s — brighter is better, "+
		"on a scale from this matrix's worst to its best value. Outliers (cnperf mesh's median ∓ %g·MAD rule) are outlined in red and marked !; "+
		"failed pairs are red with ×, pairs not measured grey with ·. Hover a cell for exact figures and both nodes' CPU.",
		v.metric, v.better, m.OutlierMADs)
	h.Spread = v.spread()
	for _, c := range mat.Cells {
		if c.Outlier && c.Value != nil {
			h.Outliers = append(h.Outliers, fmt.Sprintf("%s → %s: %s %s", c.Client, c.Server, v.format(*c.Value), v.scale.Name))
		}
		if c.Error != "" {
			h.Failed = append(h.Failed, fmt.Sprintf("%s → %s: %s", c.Client, c.Server, oneLine(c.Error)))
		}
	}
	h.SVG = template.HTML(v.svg(h.Title))
	return h
}

// spread says the matrix's median, MAD and outlier threshold, or that it has none.
func (v *matrixView) spread() string {
	mat, name := v.mat, v.scale.Name
	if mat.Median == nil || mat.MAD == nil || mat.Threshold == nil {
		return "fewer than 3 successful pairs: no outlier detection"
	}
	side, op := "below", "−"
	if !v.m.HigherIsBetter {
		side, op = "above", "+"
	}
	return fmt.Sprintf("median %s %s, MAD %s %s; outliers are %s median %s %g·MAD = %s %s",
		v.format(*mat.Median), name, v.format(*mat.MAD), name, side, op, v.m.OutlierMADs, v.format(*mat.Threshold), name)
}

// heatmapLayout is where a heatmap's parts go: cell width and height, the left margin for
// the client names, the top margin for the server names (rotated when they do not fit), the
// legend's line and the whole picture's size.
type heatmapLayout struct {
	cw, ch, left, top, legendY, w, h float64
	showText, rotate                 bool
}

// longestName is the length in runes of the longest name, at most 24 (names are cut there).
func longestName(names []string) int {
	n := 0
	for _, s := range names {
		n = max(n, len([]rune(s)))
	}
	return min(n, 24)
}

// shortName cuts a node name to 24 runes.
func shortName(s string) string {
	r := []rune(s)
	if len(r) > 24 {
		return string(r[:23]) + "…"
	}
	return s
}

func (v *matrixView) layout() heatmapLayout {
	var l heatmapLayout
	l.cw = 78.0
	if len(v.cols) > 8 {
		l.cw = math.Max(14, math.Min(78, 640/float64(len(v.cols))))
	}
	l.ch = math.Max(14, math.Min(38, l.cw*0.5))
	l.showText = l.cw >= 44
	l.left = float64(longestName(v.rows))*7.2 + 40
	colLen := longestName(v.cols)
	l.rotate = float64(colLen)*7.2 > l.cw-6
	l.top = 44.0
	if l.rotate {
		l.top = float64(colLen)*5.4 + 36
	}
	// Wide enough for the grid and for the legend (ramp, unit and direction) below it.
	l.w = math.Max(l.left+l.cw*float64(len(v.cols))+10, l.left+9*20+8+float64(len([]rune(v.scale.Name+v.better)))*7.4+24)
	l.legendY = l.top + l.ch*float64(len(v.rows)) + 18
	l.h = l.legendY + 36
	return l
}

// svg draws the heatmap: axes, one cell per client and server, the legend.
func (v *matrixView) svg(title string) string {
	l := v.layout()
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart heatmap" viewBox="0 0 %.0f %.0f" width="%.0f" role="img" aria-label="%s" data-rows="%d" data-cols="%d">`,
		l.w, l.h, l.w, template.HTMLEscapeString(title), len(v.rows), len(v.cols))
	fmt.Fprintf(&b, `<text class="axis title" x="%.1f" y="14" text-anchor="middle">server node →</text>`, l.left+l.cw*float64(len(v.cols))/2)
	fmt.Fprintf(&b, `<text class="axis title" x="12" y="%.1f" transform="rotate(-90 12 %.1f)" text-anchor="middle">← client node</text>`,
		l.top+l.ch*float64(len(v.rows))/2, l.top+l.ch*float64(len(v.rows))/2)
	for j, sv := range v.cols {
		x := l.left + l.cw*(float64(j)+0.5)
		if l.rotate {
			fmt.Fprintf(&b, `<text class="axis" x="%.1f" y="%.1f" transform="rotate(-40 %.1f %.1f)" text-anchor="start"><title>%s</title>%s</text>`,
				x, l.top-6, x, l.top-6, template.HTMLEscapeString(sv), template.HTMLEscapeString(shortName(sv)))
		} else {
			fmt.Fprintf(&b, `<text class="axis" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, x, l.top-8, template.HTMLEscapeString(sv))
		}
	}
	for i, cl := range v.rows {
		y := l.top + l.ch*float64(i)
		fmt.Fprintf(&b, `<text class="axis" x="%.1f" y="%.1f" text-anchor="end" dominant-baseline="middle"><title>%s</title>%s</text>`,
			l.left-6, y+l.ch/2, template.HTMLEscapeString(cl), template.HTMLEscapeString(shortName(cl)))
		for j, sv := range v.cols {
			v.writeCell(&b, l, l.left+l.cw*float64(j), y, cl, sv)
		}
	}
	v.writeLegend(&b, l)
	b.WriteString(`</svg>`)
	return b.String()
}

// cellLook is how one cell looks: its class (none, failed, ok, ok outlier), fill, text and
// whether the fill is dark, and its tooltip's lines.
type cellLook struct {
	class, fill, text string
	dark              bool
	tip               []string
}

// writeCell draws the cell of client cl and server sv at x, y.
func (v *matrixView) writeCell(b *strings.Builder, l heatmapLayout, x, y float64, cl, sv string) {
	c := v.cells[[2]string{cl, sv}]
	var res *api.Result
	if c != nil && c.Result >= 0 && c.Result < len(v.run.Results) {
		res = &v.run.Results[c.Result]
	}
	hc := v.cell(c, res)
	hc.tip = append([]string{fmt.Sprintf("%s → %s (client → server)", cl, sv)}, hc.tip...)
	if c != nil {
		hc.tip = append(hc.tip, fmt.Sprintf("round %d, case #%d", c.Round+1, c.Result+1))
	}
	hc.tip = append(hc.tip, resultTips(res)...)
	val := ""
	if c != nil && c.Value != nil {
		val = strconv.FormatFloat(*c.Value, 'g', -1, 64)
	}
	fmt.Fprintf(b, `<g class="cell %s" data-client="%s" data-server="%s" data-value="%s"><title>%s</title>`,
		hc.class, template.HTMLEscapeString(cl), template.HTMLEscapeString(sv), val, template.HTMLEscapeString(strings.Join(hc.tip, "\n")))
	style := ""
	if hc.fill != "" {
		style = ` style="fill: ` + hc.fill + `"`
	}
	fmt.Fprintf(b, `<rect class="hm" x="%.1f" y="%.1f" width="%.1f" height="%.1f"%s/>`, x+1, y+1, l.cw-2, l.ch-2, style)
	if l.showText || c != nil && !strings.HasPrefix(hc.class, "ok") {
		tc := "light"
		switch {
		case !strings.HasPrefix(hc.class, "ok"):
			tc = "mark"
		case hc.dark:
			tc = "dark"
		}
		fmt.Fprintf(b, `<text class="v %s" x="%.1f" y="%.1f" text-anchor="middle" dominant-baseline="middle">%s</text>`,
			tc, x+l.cw/2, y+l.ch/2, template.HTMLEscapeString(hc.text))
	}
	b.WriteString(`</g>`)
}

// cell is how cell c (nil: not measured) of result res looks, and what its tooltip says of
// its value.
func (v *matrixView) cell(c *api.MeshCell, res *api.Result) cellLook {
	hc := cellLook{class: "none", text: "·"}
	switch {
	case c == nil:
		hc.tip = append(hc.tip, "not measured")
	case c.Value == nil || c.Error != "":
		hc.class, hc.text = "failed", "×"
		cause := c.Error
		if cause == "" && res != nil {
			cause = FailureCause(res)
		}
		if cause == "" {
			cause = "no value"
		}
		hc.tip = append(hc.tip, "FAILED: "+cause)
	default:
		t := 1.0
		if v.hi > v.lo {
			t = (*c.Value - v.lo) / (v.hi - v.lo)
		}
		if !v.m.HigherIsBetter {
			t = 1 - t
		}
		hc.class = "ok"
		hc.fill, hc.dark = ramp(t)
		hc.text = v.format(*c.Value)
		hc.tip = append(hc.tip, v.valueTip(*c.Value, res))
		if c.Outlier {
			hc.class += " outlier"
			hc.text += " !"
			if v.mat.Threshold != nil {
				side := "below"
				if !v.m.HigherIsBetter {
					side = "above"
				}
				hc.tip = append(hc.tip, fmt.Sprintf("OUTLIER: %s the threshold %s", side, v.unit.Format(*v.mat.Threshold)))
			}
		}
	}
	return hc
}

// valueTip says a cell's value: the mean with its confidence interval when the result has
// more than one sample.
func (v *matrixView) valueTip(x float64, res *api.Result) string {
	if res != nil {
		if f, ok := figure.ByKey(v.m.Metric); ok && f.Stat != nil {
			if st := f.Stat(&res.Summary); st != nil && st.N > 1 {
				return fmt.Sprintf("%s: %s (mean of %d samples ± 95%% CI)", v.metric, v.unit.FormatCI(st.Mean, (st.CI95High-st.CI95Low)/2), st.N)
			}
		}
	}
	return fmt.Sprintf("%s: %s", v.metric, v.unit.Format(x))
}

// resultTips are a cell's tooltip lines on its result: both nodes' CPU and its flame graphs.
func resultTips(res *api.Result) []string {
	if res == nil {
		return nil
	}
	var tip []string
	if nr := res.NodeResources; nr != nil {
		if s := nodeCPU("client", nr.Client); s != "" {
			tip = append(tip, s)
		}
		if s := nodeCPU("server", nr.Server); s != "" {
			tip = append(tip, s)
		}
	}
	for _, p := range res.Profiles {
		if p.SVG != "" {
			tip = append(tip, fmt.Sprintf("flame graph (%s, %s %s): %s — linked under CPU flame graphs", p.Kind, p.Role, p.Node, p.SVG))
		}
	}
	return tip
}

// writeLegend draws the ramp from worst to best with the matrix's values at both ends.
func (v *matrixView) writeLegend(b *strings.Builder, l heatmapLayout) {
	if math.IsInf(v.hi, 0) {
		return
	}
	worst, best := v.lo, v.hi
	if !v.m.HigherIsBetter {
		worst, best = v.hi, v.lo
	}
	const n, lw = 20, 9.0
	lx, ly := l.left, l.legendY
	for k := 0; k < n; k++ {
		col, _ := ramp(float64(k) / float64(n-1))
		fmt.Fprintf(b, `<rect class="legend-step" x="%.1f" y="%.1f" width="%g" height="12" style="fill: %s"/>`, lx+lw*float64(k), ly, lw, col)
	}
	fmt.Fprintf(b, `<text class="axis" x="%.1f" y="%.1f" text-anchor="start">worse %s</text>`, lx, ly+28, template.HTMLEscapeString(v.format(worst)))
	fmt.Fprintf(b, `<text class="axis" x="%.1f" y="%.1f" text-anchor="end">%s better</text>`, lx+lw*n, ly+28, template.HTMLEscapeString(v.format(best)))
	fmt.Fprintf(b, `<text class="axis" x="%.1f" y="%.1f" text-anchor="start" dominant-baseline="middle">%s (%s)</text>`,
		lx+lw*n+8, ly+6, template.HTMLEscapeString(v.scale.Name), v.better)
}

// profileHref turns a flame graph's recorded path into a link: a relative path stays
// relative (it resolves against the report's own directory, so the report works when it is
// written in the directory cnperf mesh ran in), an absolute path becomes an absolute
// file-system path (it opens on the machine that recorded it).
func profileHref(path string) string {
	if path == "" {
		return ""
	}
	p := filepath.ToSlash(path)
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	// A colon in the first segment would read as a URL scheme: make it a path.
	if !strings.HasPrefix(p, "/") && strings.Contains(segs[0], ":") {
		segs = append([]string{"."}, segs...)
	}
	return strings.Join(segs, "/")
}

func profileKind(kind string) string {
	switch kind {
	case "perf":
		return "perf record -a -g on the node: kernel and user stacks of everything that ran there"
	case "pprof":
		return "the cnperf agent client's Go CPU profile: user-space stacks of that process only, no kernel"
	}
	return "unknown kind"
}

func buildFlames(runs []*api.Run, labels []string) []flameRow {
	var out []flameRow
	for ri, run := range runs {
		where := map[int]string{}
		if m := run.Mesh; m != nil {
			for _, mat := range m.Matrices {
				for _, c := range mat.Cells {
					w := fmt.Sprintf("%s network, %s → %s", mat.Network, c.Client, c.Server)
					if mat.Via != "" {
						w += " (" + mat.Via + ")"
					}
					where[c.Result] = w
				}
			}
		}
		for j := range run.Results {
			r := &run.Results[j]
			for _, p := range r.Profiles {
				row := flameRow{Run: labels[ri], Case: fmt.Sprintf("#%d %s", j+1, figure.CaseLabel(r)), Kind: p.Kind,
					KindNote: profileKind(p.Kind), Node: p.Node, Error: oneLine(p.Error)}
				if w, ok := where[j]; ok {
					row.Case = fmt.Sprintf("#%d %s", j+1, w)
				}
				if p.Role != "" {
					row.Node += " (" + p.Role + ")"
				}
				if p.Samples > 0 {
					row.Samples = strconv.FormatInt(p.Samples, 10)
				}
				row.SVG = p.SVG
				row.Href = profileHref(p.SVG)
				out = append(out, row)
			}
		}
	}
	return out
}
