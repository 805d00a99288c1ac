package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/safetext"
	"github.com/cnperf/cnperf/internal/stats"
)

// FuzzReadRuns fuzzes the results-file reader (JSON Lines, run JSON, CSV) with the real
// captures in testdata as seeds (their first lines). What it accepts must be
// sound — figures finite and non-negative, summaries that agree with their samples — and
// must render as a table, CSV and HTML without panicking; HTML must be well-formed XML text.
func FuzzReadRuns(f *testing.F) {
	for _, pat := range []string{"*.jsonl", "*.json", "*.csv"} {
		files, _ := filepath.Glob(filepath.Join("testdata", pat))
		for _, p := range files {
			b, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			// The first three lines (a run, a result, more): whole files make every execution
			// slow without reaching more code.
			if lines := bytes.SplitAfter(b, []byte("\n")); len(lines) > 3 {
				b = bytes.Join(lines[:3], nil)
			}
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		runs, _, err := ReadRuns(bytes.NewReader(data), "fuzz")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for _, run := range runs {
			for i := range run.Results {
				r := &run.Results[i]
				for _, v := range []struct {
					v    any
					path string
				}{{r.Params, "params"}, {r.Samples, "samples"}, {r.Summary, "summary"}} {
					if err := stats.CheckFigures(v.v, v.path); err != nil {
						t.Fatalf("accepted: %v", err)
					}
				}
				if len(r.Samples) > 0 {
					if d := summaryDiff(r.Summary, stats.Summarize(r.Samples)); d != "" {
						t.Fatalf("accepted a summary that contradicts its samples: %s", d)
					}
				} else if err := checkSummary(r.Summary); err != nil {
					t.Fatalf("accepted: %v", err)
				}
			}
		}
		formats := []string{"table", "csv"}
		if len(data) < 16<<10 {
			formats = append(formats, "html") // the slowest encoder: on small inputs only
		}
		for _, format := range formats {
			var b bytes.Buffer
			_ = Encode(&b, format, runs)
			if format == "html" && !bytes.Equal(safetext.XML(b.Bytes()), b.Bytes()) {
				t.Fatalf("html holds characters XML forbids")
			}
		}
	})
}
