package integration

// cnperf always on (docs/always-on.md) against a real monitoring stack: Debian's
// prometheus-pushgateway and prometheus on loopback, fed by real cnperf runs that push.

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	fig "github.com/cnperf/cnperf/internal/figure"
	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/runfile"
	"github.com/cnperf/cnperf/internal/sink/pushgateway/pushgatewaytest"
	"github.com/cnperf/cnperf/internal/testdaemon"
	"github.com/cnperf/cnperf/internal/text"
)

// rulesFile is the shipped alert rules file.
func rulesFile(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "deploy", "prometheus", "cnperf-rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// monitoringPlan writes a plan named name that measures TCP_STREAM and TCP_RR (or profiles)
// with the built-in generator on loopback, samples 1-second samples each; a TCP_STREAM at
// streamRate (bits/s, e.g. 1G) when it is not empty.
func monitoringPlan(t *testing.T, name string, samples int, streamRate string, profiles ...string) string {
	t.Helper()
	if len(profiles) == 0 {
		profiles = []string{"TCP_STREAM", "TCP_RR"}
	}
	var tests strings.Builder
	for _, p := range profiles {
		fmt.Fprintf(&tests, "  - name: %s\n    profiles: [%s]\n", strings.ToLower(strings.ReplaceAll(p, "_", "-")), p)
		if p == "TCP_STREAM" && streamRate != "" {
			fmt.Fprintf(&tests, "    rate: %s\n", streamRate)
		}
	}
	plan := fmt.Sprintf("apiVersion: cnperf.dev/v1alpha1\nkind: Plan\nmetadata:\n  name: %s\n"+
		"defaults:\n  duration: 1s\n  samples: %d\n  drivers: [native]\n  paths: [loopback]\ntests:\n%s", name, samples, tests.String())
	p := filepath.Join(t.TempDir(), name+".yaml")
	if err := os.WriteFile(p, []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// pushedRun is one real cnperf run that pushed, as its results file has it.
type pushedRun struct {
	run    *api.Run
	stderr string
}

// runAndPush runs the real binary (`cnperf run --platform local` with the plan, pushing to
// the Pushgateway) and returns the run from its results file. With cut > 0, the process gets
// SIGTERM that long after its first case is in the results file (a CronJob's
// activeDeadlineSeconds), and must exit 1. prefix runs before the binary (e.g. a shell that moves it into a cgroup).
func runAndPush(t *testing.T, bin, plan, pushgateway, job string, cut time.Duration, prefix []string, args ...string) pushedRun {
	t.Helper()
	results := filepath.Join(t.TempDir(), "run.jsonl")
	argv := append([]string{bin, "run", "-c", plan, "--platform", "local", "--no-progress", "-o", "json",
		"--results", results, "--push-gateway", pushgateway, "--push-job", job}, args...)
	argv = append(append([]string{}, prefix...), argv...)
	proc := testdaemon.Run(t, exec.Command(argv[0], argv[1:]...))
	if cut > 0 {
		proc.CutAfterFirstCase(t, results, cut)
	}
	err := proc.Wait(t, 2*time.Minute)
	stderr := proc.Stderr
	var ee *exec.ExitError
	switch {
	case cut > 0 && (!errors.As(err, &ee) || ee.ExitCode() != 1):
		t.Fatalf("cut run: exit %v, want 1; stderr:\n%s", err, stderr.String())
	case cut == 0 && err != nil:
		t.Fatalf("run: %v; stderr:\n%s", err, stderr.String())
	}
	if !text.ContainsFolded(stderr.String(), "pushgateway: run ") {
		t.Fatalf("the run did not say it pushed; stderr:\n%s", stderr.String())
	}
	r := readRun(t, results)
	return pushedRun{run: r, stderr: stderr.String()}
}

// cutInSecondCase is runAndPush cut 1.5 s after the first case, in the second sample of the
// second case (1-second samples): a run whose second case is failed (interrupted) with the
// sample it finished. On a busy machine the SIGTERM can come before that sample finished
// (then the case is not in the run at all): the run is made again, up to three times, to
// the same group.
func cutInSecondCase(t *testing.T, bin, plan, pushgateway, job string, prefix []string, args ...string) pushedRun {
	t.Helper()
	for attempt := 1; ; attempt++ {
		r := runAndPush(t, bin, plan, pushgateway, job, 1500*time.Millisecond, prefix, args...)
		if len(r.run.Results) == 2 && report.CaseFailed(&r.run.Results[1]) {
			return r
		}
		if attempt == 3 {
			t.Fatalf("three cut runs, none with its second case failed; the last has %d cases:\n%s", len(r.run.Results), r.stderr)
		}
		t.Logf("cut run %d: %d cases, not in the second case's second sample; again", attempt, len(r.run.Results))
	}
}

// readRun reads the results file of one run.
func readRun(t *testing.T, path string) *api.Run {
	t.Helper()
	runs, err := runfile.Read(path)
	if err != nil || len(runs) != 1 {
		t.Fatalf("%s: %d runs, %v", path, len(runs), err)
	}
	return runs[0]
}

// TestPushedRunsInRealPrometheus is the path of a scheduled run's figures to the person who
// queries them: real cnperf runs on loopback push to Debian's Pushgateway, Debian's Prometheus
// scrapes it (honor_labels, as docs/always-on.md says) with the shipped rules loaded, and the
// figures are queried through Prometheus' HTTP API by the names and labels users write:
// profile, driver, path, the nodes, the plan and the run's labels. A second run, cut by
// SIGTERM after its first case as activeDeadlineSeconds cuts a CronJob's run, is in its own
// group (other labels), and the shipped rules fire on it in Prometheus itself.
func TestPushedRunsInRealPrometheus(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Pushgateway and Prometheus and measures on loopback; skipped with -short")
	}
	pg := pushgatewaytest.Start(t)
	prom := pushgatewaytest.StartPrometheus(t, pg, rulesFile(t))
	bin := cliBinary(t)
	plan := monitoringPlan(t, "always-on-it", 2, "", "TCP_STREAM", "TCP_RR", "TCP_CRR", "UDP_STREAM")
	ok := runAndPush(t, bin, plan, pg, "cnperf-it", 0, nil, "--label", "cluster=it", "--label", "cni=loopback")
	cut := cutInSecondCase(t, bin, plan, pg, "cnperf-it", nil, "--label", "cluster=it-cut", "--label", "cni=loopback")
	t.Logf("the run that finished:\n%s\nthe run that was cut:\n%s", ok.stderr, cut.stderr)

	sel := `job="cnperf-it",plan="always-on-it",label_cluster="it",label_cni="loopback"`
	info := prom.WaitFor(t, `cnperf_run_info{`+sel+`}`, 30*time.Second)
	if len(info) != 1 || info[0].Labels["run_uuid"] != ok.run.UUID || info[0].Labels["platform"] != "local" {
		t.Errorf("cnperf_run_info{%s} = %+v, want the run %s", sel, info, ok.run.UUID)
	}
	for _, res := range ok.run.Results {
		var metric string
		var f fig.Figure
		div := 1.0
		switch res.Profile {
		case api.TCPStream:
			metric, f, div = "cnperf_throughput_bytes_per_second", fig.Throughput, 8
		case api.TCPRR:
			metric, f = "cnperf_transactions_per_second", fig.TransactionRate
		default:
			continue
		}
		q := fmt.Sprintf(`%s{%s,profile=%q,driver="native",path="loopback",client_node=%q,server_node=%q}`,
			metric, sel, res.Profile, res.Placement.Client.Node, res.Placement.Server.Node)
		got, err := prom.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		want := f.Stat(&res.Summary).Mean / div
		if len(got) != 1 || math.Abs(got[0].Value-want) > 1e-9*want {
			t.Errorf("%s = %+v, want one series of %v (the results file's mean)", q, got, want)
			continue
		}
		t.Logf("%s = %v", q, got[0].Value)
		if res.Profile == api.TCPRR {
			p99 := fmt.Sprintf(`cnperf_latency_seconds{%s,profile="TCP_RR",quantile="0.99"}`, sel)
			lat, err := prom.Query(p99)
			if err != nil {
				t.Fatal(err)
			}
			if want := *res.Summary.LatencyMicroseconds.P99 / 1e6; len(lat) != 1 || math.Abs(lat[0].Value-want) > 1e-9*want {
				t.Errorf("%s = %+v, want one series of %v", p99, lat, want)
			}
		}
	}
	// The cut run: interrupted, its second case failed, and the shipped rules fire on it in
	// this Prometheus (the rules are evaluated every second).
	cutSel := `job="cnperf-it",plan="always-on-it",label_cluster="it-cut"`
	if got := prom.WaitFor(t, `cnperf_run_interrupted{`+cutSel+`}`, 30*time.Second); got[0].Value != 1 {
		t.Errorf("cnperf_run_interrupted{%s} = %v, want 1", cutSel, got[0].Value)
	}
	if got, _ := prom.Query(`cnperf_run_interrupted{` + sel + `}`); len(got) != 1 || got[0].Value != 0 {
		t.Errorf("cnperf_run_interrupted{%s} = %+v, want 0", sel, got)
	}
	// The headline figures of the last runs of every path and driver, as a dashboard asks.
	by, err := prom.Query(`max by (profile, driver, path, label_cluster) (cnperf_throughput_bytes_per_second{job="cnperf-it",profile="TCP_STREAM"})`)
	if err != nil {
		t.Fatal(err)
	}
	if len(by) != 2 {
		t.Errorf("throughput by profile, driver, path, cluster: %+v, want the finished run's and the cut run's", by)
	}

	alerts := prom.WaitFor(t, `ALERTS{alertname="CnperfRunInterrupted",alertstate="firing"}`, 30*time.Second)
	if len(alerts) != 1 || alerts[0].Labels["label_cluster"] != "it-cut" || alerts[0].Labels["plan"] != "always-on-it" {
		t.Errorf("CnperfRunInterrupted fires for %+v, want the cut run's group only", alerts)
	}
	failing := prom.WaitFor(t, `ALERTS{alertname="CnperfMeasurementFailing",alertstate="firing"}`, 30*time.Second)
	if len(failing) != 1 || failing[0].Labels["profile"] != string(cut.run.Results[1].Profile) {
		t.Errorf("CnperfMeasurementFailing fires for %+v, want the cut run's second case", failing)
	}
	for _, a := range append(alerts, failing...) {
		t.Logf("firing: %v", sortedLabels(a.Labels))
	}

	// The shipped dashboard: every query of its panels and variables returns series here,
	// with every variable at its default (All).
	queries := dashboardQueries(t)
	for _, q := range queries {
		got, err := prom.Query(q.expr)
		if err != nil {
			t.Errorf("dashboard %s: %v", q.where, err)
			continue
		}
		if len(got) == 0 {
			t.Errorf("dashboard %s: %s returned no series", q.where, q.expr)
			continue
		}
		t.Logf("dashboard %s: %d series", q.where, len(got))
	}
}

type dashboardQuery struct{ where, expr string }

// dashboardQueries are the PromQL expressions of deploy/grafana/cnperf-dashboard.json: its
// panels' queries and the selectors of its variables' label_values(), with every variable at
// All (.*), as Grafana sends them.
func dashboardQueries(t *testing.T) []dashboardQuery {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "deploy", "grafana", "cnperf-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
		Templating struct {
			List []struct{ Name, Type, Query string }
		}
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	all := strings.NewReplacer("$job", ".*", "$plan", ".*", "$path", ".*", "$driver", ".*", "$profile", ".*")
	var out []dashboardQuery
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		sel, ok := strings.CutPrefix(v.Query, "label_values(")
		i := strings.LastIndex(sel, ",")
		if !ok || i < 0 {
			t.Fatalf("variable %s: query %q is not label_values(selector, label)", v.Name, v.Query)
		}
		out = append(out, dashboardQuery{"variable " + v.Name, all.Replace(sel[:i])})
	}
	for _, p := range d.Panels {
		for _, q := range p.Targets {
			out = append(out, dashboardQuery{fmt.Sprintf("panel %q", p.Title), all.Replace(q.Expr)})
		}
	}
	if len(out) < 20 {
		t.Fatalf("only %d queries in the dashboard", len(out))
	}
	return out
}

// sortedLabels prints a label set as name="value" pairs in name order.
func sortedLabels(l map[string]string) string {
	names := make([]string, 0, len(l))
	for n := range l {
		names = append(names, n)
	}
	sort.Strings(names)
	var parts []string
	for _, n := range names {
		parts = append(parts, n+"="+strconv.Quote(l[n]))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// TestRecordAlertSeries records deploy/prometheus/cnperf-rules.recorded.test.yaml, the
// `promtool test rules` test of the shipped rules on series that Prometheus stored from real
// runs. It runs only when CNPERF_RECORD_ALERT_SERIES names the file to write (as root: it
// makes a cgroup):
//
//	CNPERF_RECORD_ALERT_SERIES=$PWD/deploy/prometheus/cnperf-rules.recorded.test.yaml \
//	  go test ./test/integration -run TestRecordAlertSeries -v
//
// Fourteen real runs of a plan (TCP_STREAM at 2 Gbit/s, TCP_RR, TCP_CRR on loopback, 2 × 1 s
// samples) push to Debian's Pushgateway, which Debian's Prometheus scrapes every second: ten
// ordinary runs (this machine's noise), two runs with cnperf and its server in a cgroup
// limited to 5 % of a CPU (a real drop of every figure, that lasts), one ordinary run again,
// and one cut by SIGTERM in its second case. After each run the test reads back every series
// Prometheus stored for it. In the test file each run becomes one hour (the chart's default
// schedule is hourly) of a series scraped every 5 minutes, holding that run's values as the
// Pushgateway holds them until the next run; four more hours follow without a run.
// Timestamps (run start and end, the Pushgateway's push time) are moved to the run's hour,
// keeping their distance to its start.
//
// The expected alerts are the scenario's, not the rules': nothing on the ordinary runs, every
// figure below its baseline on the second starved run (a drop that lasted two runs), the interrupted run and its failed case on the cut one, runs stopped more than
// 3 hours after the last one.
func TestRecordAlertSeries(t *testing.T) {
	out := os.Getenv("CNPERF_RECORD_ALERT_SERIES")
	if out == "" {
		t.Skip("records the rules' test series; set CNPERF_RECORD_ALERT_SERIES to the file to write")
	}
	const normal, job, planName = 10, "cnperf", "always-on"
	pg := pushgatewaytest.Start(t)
	prom := pushgatewaytest.StartPrometheus(t, pg)
	bin := cliBinary(t)
	// The stream at 2 Gbit/s: on a shared machine an unlimited loopback stream varies by a
	// factor of 3 from one run to the next (other processes' load), more than any drop a
	// rule could tell from it; at 2 Gbit/s it varies little, and starved of CPU it cannot
	// keep the rate.
	plan := monitoringPlan(t, planName, 2, "2G", "TCP_STREAM", "TCP_RR", "TCP_CRR")
	starved := cpuQuota(t, 5)
	labels := []string{"--label", "cluster=lab", "--label", "cni=loopback"}

	type snapshot struct {
		run    *api.Run
		series map[string]float64 // by series key
		start  float64            // the run's start as Prometheus stored it
	}
	var snaps []snapshot
	names := map[string]map[string]string{} // series key: labels
	record := func(kind string, cut bool, prefix []string) {
		var r pushedRun
		if cut {
			r = cutInSecondCase(t, bin, plan, pg, job, prefix, labels...)
		} else {
			r = runAndPush(t, bin, plan, pg, job, 0, prefix, labels...)
		}
		prom.WaitFor(t, fmt.Sprintf(`cnperf_run_info{run_uuid=%q}`, r.run.UUID), 30*time.Second)
		time.Sleep(1500 * time.Millisecond) // a scrape after the whole group is there
		got, err := prom.Query(fmt.Sprintf(`{job=%q}`, job))
		if err != nil {
			t.Fatal(err)
		}
		s := snapshot{run: r.run, series: map[string]float64{}}
		for _, g := range got {
			if g.Labels["__name__"] == "push_failure_time_seconds" {
				continue
			}
			k := seriesKey(g.Labels)
			s.series[k], names[k] = g.Value, g.Labels
			if g.Labels["__name__"] == "cnperf_run_start_timestamp_seconds" {
				s.start = g.Value
			}
		}
		if s.start == 0 {
			t.Fatalf("no run start among the stored series of run %s", r.run.UUID)
		}
		snaps = append(snaps, s)
		t.Logf("run %d (%s) %s: %d series", len(snaps)-1, kind, r.run.UUID, len(s.series))
	}
	for i := 0; i < normal; i++ {
		record("ordinary", false, nil)
	}
	record("starved", false, starved)
	record("starved", false, starved)
	record("ordinary", false, nil)
	record("cut", true, nil)
	const hoursAfter = 4
	drop, cutRun := normal, normal+3 // runs drop and drop+1 starved

	// The scenario must have happened: every figure of the starved run is far below the
	// ordinary runs' median, and the cut run's second case failed.
	figures := []struct{ metric, figure, word, unit string }{
		{"cnperf_throughput_bytes_per_second", "throughput", "throughput", "B/s"},
		{"cnperf_transactions_per_second", "transactions", "transactions per second", "/s"},
		{"cnperf_connections_per_second", "connections", "connections per second", "/s"},
	}
	var below []map[string]string // the starved run's figure series, with the alert's value
	var values []float64
	for _, f := range figures {
		found := false
		for k, l := range names {
			if l["__name__"] != f.metric {
				continue
			}
			var xs []float64
			for _, s := range snaps[:normal] {
				xs = append(xs, s.series[k])
			}
			sort.Float64s(xs)
			median := (xs[normal/2-1] + xs[normal/2]) / 2
			// A drop can only be told from noise that is smaller than it: on a machine so busy
			// that ordinary runs vary by more than a third, no rule could (try again later).
			var mean, sd float64
			for _, x := range xs {
				mean += x / normal
			}
			for _, x := range xs {
				sd += (x - mean) * (x - mean) / (normal - 1)
			}
			if sd = math.Sqrt(sd); sd > mean/3 {
				t.Fatalf("%s: the ordinary runs %v vary too much (mean %v, standard deviation %v): the machine is too busy to record", k, xs, mean, sd)
			}
			v0, ok0 := snaps[drop].series[k]
			v, ok := snaps[drop+1].series[k]
			if !ok0 || !ok || v0 > 0.7*median || v > 0.7*median {
				t.Fatalf("%s: the starved runs measured %v and %v, the ordinary runs' median %v: no drop", k, v0, v, median)
			}
			t.Logf("%s: ordinary runs %v (median %v); starved runs %v and %v (%.0f %% of the median)", k, xs, median, v0, v, 100*v/median)
			below = append(below, map[string]string{"figure": f.figure, "word": f.word, "unit": f.unit, "key": k})
			values = append(values, v)
			found = true
		}
		if !found {
			t.Fatalf("no %s series stored", f.metric)
		}
	}
	c := snaps[cutRun].run
	if len(c.Results) != 2 || !report.CaseFailed(&c.Results[1]) {
		t.Fatalf("the cut run has %d cases, want 2, the second failed", len(c.Results))
	}

	// The input series: one hour per run, then hoursAfter hours of the last run's values.
	keys := make([]string, 0, len(names))
	for k := range names {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "# promtool test rules for cnperf-rules.yaml on series Prometheus stored from real runs: written\n")
	fmt.Fprintf(&b, "# by test/integration's TestRecordAlertSeries (see there; do not edit) on %s.\n", time.Now().UTC().Format("2006-01-02"))
	fmt.Fprintf(&b, "# Hour h holds run h's values: runs 0-%d ordinary, %d and %d starved of CPU, %d ordinary, %d cut by SIGTERM;\n", normal-1, drop, drop+1, drop+2, cutRun)
	fmt.Fprintf(&b, "# hours %d-%d no run (the Pushgateway keeps the last one).\n", cutRun+1, cutRun+hoursAfter)
	for i, s := range snaps {
		fmt.Fprintf(&b, "# run %d: %s\n", i, s.run.UUID)
	}
	b.WriteString("rule_files:\n  - cnperf-rules.yaml\nevaluation_interval: 5m\ntests:\n  - interval: 5m\n    input_series:\n")
	for _, k := range keys {
		var vals []string
		for h := 0; h <= cutRun+hoursAfter; h++ {
			s := snaps[min(h, cutRun)]
			v, ok := s.series[k]
			if !ok {
				vals = append(vals, "_x12")
				continue
			}
			switch names[k]["__name__"] {
			case "cnperf_run_start_timestamp_seconds", "cnperf_run_end_timestamp_seconds", "push_time_seconds":
				v = float64(min(h, cutRun)*3600) + v - s.start
			}
			vals = append(vals, strconv.FormatFloat(v, 'f', -1, 64)+"+0x11")
		}
		fmt.Fprintf(&b, "      - series: '%s'\n        values: '%s'\n", k, strings.Join(vals, " "))
	}
	b.WriteString("    alert_rule_test:\n")
	quiet := func(at int, names ...string) {
		for _, n := range names {
			fmt.Fprintf(&b, "      - eval_time: %dh30m\n        alertname: %s\n        exp_alerts: []\n", at, n)
		}
	}
	caseLabels := func(k string, extra ...string) string {
		l := names[k]
		var parts []string
		for _, n := range sortedNames(l) {
			if n != "__name__" {
				parts = append(parts, fmt.Sprintf("              %s: %s", n, strconv.Quote(l[n])))
			}
		}
		for i := 0; i+1 < len(extra); i += 2 {
			parts = append(parts, fmt.Sprintf("              %s: %s", extra[i], strconv.Quote(extra[i+1])))
		}
		return strings.Join(parts, "\n")
	}
	// Quiet on the ordinary runs (noise), from the first hour with 6 hours of history.
	for h := 6; h < drop; h++ {
		quiet(h, "CnperfFigureBelowBaseline", "CnperfMeasurementFailing", "CnperfRunInterrupted", "CnperfRunsStopped")
	}
	// The second starved run fires (a drop that lasted two runs: for: 90m). The first is not
	// asserted: it fires already when the ordinary run before it happened to dip beyond the
	// noise too (two runs in a row below the baseline).
	fmt.Fprintf(&b, "      - eval_time: %dh30m\n        alertname: CnperfFigureBelowBaseline\n        exp_alerts:\n", drop+1)
	for i, f := range below {
		l := names[f["key"]]
		fmt.Fprintf(&b, "          - exp_labels:\n%s\n", caseLabels(f["key"], "severity", "warning", "figure", f["figure"]))
		fmt.Fprintf(&b, "            exp_annotations:\n")
		fmt.Fprintf(&b, "              summary: %s\n", strconv.Quote(fmt.Sprintf("cnperf: %s of %s on %s (%s) fell below its baseline", f["word"], l["profile"], l["path"], l["driver"])))
		fmt.Fprintf(&b, "              description: %s\n", strconv.Quote(fmt.Sprintf("The last cnperf run measured %s of %s with %s on path %s (client node %s, server node %s) at %s%s, "+
			"at least 20 %% below the median of the runs of the day before and more than 3 standard deviations below their mean, for two runs in a row. "+
			"cnperf trend on the runs' results files says when the step happened.",
			f["word"], l["profile"], l["driver"], l["path"], l["client_node"], l["server_node"], humanize(values[i]), f["unit"])))
	}
	quiet(drop+1, "CnperfMeasurementFailing", "CnperfRunInterrupted")
	quiet(drop+2, "CnperfFigureBelowBaseline", "CnperfMeasurementFailing", "CnperfRunInterrupted")
	// The cut run.
	var rr string
	for k, l := range names {
		if l["__name__"] == "cnperf_case_failed" && l["profile"] == string(c.Results[1].Profile) {
			rr = k
		}
	}
	l := names[rr]
	fmt.Fprintf(&b, `      - eval_time: %dh30m
        alertname: CnperfMeasurementFailing
        exp_alerts:
          - exp_labels:
              severity: warning
              profile: %s
              driver: %s
              path: %s
              client_node: %s
              server_node: %s
            exp_annotations:
              summary: "cnperf: %[2]s on %[4]s (%[3]s) is failing"
              description: "The last cnperf run measured no figure for %[2]s with %[3]s on path %[4]s (client node %[5]s, server node %[6]s). The run's results file (cnperf report -o wide) has the cause."
      - eval_time: %[1]dh30m
        alertname: CnperfRunInterrupted
        exp_alerts:
          - exp_labels:
              severity: warning
              job: %[7]s
              plan: %[8]s
              label_cluster: lab
              label_cni: loopback
            exp_annotations:
              summary: "cnperf: the last run of %[8]s was interrupted"
              description: "The last cnperf run of plan %[8]s (job %[7]s) was cut short before it finished: with the Helm chart, it ran longer than activeDeadlineSeconds. Its finished cases' figures are kept; the Job's events say why it was stopped."
`, cutRun, l["profile"], l["driver"], l["path"], l["client_node"], l["server_node"], job, planName)
	quiet(cutRun, "CnperfFigureBelowBaseline")
	// Runs stop: quiet 2.5 hours after the last run's start, firing after 3.5.
	quiet(cutRun+2, "CnperfRunsStopped")
	fmt.Fprintf(&b, `      - eval_time: %dh30m
        alertname: CnperfRunsStopped
        exp_alerts:
          - exp_labels:
              severity: warning
              job: %s
              plan: %s
            exp_annotations:
              summary: "cnperf: no run of %[3]s for 3h 30m 0s"
              description: "The last cnperf run of plan %[3]s (job %[2]s) that pushed its metrics started 3h 30m 0s ago. Look at the CronJob's events and its last Job's log (kubectl -n NAMESPACE get jobs)."
`, cutRun+3, job, planName)
	if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", out)
}

// seriesKey is a series' selector, name{labels sorted by name}, as promtool's input_series
// take it.
func seriesKey(l map[string]string) string {
	var parts []string
	for _, n := range sortedNames(l) {
		if n != "__name__" {
			parts = append(parts, n+"="+strconv.Quote(l[n]))
		}
	}
	return l["__name__"] + "{" + strings.Join(parts, ",") + "}"
}

func sortedNames(l map[string]string) []string {
	names := make([]string, 0, len(l))
	for n := range l {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// humanize is Prometheus' template function humanize (SI prefixes, 4 significant digits).
func humanize(v float64) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Sprintf("%.4g", v)
	}
	prefix := ""
	if math.Abs(v) >= 1 {
		for _, p := range []string{"k", "M", "G", "T", "P", "E", "Z", "Y"} {
			if math.Abs(v) < 1000 {
				break
			}
			prefix, v = p, v/1000
		}
		return fmt.Sprintf("%.4g%s", v, prefix)
	}
	for _, p := range []string{"m", "u", "n", "p", "f", "a", "z", "y"} {
		if math.Abs(v) >= 1 {
			break
		}
		prefix, v = p, v*1000
	}
	return fmt.Sprintf("%.4g%s", v, prefix)
}

// cpuQuota makes a cgroup whose processes get percent of one CPU (cgroup v1's cpu controller
// or v2's cpu.max) and returns the argv prefix that starts a command in it; the cgroup is
// removed at cleanup.
func cpuQuota(t *testing.T, percent int) []string {
	t.Helper()
	name := fmt.Sprintf("cnperf-record-%d", os.Getpid())
	quota := fmt.Sprint(percent * 1000)
	var dir string
	var files [][2]string
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		dir = filepath.Join("/sys/fs/cgroup", name)
		files = [][2]string{{"cpu.max", quota + " 100000"}}
	} else {
		dir = filepath.Join("/sys/fs/cgroup/cpu", name)
		files = [][2]string{{"cpu.cfs_period_us", "100000"}, {"cpu.cfs_quota_us", quota}}
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatalf("a cgroup for the starved run (needs root): %v", err)
	}
	t.Cleanup(func() {
		for i := 0; i < 50; i++ { // its processes may take a moment to be gone
			if err := os.Remove(dir); err == nil || os.IsNotExist(err) {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Errorf("cgroup %s could not be removed", dir)
	})
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f[0]), []byte(f[1]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return []string{"sh", "-c", `echo $$ > "$0/cgroup.procs" && exec "$@"`, dir}
}
