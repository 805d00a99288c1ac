package report

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/figure"
	"github.com/cnperf/cnperf/internal/report/reporttest"
	"github.com/cnperf/cnperf/internal/runfile"
)

// chartRun is a run with 3 paths × 2 drivers for TCP_STREAM and TCP_RR, with merged
// latency histograms for the native driver and tool percentiles for netperf.
func chartRun(uuid, cni string, scale float64) *api.Run {
	run := &api.Run{APIVersion: api.APIVersion, Kind: api.KindRun, UUID: uuid, StartTime: t0,
		EndTime: t0.Add(4 * time.Minute), CnperfVersion: "v0.1.0-test", Platform: "kube",
		Cluster: &api.ClusterDetails{CNI: cni, KubernetesVersion: "v1.31.2", KubeProxyMode: "iptables", PodMTUBytes: 1450, NodeCount: 3,
			Nodes: []api.NodeInfo{{Name: "worker-1", Zone: "zone-a", Kernel: "6.1.0-28-amd64", ContainerRuntime: "containerd://1.7.22"},
				{Name: "worker-2", Zone: "zone-b", Kernel: "6.1.0-28-amd64", ContainerRuntime: "containerd://1.7.22"}}},
		Host: &api.HostInfo{Hostname: "bench-1", OS: "Debian GNU/Linux 12", Kernel: "6.1.0-28-amd64", Arch: "amd64", CPUs: 8}}
	paths := []struct {
		p   api.Path
		gb  float64
		lat float64
	}{{api.PathLoopback, 38, 18}, {api.PathPodPodSameNode, 21, 31}, {api.PathPodPodCrossNode, 9.2, 62}}
	jitter := []float64{1, 0.985, 1.012}
	for _, pa := range paths {
		for di, d := range []string{"native", "iperf3"} {
			var ss []api.Sample
			for i, j := range jitter {
				v := pa.gb * 1e9 * scale * j * (1 - 0.04*float64(di))
				ss = append(ss, sample(i+1, func(x *api.Sample) { x.ThroughputBitsPerSecond = fp(v); x.Retransmits = fp(float64(i * di)) }))
			}
			run.Results = append(run.Results, result(api.TCPStream, d, pa.p, 131072, 1, ss))
		}
		for di, d := range []string{"native", "netperf"} {
			var ss []api.Sample
			for i, j := range jitter {
				lat := pa.lat / scale * j
				tps := 1e6 / lat
				if d == "native" {
					ss = append(ss, sample(i+1, func(x *api.Sample) { x.TransactionsPerSecond = fp(tps); x.Histogram = hist(lat*0.7, lat*2.6, 400) }))
				} else {
					l := lat * 1.05
					ss = append(ss, sample(i+1, func(x *api.Sample) {
						x.TransactionsPerSecond = fp(tps * 0.95)
						x.Latency = &api.Latency{P50: fp(l), P90: fp(l * 1.4), P99: fp(l * 2.3), Min: fp(l * 0.6), Max: fp(l * 9), Method: "tool"}
					}))
				}
			}
			_ = di
			run.Results = append(run.Results, result(api.TCPRR, d, pa.p, 1, 1, ss))
		}
	}
	return run
}

func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CNPERF_REQUIRE_CHROMIUM") != "" {
		t.Fatal("chromium not found (apt-get install -y chromium) and CNPERF_REQUIRE_CHROMIUM is set")
	}
	t.Skip("chromium not installed (apt-get install -y chromium); set CNPERF_REQUIRE_CHROMIUM=1 to make this a failure")
	return ""
}

// chromium runs headless Chromium on a local file with extra flags and returns stdout and
// stderr. It runs in its own process group, which is killed when the run ends, so no
// renderer is left behind.
func chromium(t *testing.T, bin, file string, extra ...string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0", "--hide-scrollbars",
		"--virtual-time-budget=3000"}, extra...)
	args = append(args, "file://"+file)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // leftover helpers of our own group
	}
	if err != nil {
		t.Fatalf("chromium %v: %v\n%s", extra, err, errOut.String())
	}
	return out.String(), errOut.String()
}

var consoleLine = regexp.MustCompile(`(?m)^.*:CONSOLE[:(].*$`)

