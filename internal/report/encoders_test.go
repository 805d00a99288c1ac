package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"sigs.k8s.io/yaml"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/driver/netperf"
	"github.com/cnperf/cnperf/internal/driver/toolkit/fixture"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/report/reporttest"
	"github.com/cnperf/cnperf/internal/runfile"
	"github.com/cnperf/cnperf/internal/stats"
	"github.com/cnperf/cnperf/internal/text"
)

func encode(t *testing.T, format string, runs ...*api.Run) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Encode(&b, format, runs); err != nil {
		t.Fatalf("encode %s: %v", format, err)
	}
	return b.Bytes()
}

// tableGolden checks both table views of runs against testdata/NAME.golden (the default
// view, whose every line must fit text.DefaultWidth) and testdata/NAME-wide.golden (-o wide), and
// returns the default view.
func tableGolden(t *testing.T, name string, runs ...*api.Run) []byte {
	t.Helper()
	out := encode(t, "table", runs...)
	for i, l := range strings.Split(string(out), "\n") {
		if n := utf8.RuneCountInString(l); n > text.DefaultWidth {
			t.Errorf("%s line %d is %d columns wide (> %d):\n%s", name, i+1, n, text.DefaultWidth, l)
		}
	}
	reporttest.Golden(t, name+".golden", out)
	reporttest.Golden(t, name+"-wide.golden", encode(t, "wide", runs...))
	return out
}

func TestLookup(t *testing.T) {
	for _, f := range Formats() {
		if _, err := Lookup(f); err != nil {
			t.Errorf("Lookup(%q): %v", f, err)
		}
	}
	_, err := Lookup("jsn")
	if err == nil || !strings.Contains(err.Error(), "k8s-netperf-csv") || !strings.Contains(err.Error(), `(did you mean "json"?)`) {
		t.Errorf("Lookup(jsn) = %v, want an error with the nearest format and the list", err)
	}
}

func TestTableGolden(t *testing.T) {
	tableGolden(t, "table", fixtureRun())
}

func TestTableSeveralRunsGolden(t *testing.T) {
	a := fixtureRun()
	a.Results = a.Results[:2]
	b := fixtureRun()
	b.UUID = "0b5e7a4c-93d1-4c4e-8f0e-5d2a1c9b7e33"
	b.Cluster.CNI, b.Cluster.CNIVersion = "cilium", "v1.16.3"
	b.Interrupted = true
	b.Results = b.Results[2:4]
	b.Notes = []string{"results file has no end record"}
	tableGolden(t, "table-two-runs", a, b)
}

// TestTableNeverShowsZeroForFailedCase: a failed case shows no figure, and its cause is in
// its row (-o wide) or under the table by case number (the default view).
func TestTableNeverShowsZeroForFailedCase(t *testing.T) {
	for _, tc := range []struct {
		format, failedLine, cause, delta string
	}{
		{"wide", "FAILED: every sample failed: dial tcp 10.0.0.12:7000: connect: connection refused", "PARTIAL: 1 of 3 samples failed", "−8.6% vs native"},
		{"table", "FAILED", "#7 FAILED: every sample failed: dial tcp 10.0.0.12:7000: connect: connection refused", "Δ DRIVERS"},
	} {
		out := string(encode(t, tc.format, fixtureRun()))
		var failedLine string
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "host-host") {
				failedLine = l
			}
		}
		if !strings.HasSuffix(failedLine, tc.failedLine) {
			t.Errorf("%s: failed case line %q does not end with %q", tc.format, failedLine, tc.failedLine)
		}
		if strings.Contains(failedLine, "bit/s") {
			t.Errorf("%s: failed case shows a figure: %q", tc.format, failedLine)
		}
		if !strings.Contains(out, tc.cause) || !strings.Contains(out, "PARTIAL: 1 of 3 samples failed") {
			t.Errorf("%s: cause %q or partial failure not shown:\n%s", tc.format, tc.cause, out)
		}
		if !strings.Contains(out, tc.delta) {
			t.Errorf("%s: driver disagreement %q not shown:\n%s", tc.format, tc.delta, out)
		}
	}
}

