//go:build e2e

// A sweep of parallel flows on the e2e cluster (seed 003: TCP_RR latency against 1, 10, 20
// and 40 simultaneous connections): the table must end with the sweep section, one row per
// value, and the HTML report must chart it with one point per value.
package e2e

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/runfile"
)

func TestKubeSweepParallelTCPRR(t *testing.T) {
	cl := kpClusterFromEnv(t)
	ns := kpNamespace("cnperf-e2e-sweep")
	results := filepath.Join(t.TempDir(), "sweep.jsonl")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	out, stderr, code := kpRunCLI(ctx, "run", "--platform", "kube", "--kubeconfig", cl.kubeconfig, "-n", ns, "--uuid", uuid.NewString(),
		"--driver", "native", "--profile", "TCP_RR", "--path", "pod-pod-cross-node", "--parallel", "1,10,20,40",
		"--duration", "1s", "--samples", "2", "--results", results, "-o", "table", "--no-progress")
	t.Logf("stdout:\n%s\nstderr:\n%s", out, stderr)
	if code != exit.OK {
		t.Fatalf("exit %d", code)
	}

	// The sweep section: its title, a header, then one row per value in order.
	const title = "TCP_RR native pod-pod-cross-node 1B — latency and transaction rate vs parallel flows"
	i := strings.Index(out, title)
	if i < 0 {
		t.Fatalf("no sweep section %q in the table", title)
	}
	lines := strings.Split(strings.TrimRight(out[i:], "\n"), "\n")
	if len(lines) < 2 || !strings.Contains(lines[1], "PARALLEL") || !strings.Contains(lines[1], "LAT MEAN µs") || !strings.Contains(lines[1], "P99 µs") {
		t.Fatalf("sweep header: %q", lines)
	}
	row := regexp.MustCompile(`^\s+(\d+)\s+\d`)
	var values []string
	for _, l := range lines[2:] {
		m := row.FindStringSubmatch(l)
		if m == nil {
			break
		}
		values = append(values, m[1])
	}
	if strings.Join(values, ",") != "1,10,20,40" {
		t.Errorf("sweep rows for %v, want 1,10,20,40:\n%s", values, strings.Join(lines, "\n"))
	}

	// The results: four cases with merged latency; queueing behind 40 flows makes the
	// median round trip longer than with one (seed 003 saw ×9).
	runs, err := runfile.Read(results)
	if err != nil || len(runs) != 1 || len(runs[0].Results) != 4 {
		t.Fatalf("results file: %v, %d runs", err, len(runs))
	}
	var p50 []float64
	for _, r := range runs[0].Results {
		l := r.Summary.LatencyMicroseconds
		if report.CaseFailed(&r) || l == nil || l.P50 == nil {
			t.Fatalf("case %s: no latency: %s", r.Driver, report.FailureCause(&r))
		}
		p50 = append(p50, *l.P50)
	}
	if p50[3] <= p50[0] {
		t.Errorf("p50 with 40 flows %.1f µs is not above p50 with 1 flow %.1f µs", p50[3], p50[0])
	}

	// The HTML report of the results file charts the sweep: one rate point per value.
	var page bytes.Buffer
	if err := report.Encode(&page, "html", []*api.Run{runs[0]}); err != nil {
		t.Fatal(err)
	}
	html := page.String()
	fig := regexp.MustCompile(`(?s)<figure class="sweepchart" id="sweep-1" data-param="parallel">.*?</figure>`).FindString(html)
	var xs []string
	for _, m := range regexp.MustCompile(`data-kind="rate" data-x="(\d+)"`).FindAllStringSubmatch(fig, -1) {
		xs = append(xs, m[1])
	}
	if strings.Join(xs, ",") != "1,10,20,40" {
		t.Errorf("sweep chart points at %v, want 1,10,20,40", xs)
	}
}
