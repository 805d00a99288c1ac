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
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/cnperf/cnperf/internal/sink/pushgateway/pushgatewaytest"
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
	c := clusterFromEnv(t)
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

	release := "helm-e2e-" + uuid.NewString()[:6]
	ns := release
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
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
	values := fmt.Sprintf(`schedule: "* * * * *"
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
	vf := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(vf, []byte(values), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := hrun(ctx, "install", release, filepath.Join("..", "..", "deploy", "helm", "cnperf"), "--namespace", ns, "--values", vf)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("helm install:\n%s", out)
	installed := time.Now()

	// The first scheduled run: at the next minute, then its pods and a 2 s sample.
	group := `job="cnperf-e2e",label_e2e="` + release + `",`
	var scraped, job string
	for {
		scraped = pushgatewaytest.Scrape(t, pg)
		if strings.Contains(scraped, "cnperf_throughput_bytes_per_second{") && strings.Contains(scraped, group) {
			break
		}
		jobs, err := c.run(ctx, "", "get", "jobs", "-n", ns, "-o", "json")
		if err != nil {
			t.Fatal(err)
		}
		var list struct {
			Items []struct {
				Metadata struct{ Name string } `json:"metadata"`
				Status   struct{ Failed int }  `json:"status"`
			} `json:"items"`
		}
		if err := json.Unmarshal([]byte(jobs), &list); err != nil {
			t.Fatal(err)
		}
		for _, j := range list.Items {
			job = j.Metadata.Name
			if j.Status.Failed > 0 {
				logs, _ := c.run(ctx, "", "logs", "-n", ns, "job/"+j.Metadata.Name)
				t.Fatalf("scheduled run %s failed; its log:\n%s", j.Metadata.Name, logs)
			}
		}
		if time.Since(installed) > 150*time.Second {
			t.Fatalf("no run's metrics at the Pushgateway %s after %s (jobs: %s); its cnperf series:\n%s",
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
		if !strings.Contains(logs, want) {
			t.Errorf("the run's log lacks %q", want)
		}
	}
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