func TestJSONRoundTrip(t *testing.T) {
	run := fixtureRun()
	out := encode(t, "json", run)
	var back api.Run
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(run, &back) {
		t.Errorf("JSON round trip changed the run")
	}
	// Indented, and a single object for one run.
	if !bytes.HasPrefix(out, []byte("{\n  \"apiVersion\": \"cnperf.dev/v1alpha1\"")) {
		t.Errorf("not an indented object: %.60s", out)
	}
	// Several runs: an array that runfile.ReadRuns reads back.
	two := encode(t, "json", run, run)
	runs, _, err := runfile.ReadRuns(bytes.NewReader(two), "two.json")
	if err != nil || len(runs) != 2 || !reflect.DeepEqual(runs[1], run) {
		t.Errorf("array round trip: %d runs, err %v", len(runs), err)
	}
}

// TestYAMLRoundTrip: -o yaml is -o json's fields in YAML (kubectl's -o yaml), read back whole.
func TestYAMLRoundTrip(t *testing.T) {
	run := fixtureRun()
	out := encode(t, "yaml", run)
	if !bytes.HasPrefix(out, []byte("apiVersion: cnperf.dev/v1alpha1\n")) {
		t.Errorf("not a YAML mapping: %.60s", out)
	}
	var back api.Run
	if err := yaml.UnmarshalStrict(out, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(run, &back) {
		t.Errorf("YAML round trip changed the run")
	}
	var two []api.Run
	if err := yaml.UnmarshalStrict(encode(t, "yaml", run, run), &two); err != nil || len(two) != 2 {
		t.Errorf("two runs: %d, %v", len(two), err)
	}
}

func TestCSVGoldenAndRoundTrip(t *testing.T) {
	run := fixtureRun()
	out := encode(t, "csv", run)
	reporttest.Golden(t, "run.csv", out)

	back, err := runfile.ReadCSV(bytes.NewReader(out), "run.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != 1 || back[0].UUID != run.UUID || back[0].Cluster.CNI != "calico" || !back[0].StartTime.Equal(run.StartTime) {
		t.Fatalf("run identity lost: %+v", back)
	}
	if len(back[0].Results) != len(run.Results) {
		t.Fatalf("%d results, want %d", len(back[0].Results), len(run.Results))
	}
	for i := range run.Results {
		want, got := run.Results[i], back[0].Results[i]
		if !reflect.DeepEqual(want.Summary, got.Summary) {
			wj, _ := json.Marshal(want.Summary)
			gj, _ := json.Marshal(got.Summary)
			t.Errorf("result %d summary:\n got %s\nwant %s", i, gj, wj)
		}
		if !reflect.DeepEqual(want.Params, got.Params) || want.Profile != got.Profile || want.Driver != got.Driver ||
			want.Path != got.Path || want.Error != got.Error || want.Name != got.Name || !want.StartTime.Equal(got.StartTime) {
			t.Errorf("result %d case fields differ: got %+v", i, got.Params)
		}
	}
	// The input was not modified by the encoder's optional sub-object handling.
	if run.Results[0].Topology != nil || run.Results[6].Summary.LatencyMicroseconds != nil {
		t.Error("encoder modified its input")
	}
}

// csvRecords parses an encoder's CSV output.
func csvRecords(t *testing.T, out []byte) [][]string {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func TestCSVEveryRowHasEveryColumn(t *testing.T) {
	recs := csvRecords(t, encode(t, "csv", fixtureRun()))
	if len(recs) != 1+len(fixtureRun().Results) {
		t.Fatalf("%d rows", len(recs))
	}
	// The failed case has empty figures, never zeros.
	h := recs[0]
	for i, name := range h {
		if name == "throughputBitsPerSecond.mean" && recs[7][i] != "" {
			t.Errorf("failed case throughput = %q, want empty", recs[7][i])
		}
	}
}

func TestReadCSVErrors(t *testing.T) {
	_, err := runfile.ReadCSV(strings.NewReader("run.uuid,bogus\nx,y\n"), "bad.csv")
	if err == nil || !strings.Contains(err.Error(), `bad.csv: line 1: unknown column "bogus"`) {
		t.Errorf("err = %v", err)
	}
	_, err = runfile.ReadCSV(strings.NewReader("run.uuid,params.parallel\nx,1\nx,two\n"), "bad.csv")
	if err == nil || !strings.Contains(err.Error(), "bad.csv: line 3: column params.parallel") {
		t.Errorf("err = %v", err)
	}
}

func TestK8sNetperfCSVGolden(t *testing.T) {
	out := encode(t, "k8s-netperf-csv", fixtureRun())
	reporttest.Golden(t, "k8s-netperf.csv", out)
	recs := csvRecords(t, out)
	// Header exactly as k8s-netperf's pkg/archive WriteCSVResult writes it (fb9a2ec).
	const header = "Driver,Profile,Same node,Host Network,VM mode,Service,External Server,UDN Info,Bridge Info,SR-IOV Info," +
		"Macvlan Info,Localnet Info,Duration,Parallelism,# of Samples,Message Size,Burst," +
		"Confidence metric - low,Confidence metric - high,Avg Throughput,Throughput Metric,99%tile Observed Latency,Latency Metric"
	if got := strings.Join(recs[0], ","); got != header {
		t.Errorf("header = %s", got)
	}
	// The failed case is left out: 7 cases, 1 failed.
	if len(recs) != 1+6 {
		t.Errorf("%d data rows, want 6", len(recs)-1)
	}
	// Stream: Mb/s; loopback counts as same node.
	if r := recs[1]; r[0] != "native" || r[2] != "true" || r[20] != "Mb/s" || r[19] != "41166.666667" {
		t.Errorf("stream row = %v", r)
	}
	// CRR through a ClusterIP: OP/s and Service true.
	if r := recs[6]; r[1] != "TCP_CRR" || r[5] != "true" || r[20] != "OP/s" || r[2] != "false" {
		t.Errorf("crr row = %v", r)
	}
}

func TestPerfdashGolden(t *testing.T) {
	out := encode(t, "perfdash", fixtureRun())
	reporttest.Golden(t, "perfdash.json", out)
	var doc PerfdashData
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Version != "v1" || len(doc.DataItems) == 0 {
		t.Fatalf("doc = %+v", doc)
	}
	// Items with the same metric label have the same buckets and unit (perfdash requires it).
	buckets := map[string]string{}
	for _, it := range doc.DataItems {
		var keys []string
		for k := range it.Data {
			keys = append(keys, k)
		}
		sig := it.Unit + " " + strings.Join(sortedStrings(keys), ",")
		m := it.Labels["metric"]
		if prev, ok := buckets[m]; ok && prev != sig && m != "Throughput" && m != "TransactionRate" {
			t.Errorf("metric %s has buckets %q and %q", m, prev, sig)
		}
		buckets[m] = sig
	}
	if buckets["Latency"] != "us Perc50,Perc90,Perc99" {
		t.Errorf("latency item = %q", buckets["Latency"])
	}
}

func sortedStrings(s []string) []string {
	c := append([]string(nil), s...)
	for i := range c {
		for j := i + 1; j < len(c); j++ {
			if c[j] < c[i] {
				c[i], c[j] = c[j], c[i]
			}
		}
	}
	return c
}

// TestK8sNetperfCSVDefinitions: the figures k8s-netperf writes, by its definitions (pkg/archive
// WriteCSVResult): UDP_STREAM as received, the interval 0,0 for one sample, latency the mean of the
// samples' p99.
func TestK8sNetperfCSVDefinitions(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	i := func(v int64) *int64 { return &v }
	tests := []struct {
		name    string
		profile api.Profile
		samples []api.Sample
		want    []string // Confidence low, high, Avg Throughput, Throughput Metric, 99%tile
	}{
		// k8s-netperf writes the rate netserver received (omni THROUGHPUT), not the sent one.
		{"udp as received", api.UDPStream, []api.Sample{
			{ThroughputBitsPerSecond: f(800e6), BytesSent: i(1250e6), DurationSeconds: 10},
			{ThroughputBitsPerSecond: f(700e6), BytesSent: i(1250e6), DurationSeconds: 10}},
			[]string{"114.6897631912666", "1385.3102368087334", "750.000000", "Mb/s", ""}},
		{"one sample", api.TCPStream, []api.Sample{{ThroughputBitsPerSecond: f(5e9)}},
			[]string{"0", "0", "5000.000000", "Mb/s", ""}},
		{"p99 mean of samples", api.TCPRR, []api.Sample{
			{TransactionsPerSecond: f(100), Latency: &api.Latency{P99: f(10)}},
			{TransactionsPerSecond: f(300), Latency: &api.Latency{P99: f(30)}},
			{Error: "failed", TransactionsPerSecond: f(1e9), Latency: &api.Latency{P99: f(1e9)}}},
			[]string{"-1070.6204736174668", "1470.6204736174668", "200.000000", "OP/s", "20"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &api.Result{Profile: tt.profile, Driver: "netperf", Path: api.PathPodPodCrossNode,
				Params: api.Params{Samples: len(tt.samples), Parallel: 1}, Samples: tt.samples}
			row, ok := k8sNetperfRow(r)
			if !ok {
				t.Fatal("no row")
			}
			got := []string{row[17], row[18], row[19], row[20], row[21]}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestTableLabRunGolden: a lab run (a real results file of this machine's lab) ends its
// table with the relative view, so cnperf report shows what cnperf run showed.
func TestTableLabRunGolden(t *testing.T) {
	runs, err := runfile.Read(filepath.Join("testdata", "real-lab-run.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	out := tableGolden(t, "table-lab", runs...)
	if !bytes.Contains(out, []byte("\n\nRelative to host-host (medians of the samples; latency is the p50 round trip):\n")) {
		t.Errorf("a lab run's table lacks the relative view:\n%s", out)
	}
}

// TestTablePathMTUGolden: a run with --check-mtu (a real results file of this machine's lab
// with a black hole on pod-pod-cross-node) says the finding under its table, and the paths
// without a mismatch on one line.
func TestTablePathMTUGolden(t *testing.T) {
	runs, err := runfile.Read(filepath.Join("testdata", "real-pathmtu-run.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || len(runs[0].PathMTU) != 2 {
		t.Fatalf("the results file lost its path-MTU checks: %d runs", len(runs))
	}
	out := tableGolden(t, "table-pathmtu", runs...)
	for _, want := range []string{"path MTU pod-pod-cross-node routed mtu1400: BLACK HOLE: packets above 1400 bytes",
		"path MTU as the interfaces' both ways, no mismatch: host-host underlay-bridge mtu1400 (1400/1400 bytes)"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

// TestFormatTable: every format, the sub-packages' too, is in the one table, in help order.
func TestFormatTable(t *testing.T) {
	want := []string{"table", "wide", "json", "yaml", "csv", "k8s-netperf-csv", "k8s-netperf-loss-csv", "prometheus", "perfdash", "html", "junit", "tiger-bench"}
	if got := Formats(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("Formats() = %v, want %v", got, want)
	}
	for _, f := range append(want, "mesh-csv", "mesh-cells-csv") {
		if _, err := LookupReport(f); err != nil {
			t.Errorf("LookupReport(%q): %v", f, err)
		}
	}
}

// TestLatencyProvenanceShown: a latency derived from the rate is never shown as a measured
// one: the table marks the row with a footnote, JSON and CSV carry the provenance.
func TestLatencyProvenanceShown(t *testing.T) {
	derived := func(tps float64) func(*api.Sample) {
		return func(x *api.Sample) {
			x.TransactionsPerSecond = reporttest.F(tps)
			x.Latency = &api.Latency{Mean: reporttest.F(1e6 / tps), Method: "rate-derived", Provenance: api.LatencyDerived}
		}
	}
	measured := func(tps float64) func(*api.Sample) {
		return func(x *api.Sample) {
			x.TransactionsPerSecond = reporttest.F(tps)
			x.Latency = &api.Latency{Mean: reporttest.F(50), P50: reporttest.F(40), P99: reporttest.F(90), Method: "tool",
				Provenance: api.LatencyMeasured}
		}
	}
	run := fixtureRun()
	run.Results = []api.Result{
		reporttest.Result(api.TCPRR, "uperf", api.PathLoopback, 1, 1, []api.Sample{
			reporttest.Sample(1, derived(20000)), reporttest.Sample(2, derived(21000))}),
		reporttest.Result(api.TCPRR, "netperf", api.PathLoopback, 1, 1, []api.Sample{
			reporttest.Sample(1, measured(20000))}),
	}
	if p := run.Results[0].Summary.LatencyMicroseconds.Provenance; p != api.LatencyDerived {
		t.Fatalf("summary provenance %q", p)
	}
	table := string(encode(t, "table", run))
	lines := strings.Split(table, "\n")
	var uperfRow, netperfRow string
	for _, l := range lines {
		if f := strings.Fields(l); len(f) > 2 && f[1] == "TCP_RR" {
			switch f[2] {
			case "uperf":
				uperfRow = l
			case "netperf":
				netperfRow = l
			}
		}
	}
	if !strings.Contains(uperfRow, " -* ") || strings.Contains(netperfRow, "*") ||
		!strings.Contains(table, "* latency DERIVED from the transaction rate") {
		t.Errorf("table does not mark the derived latency:\n%s", table)
	}
	recs := csvRecords(t, encode(t, "csv", run))
	h := recs[0]
	col := slices.Index(h, "latencyMicroseconds.provenance")
	if col < 0 || recs[1][col] != "derived" || recs[2][col] != "measured" {
		t.Errorf("CSV provenance column %d: %q / %q", col, recs[1][max(col, 0)], recs[2][max(col, 0)])
	}
	if !strings.Contains(string(encode(t, "json", run)), `"provenance": "derived"`) {
		t.Error("JSON lacks the provenance")
	}
}

// TestK8sNetperfUDPIsReceived: k8s-netperf's UDP_STREAM figure is netperf's omni THROUGHPUT,
// which is what netserver received (REMOTE_RECV_THROUGHPUT), read here from a real capture
// through the netperf driver: the cell must be that figure, not the sent rate.
func TestK8sNetperfUDPIsReceived(t *testing.T) {
	stdout, err := os.ReadFile("../driver/netperf/testdata/captured/udp_stream.stdout")
	if err != nil {
		t.Fatal(err)
	}
	keyval, err := netperf.ParseKeyval(stdout)
	if err != nil {
		t.Fatal(err)
	}
	s, err := keyval.ToSample(api.UDPStream)
	if err != nil {
		t.Fatal(err)
	}
	r := &api.Result{Profile: api.UDPStream, Driver: "netperf", Path: api.PathLoopback,
		Params: api.Params{Samples: 1, Parallel: 1, MessageSizeBytes: 1400}, Samples: []api.Sample{s}}
	row, ok := k8sNetperfRow(r)
	if !ok {
		t.Fatal("no row")
	}
	// THROUGHPUT=392.93, REMOTE_RECV_THROUGHPUT=392.93, LOCAL_SEND_THROUGHPUT=672.01 (10^6bits/s)
	if keyval.Values["THROUGHPUT"] != "392.93" || row[19] != "392.930000" {
		t.Errorf("THROUGHPUT %s, k8s-netperf cell %s", keyval.Values["THROUGHPUT"], row[19])
	}
}

// TestK8sNetperfStreamP99: on a stream row k8s-netperf writes netperf's P99_LATENCY, the p99 of
// its send calls; read here from the real captures through the netperf driver (one flow, and
// two parallel flows whose p99s super-netperf averages). The round-trip latency stays empty.
func TestK8sNetperfStreamP99(t *testing.T) {
	c := func(p api.Profile, par int) plan.Case {
		return plan.Case{Profile: p, Driver: "netperf", Path: api.PathLoopback,
			Params: api.Params{DurationSeconds: 1, Samples: 1, Parallel: par}}
	}
	load := func(name string) driver.Output {
		return fixture.Load(t, "../driver/netperf/testdata/captured", name).Output()
	}
	tests := []struct {
		name string
		c    plan.Case
		outs []driver.Output
		want string
	}{
		{"tcp_stream P99_LATENCY=1750", c(api.TCPStream, 1), []driver.Output{load("tcp_stream")}, "1750"},
		{"udp_stream P99_LATENCY=47", c(api.UDPStream, 1), []driver.Output{load("udp_stream")}, "47"},
		{"two flows P99_LATENCY=1400 and 120", c(api.TCPStream, 2),
			[]driver.Output{load("tcp_stream_p2_flow0"), load("tcp_stream_p2_flow1")}, "760"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := fixture.Parse(netperf.Driver{}, tt.c, tt.outs)
			if err != nil {
				t.Fatal(err)
			}
			if s.Latency != nil {
				t.Errorf("a stream's send-call time became a round trip: %+v", s.Latency)
			}
			r := &api.Result{Profile: tt.c.Profile, Driver: "netperf", Path: api.PathLoopback, Params: tt.c.Params,
				Samples: []api.Sample{s}}
			row, ok := k8sNetperfRow(r)
			if !ok {
				t.Fatal("no row")
			}
			if row[21] != tt.want || row[22] != "usec" {
				t.Errorf("99%%tile cell %q %q, want %s usec", row[21], row[22], tt.want)
			}
		})
	}
}

// TestK8sNetperfLossCSV: k8s-netperf's loss-rt CSV (pkg/archive WriteSpecificCSV): its header,
// a UDP Percent Loss row per UDP_STREAM case, a TCP Retransmissions row per TCP_STREAM case.
func TestK8sNetperfLossCSV(t *testing.T) {
	out := encode(t, "k8s-netperf-loss-csv", fixtureRun())
	reporttest.Golden(t, "k8s-netperf-loss.csv", out)
	recs := csvRecords(t, out)
	const header = "Type,Driver,Profile,Same node,Host Network,VM mode,Service,External Server,UDN Info,Bridge Info," +
		"SR-IOV Info,Macvlan Info,Localnet Info,Duration,Parallelism,# of Samples,Message Size,Burst," +
		"Confidence metric - low,Confidence metric - high,Value"
	if got := strings.Join(recs[0], ","); got != header {
		t.Errorf("header = %s", got)
	}
	// Two TCP_STREAM cases (the failed one left out) and one UDP_STREAM case.
	var types []string
	for _, r := range recs[1:] {
		types = append(types, r[0]+" "+r[2])
	}
	want := []string{"TCP Retransmissions TCP_STREAM", "TCP Retransmissions TCP_STREAM", "UDP Percent Loss UDP_STREAM"}
	if !slices.Equal(types, want) {
		t.Errorf("rows %q, want %q", types, want)
	}
	// The mean of the samples: retransmits 0, 0, 2; loss 0.12, 0.31, 0.08 %.
	if recs[1][20] != "0.666667" || recs[3][20] != "0.170000" {
		t.Errorf("values %q %q", recs[1][20], recs[3][20])
	}
}

// TestK8sNetperfCSVsOfARealRun: both k8s-netperf CSVs of a real run (cnperf run --platform local
// --driver netperf --profile TCP_STREAM,UDP_STREAM --parallel 1,2 --samples 3 --duration 2s
// --message-size 1024, netperf 2.7.1 on loopback, 2026-11-29), against golden files and against
// k8s-netperf's own arithmetic on the raw netperf counters the samples keep.
func TestK8sNetperfCSVsOfARealRun(t *testing.T) {
	runs, err := runfile.Read(filepath.Join("testdata", "real-netperf-streams-run.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	csvOut := encode(t, "k8s-netperf-csv", runs...)
	lossOut := encode(t, "k8s-netperf-loss-csv", runs...)
	reporttest.Golden(t, "k8s-netperf-real-netperf.csv", csvOut)
	reporttest.Golden(t, "k8s-netperf-loss-real-netperf.csv", lossOut)
	// k8s-netperf's netperf ParseResults on each sample's raw output: loss 100 - recv/send*100
	// from REMOTE_RECV_CALLS and LOCAL_SEND_CALLS (summed over the flows by super-netperf),
	// retransmits LOCAL_TRANSPORT_RETRANS, P99_LATENCY (the flows' truncated mean).
	peer := func(r *api.Result) (loss, retrans, p99 float64) {
		for _, s := range r.Samples {
			flows := s.Flows
			if len(flows) == 0 {
				flows = []api.Sample{s}
			}
			var send, recv, rt, l float64
			for _, f := range flows {
				if f.Raw == "" {
					// parallel flows keep no raw output: their recorded counters
					if f.PacketsSent != nil {
						send += float64(*f.PacketsSent)
						recv += float64(*f.PacketsReceived)
					}
					if f.Retransmits != nil {
						rt += *f.Retransmits
					}
					l += *f.SendCallMicroseconds.P99
					continue
				}
				kv, err := netperf.ParseKeyval([]byte(f.Raw))
				if err != nil {
					t.Fatalf("raw: %v", err)
				}
				num := func(k string) float64 {
					v, err := strconv.ParseFloat(kv.Values[k], 64)
					if err != nil {
						t.Fatalf("%s: %v", k, err)
					}
					return v
				}
				send += num("LOCAL_SEND_CALLS")
				recv += num("REMOTE_RECV_CALLS")
				if x := num("LOCAL_TRANSPORT_RETRANS"); x >= 0 { // -1 on UDP
					rt += x
				}
				l += num("P99_LATENCY")
			}
			loss += 100 - recv/send*100
			retrans += rt
			p99 += math.Trunc(l / float64(len(flows)))
		}
		n := float64(len(r.Samples)) // k8s-netperf's result.Average: the sum, then ÷ n
		return loss / n, retrans / n, p99 / n
	}
	rows := csvRecords(t, csvOut)[1:]
	lossRows := csvRecords(t, lossOut)[1:]
	if len(rows) != 4 || len(lossRows) != 4 {
		t.Fatalf("%d rows, %d loss rows, want 4 and 4", len(rows), len(lossRows))
	}
	for i := range runs[0].Results {
		r := &runs[0].Results[i]
		loss, retrans, p99 := peer(r)
		if got, want := rows[i][21], fmt.Sprint(p99); got != want {
			t.Errorf("%s x%d: 99%%tile %s, k8s-netperf's %s", r.Profile, r.Params.Parallel, got, want)
		}
		want := fmt.Sprintf("%f", retrans)
		if r.Profile == api.UDPStream {
			want = fmt.Sprintf("%f", loss)
		}
		if got := lossRows[i][20]; got != want {
			t.Errorf("%s x%d: %s %s, k8s-netperf's %s", r.Profile, r.Params.Parallel, lossRows[i][0], got, want)
		}
	}
}

// TestTableNaNIsNeverOK (issue 28, finding 7): the table printed "NaN bit/s … ok". The readers
// and the statistics no longer make a NaN, but a summary built in memory with one must still
// not read as a success.
func TestTableNaNIsNeverOK(t *testing.T) {
	run := fixtureRun()
	r := &run.Results[0]
	if r.Summary.ThroughputBitsPerSecond == nil {
		t.Fatalf("the fixture's first case has no throughput")
	}
	r.Summary.SamplesFailed = 0
	r.Summary.ThroughputBitsPerSecond.Mean = math.NaN()
	out := string(encode(t, "wide", run))
	if !strings.Contains(out, "INVALID: throughput is NaN") {
		t.Errorf("no INVALID status:\n%s", out)
	}
}

// TestTableSharedMarkAndBurst: two results of one latency method share its mark and its
// footnote, and the default view shows BURST only when a case has one.
func TestTableSharedMarkAndBurst(t *testing.T) {
	p50 := func(v float64) api.Summary {
		return api.Summary{SamplesTotal: 1, TransactionsPerSecond: &api.Stat{N: 1, Mean: 1000},
			LatencyMicroseconds: &api.Latency{P50: &v, Method: stats.LatencyPerSampleMedian}}
	}
	result := func(burst int, v float64) api.Result {
		return api.Result{Profile: api.TCPRR, Driver: "netperf", Path: api.PathPodPodCrossNode,
			Params: api.Params{Parallel: 1, Burst: burst, MessageSizeBytes: 1}, Summary: p50(v)}
	}
	tests := []struct {
		name      string
		bursts    []int
		want, not []string
	}{
		{"shared mark, no burst", []int{0, 0}, []string{"12.50*", "37.50*", "* latency method"}, []string{"**", "BURST"}},
		{"a burst", []int{0, 4}, []string{"BURST"}, []string{"**"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := &api.Run{Results: []api.Result{result(tt.bursts[0], 12.5), result(tt.bursts[1], 37.5)}}
			out := string(encode(t, "table", run))
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("table lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(out, w) {
					t.Errorf("table has %q:\n%s", w, out)
				}
			}
			if n := strings.Count(out, "latency method"); n != 1 {
				t.Errorf("%d latency method footnotes, want 1:\n%s", n, out)
			}
		})
	}
}
