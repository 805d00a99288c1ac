package runner

import (
	"bytes"
	"strings"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/text"
)

// A failed case's or sample's cause as the progress prints it fits the width a person reads:
// a refused server's usage text (sockperf's, ~810 columns on one line) is wrapped, whole.
func TestProgressFailuresFit(t *testing.T) {
	why := "sockperf server \"sockperf-v6\" exited before it was ready: sockperf: '-i' Invalid address: :: " +
		strings.Repeat("Usage: sockperf server [options] [args]... ", 18)
	var b bytes.Buffer
	p := &TextProgress{W: &b}
	p.SampleDone(plan.Case{}, api.Sample{Index: 0, Error: why})
	p.CaseDone(0, 2, api.Result{Error: why})
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	for _, l := range lines {
		if text.Width(l) > text.DefaultWidth {
			t.Errorf("line of %d columns: %q", text.Width(l), l)
		}
	}
	var sample, cas []string // each failure's lines, its first without the indent
	for i, l := range lines {
		if i > 0 && strings.HasPrefix(l, "case 1/2 failed: ") {
			sample, cas = lines[:i], lines[i:]
		}
	}
	if len(sample) < 2 || !strings.HasPrefix(sample[0], "  sample 1 failed: sockperf server") || len(cas) < 2 {
		t.Fatalf("progress:\n%s", b.String())
	}
	for _, f := range []struct {
		lines  []string
		indent string
	}{{sample, "      "}, {cas, "    "}} {
		for _, l := range f.lines[1:] {
			if !strings.HasPrefix(l, f.indent) {
				t.Errorf("line %q: want the indent %q", l, f.indent)
			}
		}
		if got := strings.Join(strings.Fields(strings.Join(f.lines, " ")), " "); !strings.HasSuffix(got, strings.Join(strings.Fields(why), " ")) {
			t.Errorf("the cause is not whole:\n%s", strings.Join(f.lines, "\n"))
		}
	}
}
