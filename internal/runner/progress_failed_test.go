package runner

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

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

// TestProgressFitsWidth: every progress line fits the width (Width: $COLUMNS as the command
// reads it; 0 is 120 columns), a plain line wrapped with its words whole, the live line
// (a terminal) with the case's label cut; the case is the lab's, whose line a run at
// COLUMNS=80 printed in 90 columns.
func TestProgressFitsWidth(t *testing.T) {
	c := plan.Case{Profile: api.TCPStream, Driver: "native", Path: api.PathPodPodCrossNode, Topology: &api.Topology{Flavour: "routed", PolicyRules: 1000, PolicyStyle: "calico-global"},
		Params: api.Params{MessageSizeBytes: 131072, Parallel: 1, Samples: 3}}
	hw := 7.3
	conf := &api.ConfidenceOutcome{ConfidenceTarget: api.ConfidenceTarget{Level: 95, HalfWidthPercent: 5}, Samples: 8, FinalHalfWidthPercent: &hw,
		Reasons: []string{"trend (falling, Spearman ρ -0.75, p < 0.001)", "noisy path (CoV 73.1%: more than 1000 samples needed)"}}
	for _, tc := range []struct {
		width, max int
		terminal   bool
	}{{0, 120, false}, {80, 80, false}, {60, 60, false}, {0, 120, true}, {80, 80, true}, {60, 60, true}} {
		t.Run(fmt.Sprintf("%d-terminal=%v", tc.width, tc.terminal), func(t *testing.T) {
			var b bytes.Buffer
			p := &TextProgress{W: &b, Width: tc.width, Terminal: tc.terminal}
			p.CaseStarted(0, 10, c, 302*time.Second)
			p.SampleDone(c, api.Sample{Index: 0})
			p.CaseDone(9, 10, api.Result{Confidence: conf})
			for _, l := range strings.Split(strings.ReplaceAll(b.String(), "\r\033[K", "\n"), "\n") {
				if text.Width(l) > tc.max {
					t.Errorf("%d columns, more than %d: %q", text.Width(l), tc.max, l)
				}
			}
			if !tc.terminal && !strings.HasPrefix(b.String(), "case 1/10: TCP_STREAM native pod-pod-cross-node 131072B x1") {
				t.Errorf("progress:\n%s", b.String())
			}
			if tc.terminal && !strings.Contains(b.String(), "\r\033[Kcase 1/10  TCP_STREAM nat") {
				t.Errorf("live line: %q", b.String())
			}
			if !text.ContainsFolded(b.String(), "case 10/10: "+ConfidenceText(conf)) {
				t.Errorf("no confidence line:\n%s", b.String())
			}
		})
	}
}
