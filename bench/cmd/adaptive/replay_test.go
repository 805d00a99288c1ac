package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/runfile"
	"github.com/cnperf/cnperf/internal/runner"
)

// untar extracts a recorded make bench-adaptive -out directory (testdata) and returns it.
func untar(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("tar", "xzf", filepath.Join("testdata", name), "-C", dir).CombinedOutput(); err != nil {
		t.Fatalf("tar: %v\n%s", err, out)
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 {
		t.Fatalf("%s: want one directory inside, got %v (%v)", name, entries, err)
	}
	return filepath.Join(dir, entries[0].Name())
}

// TestReplayReproducesTheRun: the 12:44 run of docs/performance.md ran with the default rule,
// so replaying its recorded samples through runner.Stop with that rule must stop every case
// exactly where the run stopped it, with the same verdict.
func TestReplayReproducesTheRun(t *testing.T) {
	dir := untar(t, "adaptive-2026-11-26T1244-futility-4-1.tgz")
	files, _ := filepath.Glob(filepath.Join(dir, "*-adaptive-*.json"))
	if len(files) != 4 {
		t.Fatalf("%d adaptive run files, want 4", len(files))
	}
	n := 0
	for _, f := range files {
		runs, err := runfile.Read(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			for i := range r.Results {
				res := &r.Results[i]
				got := replayCase(res, runner.DefaultFutility)
				if got.truncated || got.samples != len(res.Samples) || got.met != res.Confidence.Met {
					t.Errorf("%s %s: replay stops after %d (met %v, truncated %v); the run took %d (met %v)",
						filepath.Base(f), res.Profile, got.samples, got.met, got.truncated, len(res.Samples), res.Confidence.Met)
				}
				n++
			}
		}
	}
	if n != 16 {
		t.Errorf("%d cases, want 16 (5 loopback and 3 lab, 2 rounds)", n)
	}
}

// TestReplayTable: the table docs/performance.md shows for the 12:30 run (which gave up after
// 6 samples when the target needed more than 3 × the maximum).
func TestReplayTable(t *testing.T) {
	dir := untar(t, "adaptive-2026-11-26T1230-futility-6-3.tgz")
	var out bytes.Buffer
	if err := replayDir(&out, dir, "6,3;4,1"); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", out.String())
	for _, want := range []string{
		"| N 6, F 3 | 3/6, 271 s, 0.66 | 6/10, 233 s, 1.54 |",
		"| N 4, F 1 (the default) | 3/6, 110 s, 1.64 | 6/10, 161 s, 2.24 |",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no line %q", want)
		}
	}
	if _, err := parseRules("4"); err == nil {
		t.Error("-rules 4: no error")
	}
}
