package app_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/app"
	"github.com/cnperf/cnperf/internal/text"
)

// TestWriteErrorWraps: the error cnperf ends with is wrapped to 120 columns, or to $COLUMNS
// when that is narrower (never below text.MinWidth), with its words, the quoted format and
// every format in the list whole; a real error of 244 columns on one line (an unknown -o).
func TestWriteErrorWraps(t *testing.T) {
	err := run(t, context.Background(), "report", "-o", "jsn", "-").err
	if err == nil || len(err.Error()) <= text.DefaultWidth {
		t.Fatalf("want an error wider than %d columns, got %v", text.DefaultWidth, err)
	}
	for _, tc := range []struct {
		columns string
		width   int
	}{{"", 120}, {"200", 120}, {"80", 80}, {"20", text.MinWidth}} {
		t.Run("COLUMNS="+tc.columns, func(t *testing.T) {
			t.Setenv("COLUMNS", tc.columns)
			var b bytes.Buffer
			app.WriteError(&b, err)
			got := b.String()
			lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
			if len(lines) < 2 || !strings.HasPrefix(got, "cnperf: ") || !strings.HasSuffix(got, "\n") {
				t.Fatalf("not wrapped after cnperf: \n%s", got)
			}
			for _, l := range lines {
				if text.Width(l) > tc.width {
					t.Errorf("%d columns, more than %d: %q", text.Width(l), tc.width, l)
				}
			}
			// only white space was added (the list of formats breaks after its commas)
			if strings.Join(strings.Fields(got), "") != strings.Join(strings.Fields("cnperf: "+err.Error()), "") {
				t.Errorf("the words changed:\n%s", got)
			}
			for _, w := range []string{`"jsn"`, "k8s-netperf-loss-csv,", "mesh-cells-csv", `"json"?)`} {
				if !strings.Contains(got, w) {
					t.Errorf("%s was broken:\n%s", w, got)
				}
			}
		})
	}
}
