package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// testdata/sample.jsonl is real `go test -json` output of testdata/sample (one test passes,
// one fails, one skips, and a subtest skips).
func TestSummarizeRealCapture(t *testing.T) {
	in, err := os.ReadFile("testdata/sample.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	got, err := summarize(bytes.NewReader(in), &out)
	if err != nil {
		t.Fatal(err)
	}
	if got.passed != 3 || got.failed != 1 || got.skipped != 2 || got.failedPackages != 1 {
		t.Errorf("tally %+v, want 3 passed, 1 failed, 2 skipped, 1 failed package", got)
	}
	for _, want := range []string{
		"TestFails (example.com/sample):\n=== RUN   TestFails\n    sample_test.go:10: before the failure\n    sample_test.go:11: want 2, got 3\n--- FAIL: TestFails",
		"FAIL\texample.com/sample\t",
		"example.com/sample TestSkips: netperf not installed: run .ci/install-deps.sh (sample_test.go:16)\n",
		"example.com/sample TestSubtests/skipped: no root (sample_test.go:21)\n",
		"\n3 passed, 1 failed, 2 skipped\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	// a passing test's log stays out of the summary
	if strings.Contains(out.String(), "a log line of a passing test") {
		t.Errorf("passing test's output printed:\n%s", out.String())
	}
}

func TestSummarizeLines(t *testing.T) {
	tests := []struct {
		name, in, wantOut string
		failed            int
	}{
		{"not json passes through", "# pkg\nbuild error\n", "# pkg\nbuild error\n", 0},
		{"package ok line", `{"Action":"output","Package":"p","Output":"ok  \tp\t0.1s\n"}` + "\n", "ok  \tp\t0.1s\n", 0},
		{"skip without a reason", `{"Action":"skip","Package":"p","Test":"T"}` + "\n", "p T: (no reason given)", 0},
		{"fail without output", `{"Action":"fail","Package":"p","Test":"T"}` + "\n", "0 passed, 1 failed, 0 skipped", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			got, err := summarize(strings.NewReader(tt.in), &out)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), tt.wantOut) || got.failed != tt.failed {
				t.Errorf("output %q (failed %d), want it to hold %q (failed %d)", out.String(), got.failed, tt.wantOut, tt.failed)
			}
		})
	}
}
