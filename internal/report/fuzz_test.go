package report

import (
	"bytes"
	"testing"

	"github.com/cnperf/cnperf/internal/report/reporttest"
	"github.com/cnperf/cnperf/internal/runfile"
	"github.com/cnperf/cnperf/internal/safetext"
)

// FuzzEncode renders what the readers accept (runfile.FuzzReadRuns checks that it is sound),
// from the real captures in testdata as seeds (their first lines), as a table, CSV and HTML
// without panicking; HTML must be well-formed XML text.
func FuzzEncode(f *testing.F) {
	reporttest.Seeds(f, "testdata")
	f.Fuzz(func(t *testing.T, data []byte) {
		runs, _, err := runfile.ReadRuns(bytes.NewReader(data), "fuzz")
		if err != nil {
			return
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
