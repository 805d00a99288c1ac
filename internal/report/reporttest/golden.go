package reporttest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/cnperf/cnperf/internal/golden"
)

// Golden compares got with the golden file testdata/name, or rewrites it when the test runs
// with -update (read the change before committing it).
func Golden(t testing.TB, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), got)
}

// Seeds adds the first lines (a run, a result, one more) of every real capture in dirs
// (*.jsonl, *.json, *.csv) to a fuzz target's corpus: whole files make every execution slow
// without reaching more code.
func Seeds(f *testing.F, dirs ...string) {
	for _, dir := range dirs {
		for _, pat := range []string{"*.jsonl", "*.json", "*.csv"} {
			files, _ := filepath.Glob(filepath.Join(dir, pat))
			for _, p := range files {
				b, err := os.ReadFile(p)
				if err != nil {
					f.Fatal(err)
				}
				if lines := bytes.SplitAfter(b, []byte("\n")); len(lines) > 3 {
					b = bytes.Join(lines[:3], nil)
				}
				f.Add(b)
			}
		}
	}
}

// Updating reports whether the test runs with -update (golden files and pictures are
// rewritten).
func Updating() bool { return golden.Updating() }
