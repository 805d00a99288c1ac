package comparecmd

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/gate"
	"github.com/cnperf/cnperf/internal/iostreams"
	"github.com/cnperf/cnperf/internal/runfile"
	"github.com/cnperf/cnperf/internal/stats"
	"github.com/cnperf/cnperf/internal/text"
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
	w, err := runfile.Create(path, run)
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
	if !strings.Contains(out, "routed (base)") || !strings.Contains(out, "−10.1% worse") {
		t.Errorf("table:\n%s", out)
	}

	// Gate 5%: a gate.RegressionError (exit 1), with the table still printed.
	out, _, err = execute("--fail-on-regression", "5", base, slow)
	var regErr *gate.RegressionError
	if !errors.As(err, &regErr) || len(regErr.Regressions) != 1 || exit.Code(err) != 1 {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(err.Error(), "regression gate of 5% failed") || !strings.Contains(out, "worse") {
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
	for name, tc := range map[string]struct {
		args []string
		want string // in the error
	}{
		"one label for two files": {[]string{"--label", "x", base, base}, "--label given 1 times for 2 files"},
		"bad alpha":               {[]string{"--alpha", "1.5", base, base}, "--alpha 1.5"},
		"bad format":              {[]string{"-o", "html", base, base}, `unable to match a printer suitable for the output format "html", allowed formats are: table,wide,markdown,json`},
		"mistyped format":         {[]string{"-o", "markdwon", base, base}, `unable to match a printer suitable for the output format "markdwon", allowed formats are: table,wide,markdown,json (did you mean "markdown"?)`},
		"missing file":            {[]string{base, filepath.Join(dir, "none.jsonl")}, "none.jsonl"},
		"negative gate":           {[]string{"--fail-on-regression", "-1", base, base}, "--fail-on-regression -1: want a percentage ≥ 0"},
		"NaN gate":                {[]string{"--fail-on-regression", "NaN", base, base}, "--fail-on-regression NaN: want a percentage ≥ 0"},
		"allow without gate":      {[]string{"--allow-missing", base, base}, "they need --fail-on-regression"},
	} {
		_, _, err := execute(tc.args...)
		var u *exit.UsageError
		if !errors.As(err, &u) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want a usage error saying %q", name, err, tc.want)
		}
	}
}

// TestCompareHostileFiles: /dev/zero is refused at once, and a file whose summary claims
// successes its samples do not have is compared on what its samples say.
func TestCompareHostileFiles(t *testing.T) {
	dir := t.TempDir()
	good := writeRun(t, dir, "good", "calico", 9.4, 9.5, 9.3)
	if _, _, err := execute(good, "/dev/zero"); err == nil || !strings.Contains(err.Error(), "/dev/zero: not a cnperf results file") {
		t.Errorf("/dev/zero: %v", err)
	}
	// Same throughputs, but every sample of the second file failed while its summary says 3/3.
	var ss []api.Sample
	for i := 0; i < 3; i++ {
		ss = append(ss, api.Sample{Index: i, Error: "connect: connection refused"})
	}
	r := api.Result{Profile: api.TCPStream, Driver: "native", Path: api.PathPodPodCrossNode,
		Params: api.Params{DurationSeconds: 10, Samples: 3, MessageSizeBytes: 131072, Parallel: 1}, Samples: ss}
	ok := []api.Sample{{ThroughputBitsPerSecond: fp(9.4e9)}, {ThroughputBitsPerSecond: fp(9.5e9)}, {ThroughputBitsPerSecond: fp(9.3e9)}}
	r.Summary = stats.Summarize(ok) // the lie
	run := &api.Run{APIVersion: api.APIVersion, Kind: api.KindRun, UUID: "liar-uuid"}
	liar := filepath.Join(dir, "liar.jsonl")
	w, err := runfile.Create(liar, run)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.AppendResult(r); err != nil {
		t.Fatal(err)
	}
	w.Close(*run)
	out, errOut, err := execute(good, liar)
	if err != nil {
		t.Fatal(err)
	}
	if !text.ContainsFolded(errOut, "the stored summary contradicts its samples") || !strings.Contains(out, "FAILED") || strings.Contains(out, "±0.0%") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", out, errOut)
	}
}
