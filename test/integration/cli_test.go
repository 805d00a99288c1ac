package integration

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/text"
)

// cliResult is what one invocation of the real binary did.
type cliResult struct {
	code           int
	stdout, stderr string
}

// runCLI runs the built binary with args, no cluster configured (KUBECONFIG and HOME point at
// nothing), stdin from stdin.
func runCLI(t *testing.T, bin, stdin string, env []string, args ...string) cliResult {
	t.Helper()
	cmd := exec.Command(bin, args...)
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "KUBECONFIG=", "HOME="+home, "KUBERNETES_SERVICE_HOST=", "COLUMNS=", "CNPERF_AGENT_TOKEN=")
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("%v: %v", args, err)
	}
	return cliResult{code: code, stdout: out.String(), stderr: errb.String()}
}

// cliBinary is the binary under test: $CNPERF_TEST_BINARY when set (to show that a test fails
// on an older build), else one built from this tree.
func cliBinary(t *testing.T) string {
	if b := os.Getenv("CNPERF_TEST_BINARY"); b != "" {
		return b
	}
	return buildCnperf(t)
}

// TestCLIEdges runs the real binary on the inputs issue 28 found mishandled (findings 8 and 9
// and the kubectl conventions): each row's exit code and the words its message must hold.
func TestCLIEdges(t *testing.T) {
	bin := cliBinary(t)
	dir := t.TempDir()
	var flows []string
	for i := 1; i <= 120; i++ {
		flows = append(flows, strconv.Itoa(i))
	}
	parallel120 := strings.Join(flows, ",")
	planFile := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(planFile, []byte("apiVersion: cnperf.dev/v1alpha1\nkind: Plan\nmetadata:\n  name: baseline\n"+
		"tests:\n- profiles: [TCP_RR]\n  duration: 1s\n  samples: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		env    []string
		stdin  string
		code   int
		stderr []string // substrings of stderr
		stdout []string // substrings of stdout
	}{
		// Finding 8: absurd settings.
		{name: "1ns sample", args: []string{"run", "--dry-run", "--profile", "TCP_RR", "--duration", "1ns"}, code: 2,
			stderr: []string{"--duration: 1ns is shorter than the 100ms a sample must last", "--allow-short-samples"}},
		{name: "short sample allowed", args: []string{"run", "--dry-run", "--profile", "TCP_RR", "--duration", "10ms", "--allow-short-samples"},
			stdout: []string{"10ms"}},
		{name: "too many samples", args: []string{"run", "--dry-run", "--profile", "TCP_RR", "--samples", "100000000000"}, code: 2,
			stderr: []string{"--samples: samples 100000000000 is larger than the limit of 1000"}},
		{name: "estimate beyond 292 years", args: []string{"run", "--dry-run", "--profile", "TCP_RR", "--samples", "1000", "--duration", "24h",
			"--parallel", parallel120}, stdout: []string{"120 cases, at least 2880000h of measurement"}},
		{name: "estimate rounded", args: []string{"run", "--dry-run", "--profile", "TCP_RR", "--duration", "1.1s", "--samples", "3",
			"--parallel", "1,2,3,4,5,6,7"}, stdout: []string{"7 cases, at least 24.5s of measurement"}},
		// Finding 9: exit codes as the README's table says.
		{name: "results path", args: []string{"run", "--profile", "TCP_RR", "--duration", "1s", "--samples", "1", "--results", filepath.Join(dir, "no", "such", "dir", "r.jsonl")},
			code: 2, stderr: []string{"--results:"}},
		{name: "lab down bad tag", args: []string{"lab", "down", "zzz"}, code: 2, stderr: []string{`"zzz" is not a lab tag`}},
		{name: "agent serve empty token", args: []string{"agent", "serve", "--token-file", "/dev/null"}, code: 2,
			stderr: []string{"--token-file /dev/null is empty"}},
		{name: "agent serve bad bind", args: []string{"agent", "serve", "--bind", "nonsense"}, env: []string{"CNPERF_AGENT_TOKEN=" + strings.Repeat("a", 64)},
			code: 2, stderr: []string{`--bind "nonsense": want an IP address`}},
		{name: "unknown command", args: []string{"rnu"}, code: 2, stderr: []string{`unknown command "rnu"`}},
		{name: "report missing file", args: []string{"report", filepath.Join(dir, "none.jsonl")}, code: 2, stderr: []string{"no such file"}},
		// kubectl conventions.
		{name: "empty profile", args: []string{"run", "--dry-run", "--profile", ""}, code: 2, stderr: []string{"--profile: empty value"}},
		{name: "dry-run=client", args: []string{"run", "--dry-run=client", "--profile", "TCP_RR"}, stdout: []string{"1 cases"}},
		{name: "dry-run=server", args: []string{"run", "--dry-run=server", "--profile", "TCP_RR"}, code: 2, stderr: []string{`"server" is not supported`}},
		{name: "dry-run=clinet", args: []string{"run", "--dry-run=clinet"}, code: 2, stderr: []string{`(did you mean "client"?)`}},
		{name: "-v=3", args: []string{"-v=3", "run", "--dry-run", "--profile", "TCP_RR"}, stderr: []string{"debug: case"}},
		{name: "-v alone", args: []string{"run", "-v", "--dry-run", "--profile", "TCP_RR"}, stderr: []string{"debug: case"}},
		{name: "-o yaml", args: []string{"run", "--dry-run", "-o", "yaml", "--profile", "TCP_RR"}, stdout: []string{"- driver: native\n"}},
		{name: "version -o json", args: []string{"version", "-o", "json"}, stdout: []string{`"defaultImage": "ghcr.io/cnperf/cnperf:`}},
		{name: "version --json deprecated", args: []string{"version", "--json"}, stdout: []string{`"defaultImage"`},
			stderr: []string{"warning: flag --json has been deprecated, use -o json"}},
		{name: "version --json -o yaml", args: []string{"version", "--json", "-o", "yaml"}, code: 2, stderr: []string{"--json and -o yaml exclude each other"}},
		{name: "version --image -o json", args: []string{"version", "--image", "-o", "json"}, code: 2, stderr: []string{"--image prints the image's name alone"}},
		{name: "unknown flag suggestion", args: []string{"run", "--ouput", "json"}, code: 2, stderr: []string{"unknown flag: --ouput (did you mean --output?)"}}, //nolint:misspell // the typo is the input under test
		{name: "unknown platform suggestion", args: []string{"run", "--platform", "locl"}, code: 2, stderr: []string{`(did you mean "local"?)`}},
		{name: "unknown format suggestion", args: []string{"report", "-o", "jsn", "-"}, code: 2, stderr: []string{`(did you mean "json"?)`}},
		{name: "completion of --profile", args: []string{"__complete", "run", "--profile", "TCP_RR,UDP"},
			stdout: []string{"TCP_RR,UDP_STREAM\n", "TCP_RR,UDP_RR\n"}},
		{name: "completion of --driver", args: []string{"__complete", "run", "--driver", ""}, stdout: []string{"native\n", "iperf3\n"}},
		{name: "completion of --path", args: []string{"__complete", "run", "--path", ""}, stdout: []string{"pod-pod-cross-node\n", "all\n"}},
		{name: "completion of -o", args: []string{"__complete", "run", "-o", ""}, stdout: []string{"yaml\n", "wide\n"}},
		{name: "completion of --platform", args: []string{"__complete", "run", "--platform", ""}, stdout: []string{"auto\nlocal\nkube\n"}},
		{name: "completion of mesh -o", args: []string{"__complete", "mesh", "-o", ""}, stdout: []string{"cells\n", "yaml\n"}},
		{name: "completion of mesh --driver", args: []string{"__complete", "mesh", "--driver", ""}, stdout: []string{"native\n", "iperf2\n"}},
		{name: "mesh -o suggestion", args: []string{"mesh", "-o", "jsn"}, code: 2,
			stderr: []string{`did you mean "json"`}},
		{name: "report without files", args: []string{"report"}, code: 2, stderr: []string{"cnperf report: no results file given", "usage: cnperf report"}},
		{name: "compare without files", args: []string{"compare", "base.jsonl"}, code: 2, stderr: []string{"give a base run and at least one run", "usage: cnperf compare"}},
		{name: "metadata.name names the run", args: []string{"run", "-q", "-c", planFile, "-o", "json"}, stdout: []string{`"plan": "baseline"`}},
		{name: "bind option overridden is said", args: []string{"run", "--option", "bind=0.0.0.0", "--profile", "TCP_RR", "--duration", "1s",
			"--samples", "1", "-o", "json"}, stderr: []string{"warning: option bind=0.0.0.0 of native is overridden: its servers on this host listen on 127.0.0.1 only"}},
		{name: "run -c -", args: []string{"run", "--dry-run", "-c", "-"}, stdin: "apiVersion: cnperf.dev/v1alpha1\nkind: Plan\ntests:\n- profiles: [UDP_RR]\n",
			stdout: []string{"UDP_RR"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := tt.args
			r := runCLI(t, bin, tt.stdin, tt.env, args...)
			if r.code != tt.code {
				t.Errorf("cnperf %s: exit %d, want %d\nstderr:\n%s", strings.Join(args, " "), r.code, tt.code, r.stderr)
			}
			for _, s := range tt.stderr {
				if !text.ContainsFolded(r.stderr, s) {
					t.Errorf("cnperf %s: stderr lacks %q:\n%s", strings.Join(args, " "), s, r.stderr)
				}
			}
			for _, s := range tt.stdout {
				if !strings.Contains(r.stdout, s) {
					t.Errorf("cnperf %s: stdout lacks %q:\n%s", strings.Join(args, " "), s, r.stdout)
				}
			}
		})
	}
}

// TestCLIHostHostSaysNamespaces: a plain --path host-host as root builds network namespaces,
// and says so on stderr before it does (issue 28).
func TestCLIHostHostSaysNamespaces(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the lab needs root")
	}
	bin := cliBinary(t)
	r := runCLI(t, bin, "", nil, "run", "--path", "host-host", "--profile", "TCP_RR", "--duration", "1s", "--samples", "1", "-o", "json")
	if r.code != 0 || !text.ContainsFolded(r.stderr, "host-host: built in network namespaces on this host (the lab ") {
		t.Errorf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
}
