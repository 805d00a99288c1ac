package app_test

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/app"
)

var update = flag.Bool("update", false, "rewrite the CLI reference in README.md")

const (
	beginRef = "<!-- BEGIN CLI REFERENCE (generated: go test ./internal/app -run TestREADMECLIReference -update) -->\n"
	endRef   = "<!-- END CLI REFERENCE -->"
)

// TestREADMECLIReference keeps the README's flag reference identical to the real commands.
func TestREADMECLIReference(t *testing.T) {
	const path = "../../README.md"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i, j := strings.Index(s, beginRef), strings.Index(s, endRef)
	if i < 0 || j < i {
		t.Fatalf("README.md lacks the CLI reference markers %q ... %q", beginRef, endRef)
	}
	want := app.CLIReference()
	got := s[i+len(beginRef) : j]
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(s[:i+len(beginRef)]+want+s[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("README.md's CLI reference is stale; run: go test ./internal/app -run TestREADMECLIReference -update")
}
