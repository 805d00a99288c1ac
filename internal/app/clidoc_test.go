package app_test

import (
	"flag"
	"os"
	"testing"

	"github.com/cnperf/cnperf/internal/app"
)

var update = flag.Bool("update", false, "rewrite docs/cli.md from the command tree")

// TestCLIDoc keeps docs/cli.md, the reference of every command and flag, identical to the
// real commands: CI fails when a flag changes and the file does not.
func TestCLIDoc(t *testing.T) {
	const path = "../../docs/cli.md"
	want := app.CLIDoc()
	b, err := os.ReadFile(path)
	if err == nil && string(b) == want {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Fatalf("docs/cli.md is stale; run: go test ./internal/app -run TestCLIDoc -update")
}
