package compare

import (
	"bytes"
	"math"
	"strings"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/report/reporttest"
	"github.com/cnperf/cnperf/internal/stats"
	"github.com/cnperf/cnperf/internal/stats/hdr"
	"github.com/cnperf/cnperf/internal/text"
)

func fp(v float64) *float64 { return &v }

// stream is a TCP_STREAM result with one sample per throughput value (Gbit/s).
func stream(driver string, path api.Path, gbits ...float64) api.Result {
	var ss []api.Sample
	for i, g := range gbits {
		ss = append(ss, api.Sample{Index: i + 1, ThroughputBitsPerSecond: fp(g * 1e9)})
	}
	return result(api.TCPStream, driver, path, 131072, ss)
}

// rr is a TCP_RR result; each sample has a rate and a histogram of n transactions spread
// evenly from lo to hi µs.
func rr(path api.Path, samples ...[3]float64) api.Result {
	var ss []api.Sample
	for i, s := range samples {
		h := hdr.New()
		for j := 0; j < 200; j++ {
			h.Record(int64((s[1] + (s[2]-s[1])*float64(j)/199) * 1000))
		}
		ss = append(ss, api.Sample{Index: i + 1, TransactionsPerSecond: fp(s[0]), Histogram: h.ToAPI()})
	}
	return result(api.TCPRR, "native", path, 1, ss)
}

func result(p api.Profile, driver string, path api.Path, msg int, ss []api.Sample) api.Result {
	r := api.Result{Profile: p, Driver: driver, Path: path,
		Params: api.Params{DurationSeconds: 10, Samples: len(ss), MessageSizeBytes: msg, Parallel: 1}, Samples: ss}
	r.Summary = stats.Summarize(ss)
	if r.Summary.SamplesFailed == r.Summary.SamplesTotal {
		r.Error = "every sample failed"
	}
	return r
}

func run(uuid, cni string, results ...api.Result) *api.Run {
	r := &api.Run{APIVersion: api.APIVersion, Kind: api.KindRun, UUID: uuid, Platform: "kube", Results: results}
	if cni != "" {
		r.Cluster = &api.ClusterDetails{CNI: cni}
	}
	return r
}

func failedResult(driver string, path api.Path, cause string) api.Result {
	return result(api.TCPStream, driver, path, 131072, []api.Sample{{Index: 1, Error: cause}, {Index: 2, Error: cause}})
}

// cniInputs are three CNI runs of the same four cases.
func cniInputs() []Input {
	base := run("11111111-aaaa", "calico",
		stream("iperf3", api.PathPodPodCrossNode, 9.40, 9.42, 9.38, 9.41, 9.39),
		rr(api.PathPodPodCrossNode, [3]float64{20000, 40, 60}, [3]float64{20100, 41, 61}, [3]float64{19900, 40, 62}),
		stream("iperf3", api.PathPodClusterIP, 8.0, 8.1),
		stream("iperf3", api.PathHostHost, 9.9),
	)
	cilium := run("22222222-bbbb", "cilium",
		stream("iperf3", api.PathPodPodCrossNode, 8.45, 8.47, 8.44, 8.46, 8.43),                                      // −10%, tight: worse
		rr(api.PathPodPodCrossNode, [3]float64{20050, 40, 60}, [3]float64{19950, 41, 61}, [3]float64{20000, 40, 62}), // same
		failedResult("iperf3", api.PathPodClusterIP, "dial tcp 10.96.0.12:5201: i/o timeout"),
		stream("iperf3", api.PathHostHost, 9.0), // −9%, one sample: untested
	)
	flannel := run("33333333-cccc", "flannel",
		stream("iperf3", api.PathPodPodCrossNode, 9.60, 9.62, 9.61, 9.59, 9.63),                                      // +2%: better
		rr(api.PathPodPodCrossNode, [3]float64{15000, 60, 90}, [3]float64{15200, 61, 91}, [3]float64{14900, 60, 92}), // slower
		stream("iperf3", api.PathPodClusterIP, 8.05, 8.0),
	)
	return []Input{{Source: "results/calico.jsonl", Runs: []*api.Run{base}},
		{Source: "cilium.jsonl", Runs: []*api.Run{cilium}}, {Source: "flannel.jsonl", Runs: []*api.Run{flannel}}}
}

