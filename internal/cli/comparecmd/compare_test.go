package comparecmd

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/iostreams"
	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/stats"
)

func fp(v float64) *float64 { return &v }

// writeRun saves a run of one TCP_STREAM case with the given throughputs (Gbit/s) as a
// results file, the way `cnperf run --results` does.
func writeRun(t *testing.T, dir, name, cni string, gbits ...float64) string {
	t.Helper()
	return writeLabelledRun(t, dir, name, cni, nil, gbits...)
}

// writeLabelledRun is writeRun with run labels (cnperf run --label KEY=VALUE).
func writeLabelledRun(t *testing.T, dir, name, cni string, labels map[string]string, gbits ...float64) string {
	t.Helper()
	var ss []api.Sample
	for i, g := range gbits {
		ss = append(ss, api.Sample{Index: i + 1, ThroughputBitsPerSecond: fp(g * 1e9)})
	}
	r := api.Result{Profile: api.TCPStream, Driver: "native", Path: api.PathPodPodCrossNode,
		Params: api.Params{DurationSeconds: 10, Samples: len(ss), MessageSizeBytes: 131072, Parallel: 1}, Samples: ss}
	r.Summary = stats.Summarize(ss)
	run := &api.Run{APIVersion: api.APIVersion, Kind: api.KindRun, UUID: name + "-uuid",
		Cluster: &api.ClusterDetails{CNI: cni}, Labels: labels}
	path := filepath.Join(dir, name+".jsonl")
	w, err := report.CreateResultsFile(path, run)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.AppendResult(r); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(*run); err != nil {
		t.Fatal(err)
	}
	return path
}

func execute(args ...string) (string, string, error) {
	var out, errOut bytes.Buffer
	c := NewCommand(iostreams.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	c.SetArgs(args)
	c.SetOut(&errOut)
	c.SetErr(&errOut)
	err := c.Execute()
	return out.String(), errOut.String(), err
}

func TestCompareCommandGate(t *testing.T) {
	dir := t.TempDir()
	base := writeRun(t, dir, "routed", "calico", 9.40, 9.42, 9.38)
	same := writeRun(t, dir, "vxlan-same", "calico", 9.41, 9.39, 9.40)
	slow := writeRun(t, dir, "vxlan", "calico", 8.45, 8.47, 8.44)

	// No gate: prints, exits 0 even though the second run is worse.
	out, _, err := execute(base, slow)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "routed (base)") || !strings.Contains(out, "−10.1% worse W") {
		t.Errorf("table:\n%s", out)
	}

	// Gate 5%: a GateError (exit 1), with the table still printed.
	out, _, err = execute("--fail-on-regression", "5", base, slow)
	var gate *report.GateError
	if !errors.As(err, &gate) || len(gate.Regressions) != 1 || exit.Code(err) != 1 {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(err.Error(), "regression gate of 5% exceeded") || !strings.Contains(out, "worse") {
		t.Errorf("err %q, out %q", err, out)
	}
	// Gate 15%: passes.
	if _, _, err := execute("--fail-on-regression", "15", base, slow); err != nil {
		t.Errorf("15%% gate: %v", err)
	}
	// Gate 0 with no change: passes.
	if _, _, err := execute("--fail-on-regression", "0", base, same); err != nil {
		t.Errorf("no change: %v", err)
	}

	// Labels and formats.
	out, _, err = execute("-o", "markdown", "--label", "before", "--label", "after", base, slow)
	if err != nil || !strings.HasPrefix(out, "| Case | Metric | before (base) | after |") {
		t.Errorf("markdown: %v\n%s", err, out)
	}
}

// TestCompareCommandRunLabels: runs saved with differing run labels are labelled by them
// (not by their shared CNI or their file names), and --label still wins.
func TestCompareCommandRunLabels(t *testing.T) {
	dir := t.TempDir()
	base := writeLabelledRun(t, dir, "main", "calico", map[string]string{"netmode": "routed", "ci": "yes"}, 9.40, 9.42, 9.38)
	next := writeLabelledRun(t, dir, "pr", "calico", map[string]string{"netmode": "vxlan", "ci": "yes"}, 8.45, 8.47, 8.44)
	out, _, err := execute("-o", "markdown", base, next)
	if err != nil || !strings.HasPrefix(out, "| Case | Metric | netmode=routed (base) | netmode=vxlan |") {
		t.Errorf("run labels: %v\n%s", err, out)
	}
	out, _, err = execute("-o", "markdown", "--label", "before", "--label", "after", base, next)
	if err != nil || !strings.HasPrefix(out, "| Case | Metric | before (base) | after |") {
		t.Errorf("--label: %v\n%s", err, out)
	}
}

func TestCompareCommandUsageErrors(t *testing.T) {
	dir := t.TempDir()
	base := writeRun(t, dir, "a", "calico", 1, 2)
	for name, args := range map[string][]string{
		"one label for two files": {"--label", "x", base, base},
		"bad alpha":               {"--alpha", "1.5", base, base},
		"bad format":              {"-o", "html", base, base},
		"missing file":            {base, filepath.Join(dir, "none.jsonl")},
		"negative gate":           {"--fail-on-regression", "-1", base, base},
	} {
		_, _, err := execute(args...)
		var u *exit.UsageError
		if !errors.As(err, &u) {
			t.Errorf("%s: err = %v, want usage error", name, err)
		}
	}
}
