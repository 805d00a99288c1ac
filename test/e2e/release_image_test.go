//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cnperf/cnperf/internal/kube"
)

// releaseTag is the version the release-build test stamps, as a tag vX.Y.Z would. It is not
// the harness's agent image (a dev build, -dev), so the run can only succeed with the image
// that the release binary itself built and loaded.
const releaseTag = "v0.1.0"

// TestKubeReleaseAndDevImages: the binary and the image it deploys always agree, for a dev
// build (the harness's: its image is what `cnperf version --image` says) and for a release
// build (stamped as .goreleaser.yaml stamps a tag): the release binary builds its own agent
// image with `cnperf image build`, loads it into every node's containerd, and `cnperf run`
// without --image deploys exactly that image, whose cnperf reports the binary's version.
func TestKubeReleaseAndDevImages(t *testing.T) {
	cl := kpClusterFromEnv(t)
	state := os.Getenv("CNPERF_E2E_STATE")
	nodes := strings.Fields(os.Getenv("CNPERF_E2E_NODE_NAMES"))
	if state == "" || len(nodes) == 0 {
		t.Fatal("CNPERF_E2E_STATE and CNPERF_E2E_NODE_NAMES must be set (source the harness's e2e.env)")
	}
	kubectl := os.Getenv("CNPERF_E2E_KUBECTL")
	if kubectl == "" {
		kubectl = "kubectl"
	}
	versionOf := func(bin string) map[string]string {
		t.Helper()
		out, err := exec.Command(bin, "version").CombinedOutput()
		if err != nil {
			t.Fatalf("%s version: %v\n%s", bin, err, out)
		}
		// "cnperf VERSION (commit ...)" then "agent image: IMAGE[ (development build: ...)]"
		kv := map[string]string{}
		for _, l := range strings.Split(string(out), "\n") {
			if f := strings.Fields(l); len(f) >= 2 && f[0] == "cnperf" {
				kv["version"] = f[1]
			}
			if rest, ok := strings.CutPrefix(l, "agent image: "); ok {
				kv["image"] = strings.Fields(rest)[0]
			}
		}
		t.Logf("%s version:\n%s", filepath.Base(bin), out)
		return kv
	}

	t.Run("dev", func(t *testing.T) {
		dev := kpBuildCnperf(t)
		v := versionOf(dev)
		if !strings.HasSuffix(v["version"], "-dev") {
			t.Errorf("the harness's cnperf is version %q, want a development build", v["version"])
		}
		if want := os.Getenv("CNPERF_E2E_AGENT_IMAGE"); v["image"] != want {
			t.Errorf("cnperf version says image %q; the cluster runs the agent image %q", v["image"], want)
		}
	})

	t.Run("release", func(t *testing.T) {
		// Built as .goreleaser.yaml builds a tag (CGO off, -s -w, Version and Commit stamped)
		// but without -trimpath, which would recompile every package and only changes the file
		// paths inside the binary.
		commit, err := exec.Command("git", "-C", repoRoot(t), "rev-parse", "HEAD").Output()
		if err != nil {
			t.Fatalf("git rev-parse HEAD: %v", err)
		}
		dir := t.TempDir()
		rel := goBuildCnperf(t, filepath.Join(dir, "cnperf"), "-s -w"+
			" -X github.com/cnperf/cnperf/internal/version.Version="+releaseTag+
			" -X github.com/cnperf/cnperf/internal/version.Commit="+strings.TrimSpace(string(commit)))
		v := versionOf(rel)
		image := "ghcr.io/cnperf/cnperf:" + releaseTag
		if v["version"] != releaseTag || v["image"] != image {
			t.Fatalf("release build: version %q image %q, want %q and %q", v["version"], v["image"], releaseTag, image)
		}

		// cnperf image build, loaded into every node's containerd (the harness's sockets)
		args := []string{"image", "build", "-o", filepath.Join(dir, "agent.tar")}
		var socks []string
		for _, n := range nodes {
			sock := filepath.Join(state, n, "containerd", "containerd.sock")
			socks = append(socks, sock)
			args = append(args, "--load", "containerd:"+sock)
		}
		t.Cleanup(func() {
			for _, s := range socks {
				if out, err := exec.Command("ctr", "--address", s, "-n", "k8s.io", "images", "rm", image).CombinedOutput(); err != nil {
					t.Logf("ctr images rm %s on %s: %v\n%s", image, s, err, out)
				}
			}
		})
		ib := exec.Command(rel, args...)
		ib.Dir = dir
		out, err := ib.CombinedOutput()
		t.Logf("cnperf image build:\n%s", out)
		if err != nil {
			t.Fatalf("cnperf image build: %v", err)
		}

		// the release binary's run, without --image, kept so its pods can be inspected
		runID := uuid.NewString()
		ns := kpNamespace("cnperf-e2e-release")
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		defer func() {
			c := exec.Command(rel, "cleanup", "--kubeconfig", cl.kubeconfig, "--run", runID)
			if out, err := c.CombinedOutput(); err != nil {
				t.Errorf("cnperf cleanup --run %s: %v\n%s", runID, err, out)
			}
			if left := kpLeftovers(context.Background(), t, cl.cs, runID); len(left) > 0 {
				t.Errorf("left behind: %v", left)
			}
		}()
		run := exec.CommandContext(ctx, rel, "run", "--platform", "kube", "--kubeconfig", cl.kubeconfig, "-n", ns,
			"--uuid", runID, "--driver", "native", "--profile", "TCP_RR", "--path", "pod-pod-cross-node",
			"--duration", "1s", "--samples", "1", "--keep", "-o", "json", "--no-progress")
		var stderr strings.Builder
		run.Stderr = &stderr
		stdout, err := run.Output()
		if err != nil {
			t.Fatalf("release cnperf run: %v (exit %d)\n%s", err, run.ProcessState.ExitCode(), stderr.String())
		}
		r := kpDecodeRun(t, string(stdout))
		if r.CnperfVersion != releaseTag {
			t.Errorf("results file: cnperfVersion %q, want %q", r.CnperfVersion, releaseTag)
		}
		if len(r.Results) != 1 || r.Results[0].Summary.SamplesTotal != 1 || r.Results[0].Summary.SamplesFailed != 0 {
			t.Fatalf("want one case with its sample ok, got %+v", r.Results)
		}

		pods, err := cl.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: kube.RunSelector(runID)})
		if err != nil {
			t.Fatal(err)
		}
		if len(pods.Items) < 2 {
			t.Fatalf("--keep left %d pods in %s, want client and server", len(pods.Items), ns)
		}
		for _, p := range pods.Items {
			for _, c := range p.Spec.Containers {
				if c.Image != image {
					t.Errorf("pod %s container %s runs %q, want %q", p.Name, c.Name, c.Image, image)
				}
			}
			ex := exec.CommandContext(ctx, kubectl, "--kubeconfig", cl.kubeconfig, "-n", ns, "exec", p.Name, "-c", p.Spec.Containers[0].Name,
				"--", "cnperf", "version")
			got, err := ex.CombinedOutput()
			if err != nil {
				t.Fatalf("kubectl exec %s -- cnperf version: %v\n%s", p.Name, err, got)
			}
			if !strings.Contains(string(got), releaseTag) || strings.Contains(string(got), "-dev") {
				t.Errorf("cnperf inside pod %s says:\n%s\nwant version %s", p.Name, got, releaseTag)
			}
			t.Logf("pod %s (%s): %s", p.Name, p.Spec.NodeName, strings.Join(strings.Fields(string(got)), " "))
		}
		if b, err := json.Marshal(r.Results[0].Summary); err == nil {
			t.Logf("summary: %s", b)
		}
	})
}
