//go:build e2e

// cnperf always on (docs/always-on.md): the Helm chart deploy/helm/cnperf installed on the
// harness's cluster with a schedule of every minute and a 2-second plan; the CronJob's run
// measures in-cluster (in-cluster config, the chart's ServiceAccount and RBAC) and pushes its
// metrics to Debian's Pushgateway, started on the host address the pods reach the API server
// on; then helm uninstall and the namespace's deletion leave nothing of the release.
package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/cnperf/cnperf/internal/sink/pushgateway/pushgatewaytest"
	"github.com/cnperf/cnperf/internal/text"
)

// helmBinary is $CNPERF_HELM, helm on PATH, or the one make chart-check builds into
// ~/.cache/cnperf-tools (make test runs make check first, so CI has it).
func helmBinary(t *testing.T) string {
	t.Helper()
	if h := os.Getenv("CNPERF_HELM"); h != "" {
		return h
	}
	if h, err := exec.LookPath("helm"); err == nil {
		return h
	}
	dir := os.Getenv("TOOLS_DIR")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "cnperf-tools")
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "helm-*", "helm")); len(m) > 0 {
		return m[len(m)-1]
	}
	t.Skip("no helm: make chart-check (part of make check) builds it into ~/.cache/cnperf-tools, or set CNPERF_HELM")
	return ""
}

