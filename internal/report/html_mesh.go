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

func buildHeatmap(run *api.Run, m *api.Mesh, mat *api.MeshMatrix) heatmap {
	unit, metric := meshUnit(m)
	h := heatmap{Title: meshview.Title(m, mat) + ": " + metric}
	idx := map[[2]string]*api.MeshCell{}
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range mat.Cells {
		c := &mat.Cells[i]
		idx[[2]string{c.Client, c.Server}] = c
		if c.Value != nil && c.Error == "" {
			lo, hi = math.Min(lo, *c.Value), math.Max(hi, *c.Value)
		}
	}
	scale := unit.Pick(math.Max(math.Abs(lo), math.Abs(hi)))
	if math.IsInf(hi, 0) {
		scale = unit.Pick(0)
	}
	fmtV := func(v float64) string { return figure.FormatValue(v, scale) }
	better := "higher is better"
	if !m.HigherIsBetter {
		better = "lower is better"
	}
	h.Title += " (" + scale.Name + ")"
	h.Caption = fmt.Sprintf("Rows: client (source) node; columns: server node. Colour: %s, %s — brighter is better, "+
		"on a scale from this matrix's worst to its best value. Outliers (cnperf mesh's median ∓ %g·MAD rule) are outlined in red and marked !; "+
		"failed pairs are red with ×, pairs not measured grey with ·. Hover a cell for exact figures and both nodes' CPU.",
		metric, better, m.OutlierMADs)
	if mat.Median != nil && mat.MAD != nil && mat.Threshold != nil {
		side, op := "below", "−"
		if !m.HigherIsBetter {
			side, op = "above", "+"
		}
		h.Spread = fmt.Sprintf("median %s %s, MAD %s %s; outliers are %s median %s %g·MAD = %s %s",
			fmtV(*mat.Median), scale.Name, fmtV(*mat.MAD), scale.Name, side, op, m.OutlierMADs, fmtV(*mat.Threshold), scale.Name)
	} else {
		h.Spread = "fewer than 3 successful pairs: no outlier detection"
	}
	cols := m.Columns(mat)
	var rows []string
	for _, cl := range m.Nodes {
		for _, sv := range cols {
			if idx[[2]string{cl, sv}] != nil {
				rows = append(rows, cl)
				break
			}
		}
	}
	for _, c := range mat.Cells {
		if c.Outlier && c.Value != nil {
			h.Outliers = append(h.Outliers, fmt.Sprintf("%s → %s: %s %s", c.Client, c.Server, fmtV(*c.Value), scale.Name))
		}
		if c.Error != "" {
			h.Failed = append(h.Failed, fmt.Sprintf("%s → %s: %s", c.Client, c.Server, oneLine(c.Error)))
		}
	}

	// Geometry.
	maxLen := func(names []string) int {
		n := 0
		for _, s := range names {
			n = max(n, len([]rune(s)))
		}
		return min(n, 24)
	}
	cw := 78.0
	if len(cols) > 8 {
		cw = math.Max(14, math.Min(78, 640/float64(len(cols))))
	}
	ch := math.Max(14, math.Min(38, cw*0.5))
	showText := cw >= 44
	left := float64(maxLen(rows))*7.2 + 40
	colLen := maxLen(cols)
	rotate := float64(colLen)*7.2 > cw-6
	top := 44.0
	if rotate {
		top = float64(colLen)*5.4 + 36
	}
	// Wide enough for the grid and for the legend (ramp, unit and direction) below it.
	w := math.Max(left+cw*float64(len(cols))+10, left+9*20+8+float64(len([]rune(scale.Name+better)))*7.4+24)
	legendY := top + ch*float64(len(rows)) + 18
	hgt := legendY + 36
	short := func(s string) string {
		r := []rune(s)
		if len(r) > 24 {
			return string(r[:23]) + "…"
		}
		return s
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart heatmap" viewBox="0 0 %.0f %.0f" width="%.0f" role="img" aria-label="%s" data-rows="%d" data-cols="%d">`,
		w, hgt, w, template.HTMLEscapeString(h.Title), len(rows), len(cols))
	fmt.Fprintf(&b, `<text class="axis title" x="%.1f" y="14" text-anchor="middle">server node →</text>`, left+cw*float64(len(cols))/2)
	fmt.Fprintf(&b, `<text class="axis title" x="12" y="%.1f" transform="rotate(-90 12 %.1f)" text-anchor="middle">← client node</text>`,
		top+ch*float64(len(rows))/2, top+ch*float64(len(rows))/2)
	for j, sv := range cols {
		x := left + cw*(float64(j)+0.5)
		if rotate {
			fmt.Fprintf(&b, `<text class="axis" x="%.1f" y="%.1f" transform="rotate(-40 %.1f %.1f)" text-anchor="start"><title>%s</title>%s</text>`,
				x, top-6, x, top-6, template.HTMLEscapeString(sv), template.HTMLEscapeString(short(sv)))
		} else {
			fmt.Fprintf(&b, `<text class="axis" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, x, top-8, template.HTMLEscapeString(sv))
		}
	}
	for i, cl := range rows {
		y := top + ch*float64(i)
		fmt.Fprintf(&b, `<text class="axis" x="%.1f" y="%.1f" text-anchor="end" dominant-baseline="middle"><title>%s</title>%s</text>`,
			left-6, y+ch/2, template.HTMLEscapeString(cl), template.HTMLEscapeString(short(cl)))
		for j, sv := range cols {
			x := left + cw*float64(j)
			c := idx[[2]string{cl, sv}]
			var res *api.Result
			if c != nil && c.Result >= 0 && c.Result < len(run.Results) {
				res = &run.Results[c.Result]
			}
			cls, fill, txt, dark := "none", "", "·", false
			var tip []string
			tip = append(tip, fmt.Sprintf("%s → %s (client → server)", cl, sv))
			switch {
			case c == nil:
				tip = append(tip, "not measured")
			case c.Value == nil || c.Error != "":
				cls, txt = "failed", "×"
				cause := c.Error
				if cause == "" && res != nil {
					cause = FailureCause(res)
				}
				if cause == "" {
					cause = "no value"
				}
				tip = append(tip, "FAILED: "+cause)
			default:
				t := 1.0
				if hi > lo {
					t = (*c.Value - lo) / (hi - lo)
				}
				if !m.HigherIsBetter {
					t = 1 - t
				}
				cls = "ok"
				fill, dark = ramp(t)
				txt = fmtV(*c.Value)
				tip = append(tip, fmt.Sprintf("%s: %s", metric, unit.Format(*c.Value)))
				if res != nil {
					if f, ok := figure.ByKey(m.Metric); ok && f.Stat != nil {
						if st := f.Stat(&res.Summary); st != nil && st.N > 1 {
							tip[len(tip)-1] = fmt.Sprintf("%s: %s (mean of %d samples ± 95%% CI)", metric, unit.FormatCI(st.Mean, (st.CI95High-st.CI95Low)/2), st.N)
						}
					}
				}
				if c.Outlier {
					cls += " outlier"
					txt += " !"
					if mat.Threshold != nil {
						side := "below"
						if !m.HigherIsBetter {
							side = "above"
						}
						tip = append(tip, fmt.Sprintf("OUTLIER: %s the threshold %s", side, unit.Format(*mat.Threshold)))
					}
				}
			}
			if c != nil {
				tip = append(tip, fmt.Sprintf("round %d, case #%d", c.Round+1, c.Result+1))
			}
			if res != nil {
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
			}
			val := ""
			if c != nil && c.Value != nil {
				val = strconv.FormatFloat(*c.Value, 'g', -1, 64)
			}
			fmt.Fprintf(&b, `<g class="cell %s" data-client="%s" data-server="%s" data-value="%s"><title>%s</title>`,
				cls, template.HTMLEscapeString(cl), template.HTMLEscapeString(sv), val, template.HTMLEscapeString(strings.Join(tip, "\n")))
			style := ""
			if fill != "" {
				style = ` style="fill: ` + fill + `"`
			}
			fmt.Fprintf(&b, `<rect class="hm" x="%.1f" y="%.1f" width="%.1f" height="%.1f"%s/>`, x+1, y+1, cw-2, ch-2, style)
			if showText || c != nil && !strings.HasPrefix(cls, "ok") {
				tc := "light"
				switch {
				case !strings.HasPrefix(cls, "ok"):
					tc = "mark"
				case dark:
					tc = "dark"
				}
				fmt.Fprintf(&b, `<text class="v %s" x="%.1f" y="%.1f" text-anchor="middle" dominant-baseline="middle">%s</text>`,
					tc, x+cw/2, y+ch/2, template.HTMLEscapeString(txt))
			}
			b.WriteString(`</g>`)
		}
	}
	// Legend: the ramp from worst to best with the matrix's values at both ends.
	if !math.IsInf(hi, 0) {
		worst, best := lo, hi
		if !m.HigherIsBetter {
			worst, best = hi, lo
		}
		const n, lw = 20, 9.0
		lx := left
		for k := 0; k < n; k++ {
			col, _ := ramp(float64(k) / float64(n-1))
			fmt.Fprintf(&b, `<rect class="legend-step" x="%.1f" y="%.1f" width="%g" height="12" style="fill: %s"/>`, lx+lw*float64(k), legendY, lw, col)
		}
		fmt.Fprintf(&b, `<text class="axis" x="%.1f" y="%.1f" text-anchor="start">worse %s</text>`, lx, legendY+28, template.HTMLEscapeString(fmtV(worst)))
		fmt.Fprintf(&b, `<text class="axis" x="%.1f" y="%.1f" text-anchor="end">%s better</text>`, lx+lw*n, legendY+28, template.HTMLEscapeString(fmtV(best)))
		fmt.Fprintf(&b, `<text class="axis" x="%.1f" y="%.1f" text-anchor="start" dominant-baseline="middle">%s (%s)</text>`,
			lx+lw*n+8, legendY+6, template.HTMLEscapeString(scale.Name), better)
	}
	b.WriteString(`</svg>`)
	h.SVG = template.HTML(b.String())
	return h
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
