package integration

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// fencedAfter returns the lines of the first fenced block after marker in doc.
func fencedAfter(t *testing.T, doc, marker string) []string {
	t.Helper()
	i := strings.Index(doc, marker)
	if i < 0 {
		t.Fatalf("README.md lacks %q", marker)
	}
	rest := doc[i:]
	start := strings.Index(rest, "```sh\n")
	if start < 0 {
		t.Fatalf("no ```sh block after %q", marker)
	}
	rest = rest[start+len("```sh\n"):]
	end := strings.Index(rest, "```")
	if end < 0 {
		t.Fatalf("unterminated block after %q", marker)
	}
	return strings.Split(strings.TrimSpace(rest[:end]), "\n")
}

// TestREADMEQuickStartThisHost does what the README tells a newcomer: `make install` from this
// checkout (the install block, without its clone line), then the "this host" quick start as
// written, with no cluster configured. Each line must succeed, and the last one's JSON must
// hold a measured result.
func TestREADMEQuickStartThisHost(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cnperf and measures for up to a minute")
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	install := fencedAfter(t, doc, "## Install")
	if !strings.Contains(strings.Join(install, "\n"), "make install") {
		t.Fatalf("the install block has no make install:\n%s", strings.Join(install, "\n"))
	}
	gobin, work, home := t.TempDir(), t.TempDir(), t.TempDir()
	env := append(os.Environ(), "GOBIN="+gobin, "HOME="+home, "KUBECONFIG=", "KUBERNETES_SERVICE_HOST=",
		"GOPATH="+goEnv(t, "GOPATH"), "GOCACHE="+goEnv(t, "GOCACHE"), "GOMODCACHE="+goEnv(t, "GOMODCACHE"),
		"PATH="+gobin+string(os.PathListSeparator)+os.Getenv("PATH"))
	inst := exec.Command("make", "install")
	inst.Dir, inst.Env = root, env
	if out, err := inst.CombinedOutput(); err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(gobin, "cnperf")); err != nil {
		t.Fatalf("make install put no cnperf in GOBIN: %v", err)
	}
	for _, line := range fencedAfter(t, doc, "<!-- quick start: this host") {
		if !strings.HasPrefix(line, "cnperf ") {
			t.Fatalf("quick-start line is not a cnperf command: %q", line)
		}
		sh := exec.Command("bash", "-euo", "pipefail", "-c", line)
		sh.Dir, sh.Env = work, env
		out, err := sh.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out)
		}
		t.Logf("$ %s\n%s", line, out)
	}
	var run struct {
		Results []struct {
			Profile string `json:"profile"`
			Summary struct {
				Transactions *struct {
					Mean float64 `json:"mean"`
				} `json:"transactionsPerSecond"`
			} `json:"summary"`
		} `json:"results"`
	}
	b, err = os.ReadFile(filepath.Join(work, "run.json"))
	if err != nil || json.Unmarshal(b, &run) != nil || len(run.Results) != 1 ||
		run.Results[0].Summary.Transactions == nil || !(run.Results[0].Summary.Transactions.Mean > 0) {
		t.Fatalf("run.json (%v) holds no measured TCP_RR result:\n%.400s", err, b)
	}
}

func goEnv(t *testing.T, name string) string {
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}