// TestHTMLReportInChromium renders three reports in headless Chromium: a real run recorded on
// this machine (testdata/real-lab-run.jsonl: TCP_STREAM with native and iperf3, TCP_RR with
// native and qperf, on loopback and the lab's same-node and cross-node paths), a two-run
// comparison, and a real sweep with a real node mesh (sweep chart and heatmaps). It checks
// that there are no console messages, that every chart mark laid out with a size, that the
// pages fit a phone-width window, and that a screenshot holds the charts. With -update the screenshot of the real run goes to docs/img/report.png and the
// sweep chart and heatmaps of the third report to docs/img/report-sweep-mesh.png.
func TestHTMLReportInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser six times; skipped with -short")
	}
	bin := chromiumPath(t)
	real, err := runfile.Read(filepath.Join("testdata", "real-lab-run.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	two := []*api.Run{chartRun("6f1c2b9e-0d6a-4e1f-9a53-3c2d7b8e4a10", "calico", 1), chartRun("0b5e7a4c-93d1-4c4e-8f0e-5d2a1c9b7e33", "cilium", 0.9)}

	render := func(name string, runs []*api.Run) (string, int) {
		var page bytes.Buffer
		if err := Encode(&page, "html", runs); err != nil {
			t.Fatal(err)
		}
		html := page.String()
		// Self-contained: nothing fetched from anywhere.
		for _, bad := range []string{"http://", "https://", "src=", "@import", "ZgotmplZ"} {
			if strings.Contains(html, bad) {
				t.Errorf("%s contains %q", name, bad)
			}
		}
		marks := strings.Count(html, `class="bar"`) + strings.Count(html, `class="dot"`)
		file := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(file, page.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return file, marks
	}
	checkDOM := func(name, file string, marks int, want ...string) string {
		dom, logs := chromium(t, bin, file, "--window-size=1280,900", "--dump-dom")
		if lines := consoleLine.FindAllString(logs, -1); len(lines) > 0 {
			t.Errorf("%s: console messages:\n%s", name, strings.Join(lines, "\n"))
		}
		m := regexp.MustCompile(`data-charts-rendered="(\d+)"`).FindStringSubmatch(dom)
		if m == nil {
			t.Fatalf("%s: script did not run: no data-charts-rendered in the DOM", name)
		}
		if n, _ := strconv.Atoi(m[1]); n != marks {
			t.Errorf("%s: %d of %d chart marks rendered with a size", name, n, marks)
		}
		for _, w := range want {
			if !strings.Contains(dom, w) {
				t.Errorf("%s: rendered page lacks %q", name, w)
			}
		}
		return dom
	}

	realFile, realMarks := render("real.html", real)
	// 16 cases: 16 bars, and latency dots for the 4 native TCP_RR cases (6 percentiles each).
	if realMarks != 16+4*6 {
		t.Errorf("real run: %d chart marks, want 40", realMarks)
	}
	checkDOM("real run", realFile, realMarks, "TCP_STREAM throughput", "TCP_RR latency percentiles", "pod-pod-cross-node 128KiB x1 [vxlan]")
	twoFile, twoMarks := render("two.html", two)
	checkDOM("comparison", twoFile, twoMarks, "Comparison", "calico (base)", "worker-2", `class="num worse"`)

	// A real sweep (1, 10, 20, 40 TCP_RR flows on loopback) and a real 3-node mesh from the
	// e2e cluster (pod and host network) in one report: one sweep chart with one point per
	// swept value, and a 3 × 3 heatmap per network holding the mesh's own values.
	sweepRun, err := runfile.Read(filepath.Join("testdata", "real-sweep-run.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	meshRun, err := runfile.Read(filepath.Join("testdata", "real-mesh-run.json"))
	if err != nil {
		t.Fatal(err)
	}
	wholeFile, wholeMarks := render("sweep-mesh.html", append(sweepRun, meshRun...))
	// (checkDOM also fails on console messages and on chart marks that did not lay out.)
	dom := checkDOM("sweep and mesh", wholeFile, wholeMarks, "TCP_RR loopback 1B — latency and transaction rate vs parallel flows",
		"server node →", "Rows: client (source) node; columns: server node", "throughput, higher is better")
	checkSweepDOM(t, dom, []string{"1", "10", "20", "40"})
	m := meshRun[0].Mesh
	if m == nil || len(m.Nodes) != 3 || len(m.Matrices) != 2 {
		t.Fatalf("mesh fixture: %+v", m)
	}
	for mi := range m.Matrices {
		checkHeatmapDOM(t, dom, fmt.Sprintf("heatmap-2-%d", mi+1), m.Nodes, &m.Matrices[mi])
	}
	if g := regexp.MustCompile(`data-heatmap-cells="(\d+)"`).FindStringSubmatch(dom); g == nil || g[1] != "18" {
		t.Errorf("heatmap cells laid out with a size: %v, want 18 (2 matrices of 3 × 3)", g)
	}
	if reporttest.Updating() {
		// docs/img/report-sweep-mesh.png: the sweep chart and the heatmaps, cut from a
		// screenshot of the page at the positions the page's script recorded.
		sweepScreenshot(t, bin, wholeFile, dom, filepath.Join("..", "..", "docs", "img", "report-sweep-mesh.png"))
	}
	dom, _ = chromium(t, bin, wholeFile, "--window-size=390,800", "--dump-dom")
	if g := regexp.MustCompile(`data-overflow-x="(\d+)"`).FindStringSubmatch(dom); g == nil || g[1] != "0" {
		t.Errorf("sweep and mesh page overflows a phone-width window: %v", g)
	}

	// 1400 px: the table of all cases has no horizontal scrollbar, for the real lab run (one
	// run, 16 cases) and three real labelled runs, one interrupted (testdata/real-labelled-runs.jsonl).
	labelled, err := runfile.Read(filepath.Join("testdata", "real-labelled-runs.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	labelledFile, _ := render("labelled.html", labelled)
	for _, f := range []string{realFile, labelledFile} {
		dom, _ = chromium(t, bin, f, "--window-size=1400,900", "--dump-dom")
		if g := regexp.MustCompile(`data-table-overflow-x="(\d+)"`).FindStringSubmatch(dom); g == nil || g[1] != "0" {
			t.Errorf("%s: the table of all cases is wider than a 1400 px window (px beyond its box): %v", filepath.Base(f), g)
		}
	}

	// Phone: the page fits a 390 px wide window (wide tables scroll in their own box).
	dom, _ = chromium(t, bin, realFile, "--window-size=390,800", "--dump-dom")
	if m := regexp.MustCompile(`data-overflow-x="(\d+)"`).FindStringSubmatch(dom); m == nil || m[1] != "0" {
		t.Errorf("page overflows a phone-width window: %v", m)
	}

	// Screenshot: a real image with charts in it (many colours, not a blank page).
	shot := filepath.Join(t.TempDir(), "report.png")
	chromium(t, bin, realFile, "--window-size=1200,2150", "--screenshot="+shot)
	checkScreenshot(t, shot)
	if reporttest.Updating() {
		dst := filepath.Join("..", "..", "docs", "img", "report.png")
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(shot)
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func checkScreenshot(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	b := img.Bounds()
	if b.Dx() != 1200 || b.Dy() != 2150 {
		t.Errorf("screenshot is %dx%d", b.Dx(), b.Dy())
	}
	// The palette's blue (#0072B2) fills the first series' bars.
	colours := map[uint32]bool{}
	blue := 0
	for y := b.Min.Y; y < b.Max.Y; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			r, g, bl, _ := img.At(x, y).RGBA()
			colours[(r>>12)<<8|(g>>12)<<4|bl>>12] = true
			if math.Abs(float64(r>>8)-0x00) < 40 && math.Abs(float64(g>>8)-0x72) < 40 && math.Abs(float64(bl>>8)-0xB2) < 40 {
				blue++
			}
		}
	}
	if len(colours) < 20 || blue < 200 {
		t.Errorf("screenshot looks blank: %d colours, %d chart-blue pixels", len(colours), blue)
	}
}

// TestHTMLSeriesLabelsAndInterruptedCase: three real runs labelled cni=calico, cni=cilium and
// cni=flannel (the last interrupted in its TCP_RR case after 1 of 3 samples) are named by
// their labels everywhere, not by run id; the interrupted case's bar is drawn faded with its
// cause, its latency line is named FAILED, and its table row is marked failed.
func TestHTMLSeriesLabelsAndInterruptedCase(t *testing.T) {
	runs, err := runfile.Read(filepath.Join("testdata", "real-labelled-runs.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 3 || !runs[2].Interrupted {
		t.Fatalf("fixture: %d runs, the third interrupted %v", len(runs), len(runs) == 3 && runs[2].Interrupted)
	}
	html := string(encode(t, "html", runs...))
	for _, want := range []string{"3 runs: cni=calico, cni=cilium, cni=flannel", "cni=calico · native", "cni=flannel · native",
		`<td>cni=flannel</td>`, `class="bar cut"`, "FAILED: interrupted after 1 of 3 samples",
		"cni=flannel · native · loopback 1B x1: FAILED: interrupted after 1 of 3 samples; drawn from the samples it finished"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if n := strings.Count(html, `class="bar cut"`); n != 1 {
		t.Errorf("%d faded bars, want 1 (the interrupted case)", n)
	}
	for _, r := range runs {
		if id := r.UUID[:8]; strings.Contains(html, "<td>"+id+"</td>") || strings.Contains(html, id+" · native") {
			t.Errorf("a series or row is named by run id %s", id)
		}
	}
	if !regexp.MustCompile(`<tr class="failed">\s*<td>cni=flannel</td><td class="num">2</td>`).MatchString(html) {
		t.Error("the interrupted case's row is not marked failed")
	}
}

func TestHTMLEscapesAndIsSelfContained(t *testing.T) {
	run := fixtureRun()
	run.Results[0].Driver = `<script>alert("x")</script>`
	run.Results[3].Driver = `"><img onerror=alert(1)>`
	run.Notes = []string{"<b>note</b>"}
	var b bytes.Buffer
	if err := Encode(&b, "html", []*api.Run{run}); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, bad := range []string{`<script>alert`, `<img onerror`, `<b>note`, "http://", "https://", "ZgotmplZ"} {
		if strings.Contains(html, bad) {
			t.Errorf("HTML contains %q", bad)
		}
	}
	// One <script> (ours), bars for the successful cases, a failed row with its cause.
	if n := strings.Count(html, "<script>"); n != 1 {
		t.Errorf("%d script elements", n)
	}
	if !strings.Contains(html, "FAILED: every sample failed: dial tcp 10.0.0.12:7000: connect: connection refused") {
		t.Error("failed case cause missing")
	}
	if strings.Contains(html, `id="compare"`) {
		t.Error("comparison section for a single run")
	}
}

func TestNiceAxis(t *testing.T) {
	top, ticks, scale := niceAxis(41.9e9, figure.BitsPerSecond)
	if scale.Name != "Gbit/s" || top != 50e9 || len(ticks) != 6 || ticks[5].Label != "50" || ticks[5].Pos != 100 {
		t.Errorf("axis = %v %v %v", top, ticks, scale)
	}
	top, ticks, _ = niceAxis(1.26e9, figure.BitsPerSecond)
	if top != 1.5e9 || len(ticks) != 4 || ticks[1].Label != "0.5" {
		t.Errorf("axis = %v %v", top, ticks)
	}
	if step125Below(19) != 10 || step125Above(70) != 100 || step125Above(41) != 50 || step125Below(230) != 200 {
		t.Error("1-2-5 steps")
	}
}

var (
	sweepFigure = regexp.MustCompile(`(?s)<figure class="sweepchart" id="sweep-1" data-param="parallel">.*?</figure>`)
	ratePoint   = regexp.MustCompile(`<circle class="dot" data-kind="rate" data-x="(\d+)"`)
	latDot      = regexp.MustCompile(`<circle class="dot" data-kind="latency-(p50|mean|p99)" data-x="(\d+)"`)
	heatCell    = regexp.MustCompile(`(?s)<g class="cell ([a-z ]+)" data-client="([^"]*)" data-server="([^"]*)" data-value="([^"]*)">.*?</g>`)
	cellText    = regexp.MustCompile(`<text class="v [a-z]+"[^>]*>([^<]*)</text>`)
)

// checkSweepDOM checks the rendered sweep chart: one rate point per swept value in order,
// and latency p50, mean and p99 at each value.
func checkSweepDOM(t *testing.T, dom string, want []string) {
	t.Helper()
	fig := sweepFigure.FindString(dom)
	if fig == "" {
		t.Fatal("no sweep chart of parallel flows in the rendered page")
	}
	var xs []string
	for _, m := range ratePoint.FindAllStringSubmatch(fig, -1) {
		xs = append(xs, m[1])
	}
	if strings.Join(xs, ",") != strings.Join(want, ",") {
		t.Errorf("sweep rate points at %v, want one per value %v", xs, want)
	}
	lat := map[string][]string{}
	for _, m := range latDot.FindAllStringSubmatch(fig, -1) {
		lat[m[1]] = append(lat[m[1]], m[2])
	}
	for _, k := range []string{"p50", "mean", "p99"} {
		if strings.Join(lat[k], ",") != strings.Join(want, ",") {
			t.Errorf("sweep latency %s points at %v, want %v", k, lat[k], want)
		}
	}
	for _, w := range []string{"parallel flows", "round-trip latency (µs)", "transactions (k trans/s)", "<title>"} {
		if !strings.Contains(fig, w) {
			t.Errorf("sweep chart lacks %q", w)
		}
	}
}

// checkHeatmapDOM checks a rendered heatmap against the matrix it was drawn from: N × N
// cells in node order, each measured cell with the mesh's exact value and its figure printed,
// the diagonal not measured.
func checkHeatmapDOM(t *testing.T, dom, id string, nodes []string, mat *api.MeshMatrix) {
	t.Helper()
	start := strings.Index(dom, `<figure class="heatmapfig" id="`+id+`">`)
	if start < 0 {
		t.Fatalf("no heatmap %s in the rendered page", id)
	}
	fig := dom[start:]
	fig = fig[:strings.Index(fig, "</figure>")]
	cells := heatCell.FindAllStringSubmatch(fig, -1)
	if len(cells) != len(nodes)*len(nodes) {
		t.Fatalf("%s: %d cells, want %d × %d", id, len(cells), len(nodes), len(nodes))
	}
	want := map[[2]string]*api.MeshCell{}
	for i := range mat.Cells {
		want[[2]string{mat.Cells[i].Client, mat.Cells[i].Server}] = &mat.Cells[i]
	}
	for k, c := range cells {
		cl, sv := nodes[k/len(nodes)], nodes[k%len(nodes)]
		if c[2] != cl || c[3] != sv {
			t.Errorf("%s: cell %d is %s → %s, want %s → %s", id, k, c[2], c[3], cl, sv)
			continue
		}
		txt := cellText.FindStringSubmatch(c[0])
		w := want[[2]string{cl, sv}]
		switch w {
		case nil:
			if c[1] != "none" || c[4] != "" || txt == nil || txt[1] != "·" {
				t.Errorf("%s: %s → %s should be not measured: class %q value %q text %v", id, cl, sv, c[1], c[4], txt)
			}
		default:
			wantText := figure.FormatValue(*w.Value, figure.Scale{Factor: 1e9, Name: "Gbit/s"})
			if c[1] != "ok" || c[4] != strconv.FormatFloat(*w.Value, 'g', -1, 64) || txt == nil || txt[1] != wantText {
				t.Errorf("%s: %s → %s: class %q value %q text %v, want ok %v %q", id, cl, sv, c[1], c[4], txt, *w.Value, wantText)
			}
			if !strings.Contains(c[0], "client node "+cl+": CPU ") || !strings.Contains(c[0], "server node "+sv+": CPU ") {
				t.Errorf("%s: %s → %s: tooltip lacks both nodes' CPU: %s", id, cl, sv, c[0])
			}
		}
	}
}

// sweepScreenshot writes the part of the page from the sweep section to the end of the mesh
// section as a PNG.
func sweepScreenshot(t *testing.T, bin, file, dom, dst string) {
	t.Helper()
	pos := func(id string) (int, int) {
		m := regexp.MustCompile(`data-` + id + `-y="(\d+),(\d+)"`).FindStringSubmatch(dom)
		if m == nil {
			t.Fatalf("no position of #%s in the DOM", id)
		}
		a, _ := strconv.Atoi(m[1])
		b, _ := strconv.Atoi(m[2])
		return a, b
	}
	top, _ := pos("sweeps")
	_, bottom := pos("mesh")
	shot := filepath.Join(t.TempDir(), "page.png")
	chromium(t, bin, file, fmt.Sprintf("--window-size=1280,%d", bottom+20), "--screenshot="+shot)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	sub, ok := img.(interface {
		SubImage(image.Rectangle) image.Image
	})
	if !ok {
		t.Fatalf("screenshot of type %T cannot be cut", img)
	}
	var out bytes.Buffer
	if err := png.Encode(&out, sub.SubImage(image.Rect(0, top-10, 1280, bottom+10))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
