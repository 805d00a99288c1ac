package trendcmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/iostreams"
	"github.com/cnperf/cnperf/internal/report/trend"
	"github.com/cnperf/cnperf/internal/runfile"
	"github.com/cnperf/cnperf/internal/stats"
	"sigs.k8s.io/yaml"
)

func fp(v float64) *float64 { return &v }

// writeRun saves a run of one TCP_STREAM case at gbit Gbit/s, started at start, as a results
// file the way `cnperf run --results` does.
func writeRun(t *testing.T, path string, start time.Time, gbit float64) {
	t.Helper()
	ss := []api.Sample{{Index: 1, ThroughputBitsPerSecond: fp(gbit*1e9 - 1e7)}, {Index: 2, ThroughputBitsPerSecond: fp(gbit*1e9 + 1e7)}}
	r := api.Result{Profile: api.TCPStream, Driver: "native", Path: api.PathLoopback,
		Params: api.Params{DurationSeconds: 1, Samples: 2, MessageSizeBytes: 131072, Parallel: 1}, Samples: ss}
	r.Summary = stats.Summarize(ss)
	run := &api.Run{APIVersion: api.APIVersion, Kind: api.KindRun, UUID: fmt.Sprintf("%08d-uuid", start.Unix()%1e8), StartTime: start}
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
}

// history writes 10 runs into dir, the 6th onwards 30% slower, named in the reverse order of
// their start times.
func history(t *testing.T) string {
	dir := t.TempDir()
	t0 := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 10; i++ {
		g := []float64{9.4, 9.6, 9.5, 9.3, 9.7}[i%5]
		if i >= 5 {
			g *= 0.7
		}
		writeRun(t, filepath.Join(dir, fmt.Sprintf("r%02d.jsonl", 10-i)), t0.Add(time.Duration(i)*24*time.Hour), g)
	}
	return dir
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

func TestTrendCommand(t *testing.T) {
	dir := history(t)
	glob := filepath.Join(dir, "r*.jsonl")
	for _, tt := range []struct {
		name  string
		args  []string
		code  int
		wants []string // in stdout, then in the error
	}{
		{"directory", []string{dir}, 0, []string{"10 run(s) from 2026-11-02 00:00:00 to 2026-11-11 00:00:00 UTC, 10 source(s)",
			"2026-11-07 00:00:00", "-30.0% worse", filepath.Join(dir, "r05.jsonl")}},
		{"glob", []string{glob}, 0, []string{"-30.0% worse"}},
		{"html", []string{dir, "-o", "html"}, 0, []string{"<svg ", ">-30.0% worse</text>"}},
		{"files", []string{filepath.Join(dir, "r01.jsonl"), filepath.Join(dir, "r02.jsonl")}, 0, []string{"too short (< 5 runs)"}},
		{"gate fails", []string{dir, "--fail-on-regression", "25"}, 1, []string{"-30.0% worse",
			"regression gate of 25% failed on 1 series", "TCP_STREAM native loopback 128KiB x1, throughput: -30.0% since run"}},
		{"gate passes", []string{dir, "--fail-on-regression", "35"}, 0, nil},
		{"--min-magnitude drops it", []string{dir, "--min-magnitude", "0.5"}, 0, []string{"no change"}},
		{"empty directory", []string{t.TempDir()}, 2, []string{"no results files in the directory"}},
		{"glob matches nothing", []string{filepath.Join(dir, "*.csv")}, 2, []string{"the pattern matches no file"}},
		{"no such file", []string{filepath.Join(dir, "nope.jsonl")}, 2, []string{"no such file"}},
		{"bad format", []string{dir, "-o", "yml"}, 2, []string{`unable to match a printer suitable for the output format "yml", allowed formats are: table,json,yaml,html (did you mean "yaml"?)`}},
		{"negative gate", []string{dir, "--fail-on-regression", "-1"}, 2, []string{"--fail-on-regression -1: want a percentage ≥ 0"}},
		{"NaN gate", []string{dir, "--fail-on-regression", "NaN"}, 2, []string{"--fail-on-regression NaN: want a percentage ≥ 0"}},
		{"gate of 0", []string{dir, "--fail-on-regression", "0"}, 1, []string{"regression gate of 0% failed on 1 series"}},
		{"bad window", []string{dir, "--window", "1"}, 2, []string{"--window 1"}},
		{"bad p-value", []string{dir, "--max-pvalue", "0"}, 2, []string{"--max-pvalue 0"}},
		{"no arguments", nil, 2, []string{"give the runs of the history"}},
		{"--opensearch not http", []string{"--opensearch", "ftp://search.example"}, 2, []string{"scheme must be http or https"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := execute(tt.args...)
			if code := exit.Code(err); code != tt.code {
				t.Fatalf("exit %d (%v), want %d\n%s", code, err, tt.code, out)
			}
			all := out
			if err != nil {
				all += err.Error()
			}
			for _, w := range tt.wants {
				if !strings.Contains(all, w) {
					t.Errorf("output lacks %q:\n%s", w, all)
				}
			}
		})
	}
}

func TestTrendJSONAndYAML(t *testing.T) {
	dir := history(t)
	for _, format := range []string{"json", "yaml"} {
		out, _, err := execute(dir, "-o", format)
		if err != nil {
			t.Fatal(err)
		}
		var h trend.History
		b := []byte(out)
		if format == "yaml" {
			if b, err = yaml.YAMLToJSON(b); err != nil {
				t.Fatal(err)
			}
		}
		if err := json.Unmarshal(b, &h); err != nil {
			t.Fatalf("-o %s: %v\n%s", format, err, out)
		}
		if len(h.Runs) != 10 || len(h.Series) != 1 || len(h.Series[0].Changes) != 1 {
			t.Fatalf("-o %s: %+v", format, h)
		}
		c := h.Series[0].Changes[0]
		if c.Run != 5 || c.PreviousRun != 4 || c.Verdict != trend.Worse || c.RunsBefore != 5 || c.RunsAfter != 5 ||
			h.Runs[c.Run].Source != filepath.Join(dir, "r05.jsonl") {
			t.Errorf("-o %s: change %+v at %+v", format, c, h.Runs[c.Run])
		}
	}
}

func TestExitCodeIsCompares(t *testing.T) {
	_, _, err := execute(history(t), "--fail-on-regression", "10")
	var f *exit.FailureError
	if !errors.As(err, &f) || exit.Code(err) != exit.Failed {
		t.Fatalf("gate error %T %v: want an exit.FailureError (exit 1, as compare's gate)", err, err)
	}
}
