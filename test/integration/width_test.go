package integration

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/testport"
	"github.com/cnperf/cnperf/internal/text"
)

// runBin runs the real binary with COLUMNS set to columns ("" = unset) and stdout a pipe,
// and returns stdout; it fails the test when the command fails.
func runBin(t *testing.T, bin, columns string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "COLUMNS=") {
			env = append(env, e)
		}
	}
	if columns != "" {
		env = append(env, "COLUMNS="+columns)
	}
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("cnperf %s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// runSuite runs `cnperf run` (runBinary: COLUMNS empty) and returns stdout; it fails the test
// when the command fails, except for a run some of whose cases failed (exit 1, "N of M cases
// failed", N < M): its table, with the PARTIAL rows and their wrapped causes, is what this test
// checks the width of. Under make test on a loaded 2-core machine a 200 ms UDP_STREAM sample's
// sender can be off the CPU for the whole window ("no datagram arrived in the measured window
// (client sent 0)"), a measurement failure cnperf reports as it should; the drivers' tests
// (drivers_test.go) are the ones that require their samples to succeed.
func runSuite(t *testing.T, bin string, args ...string) string {
	t.Helper()
	stdout, stderr, code := runBinary(t, bin, args...)
	switch {
	case code == 0:
	case code == exit.Failed && someCasesFailed(stderr):
		t.Logf("cnperf %s: exit %d (samples failed under load; the table is still checked):\n%s", strings.Join(args, " "), code, stderr)
	default:
		t.Fatalf("cnperf %s: exit %d\n%s%s", strings.Join(args, " "), code, stdout, stderr)
	}
	return stdout
}

// someCasesFailed reports whether cnperf's error says that some, not all, of a run's cases
// failed ("cnperf: 1 of 5 cases failed:").
func someCasesFailed(stderr string) bool {
	m := regexp.MustCompile(`cnperf: (\d+) of (\d+) cases failed:`).FindStringSubmatch(text.Folded(stderr))
	if m == nil {
		return false
	}
	n, _ := strconv.Atoi(m[1])
	all, _ := strconv.Atoi(m[2])
	return n < all
}

// fits fails the test when a line of out is wider than width display columns (cnperf prints
// ASCII and one-column runes such as µ, ±, Δ, −).
func fits(t *testing.T, what, out string, width int) {
	t.Helper()
	for i, l := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(l); n > width {
			t.Errorf("%s: line %d is %d columns wide (> %d):\n%s\n\nwhole output:\n%s", what, i+1, n, width, l, out)
			return
		}
	}
}

// TestTablesFitTheTerminal: cnperf run on the default local suite (loopback, short samples,
// one run with a confidence target so the CHECKS column shows) prints a table that fits 120
// columns without COLUMNS and 80 with COLUMNS=80; cnperf report of the runs too; -o wide keeps
// every column and each case's checks in its row. cnperf compare of the two runs fits 120
// columns, and 80 (three columns) with COLUMNS=80.
func TestTablesFitTheTerminal(t *testing.T) {
	bin := buildCnperf(t)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	port, data := strconv.Itoa(testport.Free(t)), strconv.Itoa(testport.Free(t))
	common := []string{"run", "--platform", "local", "--duration", "200ms", "--no-progress",
		"--option", "port=" + port, "--option", "dataPort=" + data}
	runA := runSuite(t, bin, append(common, "--samples", "2", "--results", a, "--label", "try=a")...)
	runB := runSuite(t, bin, append(common, "--confidence", "95,5", "--samples", "3,3", "--results", b, "--label", "try=b")...)
	for _, out := range []string{runA, runB} {
		if !strings.Contains(out, "RESULT (mean ± 95% CI)") || !strings.Contains(out, "TCP_CRR") {
			t.Fatalf("cnperf run printed no table of the default suite:\n%s", out)
		}
		fits(t, "cnperf run", out, 120)
	}
	if !strings.Contains(runB, "CHECKS") || !strings.Contains(runB, "#1 checks: ") {
		t.Errorf("the run with a confidence target shows no checks:\n%s", runB)
	}
	fits(t, "cnperf report", runBin(t, bin, "", "report", a, b), 120)
	narrow := runBin(t, bin, "80", "report", a, b)
	fits(t, "COLUMNS=80 cnperf report", narrow, 80)
	for _, want := range []string{"RESULT (mean ± 95% CI)", "STATUS", "not shown to fit 80 columns:", "-o wide"} {
		if !strings.Contains(narrow, want) {
			t.Errorf("COLUMNS=80 cnperf report lacks %q:\n%s", want, narrow)
		}
	}
	wide := runBin(t, bin, "80", "report", "-o", "wide", b)
	for _, want := range []string{"BURST", "COV", "RETRANS", "MISSED CI ±"} {
		if !strings.Contains(wide, want) {
			t.Errorf("cnperf report -o wide lacks %q:\n%s", want, wide)
		}
	}
	if strings.Contains(wide, "not shown to fit") {
		t.Errorf("cnperf report -o wide left columns out:\n%s", wide)
	}

	cmp := runBin(t, bin, "", "compare", a, b)
	fits(t, "cnperf compare", cmp, 120)
	for _, want := range []string{"try=a (base)", "try=b", "TCP_RR native loopback 1B x1\n  transactions ↑", "checks of "} {
		if !strings.Contains(cmp, want) {
			t.Errorf("cnperf compare lacks %q:\n%s", want, cmp)
		}
	}
	fits(t, "COLUMNS=80 cnperf compare", runBin(t, bin, "80", "compare", a, b, a), 80)
	if w := runBin(t, bin, "", "compare", "-o", "wide", a, b); !strings.Contains(w, "W p") && !strings.Contains(w, "U p") {
		t.Errorf("cnperf compare -o wide has no tests:\n%s", w)
	}
}
