package pushgatewaytest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/sink/prometheus"
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
	bin := need(t, "prometheus")
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

// Sample is one series of an instant query's answer (the Prometheus sink's).
type Sample = prometheus.Sample

// Query runs an instant query (at now, or at the given time) through the HTTP API with the
// Prometheus sink's client (prometheus.Collector.Query) and returns its vector; an error of
// Prometheus (a bad expression) is returned with its message.
func (p *Prometheus) Query(expr string, at ...time.Time) ([]Sample, error) {
	c, err := prometheus.New(prometheus.Config{URL: p.URL})
	if err != nil {
		return nil, err
	}
	t := time.Now()
	if len(at) > 0 {
		t = at[0]
	}
	return c.Query(context.Background(), expr, t)
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
