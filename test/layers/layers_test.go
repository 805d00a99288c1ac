// Package layers checks that imports point one way (docs/architecture.md, "Who imports
// whom"): `make check` runs it. A rule names the packages it binds (an import path prefix)
// and what they must not depend on, directly or through another package.
package layers

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/cnperf/cnperf/"

// rules: packages under From must not depend on anything under To.
var rules = []struct{ From, To, Why string }{
	{"internal/platform", "internal/loadgen", "a platform starts servers; the built-in generator's sockets are the driver's (the agent token is internal/agenttoken)"},
	{"internal/platform", "internal/cli", "library packages take options structs; only internal/cli knows flags and commands"},
	{"internal/report", "internal/mesh", "encoders render runs; the matrix view they share with mesh is internal/meshview"},
	{"internal/runner", "internal/report", "the runner measures; the figures it shares with the encoders are internal/figure"},
	{"internal/measure", "internal/cli", "the run lifecycle is a library"},
}

// under reports whether pkg (relative to the module) is prefix or a package below it.
func under(pkg, prefix string) bool {
	prefix = strings.TrimSuffix(prefix, "/")
	return pkg == prefix || strings.HasPrefix(pkg, prefix+"/")
}

func TestImportsPointOneWay(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps=false", "-f", `{{.ImportPath}} {{join .Deps " "}}`, module+"...").Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	checked := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || !strings.HasPrefix(fields[0], module) {
			continue
		}
		pkg := strings.TrimPrefix(fields[0], module)
		for _, r := range rules {
			if !under(pkg, r.From) {
				continue
			}
			checked[r.From] = true
			for _, d := range fields[1:] {
				if dep, ok := strings.CutPrefix(d, module); ok && under(dep, r.To) {
					t.Errorf("%s depends on %s: %s must not depend on %s (%s)", pkg, dep, r.From, r.To, r.Why)
				}
			}
		}
	}
	for _, r := range rules {
		if !checked[r.From] {
			t.Errorf("rule %s ↛ %s binds no package: the layout changed, update the rule", r.From, r.To)
		}
	}
}
