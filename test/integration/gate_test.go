package integration

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/runfile"
	"github.com/cnperf/cnperf/internal/stats"
	"github.com/cnperf/cnperf/internal/text"
)

// gateCase is one case of a results file written for the gate tests: a profile with the
// samples of its headline rate.
type gateCase struct {
	profile api.Profile
	rates   []float64
}

// gateCases are the four cases of the base run; the new runs keep some of them.
var gateCases = []gateCase{
	{api.TCPStream, []float64{9.40e9, 9.42e9, 9.38e9}},
	{api.TCPRR, []float64{41000, 41200, 40900}},
	{api.UDPStream, []float64{2.10e9, 2.12e9, 2.11e9}},
	{api.TCPCRR, []float64{21000, 21100, 20950}},
}

// writeGateRun writes a results file as `cnperf run --results` does (the package's own
// writer). end: "done" closes the run normally, "interrupted" closes it as a SIGINT does (end
// record with interrupted: true), "crashed" leaves no end record (the writer was killed).
func writeGateRun(t *testing.T, dir, name, end string, cases ...gateCase) string {
	t.Helper()
	run := &api.Run{APIVersion: api.APIVersion, Kind: api.KindRun, UUID: name + "-0000-uuid", Platform: "local"}
	path := filepath.Join(dir, name+".jsonl")
	w, err := runfile.Create(path, run)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		var ss []api.Sample
		for i, v := range c.rates {
			v := v
			s := api.Sample{Index: i + 1}
			switch c.profile {
			case api.TCPStream, api.UDPStream:
				s.ThroughputBitsPerSecond = &v
			case api.TCPCRR:
				s.ConnectionsPerSecond = &v
			default:
				s.TransactionsPerSecond = &v
			}
			ss = append(ss, s)
		}
		r := api.Result{Profile: c.profile, Driver: "native", Path: api.PathLoopback,
			Params:  api.Params{DurationSeconds: 10, Samples: len(ss), MessageSizeBytes: 1024, Parallel: 1},
			Samples: ss, Summary: stats.Summarize(ss)}
		if err := w.AppendResult(r); err != nil {
			t.Fatal(err)
		}
	}
	run.Interrupted = end == "interrupted"
	if err := w.Close(*run); err != nil {
		t.Fatal(err)
	}
	if end == "crashed" {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.SplitAfter(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
		if err := os.WriteFile(path, bytes.Join(lines[:len(lines)-1], nil), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// runBinary is runCLI (no cluster configured, empty stdin) returning stdout, stderr and the
// exit code.
func runBinary(t *testing.T, bin string, args ...string) (string, string, int) {
	t.Helper()
	r := runCLI(t, bin, "", nil, args...)
	return r.stdout, r.stderr, r.code
}

// TestCompareGateCannotPassByAccident (issue 28, finding 1): `cnperf compare BASE NEW
// --fail-on-regression 5` exited 0 when NEW was interrupted, had no results or lacked cases
// of the base. Each must exit 1 with the reason, unless explicitly allowed; the table and
// -o json say that a run was interrupted.
func TestCompareGateCannotPassByAccident(t *testing.T) {
	bin := buildCnperf(t)
	dir := t.TempDir()
	base := writeGateRun(t, dir, "base", "done", gateCases...)
	same := writeGateRun(t, dir, "same", "done", gateCases...)
	interrupted := writeGateRun(t, dir, "interrupted", "interrupted", gateCases[:1]...)
	crashed := writeGateRun(t, dir, "crashed", "crashed", gateCases[:1]...)
	empty := writeGateRun(t, dir, "empty", "done")
	partial := writeGateRun(t, dir, "partial", "done", gateCases[0], gateCases[1], gateCases[3])
	for _, c := range []struct {
		name  string
		args  []string
		code  int
		wants []string // in stderr
	}{
		{"same cases pass", []string{same}, 0, nil},
		{"interrupted", []string{interrupted}, 1, []string{"[interrupted]: the run was interrupted after 1 case(s)",
			"TCP_RR native loopback 1KiB x1 [interrupted]: missing"}},
		{"crashed, no end record", []string{crashed}, 1, []string{"[crashed]: the run was interrupted after 1 case(s)"}},
		{"interrupted allowed, cases still missing", []string{"--allow-interrupted", interrupted}, 1, []string{"[interrupted]: missing"}},
		{"interrupted and missing allowed", []string{"--allow-interrupted", "--allow-missing", interrupted}, 0, nil},
		{"empty", []string{empty}, 1, []string{"[empty]: no results"}},
		{"empty even with both allowed", []string{"--allow-interrupted", "--allow-missing", empty}, 1, []string{"[empty]: no results"}},
		{"missing a case", []string{partial}, 1, []string{"UDP_STREAM native loopback 1KiB x1 [partial]: missing"}},
		{"missing allowed", []string{"--allow-missing", partial}, 0, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"compare", "--fail-on-regression", "5", base}, c.args...)
			out, errOut, code := runBinary(t, bin, args...)
			if code != c.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, out, errOut)
			}
			for _, w := range c.wants {
				if !text.ContainsFolded(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
		})
	}

	// Without the gate the table says the run was interrupted, in its header and below it.
	out, _, code := runBinary(t, bin, "compare", base, interrupted)
	if code != 0 || !strings.Contains(out, "interrupted (interrupted)") ||
		!strings.Contains(out, "warning: interrupted: run interrupted-0000-uuid was interrupted: 1 finished case(s)") {
		t.Errorf("exit %d, table:\n%s", code, out)
	}
	out, _, code = runBinary(t, bin, "compare", "-o", "json", base, crashed)
	if code != 0 || !strings.Contains(out, `"interrupted": true`) || !strings.Contains(out, `"results": 1`) {
		t.Errorf("exit %d, json:\n%s", code, out)
	}
	// The relaxing flags without the gate would silently do nothing: bad usage.
	if _, errOut, code := runBinary(t, bin, "compare", "--allow-missing", base, partial); code != 2 {
		t.Errorf("--allow-missing without --fail-on-regression: exit %d\n%s", code, errOut)
	}
}
