package report

import (
	"bytes"
	"fmt"
	"html"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/runfile"
)

func readTestRuns(t *testing.T, name string) []*api.Run {
	t.Helper()
	runs, err := runfile.Read(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

func renderHTML(t *testing.T, runs ...*api.Run) string {
	t.Helper()
	var b bytes.Buffer
	if err := Encode(&b, "html", runs); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// cellOf returns the rendered <g> of one heatmap cell.
func cellOf(t *testing.T, html, client, server string) string {
	t.Helper()
	re := regexp.MustCompile(`(?s)<g class="cell [a-z ]+" data-client="` + client + `" data-server="` + server + `".*?</g>`)
	g := re.FindString(html)
	if g == "" {
		t.Fatalf("no heatmap cell %s → %s", client, server)
	}
	return g
}

// TestHeatmapFailuresOutliersAndFlames draws the real 3-node mesh (testdata/real-mesh-run.json)
// after turning one pair into a failure, flagging one as an outlier (as cnperf mesh would
// have: the report reads the flag, it does not recompute it) and attaching a perf flame
// graph and a failed pprof profile to one result. The real run had no failure, outlier or
// profile; this checks how they are drawn.
func TestHeatmapFailuresOutliersAndFlames(t *testing.T) {
	run := readTestRuns(t, "real-mesh-run.json")[0]
	mat := &run.Mesh.Matrices[0]
	var failedCell, outlierCell *api.MeshCell
	for i := range mat.Cells {
		c := &mat.Cells[i]
		switch {
		case c.Client == "node3" && c.Server == "node1":
			c.Value, c.Error = nil, "dial tcp 10.244.1.7:7300: connect: connection refused"
			failedCell = c
		case c.Client == "node3" && c.Server == "node2":
			c.Outlier = true
			outlierCell = c
		}
	}
	if failedCell == nil || outlierCell == nil {
		t.Fatal("fixture lacks node3 → node1 or node3 → node2")
	}
	res := &run.Results[outlierCell.Result]
	res.Profiles = []api.CPUProfile{
		{Kind: "perf", Node: "node3", Role: "client", SVG: "flames/pod-node3-node2-client-node3.svg", Source: "flames/pod-node3-node2-client-node3.folded", Samples: 291},
		{Kind: "perf", Node: "node2", Role: "server", SVG: "/var/tmp/my flames/pod-node3-node2-server-node2.svg", Samples: 288},
		{Kind: "pprof", Node: "node3", Role: "client", Error: "the agent's cnperf has no --cpu-profile flag"},
	}
	html := renderHTML(t, run)

	f := cellOf(t, html, "node3", "node1")
	for _, w := range []string{`class="cell failed"`, `data-value=""`, "FAILED: dial tcp 10.244.1.7:7300: connect: connection refused", ">×</text>"} {
		if !strings.Contains(f, w) {
			t.Errorf("failed cell lacks %q:\n%s", w, f)
		}
	}
	o := cellOf(t, html, "node3", "node2")
	for _, w := range []string{`class="cell ok outlier"`, ">3.094 !</text>", "OUTLIER: below the threshold 692.1 Mbit/s",
		"client node node3: CPU ", "server node node2: CPU ", "flame graph (perf, client node3): flames/pod-node3-node2-client-node3.svg"} {
		if !strings.Contains(o, w) {
			t.Errorf("outlier cell lacks %q:\n%s", w, o)
		}
	}
	for _, w := range []string{"failed: node3 → node1: dial tcp", "outlier: node3 → node2: 3.094 Gbit/s",
		"median 3.635 Gbit/s, MAD 0.981 Gbit/s; outliers are below median − 3·MAD = 0.692 Gbit/s",
		// Relative paths stay relative; absolute ones stay absolute, escaped.
		`<a class="flame" href="flames/pod-node3-node2-client-node3.svg">`,
		`<a class="flame" href="/var/tmp/my%20flames/pod-node3-node2-server-node2.svg">`,
		"kernel and user stacks of everything that ran there", "user-space stacks of that process only",
		"the agent&#39;s cnperf has no --cpu-profile flag", "pod network, node3 → node2"} {
		if !strings.Contains(html, w) {
			t.Errorf("report lacks %q", w)
		}
	}
	// The best pod cell (node2 → node3, 4.608) is the bright end of the ramp, the worst
	// successful one (node3 → node2, 3.094) the dark end.
	if c := cellOf(t, html, "node2", "node3"); !strings.Contains(c, "fill: #fde725") {
		t.Errorf("best cell is not the bright end:\n%s", c)
	}
	if !strings.Contains(o, "fill: #440154") {
		t.Errorf("worst cell is not the dark end:\n%s", o)
	}
}

// TestHeatmapLowerIsBetterAndAllToOne: a latency matrix puts its lowest value at the bright
// end, and an all-to-one matrix has one column (the server).
func TestHeatmapLowerIsBetterAndAllToOne(t *testing.T) {
	v := func(x float64) *float64 { return &x }
	run := &api.Run{UUID: "a2o", Results: make([]api.Result, 3),
		Mesh: &api.Mesh{Mode: "all-to-one", Nodes: []string{"a", "b", "c"}, Profile: api.TCPRR, Driver: "native",
			Metric: "latencyMicroseconds.p50", Unit: "µs", OutlierMADs: 3,
			Matrices: []api.MeshMatrix{{Network: "pod", Via: "service", Median: v(97.1), MAD: v(2.67), Threshold: v(105.1), Cells: []api.MeshCell{
				{Client: "a", Server: "a", Result: 0, Value: v(95.3)},
				{Client: "b", Server: "a", Result: 1, Value: v(97.1)},
				{Client: "c", Server: "a", Result: 2, Value: v(410), Outlier: true},
			}}}}}
	html := renderHTML(t, run)
	if n := strings.Count(html, `<g class="cell `); n != 3 {
		t.Errorf("%d cells, want 3 (3 clients × 1 server)", n)
	}
	for _, w := range []string{"latency p50, lower is better", "outliers are above median &#43; 3·MAD = 105.1 µs", /* html/template escapes + */
		"TCP_RR native, pod network, service, one client at a time: latency p50 (µs)", `data-rows="3" data-cols="1"`} {
		if !strings.Contains(html, w) {
			t.Errorf("report lacks %q", w)
		}
	}
	if c := cellOf(t, html, "a", "a"); !strings.Contains(c, "fill: #fde725") || !strings.Contains(c, ">95.30</text>") {
		t.Errorf("lowest latency is not the bright end:\n%s", c)
	}
	if c := cellOf(t, html, "c", "a"); !strings.Contains(c, "fill: #440154") || !strings.Contains(c, "OUTLIER: above") {
		t.Errorf("highest latency is not the dark, outlined end:\n%s", c)
	}
}

// TestSweepChartOverlaysRuns: the same sweep in two runs is one chart with a series per run.
func TestSweepChartOverlaysRuns(t *testing.T) {
	a := readTestRuns(t, "real-sweep-run.jsonl")[0]
	b := readTestRuns(t, "real-sweep-run.jsonl")[0]
	a.Labels = map[string]string{"cni": "calico"}
	b.UUID = "0b5e7a4c-93d1-4c4e-8f0e-5d2a1c9b7e33"
	html := renderHTML(t, a, b)
	if n := strings.Count(html, `<figure class="sweepchart"`); n != 1 {
		t.Fatalf("%d sweep charts, want 1", n)
	}
	if n := strings.Count(html, `data-kind="rate"`); n != 8 {
		t.Errorf("%d rate points, want 2 runs × 4 values", n)
	}
	if n := strings.Count(html, `<polyline class="series"`); n < 2*4 {
		t.Errorf("%d lines, want a rate line and 3 latency lines per run", n)
	}
	// Exact figures in the tooltips: run 1's 10-flow point.
	if !strings.Contains(html, "parallel flows 10: transactions 78.31 ± 9.43 k trans/s (n=3)") {
		t.Error("no exact figure in the 10-flow tooltip")
	}
}

// TestSweepChartFailedPoint: a failed case is no point, and the chart says why.
func TestSweepChartFailedPoint(t *testing.T) {
	run := readTestRuns(t, "real-sweep-run.jsonl")[0]
	r := &run.Results[2]
	r.Error = "every sample failed"
	for i := range r.Samples {
		r.Samples[i].Error = "read tcp 127.0.0.1:7101: connection reset by peer"
	}
	r.Summary = api.Summary{SamplesTotal: 3, SamplesFailed: 3}
	html := renderHTML(t, run)
	if n := strings.Count(html, `data-kind="rate"`); n != 3 {
		t.Errorf("%d rate points, want 3 (the failed case drawn as none)", n)
	}
	if !strings.Contains(html, "parallel flows 20: FAILED: every sample failed: read tcp 127.0.0.1:7101: connection reset by peer") {
		t.Error("failed point's cause missing")
	}
	out := string(encode(t, "table", run))
	if !strings.Contains(out, "FAILED: every sample failed: read tcp") || !strings.Contains(out, "          20            -") {
		t.Errorf("sweep table does not show the failed point:\n%s", out)
	}
}

// TestHeatmapEscapes: node names and recorded paths are data, never markup or a script URL.
func TestHeatmapEscapes(t *testing.T) {
	v := 1e9
	run := &api.Run{UUID: "esc", Results: []api.Result{{Profile: api.TCPStream, Driver: "native",
		Profiles: []api.CPUProfile{{Kind: "perf", Node: `<b>n</b>`, SVG: "javascript:alert(1).svg"}}}},
		Mesh: &api.Mesh{Mode: "mesh", Nodes: []string{`<b>n</b>`, `"><script>x</script>`}, Profile: api.TCPStream, Driver: "native",
			Metric: "throughputBitsPerSecond", HigherIsBetter: true,
			Matrices: []api.MeshMatrix{{Network: "pod", Cells: []api.MeshCell{{Client: `<b>n</b>`, Server: `"><script>x</script>`, Value: &v}}}}}}
	html := renderHTML(t, run)
	for _, bad := range []string{"<b>n", "<script>x", `href="javascript`, "ZgotmplZ"} {
		if strings.Contains(html, bad) {
			t.Errorf("HTML contains %q", bad)
		}
	}
	if !strings.Contains(html, `href="./javascript:alert%281%29.svg"`) {
		t.Error("a recorded path with a colon is not linked as a relative path")
	}
}

// TestHeatmapEdges draws matrices the real runs do not have: many columns with long names
// (narrow cells without text, rotated and cut names), no successful cell (no legend, no
// spread), failed cells whose cause is only in the result or nowhere, and a cell whose
// result has several samples (its tooltip gives the mean ± CI).
func TestHeatmapEdges(t *testing.T) {
	v := func(x float64) *float64 { return &x }
	var many []string
	for i := range 20 {
		many = append(many, fmt.Sprintf("a-node-with-a-long-name-%02d", i))
	}
	var wide []api.MeshCell
	for i, s := range many[1:] {
		wide = append(wide, api.MeshCell{Client: many[0], Server: s, Result: 0, Value: v(1e9 + float64(i)*1e8)})
	}
	results := []api.Result{
		{Summary: api.Summary{SamplesTotal: 3, ThroughputBitsPerSecond: &api.Stat{N: 3, Mean: 2e9, CI95Low: 1.9e9, CI95High: 2.1e9}}},
		{Error: "the pods did not start", Summary: api.Summary{SamplesTotal: 0}},
		{Summary: api.Summary{SamplesTotal: 1}},
	}
	tests := []struct {
		name      string
		nodes     []string
		cells     []api.MeshCell
		want, not []string
	}{
		{"many long names", many, wide,
			[]string{`data-rows="1" data-cols="20"`, `transform="rotate(-40`, "<title>a-node-with-a-long-name-05</title>a-node-with-a-long-name…</text>",
				"(mean of 3 samples ± 95% CI)", "worse 1", "better"},
			[]string{`<text class="v light"`, `<text class="v dark"`}},
		{"no successful cell", []string{"n1", "n2"},
			[]api.MeshCell{{Client: "n1", Server: "n2", Result: 1}, {Client: "n2", Server: "n1", Result: 2}},
			[]string{"FAILED: the pods did not start", "FAILED: no value", `<text class="v mark"`, "n2 → n1 (client → server)\nFAILED: no value\nround 1, case #3"},
			[]string{"legend-step", "worse"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &api.Mesh{Mode: "mesh", Nodes: tt.nodes, Profile: api.TCPStream, Metric: "throughputBitsPerSecond",
				Unit: "bits/s", HigherIsBetter: true, OutlierMADs: 3, Matrices: []api.MeshMatrix{{Network: "pod", Cells: tt.cells}}}
			run := &api.Run{Results: results, Mesh: m}
			h := buildHeatmap(run, m, &m.Matrices[0])
			svg := html.UnescapeString(string(h.SVG))
			for _, w := range tt.want {
				if !strings.Contains(svg, w) {
					t.Errorf("heatmap lacks %q:\n%s", w, svg)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(svg, w) {
					t.Errorf("heatmap has %q", w)
				}
			}
			if h.Spread != "fewer than 3 successful pairs: no outlier detection" {
				t.Errorf("spread %q", h.Spread)
			}
		})
	}
}
