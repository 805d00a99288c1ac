package app_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/testport"
	"github.com/cnperf/cnperf/internal/text"
)

// writeKubeconfig writes a real kubeconfig whose one cluster is server (current context
// "edge") and returns its path.
func writeKubeconfig(t *testing.T, server string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "kubeconfig.yaml")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: edge
  cluster:
    server: %s
    insecure-skip-tls-verify: true
contexts:
- name: edge
  context: {cluster: edge, user: edge}
current-context: edge
users:
- name: edge
  user: {token: not-a-real-token}
`, server)
	if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// cliResult is how a cnperf process ended.
type cliResult struct {
	code           int
	stdout, stderr string
	took           time.Duration
}

// runCLI runs the cnperf CLI as its own process (cnperfCmd) with no cluster configured
// around it (no $KUBECONFIG, an empty home), bounded by limit.
func runCLI(t *testing.T, limit time.Duration, args ...string) cliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := cnperfCmd(args...)
	cmd.Env = append(cmd.Env, "KUBECONFIG=", "HOME="+t.TempDir(), "KUBERNETES_SERVICE_HOST=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		t.Logf("killed: %v", <-done)
		t.Fatalf("cnperf %s still running after %s\nstderr:\n%s", strings.Join(args, " "), limit, stderr.String())
	}
	r := cliResult{stdout: stdout.String(), stderr: stderr.String(), took: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		t.Fatal(err)
	}
	return r
}

// TestExplicitKubeconfigSelectsKube: with the default --platform auto and no cluster
// configured around cnperf, --kubeconfig and --context are obeyed, never ignored (issue 28
// finding 2: cnperf measured loopback and exited 0): a missing file, a directory or an
// unknown context is exit 2 before anything runs, also with --dry-run; a valid file selects
// the kube platform (--dry-run shows its cases: pod-pod-cross-node, the default suite too;
// TestUnreachableAPIServer runs them); --platform local refuses them.
func TestExplicitKubeconfigSelectsKube(t *testing.T) {
	closed := writeKubeconfig(t, "https://127.0.0.1:"+fmt.Sprint(testport.Free(t))) // nothing listens there
	plan := []string{"--profile", "TCP_RR", "--duration", "1s", "--samples", "1"}
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"missing file", []string{"run", "--kubeconfig", "/nonexistent/kubeconfig"}, 2,
			"--kubeconfig /nonexistent/kubeconfig: load kubeconfig /nonexistent/kubeconfig: stat /nonexistent/kubeconfig: no such file or directory"},
		{"missing file, plan flags", append([]string{"run", "--kubeconfig", "/nonexistent/kubeconfig"}, plan...), 2, "no such file"},
		{"missing file, dry run", []string{"run", "--dry-run", "--kubeconfig", "/nonexistent/kubeconfig"}, 2, "no such file"},
		{"a directory", []string{"run", "--kubeconfig", t.TempDir()}, 2, "is a directory"},
		{"unknown context", []string{"run", "--kubeconfig", closed, "--context", "nope"}, 2, `context "nope" does not exist`},
		{"context without a kubeconfig", []string{"run", "--context", "nope"}, 2, `context "nope" does not exist`},
		{"with --platform local", []string{"run", "--platform", "local", "--kubeconfig", closed}, 2,
			"the local platform uses no cluster"},
		{"a valid file selects kube (dry run)", append([]string{"run", "--dry-run", "--kubeconfig", closed}, plan...), 0,
			"pod-pod-cross-node"},
		{"a valid file selects kube (dry run, default suite)", []string{"run", "--dry-run", "--kubeconfig", closed}, 0,
			"pod-pod-cross-node"},
		{"a context selects kube (dry run)", []string{"run", "--dry-run", "--kubeconfig", closed, "--context", "edge"}, 0,
			"pod-pod-cross-node"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := runCLI(t, time.Minute, c.args...)
			if r.code != c.code || !text.ContainsFolded(r.stdout+r.stderr, c.want) {
				t.Errorf("exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", r.code, c.code, c.want, r.stdout, r.stderr)
			}
			if text.ContainsFolded(r.stderr, "using the local platform") || strings.Contains(r.stdout, "loopback") {
				t.Errorf("measured this host:\n%s%s", r.stdout, r.stderr)
			}
		})
	}
}

// TestUnreachableAPIServer: a run against an API server that does not answer — a closed port,
// or a listener that accepts and never says a word — fails within seconds with the cause
// first, and says nothing of a clean-up: nothing was created (issue 28 finding 3: 120 s of
// silence, then "clean-up did not finish; may be left in the cluster" before the cause).
func TestUnreachableAPIServer(t *testing.T) {
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			held = append(held, c) // accepted, never answered
		}
	}()
	plan := []string{"--profile", "TCP_RR", "--duration", "1s", "--samples", "1", "-v"}
	for _, c := range []struct {
		name, server string
		causes       []string // one of them
		within       time.Duration
	}{
		{"closed port", "https://127.0.0.1:" + fmt.Sprint(testport.Free(t)), []string{"connect: connection refused"}, 5 * time.Second},
		// client-go's TLS handshake timeout and cnperf's bound on the first requests are both 10 s
		{"never answers", "https://" + silent.Addr().String(),
			[]string{"TLS handshake timeout", "does not answer within 10s (nothing was created): check permission to get nodes (cluster-wide): Post"},
			20 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			kc := writeKubeconfig(t, c.server)
			for _, args := range [][]string{append([]string{"run", "--kubeconfig", kc}, plan...), {"run", "--kubeconfig", kc}} {
				r := runCLI(t, time.Minute, args...)
				// the first error: its "cnperf:" line and the lines it is wrapped onto (app.WriteError)
				first := ""
				lines := strings.Split(r.stderr, "\n")
				for i, l := range lines {
					if strings.HasPrefix(l, "cnperf:") {
						first = l
						for _, more := range lines[i+1:] {
							if !strings.HasPrefix(more, "  ") {
								break
							}
							first += "\n" + more
						}
						break
					}
				}
				cause := false
				for _, want := range c.causes {
					cause = cause || text.ContainsFolded(first, want)
				}
				if r.code != 1 || !text.ContainsFolded(first, "cnperf: set up the kube platform: the API server "+c.server+" does not answer") ||
					!text.ContainsFolded(first, "(nothing was created)") || !cause {
					t.Errorf("%s: exit %d; the first error line is %q, want the API server's cause (%q) first\nstderr:\n%s",
						strings.Join(args, " "), r.code, first, c.causes, r.stderr)
				}
				if r.took > c.within {
					t.Errorf("%s: took %s, want within %s", strings.Join(args, " "), r.took.Round(time.Millisecond), c.within)
				}
				for _, bad := range []string{"clean-up", "cleanup", "may be left"} {
					if text.ContainsFolded(r.stderr, bad) {
						t.Errorf("%s: stderr speaks of %q though nothing was created:\n%s", strings.Join(args, " "), bad, r.stderr)
					}
				}
			}
		})
	}
}