// TestHelmChartScheduledRun: helm install with schedule "* * * * *", wait for the first
// scheduled run's metrics at the Pushgateway (a TCP_STREAM figure across two nodes, a run
// that was not interrupted, from the kube platform), print the run's log, uninstall, and
// check that no object of the release is left, cluster-scoped ones included.
func TestHelmChartScheduledRun(t *testing.T) {
	// Mostly waiting for the minute boundaries of a CronJob: it runs beside the other chart
	// test (about 2 min saved) and TestKubeNetperfUperfPaths and TestTigerBenchStandingConfig
	// (about 3 more: 98 s and 90 s in CI), as go test starts parallel tests after the
	// sequential ones.
	t.Parallel()
	c := clusterFromEnv(t)
	r := installChart(t, c, "helm-e2e", func(pg, release, repo, tag string) string {
		return fmt.Sprintf(`schedule: "* * * * *"
startingDeadlineSeconds: 50
activeDeadlineSeconds: 150
terminationGracePeriodSeconds: 60
image: {repository: %q, tag: %q}
pushGateway: {url: %q, job: cnperf-e2e}
labels: {e2e: %q}
plan:
  apiVersion: cnperf.dev/v1alpha1
  kind: Plan
  metadata: {name: helm-e2e}
  defaults: {duration: 2s, samples: 1, drivers: [native], paths: [pod-pod-cross-node]}
  tests:
    - {name: stream, profiles: [TCP_STREAM]}
`, repo, tag, pg, release)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	release, ns, pg, installed := r.release, r.ns, r.pg, r.installed

	// The first scheduled run: at the next minute, then its pods and a 2 s sample.
	group := `job="cnperf-e2e",label_e2e="` + release + `",`
	var scraped, job string
	for {
		scraped = pushgatewaytest.Scrape(t, pg)
		if strings.Contains(scraped, "cnperf_throughput_bytes_per_second{") && strings.Contains(scraped, group) {
			break
		}
		jobs := chartJobs(ctx, t, c, ns)
		for _, j := range jobs {
			job = j.Name
			if j.Failed > 0 {
				logs, _ := c.run(ctx, "", "logs", "-n", ns, "job/"+j.Name)
				t.Fatalf("scheduled run %s failed; its log:\n%s", j.Name, logs)
			}
		}
		if time.Since(installed) > 150*time.Second {
			t.Fatalf("no run's metrics at the Pushgateway %s after %s (jobs: %+v); its cnperf series:\n%s",
				pg, time.Since(installed).Round(time.Second), jobs, cnperfSeries(scraped))
		}
		time.Sleep(2 * time.Second)
	}
	t.Logf("metrics at the Pushgateway %s after %s", pg, time.Since(installed).Round(time.Second))
	logs, err := c.run(ctx, "", "logs", "-n", ns, "job/"+job)
	if err != nil {
		t.Error(err)
	}
	t.Logf("the scheduled run's log (job %s):\n%s", job, logs)
	t.Logf("the Pushgateway's cnperf series:\n%s", cnperfSeries(scraped))
	for _, want := range []string{
		`cnperf_run_interrupted{instance="",` + group + `plan="helm-e2e"} 0`,
		`platform="kube"`,
		`path="pod-pod-cross-node",plan="helm-e2e",profile="TCP_STREAM"`,
	} {
		if !strings.Contains(scraped, want) {
			t.Errorf("the Pushgateway lacks %s", want)
		}
	}
	for _, want := range []string{"kube: using existing namespace " + ns, "pushgateway: run ", "/metrics/job/cnperf-e2e/plan/helm-e2e/label_e2e/" + release} {
		if !text.ContainsFolded(logs, want) {
			t.Errorf("the run's log lacks %q", want)
		}
	}

	// The next minute's scheduled run completes too, and pushes over the first one's group.
	first := pushTime(t, scraped, group)
	for {
		done, failed := scheduledJobs(ctx, t, c, ns)
		if failed != "" {
			logs, _ := c.run(ctx, "", "logs", "-n", ns, "job/"+failed)
			t.Fatalf("scheduled run %s failed; its log:\n%s", failed, logs)
		}
		if len(done) >= 2 {
			if again := pushTime(t, pushgatewaytest.Scrape(t, pg), group); again <= first {
				t.Errorf("runs %v completed, but the Pushgateway's push time stayed %v", done, again)
			}
			t.Logf("two scheduled runs completed: %v, %s after the install", done, time.Since(installed).Round(time.Second))
			return
		}
		if time.Since(installed) > 210*time.Second {
			t.Fatalf("%d scheduled runs completed %s after the install (%v), want 2", len(done), time.Since(installed).Round(time.Second), done)
		}
		time.Sleep(2 * time.Second)
	}
}

// scheduledJobs lists the release's Jobs: the names of those that completed, and one that
// failed ("" if none).
func scheduledJobs(ctx context.Context, t *testing.T, c clusterEnv, ns string) (done []string, failed string) {
	t.Helper()
	for _, j := range chartJobs(ctx, t, c, ns) {
		switch {
		case j.Failed > 0:
			failed = j.Name
		case j.Succeeded > 0:
			done = append(done, j.Name)
		}
	}
	return done, failed
}

// chartJob is one Job of a release: its name and how many of its pods failed and succeeded.
type chartJob struct {
	Name              string
	Failed, Succeeded int
}

// chartJobs lists the Jobs in the namespace ns, in kubectl's order.
func chartJobs(ctx context.Context, t *testing.T, c clusterEnv, ns string) []chartJob {
	t.Helper()
	out, err := c.run(ctx, "", "get", "jobs", "-n", ns, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Items []struct {
			Metadata struct{ Name string }           `json:"metadata"`
			Status   struct{ Failed, Succeeded int } `json:"status"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("kubectl get jobs -n %s: %v", ns, err)
	}
	jobs := make([]chartJob, 0, len(list.Items))
	for _, j := range list.Items {
		jobs = append(jobs, chartJob{Name: j.Metadata.Name, Failed: j.Status.Failed, Succeeded: j.Status.Succeeded})
	}
	return jobs
}

// pushTime is the Pushgateway's push_time_seconds of the group (the labels in group).
func pushTime(t *testing.T, scraped, group string) float64 {
	t.Helper()
	for _, l := range strings.Split(scraped, "\n") {
		if strings.HasPrefix(l, "push_time_seconds{") && strings.Contains(l, group) {
			f := strings.Fields(l)
			v, err := strconv.ParseFloat(f[len(f)-1], 64)
			if err != nil {
				t.Fatalf("push_time_seconds line %q: %v", l, err)
			}
			return v
		}
	}
	t.Fatalf("the Pushgateway has no push_time_seconds for %s", group)
	return 0
}

func cnperfSeries(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "cnperf_") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// chartRelease is a release of the chart installed by installChart.
type chartRelease struct {
	release, ns string
	pg          string // the Pushgateway's URL
	installed   time.Time
}

// installChart starts Debian's Pushgateway where the pods reach it, creates a namespace
// named after the release (prefix, after $CNPERF_E2E_NAMESPACE_PREFIX when set, and a random
// suffix) and helm installs the chart into it
// with the values valuesFor returns; at cleanup it uninstalls, deletes the namespace and fails
// the test if a ClusterRole, a ClusterRoleBinding or the namespace of the release is left.
func installChart(t *testing.T, c clusterEnv, prefix string, valuesFor func(pg, release, repo, tag string) string) chartRelease {
	t.Helper()
	helm := helmBinary(t)
	cfg, err := clientcmd.BuildConfigFromFlags("", c.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	apiURL, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	// The pods reach the API server's address (the host's, on the cluster's network): the
	// Pushgateway listens there.
	pg := pushgatewaytest.StartOn(t, apiURL.Hostname())

	if p := os.Getenv("CNPERF_E2E_NAMESPACE_PREFIX"); p != "" { // a shared cluster's owner prefix
		prefix = p + "-" + prefix
	}
	release := prefix + "-" + uuid.NewString()[:6]
	ns := release
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	hrun := func(ctx context.Context, args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, helm, append(args, "--kubeconfig", c.kubeconfig)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return string(out), fmt.Errorf("helm %s: %w\n%s", strings.Join(args, " "), err, out)
		}
		return string(out), nil
	}
	if _, err := c.run(ctx, "", "create", "namespace", ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cctx, ccancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer ccancel()
		if out, err := hrun(cctx, "uninstall", release, "--namespace", ns, "--wait", "--timeout", "60s"); err != nil {
			t.Errorf("uninstall: %v", err)
		} else {
			t.Logf("helm uninstall: %s", strings.TrimSpace(out))
		}
		if _, err := c.run(cctx, "", "delete", "namespace", ns, "--wait=true", "--timeout=90s"); err != nil {
			t.Errorf("delete namespace: %v", err)
		}
		left, err := c.run(cctx, "", "get", "clusterroles,clusterrolebindings,namespaces", "-l", "app.kubernetes.io/instance="+release, "-o", "name")
		if err != nil || strings.TrimSpace(left) != "" {
			t.Errorf("left after uninstall: %q %v", left, err)
		}
		if out, err := c.run(cctx, "", "get", "namespace", ns, "--ignore-not-found", "-o", "name"); err != nil || strings.TrimSpace(out) != "" {
			t.Errorf("namespace %s is still there: %q %v", ns, out, err)
		}
	})

	image := c.image
	repo, tag := image, "latest"
	if i := strings.LastIndex(image, ":"); i > strings.LastIndex(image, "/") {
		repo, tag = image[:i], image[i+1:]
	}
	values := valuesFor(pg, release, repo, tag)
	vf := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(vf, []byte(values), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := hrun(ctx, "install", release, filepath.Join("..", "..", "deploy", "helm", "cnperf"), "--namespace", ns, "--values", vf)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("helm install:\n%s", out)
	return chartRelease{release: release, ns: ns, pg: pg, installed: time.Now()}
}

// TestHelmChartRunsNeverOverlap: with runs due every minute that last longer than a minute
// (a plan of 2 × 5 × 10 s, 2 minutes with set-up) and activeDeadlineSeconds 75, the first run is still going when
// the next is due; concurrencyPolicy Forbid holds the next one back until the first is cut
// (DeadlineExceeded), and the cut run is recorded as such at the Pushgateway
// (cnperf_run_interrupted 1). The test waits for the first run to end and the next to start,
// and checks that no two Jobs of the CronJob were active at the same time.
func TestHelmChartRunsNeverOverlap(t *testing.T) {
	// Mostly waiting for the minute boundaries of a CronJob: it runs beside the other chart
	// test (about 2 min saved) and TestKubeNetperfUperfPaths and TestTigerBenchStandingConfig
	// (about 3 more: 98 s and 90 s in CI), as go test starts parallel tests after the
	// sequential ones.
	t.Parallel()
	c := clusterFromEnv(t)
	r := installChart(t, c, "helm-cut", func(pg, release, repo, tag string) string {
		return fmt.Sprintf(`schedule: "* * * * *"
startingDeadlineSeconds: 50
activeDeadlineSeconds: 75
terminationGracePeriodSeconds: 40
image: {repository: %q, tag: %q}
pushGateway: {url: %q, job: cnperf-cut}
labels: {e2e: %q}
plan:
  apiVersion: cnperf.dev/v1alpha1
  kind: Plan
  metadata: {name: helm-cut}
  defaults: {duration: 10s, samples: 5, drivers: [native], paths: [pod-pod-cross-node]}
  tests:
    - {name: stream, profiles: [TCP_STREAM]}
    - {name: rr, profiles: [TCP_RR]}
`, repo, tag, pg, release)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()

	type jobSpan struct {
		name       string
		start, end time.Time // end zero while active
		reason     string    // of the Failed or Complete condition
	}
	var spans []jobSpan
	for {
		out, err := c.run(ctx, "", "get", "jobs", "-n", r.ns, "-o", "json")
		if err != nil {
			t.Fatal(err)
		}
		var list struct {
			Items []struct {
				Metadata struct{ Name string } `json:"metadata"`
				Status   struct {
					StartTime  *time.Time `json:"startTime"`
					Conditions []struct {
						Type, Status, Reason string
						LastTransitionTime   time.Time `json:"lastTransitionTime"`
					} `json:"conditions"`
				} `json:"status"`
			} `json:"items"`
		}
		if err := json.Unmarshal([]byte(out), &list); err != nil {
			t.Fatal(err)
		}
		spans = spans[:0]
		ended, started := 0, 0
		for _, j := range list.Items {
			if j.Status.StartTime == nil {
				continue
			}
			s := jobSpan{name: j.Metadata.Name, start: *j.Status.StartTime}
			for _, cd := range j.Status.Conditions {
				if (cd.Type == "Failed" || cd.Type == "Complete") && cd.Status == "True" {
					s.end, s.reason = cd.LastTransitionTime, cd.Type+"/"+cd.Reason
				}
			}
			if !s.end.IsZero() {
				ended++
			}
			started++
			spans = append(spans, s)
		}
		if ended >= 1 && started >= 2 {
			break
		}
		if time.Since(r.installed) > 4*time.Minute {
			t.Fatalf("%d runs started, %d ended %s after helm install; jobs: %+v", started, ended, time.Since(r.installed).Round(time.Second), spans)
		}
		time.Sleep(3 * time.Second)
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].start.Before(spans[j].start) })
	for i, s := range spans {
		t.Logf("job %s: started %s, ended %s (%s)", s.name, s.start.Format(time.RFC3339), s.end.Format(time.RFC3339), s.reason)
		if !s.end.IsZero() && s.reason != "Failed/DeadlineExceeded" {
			t.Errorf("job %s ended %s, want Failed/DeadlineExceeded (cut at activeDeadlineSeconds)", s.name, s.reason)
		}
		if i > 0 && (spans[i-1].end.IsZero() || s.start.Before(spans[i-1].end)) {
			t.Errorf("job %s started at %s while job %s was active (ended %s): runs overlap", s.name, s.start, spans[i-1].name, spans[i-1].end)
		}
	}
	if first := spans[0]; first.end.Sub(first.start) < time.Minute {
		t.Errorf("the first run lasted %s: no run was due while it was going, Forbid was not exercised", first.end.Sub(first.start))
	}
	// The cut run was pushed as interrupted.
	var scraped string
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(2 * time.Second) {
		scraped = pushgatewaytest.Scrape(t, r.pg)
		if strings.Contains(scraped, `cnperf_run_interrupted{instance="",job="cnperf-cut",label_e2e="`+r.release+`",plan="helm-cut"} 1`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no interrupted run at the Pushgateway; its cnperf series:\n%s", cnperfSeries(scraped))
		}
	}
	events, _ := c.run(ctx, "", "get", "events", "-n", r.ns, "--field-selector", "involvedObject.kind=Job", "-o",
		"custom-columns=OBJECT:.involvedObject.name,REASON:.reason,MESSAGE:.message")
	t.Logf("the Jobs' events:\n%s\nthe Pushgateway's cnperf series:\n%s", events, cnperfSeries(scraped))
}
