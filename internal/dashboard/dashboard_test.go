package dashboard

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite deploy/grafana/cnperf-dashboard.json")

var shipped = filepath.Join("..", "..", "deploy", "grafana", "cnperf-dashboard.json")

// TestShippedJSON: the shipped dashboard is JSON() (go test ./internal/dashboard -update
// rewrites it; make manifests copies it into the chart).
func TestShippedJSON(t *testing.T) {
	got, err := JSON()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(shipped, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(shipped)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not what Build makes: go test ./internal/dashboard -update, then make manifests", shipped)
	}
}

// TestQueries: every panel has queries, every query selects on the plan's variables and
// uses only metrics -o prometheus writes (or Prometheus' ALERTS), and every variable a query
// names is defined.
func TestQueries(t *testing.T) {
	b, err := JSON()
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Type, Title string
			Targets     []struct{ Expr string }
		}
		Templating struct{ List []struct{ Name, Type string } }
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	vars := map[string]bool{}
	for _, v := range d.Templating.List {
		vars[v.Name] = true
	}
	for _, want := range []string{"datasource", "job", "plan", "path", "driver", "profile", "filters"} {
		if !vars[want] {
			t.Errorf("no variable %s", want)
		}
	}
	metric := regexp.MustCompile(`\b(cnperf_[a-z_]+|ALERTS)\b`)
	known := regexp.MustCompile(`^(cnperf_(run_info|run_start_timestamp_seconds|run_interrupted|case_failed|case_failed_samples|case_samples|` +
		`throughput_bytes_per_second|transactions_per_second|connections_per_second|latency_seconds|loss_ratio|retransmits|process_cpu_seconds_per_second)|ALERTS)$`)
	ref := regexp.MustCompile(`\$([a-z_]+)`)
	n := 0
	for _, p := range d.Panels {
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, q := range p.Targets {
			n++
			ms := metric.FindAllString(q.Expr, -1)
			if len(ms) == 0 {
				t.Errorf("panel %q: %s uses no metric", p.Title, q.Expr)
			}
			for _, m := range ms {
				if !known.MatchString(m) {
					t.Errorf("panel %q: %s is not a metric cnperf writes", p.Title, m)
				}
			}
			if strings.HasPrefix(ms[0], "cnperf_") && !strings.Contains(q.Expr, `plan=~"$plan"`) {
				t.Errorf("panel %q: %s does not select the plan", p.Title, q.Expr)
			}
			for _, r := range ref.FindAllStringSubmatch(q.Expr, -1) {
				if !vars[r[1]] {
					t.Errorf("panel %q: %s names undefined variable $%s", p.Title, q.Expr, r[1])
				}
			}
		}
	}
	if n < 15 {
		t.Errorf("%d queries, want the figures, node pairs, failures and alerts", n)
	}
}
