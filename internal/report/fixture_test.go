package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/cnperf/cnperf/internal/report/reporttest"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden file (go test -update to accept):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// The shared fixture (internal/report/reporttest), by the names these tests use.
var (
	fp         = reporttest.F
	t0         = reporttest.T0
	sample     = reporttest.Sample
	failed     = reporttest.Failed
	hist       = reporttest.Hist
	result     = reporttest.Result
	fixtureRun = reporttest.Run
)
