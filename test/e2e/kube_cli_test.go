//go:build e2e

// End-to-end tests of `cnperf run --platform kube` and `cnperf cleanup` on the harness's
// cluster: the command in-process through internal/app.Run (JSON results, placement,
// --tolerance verdict against the numbers it printed), and the built binary interrupted with
// SIGINT (nothing labelled with the run may remain).
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/app"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/iostreams"
	"github.com/cnperf/cnperf/internal/text"
)

// kpRunCLI runs cnperf in-process and returns stdout, stderr and the exit code.
func kpRunCLI(ctx context.Context, args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	err := app.Run(ctx, iostreams.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errb}, args)
	if err != nil {
		app.WriteError(&errb, err, args) // as cmd/cnperf prints it
	}
	return out.String(), errb.String(), exit.Code(err)
}

func kpDecodeRun(t *testing.T, out string) *api.Run {
	t.Helper()
	var run api.Run
	if err := json.Unmarshal([]byte(out), &run); err == nil && run.UUID != "" {
		return &run
	}
	var runs []api.Run
	if err := json.Unmarshal([]byte(out), &runs); err != nil || len(runs) != 1 {
		t.Fatalf("cannot decode the JSON run (%v):\n%s", err, out)
	}
	return &runs[0]
}

// TestKubeCLIRunTolerance: `cnperf run --platform kube -o json --tolerance PCT` with native,
// iperf3 and qperf on host-host and pod-pod-cross-node; the exit code must be what the
// printed numbers say.
func TestKubeCLIRunTolerance(t *testing.T) {
	cl := kpClusterFromEnv(t)
	const tol = 30.0
	runID := uuid.NewString()
	ns := kpNamespace("cnperf-e2e-cli")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	out, stderr, code := kpRunCLI(ctx, "run", "--platform", "kube", "--kubeconfig", cl.kubeconfig, "-n", ns, "--uuid", runID,
		"--driver", "native,iperf3,qperf", "--profile", "TCP_STREAM", "--path", "host-host,pod-pod-cross-node",
		"--duration", "1s", "--samples", "3", "-o", "json", "--no-progress", "--tolerance", "30")
	t.Logf("stderr:\n%s", stderr)
	if code == exit.BadInput {
		t.Fatalf("usage error (exit 2)")
	}
	run := kpDecodeRun(t, out)
	if run.Platform != "kube" || run.Cluster == nil || run.Cluster.KubernetesVersion == "" || run.Timing == nil || run.Timing.SetupSeconds <= 0 {
		t.Errorf("run header: platform %q cluster %+v timing %+v", run.Platform, run.Cluster, run.Timing)
	}
	if len(run.Results) != 6 {
		t.Fatalf("%d results, want 6", len(run.Results))
	}
	host := map[string]float64{}
	pod := map[string]float64{}
	for _, r := range run.Results {
		if r.Failed() {
			t.Errorf("%s %s failed: %s", r.Driver, r.Path, r.Error)
			continue
		}
		pl := r.Placement
		if pl == nil || pl.Client.Node == "" || pl.Server.Node == "" || pl.Client.Node == pl.Server.Node {
			t.Errorf("%s %s: placement %+v", r.Driver, r.Path, pl)
			continue
		}
		if (r.Path == api.PathHostHost) != (pl.Client.HostNetwork && pl.Server.HostNetwork) {
			t.Errorf("%s %s: hostNetwork client %v server %v", r.Driver, r.Path, pl.Client.HostNetwork, pl.Server.HostNetwork)
		}
		m := r.Summary.ThroughputBitsPerSecond.Mean
		if r.Path == api.PathHostHost {
			host[r.Driver] = m
		} else {
			pod[r.Driver] = m
		}
	}
	exceeded := false
	for d, h := range host {
		diff := math.Abs(pod[d]-h) / h * 100
		t.Logf("%s: host %.2f Gb/s pod %.2f Gb/s diff %.1f%%", d, h/1e9, pod[d]/1e9, diff)
		if diff > tol {
			exceeded = true
		}
	}
	switch {
	case exceeded && code != exit.Failed:
		t.Errorf("a difference is beyond %.0f%% but cnperf exited %d", tol, code)
	case !exceeded && code != exit.OK:
		t.Errorf("every difference is within %.0f%% but cnperf exited %d", tol, code)
	}
	if !text.ContainsFolded(stderr, "Tolerance 30.0%") {
		t.Errorf("no tolerance report on stderr")
	}
	if left := kpLeftovers(context.Background(), t, cl.cs, runID); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestKubeCLIKeepAndCleanup: --keep leaves the run in place; `cnperf cleanup --run ID` removes it.
func TestKubeCLIKeepAndCleanup(t *testing.T) {
	cl := kpClusterFromEnv(t)
	runID := uuid.NewString()
	ns := kpNamespace("cnperf-e2e-keep")
	ctx := context.Background()
	_, stderr, code := kpRunCLI(ctx, "run", "--platform", "kube", "--kubeconfig", cl.kubeconfig, "-n", ns, "--uuid", runID,
		"--driver", "native", "--profile", "TCP_RR", "--path", "pod-pod-same-node", "--duration", "1s", "--samples", "1",
		"--keep", "-o", "json", "--no-progress")
	if code != exit.OK {
		t.Fatalf("run exited %d:\n%s", code, stderr)
	}
	if left := kpLeftovers(ctx, t, cl.cs, runID); len(left) == 0 {
		t.Fatal("--keep left nothing")
	}
	out, stderr, code := kpRunCLI(ctx, "cleanup", "--kubeconfig", cl.kubeconfig, "--run", runID)
	t.Logf("cleanup:\n%s%s", out, stderr)
	if code != exit.OK || !strings.Contains(out, "Namespace "+ns) {
		t.Errorf("cleanup exited %d, output %q", code, out)
	}
	if left := kpLeftovers(ctx, t, cl.cs, runID); len(left) > 0 {
		t.Errorf("left behind after cleanup: %v", left)
	}
}

// kpBuildCnperf returns a cnperf binary for tests that need a real process to interrupt:
// the harness's, or one built from this tree.
func kpBuildCnperf(t *testing.T) string {
	t.Helper()
	// The harness exports the binary it put into the agent image: the same build as the pods.
	if bin := os.Getenv("CNPERF_E2E_CNPERF"); bin != "" {
		if st, err := os.Stat(bin); err == nil && st.Mode()&0o111 != 0 {
			return bin
		}
	}
	return goBuildCnperf(t, filepath.Join(t.TempDir(), "cnperf"), "")
}

// repoRoot is the repository's top directory (go test runs in test/e2e).
func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// goBuildCnperf builds ./cmd/cnperf (static, as the agent image needs) into bin with ldflags.
func goBuildCnperf(t *testing.T, bin, ldflags string) string {
	t.Helper()
	cmd := exec.Command("go", "build", "-ldflags", ldflags, "-o", bin, "./cmd/cnperf")
	cmd.Dir = repoRoot(t)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/cnperf: %v\n%s", err, out)
	}
	return bin
}

