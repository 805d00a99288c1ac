//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/text"
)

// TestKubeCLIImageRemedy: an agent image the nodes cannot get stops the run at once, and the
// error says exactly what to do (--image, cnperf image push/build, kind and ctr import). A
// pull from a registry that is not there (ErrImagePull) and a name no runtime accepts
// (InvalidImageName: a different advice).
func TestKubeCLIImageRemedy(t *testing.T) {
	cl := kpClusterFromEnv(t)
	for _, c := range []struct {
		name, image string
		want        []string
	}{
		{"pull", "localhost:5999/cnperf/not-there:v0", []string{"ErrImagePull",
			"the nodes cannot get the agent image localhost:5999/cnperf/not-there:v0",
			"cnperf image push REGISTRY/cnperf:TAG   then   cnperf run --image REGISTRY/cnperf:TAG",
			"cnperf image build --tag localhost:5999/cnperf/not-there:v0 --load kind:CLUSTER",
			"ctr -n k8s.io images import cnperf-agent.tar"}},
		// the kubelet's InspectFailed event comes before the InvalidImageName status
		{"invalid", "localhost/cnperf/UPPER:v0", []string{"InspectFailed", "must be lowercase",
			"localhost/cnperf/UPPER:v0 is not a valid image reference: pass --image with a valid one"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			runID := uuid.NewString()
			ns := kpNamespace("cnperf-e2e-img")
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			start := time.Now()
			_, stderr, code := kpRunCLI(ctx, "run", "--platform", "kube", "--kubeconfig", cl.kubeconfig, "-n", ns, "--uuid", runID,
				"--image", c.image, "--driver", "native", "--profile", "TCP_RR", "--path", "pod-pod-same-node",
				"--duration", "1s", "--samples", "1", "--no-progress", "--pod-start-timeout", "2m")
			took := time.Since(start)
			t.Logf("exit %d after %s:\n%s", code, took.Round(time.Millisecond), stderr)
			if code == exit.OK {
				t.Fatal("the run succeeded with an image that is not there")
			}
			for _, want := range c.want {
				if !text.ContainsFolded(stderr, want) {
					t.Errorf("stderr lacks %q", want)
				}
			}
			if took > time.Minute {
				t.Errorf("took %s: the failure was not reported at once (pod start timeout 2m)", took)
			}
			if left := kpLeftovers(context.Background(), t, cl.cs, runID); len(left) > 0 {
				t.Errorf("left behind: %v", left)
			}
		})
	}
}
