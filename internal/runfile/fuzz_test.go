package runfile

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/report/reporttest"
	"github.com/cnperf/cnperf/internal/stats"
)

// FuzzReadRuns fuzzes the readers (JSON Lines, run JSON, CSV) with real captures as seeds
// (their first lines): the encoders' testdata (../report/testdata: runs of every kind, JSON
// and CSV). What they accept must be sound: figures finite and
// non-negative, summaries that agree with their samples. internal/report's FuzzEncode renders
// what they accept.
func FuzzReadRuns(f *testing.F) {
	reporttest.Seeds(f, filepath.Join("..", "report", "testdata"))
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
	})
}
