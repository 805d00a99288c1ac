package pushgatewaytest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/testdaemon"
	"github.com/cnperf/cnperf/internal/testport"
)

// Prometheus is a real Prometheus (Debian's) on loopback that scrapes one Pushgateway every
// second with honor_labels, as docs/always-on.md tells users to, and evaluates its rule files
// every second.
type Prometheus struct {
	URL string
}

// StartPrometheus runs Debian's prometheus on a free loopback port with its data in a
// temporary directory, scraping the Pushgateway at pushgatewayURL and loading ruleFiles; it is
// stopped (its process group, by PID) at cleanup, also when the test fails. Without the binary
// the test is skipped, or fails when CNPERF_REQUIRE_PROMETHEUS is set.
func StartPrometheus(t testing.TB, pushgatewayURL string, ruleFiles ...string) *Prometheus {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		msg := "prometheus is not installed (Debian package prometheus; .ci/install-deps.sh installs it)"
		if os.Getenv("CNPERF_REQUIRE_PROMETHEUS") != "" {
			t.Fatal(msg + " (CNPERF_REQUIRE_PROMETHEUS is set)")
		}
		t.Skip(msg)
	}
	target := strings.TrimPrefix(strings.TrimPrefix(pushgatewayURL, "http://"), "https://")
	var rules strings.Builder
	for _, f := range ruleFiles {
		abs, err := filepath.Abs(f)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&rules, "  - %q\n", abs)
	}
	cfg := "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
	if rules.Len() > 0 {
		cfg += "rule_files:\n" + rules.String()
	}
	cfg += fmt.Sprintf("scrape_configs:\n  - job_name: pushgateway\n    honor_labels: true\n    static_configs:\n      - targets: [%q]\n", target)
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", testport.Free(t))
	logs, _ := testdaemon.Start(t, exec.Command(bin, "--config.file="+cfgPath, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr), 10*time.Second)
	p := &Prometheus{URL: "http://" + addr}
	waitReady(t, "prometheus", p.URL, 60*time.Second, logs)
	return p
}

// Sample is one series of an instant query's answer.
type Sample struct {
	Labels map[string]string // with __name__ when the expression keeps it
	Value  float64
}

// Query runs an instant query (at now, or at the given time) through the HTTP API and returns
// its vector; an error of Prometheus (a bad expression) is returned with its message.
func (p *Prometheus) Query(expr string, at ...time.Time) ([]Sample, error) {
	v := url.Values{"query": {expr}}
	if len(at) > 0 {
		v.Set("time", strconv.FormatFloat(float64(at[0].UnixNano())/1e9, 'f', 3, 64))
	}
	resp, err := http.Get(p.URL + "/api/v1/query?" + v.Encode())
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var ans struct {
		Status, Error string
		Data          struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Metric map[string]string
				Value  [2]any
			}
		}
	}
	if err := json.Unmarshal(b, &ans); err != nil {
		return nil, fmt.Errorf("query %q: %s: %w", expr, b, err)
	}
	if ans.Status != "success" {
		return nil, fmt.Errorf("query %q: %s", expr, ans.Error)
	}
	if ans.Data.ResultType != "vector" {
		return nil, fmt.Errorf("query %q: a %s, want a vector", expr, ans.Data.ResultType)
	}
	out := make([]Sample, 0, len(ans.Data.Result))
	for _, r := range ans.Data.Result {
		s, _ := r.Value[1].(string)
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("query %q: value %v: %w", expr, r.Value[1], err)
		}
		out = append(out, Sample{Labels: r.Metric, Value: x})
	}
	return out, nil
}

// WaitFor queries expr until it returns at least one series (or the timeout passes: then the
// test fails with the last answer).
func (p *Prometheus) WaitFor(t testing.TB, expr string, timeout time.Duration) []Sample {
	t.Helper()
	var last error
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		s, err := p.Query(expr)
		if err == nil && len(s) > 0 {
			return s
		}
		last = err
	}
	t.Fatalf("prometheus at %s: %q returned no series within %v (%v)", p.URL, expr, timeout, last)
	return nil
}