// TestKubeCLIInterrupt sends SIGINT to `cnperf run` while it sets up and while it measures:
// cnperf must exit 1 and leave nothing labelled with the run.
func TestKubeCLIInterrupt(t *testing.T) {
	cl := kpClusterFromEnv(t)
	bin := kpBuildCnperf(t)
	for _, tc := range []struct {
		name string
		// after is the stderr line after which SIGINT is sent
		after string
		delay time.Duration
	}{
		{name: "during setup", after: "kube: created namespace"},
		{name: "during a sample", after: "case 1/", delay: 3 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runID := uuid.NewString()
			ns := kpNamespace("cnperf-e2e-int")
			cmd := exec.Command(bin, "run", "--platform", "kube", "--kubeconfig", cl.kubeconfig, "-n", ns, "--uuid", runID,
				"--driver", "iperf3", "--profile", "TCP_STREAM", "--path", "pod-pod-cross-node,host-host",
				"--duration", "60s", "--samples", "1", "-o", "json")
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stdout = &bytes.Buffer{}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			lines := make(chan string, 100)
			go func() {
				sc := bufio.NewScanner(stderr)
				for sc.Scan() {
					lines <- sc.Text()
				}
				close(lines)
			}()
			var log []string
			deadline := time.After(3 * time.Minute)
			sent := false
			for !sent {
				select {
				case l, ok := <-lines:
					if !ok {
						t.Fatalf("cnperf ended before %q:\n%s", tc.after, strings.Join(log, "\n"))
					}
					log = append(log, l)
					if strings.Contains(l, tc.after) {
						time.Sleep(tc.delay)
						if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
							t.Fatal(err)
						}
						sent = true
					}
				case <-deadline:
					_ = cmd.Process.Kill()
					t.Fatalf("no %q within 3 minutes:\n%s", tc.after, strings.Join(log, "\n"))
				}
			}
			for l := range lines {
				log = append(log, l)
			}
			err = cmd.Wait()
			t.Logf("stderr:\n%s", strings.Join(log, "\n"))
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != exit.Failed {
				t.Errorf("cnperf exited with %v, want exit code 1", err)
			}
			if !text.ContainsFolded(strings.Join(log, "\n"), "interrupted") {
				t.Errorf("cnperf did not say it was interrupted")
			}
			if left := kpLeftovers(context.Background(), t, cl.cs, runID); len(left) > 0 {
				t.Errorf("left behind: %v", left)
			}
			if _, err := cl.cs.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{}); err == nil {
				t.Errorf("namespace %s still exists", ns)
			}
		})
	}
}