func findMetric(t *testing.T, c *Comparison, caseSub, key string) Metric {
	t.Helper()
	for _, cs := range c.Cases {
		if strings.Contains(cs.Label, caseSub) {
			for _, m := range cs.Metrics {
				if m.Key == key {
					return m
				}
			}
		}
	}
	t.Fatalf("no %s for %s", key, caseSub)
	return Metric{}
}

func TestCompareVerdicts(t *testing.T) {
	c, err := Compare(cniInputs(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{c.Columns[0].Label, c.Columns[1].Label, c.Columns[2].Label}; strings.Join(got, ",") != "calico,cilium,flannel" {
		t.Errorf("labels = %v", got)
	}
	if len(c.Cases) != 4 {
		t.Fatalf("%d cases", len(c.Cases))
	}
	tp := findMetric(t, c, "TCP_STREAM iperf3 pod-pod-cross-node", "throughputBitsPerSecond")
	// cilium: mean 8.45 vs 9.40 → −10.106%; Welch on 5 v 5 tight samples → p tiny.
	cil := tp.Cells[1]
	if cil.Verdict != Worse || cil.Test == nil || cil.Test.Test != stats.MethodWelch || cil.Test.PValue > 1e-6 {
		t.Errorf("cilium throughput: %+v %+v", cil, cil.Test)
	}
	if math.Abs(*cil.ChangePercent-(8.45-9.40)/9.40*100) > 1e-9 {
		t.Errorf("change = %v", *cil.ChangePercent)
	}
	if tp.Cells[2].Verdict != Better {
		t.Errorf("flannel throughput: %+v", tp.Cells[2])
	}

	rate := findMetric(t, c, "TCP_RR", "transactionsPerSecond")
	if rate.Cells[1].Verdict != NoChange || rate.Cells[2].Verdict != Worse {
		t.Errorf("rr rate verdicts: %s, %s", rate.Cells[1].Verdict, rate.Cells[2].Verdict)
	}
	p99 := findMetric(t, c, "TCP_RR", "latencyMicroseconds.p99")
	if p99.HigherIsBetter || p99.Cells[2].Verdict != Worse || p99.Cells[2].Test == nil {
		t.Errorf("flannel p99: %+v", p99.Cells[2])
	}
	if p99.Cells[1].Verdict != NoChange {
		t.Errorf("cilium p99: %+v", p99.Cells[1])
	}

	svc := findMetric(t, c, "pod-clusterip", "throughputBitsPerSecond")
	if svc.Cells[1].Verdict != Failed || !strings.Contains(svc.Cells[1].Note, "i/o timeout") {
		t.Errorf("failed case: %+v", svc.Cells[1])
	}
	hh := findMetric(t, c, "host-host", "throughputBitsPerSecond")
	if hh.Cells[1].Verdict != Untested || hh.Cells[2].Verdict != Missing {
		t.Errorf("host-host: %s %s", hh.Cells[1].Verdict, hh.Cells[2].Verdict)
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "host-host") || !strings.Contains(c.Warnings[0], "not in flannel") {
		t.Errorf("warnings = %q", c.Warnings)
	}
}

func TestCompareUsesRankTestForSkewedSamples(t *testing.T) {
	base := run("a", "", stream("native", api.PathLoopback, 10, 10.1, 10.05, 10.2, 10.15, 10.08))
	// One outlier sample makes the new side skewed; Mann–Whitney is chosen and finds all
	// six new samples below all six base samples: exact p = 2/924.
	skew := run("b", "", stream("native", api.PathLoopback, 9.0, 9.1, 9.02, 9.05, 9.12, 5.0))
	c, err := Compare([]Input{{Runs: []*api.Run{base}}, {Runs: []*api.Run{skew}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cell := c.Cases[0].Metrics[0].Cells[1]
	if cell.Test == nil || cell.Test.Test != stats.MethodMannWhitney || math.Abs(cell.Test.PValue-2.0/924) > 1e-12 {
		t.Fatalf("test = %+v", cell.Test)
	}
	if cell.Verdict != Worse || !strings.Contains(cell.Test.Reason, "skewed") {
		t.Errorf("cell = %+v", cell)
	}
}

func TestGate(t *testing.T) {
	c, err := Compare(cniInputs(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	// A 5% gate: cilium throughput −10% (significant), cilium host-host −9% (untested, one
	// sample), cilium clusterip failed, flannel RR rate −25% and p99 +50%.
	regs := c.Regressions(5)
	var got []string
	for _, r := range regs {
		got = append(got, r.Column+": "+r.Figure+" "+r.Reason)
	}
	want := []string{
		"cilium: throughput significantly worse",
		"flannel: transactions significantly worse",
		"flannel: latency p50 significantly worse",
		"flannel: latency p99 significantly worse",
		"cilium:  case failed: every sample failed: dial tcp 10.96.0.12:5201: i/o timeout",
		"cilium: throughput worse, untested: 1 and 1 samples: at least 2 per side are needed for a test",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("regressions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A 60% gate passes: nothing is that much worse and the failed case... still fails.
	regs = c.Regressions(60)
	if len(regs) != 1 || !strings.Contains(regs[0].Reason, "case failed") {
		t.Errorf("60%% gate: %v", regs)
	}
}

func TestLabels(t *testing.T) {
	cal := func(v string) *api.Run {
		return &api.Run{UUID: "0123456789ab", Cluster: &api.ClusterDetails{CNI: "calico", CNIVersion: v}}
	}
	topo := func(fl string) *api.Run {
		return &api.Run{UUID: "fedcba9876", Results: []api.Result{{Topology: &api.Topology{Flavour: fl}}}}
	}
	tests := []struct {
		name string
		in   []Input
		want string
	}{
		{"explicit", []Input{{Label: "before", Runs: []*api.Run{cal("v1")}}, {Label: "after", Runs: []*api.Run{cal("v1")}}}, "before,after"},
		{"cni versions", []Input{{Runs: []*api.Run{cal("v3.27")}}, {Runs: []*api.Run{cal("v3.28")}}}, "calico v3.27,calico v3.28"},
		{"topology", []Input{{Source: "a.jsonl", Runs: []*api.Run{topo("routed")}}, {Source: "b.jsonl", Runs: []*api.Run{topo("vxlan")}}}, "routed,vxlan"},
		{"file names", []Input{{Source: "x/main.jsonl", Runs: []*api.Run{{UUID: "1"}}}, {Source: "pr.json", Runs: []*api.Run{{UUID: "2"}}}}, "main,pr"},
		{"clash", []Input{{Label: "same"}, {Label: "same"}}, "same,same #2"},
	}
	for _, tc := range tests {
		if got := strings.Join(Labels(tc.in), ","); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

// TestEncryption: columns measured with other encryption than the base are labelled by it
// and warned about; unknown encryption (older runs, a CNI cnperf does not read it from) is not.
func TestEncryption(t *testing.T) {
	in := func(enc string, node bool) Input {
		r := run("", "Cilium", stream("iperf3", api.PathPodClusterIP, 8.0, 8.1))
		r.Cluster.CNIVersion, r.Cluster.CNIMode = "v1.15.19", "tunnel vxlan, eBPF"
		r.Cluster.Encryption, r.Cluster.NodeEncryption = enc, node
		return Input{Runs: []*api.Run{r}}
	}
	tests := []struct {
		name     string
		in       []Input
		labels   string
		warnings []string
	}{
		{"WireGuard against none", []Input{in("none", false), in("wireguard", false)}, "Cilium unencrypted,Cilium WireGuard",
			[]string{"encryption differs: Cilium WireGuard is WireGuard, the base Cilium unencrypted is unencrypted; the figures include its cost"}},
		{"node encryption on one side", []Input{in("wireguard", true), in("wireguard", false), in("ipsec", false)},
			"Cilium WireGuard incl. node traffic,Cilium WireGuard,Cilium IPsec",
			[]string{"encryption differs: Cilium WireGuard is WireGuard, the base Cilium WireGuard incl. node traffic is WireGuard incl. node traffic; the figures include its cost",
				"encryption differs: Cilium IPsec is IPsec, the base Cilium WireGuard incl. node traffic is WireGuard incl. node traffic; the figures include its cost"}},
		{"the same encryption", []Input{in("wireguard", false), in("wireguard", false)},
			"Cilium tunnel vxlan, eBPF,Cilium tunnel vxlan, eBPF #2", nil},
		{"unknown in one", []Input{in("", false), in("wireguard", false)}, "Cilium tunnel vxlan, eBPF,Cilium WireGuard", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := strings.Join(Labels(tc.in), ","); got != tc.labels {
				t.Errorf("labels %s, want %s", got, tc.labels)
			}
			c, err := Compare(tc.in, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(c.Warnings, "\n") != strings.Join(tc.warnings, "\n") {
				t.Errorf("warnings\n%s\nwant\n%s", strings.Join(c.Warnings, "\n"), strings.Join(tc.warnings, "\n"))
			}
		})
	}
}

func TestLabelsFromRunLabels(t *testing.T) {
	// run is a run with cnperf run --label KEY=VALUE labels ("k=v" pairs) on calico v3.27.
	run := func(kv ...string) *api.Run {
		r := &api.Run{UUID: "0123456789ab", Cluster: &api.ClusterDetails{CNI: "calico", CNIVersion: "v3.27"}, Labels: map[string]string{}}
		for _, p := range kv {
			k, v, _ := strings.Cut(p, "=")
			r.Labels[k] = v
		}
		return r
	}
	in := func(source, label string, runs ...*api.Run) Input {
		return Input{Source: source, Label: label, Runs: runs}
	}
	tests := []struct {
		name string
		in   []Input
		want string
	}{
		{"a differing key",
			[]Input{in("a.jsonl", "", run("cni=routed", "env=ci")), in("b.jsonl", "", run("cni=vxlan", "env=ci"))},
			"cni=routed | cni=vxlan"},
		{"run labels before the CNI version",
			[]Input{in("a.jsonl", "", run("mode=bgp")), in("b.jsonl", "", &api.Run{Labels: map[string]string{"mode": "ipip"},
				Cluster: &api.ClusterDetails{CNI: "calico", CNIVersion: "v3.28"}})},
			"mode=bgp | mode=ipip"},
		{"--label wins",
			[]Input{in("a.jsonl", "before", run("cni=routed")), in("b.jsonl", "after", run("cni=vxlan"))},
			"before | after"},
		{"same value everywhere: file names",
			[]Input{in("x/main.jsonl", "", run("cni=routed")), in("pr.jsonl", "", run("cni=routed"))},
			"main | pr"},
		{"key on one side only: file names",
			[]Input{in("main.jsonl", "", run("cni=routed")), in("pr.jsonl", "", run())},
			"main | pr"},
		{"the first key that tells all apart",
			[]Input{in("a.jsonl", "", run("a=1", "b=x")), in("b.jsonl", "", run("a=1", "b=y")), in("c.jsonl", "", run("a=2", "b=z"))},
			"b=x | b=y | b=z"},
		{"no key alone: all differing keys",
			[]Input{in("a.jsonl", "", run("a=1", "b=x")), in("b.jsonl", "", run("a=1", "b=y")),
				in("c.jsonl", "", run("a=2", "b=x")), in("d.jsonl", "", run("a=2", "b=y"))},
			"a=1,b=x | a=1,b=y | a=2,b=x | a=2,b=y"},
		{"a file's runs disagree: not its label",
			[]Input{in("main.jsonl", "", run("cni=routed"), run("cni=vxlan")), in("pr.jsonl", "", run("cni=geneve"))},
			"main | pr"},
		{"labels that do not tell all apart: file names",
			[]Input{in("r1.jsonl", "", run("cni=routed")), in("r2.jsonl", "", run("cni=routed")), in("v.jsonl", "", run("cni=vxlan"))},
			"r1 | r2 | v"},
		{"a file's runs agree",
			[]Input{in("main.jsonl", "", run("cni=routed", "n=1"), run("cni=routed", "n=2")), in("pr.jsonl", "", run("cni=vxlan", "n=1"))},
			"cni=routed | cni=vxlan"},
	}
	for _, tc := range tests {
		if got := strings.Join(Labels(tc.in), " | "); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestCompareNeedsTwoInputs(t *testing.T) {
	if _, err := Compare(cniInputs()[:1], Options{}); err == nil {
		t.Error("one input accepted")
	}
	if _, err := Compare(cniInputs(), Options{Alpha: 2}); err == nil {
		t.Error("alpha 2 accepted")
	}
}

func TestRenderGolden(t *testing.T) {
	c, err := Compare(cniInputs(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct{ format, file string }{{"table", "cni.txt"}, {"wide", "cni-wide.txt"}, {"markdown", "cni.md"}, {"json", "cni.json"}} {
		var b bytes.Buffer
		if err := Write(&b, c, f.format); err != nil {
			t.Fatal(err)
		}
		reporttest.Golden(t, f.file, b.Bytes())
	}
}

// TestCompareJSONConstantSamples: the e2e-cnis run in CI compared TCP_RR whose two p50s per
// CNI landed in one histogram bucket each (constant sides, different means): Welch's t is
// infinite there, and `compare -o json` failed as a whole. Every format must render it.
func TestCompareJSONConstantSamples(t *testing.T) {
	ins := []Input{
		{Source: "a.jsonl", Runs: []*api.Run{run("a", "", stream("native", api.PathHostHost, 9, 9))}},
		{Source: "b.jsonl", Runs: []*api.Run{run("b", "", stream("native", api.PathHostHost, 8, 8))}},
	}
	c, err := Compare(ins, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tp := findMetric(t, c, "host-host", "throughputBitsPerSecond")
	if tp.Cells[1].Verdict != Worse || tp.Cells[1].Test == nil || !math.IsInf(tp.Cells[1].Test.Statistic, -1) {
		t.Fatalf("constant 8 vs 9: %+v %+v", tp.Cells[1], tp.Cells[1].Test)
	}
	for _, format := range Formats {
		var b strings.Builder
		if err := Write(&b, c, format); err != nil {
			t.Errorf("%s: %v", format, err)
		}
	}
	var b strings.Builder
	if err := Write(&b, c, "json"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"statisticInfinite": "-"`) {
		t.Errorf("json does not say the statistic is -Inf:\n%s", b.String())
	}
}

// TestGateProblems: what fails a gate besides regressions (issue 28, finding 1): a later run
// without results, interrupted, lacking a case of the base, or with a figure that is not a
// finite number; the Allow options relax only what they name.
func TestGateProblems(t *testing.T) {
	a := stream("native", api.PathLoopback, 9.40, 9.42, 9.38)
	b := stream("native", api.PathPodPodSameNode, 9.40, 9.42, 9.38)
	nan := stream("native", api.PathLoopback, 9.40, 9.42, 9.38)
	nan.Summary.ThroughputBitsPerSecond.Mean = math.NaN()
	interrupted := run("new", "", a)
	interrupted.Interrupted = true
	for _, c := range []struct {
		name string
		base *api.Run
		new  *api.Run
		opt  GateOptions
		want []string
	}{
		{"same", run("b", "", a, b), run("new", "", a, b), GateOptions{}, nil},
		{"missing", run("b", "", a, b), run("new", "", a), GateOptions{}, []string{"[new]: missing"}},
		{"missing allowed", run("b", "", a, b), run("new", "", a), GateOptions{AllowMissing: true}, nil},
		{"only new has a case", run("b", "", a), run("new", "", a, b), GateOptions{}, nil},
		{"empty", run("b", "", a), run("new", ""), GateOptions{AllowMissing: true, AllowInterrupted: true}, []string{"[new]: no results"}},
		{"interrupted", run("b", "", a), interrupted, GateOptions{}, []string{"[new]: the run was interrupted after 1 case(s)"}},
		{"interrupted allowed", run("b", "", a), interrupted, GateOptions{AllowInterrupted: true}, nil},
		{"NaN in the new run", run("b", "", a), run("new", "", nan), GateOptions{AllowMissing: true, AllowInterrupted: true},
			[]string{"[new]: not a finite number: throughput NaN"}},
		{"NaN in the base", run("b", "", nan), run("new", "", a), GateOptions{}, []string{"[base]: not a finite number: throughput NaN"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmp, err := Compare([]Input{{Label: "base", Runs: []*api.Run{c.base}}, {Label: "new", Runs: []*api.Run{c.new}}}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := cmp.Gate(c.opt)
			var lines []string
			for _, r := range got {
				lines = append(lines, r.String())
			}
			if len(got) != len(c.want) {
				t.Fatalf("gate: %q, want %d problem(s) %q", lines, len(c.want), c.want)
			}
			for i, w := range c.want {
				if !strings.Contains(lines[i], w) {
					t.Errorf("problem %d: %q lacks %q", i, lines[i], w)
				}
			}
			// The JSON and text encoders never meet a NaN: the cell is invalid, not "ok".
			for _, format := range Formats {
				var out bytes.Buffer
				if err := Write(&out, cmp, format); err != nil {
					t.Errorf("%s: %v", format, err)
				}
				if strings.Contains(out.String(), "NaN bit/s") {
					t.Errorf("%s prints a NaN value:\n%s", format, out.String())
				}
			}
		})
	}
}

// TestTableFitsWidth: the table view of the CNI comparison fits 120 and 80 columns, giving up
// the tests, then the intervals, then splitting the later columns into blocks with the base;
// at 60 each block has one later column.
func TestTableFitsWidth(t *testing.T) {
	c, err := Compare(cniInputs(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		columns, fit int
		want, not    []string
	}{
		{0, 120, []string{"9.400 ± 0.020 Gbit/s", "−10.1% worse", "-o wide adds each test"}, []string{"W p<0.001", "split"}},
		{80, 80, []string{"9.400 Gbit/s", "the 95% CI half-widths", "split into 2 tables"}, []string{"±  0.020", "W p"}},
		{60, -1, []string{"split into 2 tables to fit 60 columns"}, nil},
	} {
		var b strings.Builder
		if err := WriteWidth(&b, c, "table", tc.columns); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for i, l := range strings.Split(out, "\n") {
			if n := text.Width(l); tc.fit > 0 && n > tc.fit {
				t.Errorf("width %d: line %d is %d wide:\n%s", tc.columns, i+1, n, out)
				break
			}
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("width %d lacks %q:\n%s", tc.columns, w, out)
			}
		}
		for _, w := range tc.not {
			if strings.Contains(out, w) {
				t.Errorf("width %d has %q:\n%s", tc.columns, w, out)
			}
		}
	}
}

// TestHardware: two runs on nodes whose uplink differs (GRO on in one: the e2e cluster's node1
// as `cnperf agent node-hardware` read it, and the same with GRO switched on) get a warning;
// the same hardware, or unknown hardware on one side, none; nor a field one reading lacks (what
// node-exporter does not read).
func TestHardware(t *testing.T) {
	hw := func(gro bool) *api.NodeHardware {
		return &api.NodeHardware{Source: "agent", CPUModel: "AMD EPYC", CPUCount: 2, Kernel: "6.18.44-fc-v595", Uplink: "eth0",
			Driver: "veth", SpeedBitsPerSecond: 10_000_000_000, MTUBytes: 1500,
			Offloads: map[string]bool{"gro": gro, "gso": true, "rx-checksum": true, "tso": true, "tx-checksum": true}}
	}
	fromNodeExporter := func(kernel string) *api.NodeHardware {
		return &api.NodeHardware{Source: api.HardwareFromNodeExporter, CPUCount: 2, Kernel: kernel, Uplink: "eth0",
			SpeedBitsPerSecond: 10_000_000_000, MTUBytes: 1500, Note: "no CPU model (…); no NIC driver or offloads (not read from node-exporter)"}
	}
	noSpeed := func(why string) *api.NodeHardware {
		h := fromNodeExporter("6.18.44-fc-v595")
		h.SpeedBitsPerSecond, h.SpeedUnknown = 0, why
		return h
	}
	in := func(label string, h *api.NodeHardware) Input {
		r := run("", "Calico", stream("iperf3", api.PathPodPodCrossNode, 8.0, 8.1))
		if h != nil {
			r.Cluster.Nodes = []api.NodeInfo{{Name: "node1", Hardware: h}, {Name: "node2", Hardware: h}}
		}
		return Input{Label: label, Runs: []*api.Run{r}}
	}
	for _, tc := range []struct {
		name     string
		in       []Input
		warnings []string
	}{
		{"GRO switched on", []Input{in("before", hw(false)), in("after", hw(true))}, []string{
			"node hardware differs: after ran on AMD EPYC x2, kernel 6.18.44-fc-v595, uplink eth0 (veth, 10 Gbit/s, MTU 1500; " +
				"gro gso rx-checksum tso tx-checksum on), the base before on AMD EPYC x2, kernel 6.18.44-fc-v595, uplink eth0 " +
				"(veth, 10 Gbit/s, MTU 1500; gso rx-checksum tso tx-checksum on, gro off); the figures include the difference"}},
		{"the same", []Input{in("a", hw(false)), in("b", hw(false))}, nil},
		{"unknown in one", []Input{in("a", hw(false)), in("b", nil)}, nil},
		// what node-exporter read of the same node (no driver, offloads nor CPU model without
		// --collector.cpu.info) is not a difference; a kernel it read differently is
		{"the same node read from node-exporter", []Input{in("agent", hw(false)), in("node-exporter", fromNodeExporter("6.18.44-fc-v595"))}, nil},
		// a speed node-exporter could not read (netclass off) is not a difference; one the kernel
		// does not report is
		{"speed not read by node-exporter", []Input{in("agent", hw(false)), in("node-exporter", noSpeed(api.SpeedNotRead))}, nil},
		{"speed not reported", []Input{in("agent", hw(false)), in("node-exporter", noSpeed(api.SpeedNotReported))}, []string{
			"node hardware differs: node-exporter ran on CPU x2, kernel 6.18.44-fc-v595, uplink eth0 (speed not reported, MTU 1500), " +
				"the base agent on CPU x2, kernel 6.18.44-fc-v595, uplink eth0 (10 Gbit/s, MTU 1500); the figures include the difference"}},
		{"another kernel read from node-exporter", []Input{in("agent", hw(false)), in("node-exporter", fromNodeExporter("6.19.1"))}, []string{
			"node hardware differs: node-exporter ran on CPU x2, kernel 6.19.1, uplink eth0 (10 Gbit/s, MTU 1500), the base agent " +
				"on CPU x2, kernel 6.18.44-fc-v595, uplink eth0 (10 Gbit/s, MTU 1500); the figures include the difference"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Compare(tc.in, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(c.Warnings, "\n") != strings.Join(tc.warnings, "\n") {
				t.Errorf("warnings\n%s\nwant\n%s", strings.Join(c.Warnings, "\n"), strings.Join(tc.warnings, "\n"))
			}
		})
	}
}
