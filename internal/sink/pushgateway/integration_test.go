package pushgateway

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/runfile"
	"github.com/cnperf/cnperf/internal/sink/pushgateway/pushgatewaytest"
	"github.com/cnperf/cnperf/internal/testport"
)

// series is one sample line of the text format: its name, labels and value.
type series struct {
	name   string
	labels map[string]string
	value  float64
}

// key is the series' name and labels, sorted, as one string.
func (s series) key() string {
	names := make([]string, 0, len(s.labels))
	for n := range s.labels {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString(s.name + "{")
	for _, n := range names {
		b.WriteString(n + "=" + strconv.Quote(s.labels[n]) + ",")
	}
	return b.String() + "}"
}

// parseText reads the sample lines of Prometheus' text format (no timestamps).
func parseText(t *testing.T, text string) []series {
	t.Helper()
	var out []series
	for _, line := range strings.Split(text, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		s := series{labels: map[string]string{}}
		i := strings.IndexAny(line, "{ ")
		if i < 0 {
			t.Fatalf("bad line %q", line)
		}
		s.name, line = line[:i], line[i:]
		if line[0] == '{' {
			line = line[1:]
			for line[0] != '}' {
				eq := strings.Index(line, `="`)
				name := line[:eq]
				line = line[eq+2:]
				var v strings.Builder
				for line[0] != '"' {
					if line[0] == '\\' {
						line = line[1:]
						if line[0] == 'n' {
							v.WriteByte('\n')
							line = line[1:]
							continue
						}
					}
					v.WriteByte(line[0])
					line = line[1:]
				}
				s.labels[name] = v.String()
				line = strings.TrimPrefix(line[1:], ",")
			}
			line = line[1:]
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(line), 64)
		if err != nil {
			t.Fatalf("bad value in %q: %v", line, err)
		}
		s.value = v
		out = append(out, s)
	}
	return out
}

// TestPushToRealPushgateway pushes real runs (three labelled local runs, one with an
// interrupted case, and a lab run given a plan name) to Debian's Pushgateway, scrapes its
// /metrics and finds every series -o prometheus writes for each run, with the same value, in
// its own group (job, plan, the run's labels); then pushes the same plan again and sees the
// group replaced, not added to.
func TestPushToRealPushgateway(t *testing.T) {
	u := pushgatewaytest.Start(t)
	var runs []*api.Run
	for _, f := range []string{"real-labelled-runs.jsonl", "real-lab-run.jsonl"} {
		r, err := runfile.Read(filepath.Join("..", "..", "report", "testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r...)
	}
	if len(runs) != 4 {
		t.Fatalf("%d runs in the test data, want 4", len(runs))
	}
	runs[3].Plan = "lab-suite"
	var log bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := Push(ctx, Config{URL: u, Job: "cnperf-test"}, runs, &log); err != nil {
		t.Fatal(err)
	}
	t.Logf("log:\n%s", log.String())

	got := map[string]float64{}
	scraped := pushgatewaytest.Scrape(t, u)
	for _, s := range parseText(t, scraped) {
		got[s.key()] = s.value
	}
	enc, err := report.Lookup("prometheus")
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, run := range runs {
		var b bytes.Buffer
		if err := enc.Encode(&b, []*api.Run{run}); err != nil {
			t.Fatal(err)
		}
		want := parseText(t, b.String())
		if len(want) < 10 {
			t.Fatalf("run %s: only %d series", run.UUID, len(want))
		}
		for _, s := range want {
			s.labels["job"], s.labels["instance"] = "cnperf-test", ""
			if run.Plan != "" {
				s.labels["plan"] = run.Plan
			}
			v, ok := got[s.key()]
			if !ok {
				t.Errorf("run %s: series %s not at the Pushgateway", run.UUID, s.key())
				continue
			}
			if v != s.value {
				t.Errorf("run %s: %s = %v at the Pushgateway, %v pushed", run.UUID, s.key(), v, s.value)
			}
			total++
		}
		// the line may be wrapped to fit 120 columns
		if !strings.Contains(strings.Join(strings.Fields(log.String()), " "), fmt.Sprintf("pushgateway: run %s: pushed %d series of %d results to %s/metrics/job/cnperf-test/",
			run.UUID, len(want), len(run.Results), u)) {
			t.Errorf("log does not say run %s's push:\n%s", run.UUID, log.String())
		}
	}
	t.Logf("%d series of %d runs found at the Pushgateway", total, len(runs))
	for _, want := range []string{
		`cnperf_run_interrupted{instance="",job="cnperf-test",label_cni="flannel",label_env="lab"} 1`,
		`push_time_seconds{instance="",job="cnperf-test",plan="lab-suite"}`,
		`# TYPE cnperf_latency_seconds summary`,
		`# TYPE cnperf_throughput_bytes_per_second gauge`,
	} {
		if !strings.Contains(scraped, want) {
			t.Errorf("scrape lacks %q", want)
		}
	}

	// The next run of the same plan replaces its group: one run_info of the plan, the new one.
	next := *runs[3]
	next.UUID = "00000000-0000-4000-8000-000000000001"
	next.Results = next.Results[:1]
	if err := Push(ctx, Config{URL: u, Job: "cnperf-test"}, []*api.Run{&next}, nil); err != nil {
		t.Fatal(err)
	}
	var infos []string
	for _, s := range parseText(t, pushgatewaytest.Scrape(t, u)) {
		if s.name == "cnperf_run_info" && s.labels["plan"] == "lab-suite" {
			infos = append(infos, s.labels["run_uuid"])
		}
		if s.name == "cnperf_case_failed" && s.labels["plan"] == "lab-suite" && s.labels["profile"] != string(next.Results[0].Profile) {
			t.Errorf("a case of the replaced run is still there: %s", s.key())
		}
	}
	if len(infos) != 1 || infos[0] != next.UUID {
		t.Errorf("run_info of plan lab-suite: %v, want only %s", infos, next.UUID)
	}
}

// TestPushRefused: a push the Pushgateway refuses is an error naming the group's URL, the
// status and the Pushgateway's reason. Here another group holds cnperf_run_info as a counter
// (another tool pushed that name), which fails the Pushgateway's consistency check; and an
// address where nothing listens names the URL too.
func TestPushRefused(t *testing.T) {
	u := pushgatewaytest.Start(t)
	other := "# HELP cnperf_run_info Another tool's counter.\n# TYPE cnperf_run_info counter\ncnperf_run_info{run_uuid=\"x\"} 1\n"
	req, err := http.NewRequest(http.MethodPut, u+"/metrics/job/other", strings.NewReader(other))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("seeding the other group: %s", resp.Status)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run := &api.Run{UUID: "00000000-0000-4000-8000-000000000002", Plan: "p", CnperfVersion: "v0", Platform: "local"}
	err = Push(ctx, Config{URL: u}, []*api.Run{run}, nil)
	want := fmt.Sprintf("run %s: pushgateway: PUT %s/metrics/job/cnperf/plan/p: 400 Bad Request: pushed metrics are invalid or inconsistent with existing metrics", run.UUID, u)
	// The reason names the metric and the type clash; which side the Pushgateway reports as
	// wrong ("is not a COUNTER" or "is not a GAUGE") depends on which group it gathers first,
	// a map order that changes from run to run (CI saw both).
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), `collected metric "cnperf_run_info"`) ||
		(!strings.Contains(err.Error(), "is not a COUNTER") && !strings.Contains(err.Error(), "is not a GAUGE")) {
		t.Errorf("err = %v\nwant it to contain %q and the reason", err, want)
	}

	down := fmt.Sprintf("http://127.0.0.1:%d", testport.Free(t))
	err = Push(ctx, Config{URL: down, Attempts: 2, Backoff: time.Millisecond}, []*api.Run{run}, nil)
	if err == nil || !strings.Contains(err.Error(), "PUT "+down+"/metrics/job/cnperf/plan/p") || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("err = %v, want the URL and connection refused", err)
	}
}
