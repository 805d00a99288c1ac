package runner

import (
	"context"
	"strings"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/plan"
)

// TestConfidenceTargetLoop drives the adaptive loop with real captured qperf outputs: the same
// capture over and over is a perfectly quiet path (the target is met at the minimum), two
// captures 15× apart alternating never get there (the case runs to its maximum and says why,
// or gives up after 6 when its maximum is far below what that spread needs), and a path that
// refuses every sample gives up at the minimum. The script fails the test if
// the runner asks for a sample more than it lists.
func TestConfidenceTargetLoop(t *testing.T) {
	m1024, m64, refused := replay("qperf", "tcp_bw_m1024"), replay("qperf", "tcp_bw_m64"), replay("qperf", "refused")
	target := &api.ConfidenceTarget{Level: 95, HalfWidthPercent: 5}
	tests := []struct {
		name     string
		steps    []step
		minN     int
		maxN     int
		met      bool
		reasons  []string
		failedOK bool
		gaveUp   bool
	}{
		{"quiet path stops at the minimum", repeat(m1024, 3), 3, 30, true, nil, false, false},
		{"a higher minimum is kept", repeat(m1024, 5), 5, 30, true, nil, false, false},
		// at the maximum there is nothing left to give up
		{"noisy path runs to the maximum", []step{m1024, m64, m1024, m64}, 3, 4, false, []string{ReasonNoisy}, false, false},
		// CoV about 1: some 1500 samples needed, more than the maximum of 30: the case gives
		// up after DefaultFutility.MinSamples (4).
		{"hopelessly noisy path gives up after 4", []step{m1024, m64, m1024, m64}, 3, 30, false, []string{ReasonNoisy}, false, true},
		{"a higher minimum delays giving up", []step{m1024, m64, m1024, m64, m1024}, 5, 30, false, []string{ReasonNoisy}, false, true},
		{"every sample refused: gives up at the minimum", repeat(refused, 3), 3, 30, false, []string{ReasonFailed}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &script{t: t, steps: tt.steps}
			ev := &events{}
			c := qperfCase(0, tt.minN, func(p *api.Params) { p.Confidence, p.MaxSamples = target, tt.maxN })
			res, err := newRunner(p, ev).Run(context.Background(), []plan.Case{c})
			if err != nil {
				t.Fatal(err)
			}
			r := res[0]
			if len(r.Samples) != len(tt.steps) || len(p.calls) != len(tt.steps) {
				t.Fatalf("%d samples from %d calls, want %d", len(r.Samples), len(p.calls), len(tt.steps))
			}
			o := r.Confidence
			if o == nil || o.Met != tt.met || o.Samples != len(tt.steps) || o.Level != 95 || o.HalfWidthPercent != 5 {
				t.Fatalf("confidence %+v, want met %v after %d", o, tt.met, len(tt.steps))
			}
			if tt.met && (o.FinalHalfWidthPercent == nil || *o.FinalHalfWidthPercent != 0) {
				t.Errorf("identical samples: half-width %v, want 0", o.FinalHalfWidthPercent)
			}
			if len(o.Reasons) != len(tt.reasons) {
				t.Fatalf("reasons %q, want %q", o.Reasons, tt.reasons)
			}
			for i, want := range tt.reasons {
				if !strings.HasPrefix(o.Reasons[i], want) {
					t.Errorf("reason %q, want %q…", o.Reasons[i], want)
				}
			}
			if o.GaveUp != tt.gaveUp || strings.Contains(strings.Join(r.Notes, ";"), "given up") != tt.gaveUp {
				t.Errorf("gave up %v, notes %q; want %v", o.GaveUp, r.Notes, tt.gaveUp)
			}
			if (r.Error != "") != tt.failedOK {
				t.Errorf("case error %q", r.Error)
			}
		})
	}
}

// TestFixedSamplesUnchanged: without a target, maxSamples is ignored and the case takes
// exactly its samples, with no confidence outcome.
func TestFixedSamplesUnchanged(t *testing.T) {
	m1024, m64 := replay("qperf", "tcp_bw_m1024"), replay("qperf", "tcp_bw_m64")
	p := &script{t: t, steps: []step{m1024, m64, m1024}}
	res, err := newRunner(p, &events{}).Run(context.Background(), []plan.Case{qperfCase(0, 3, func(p *api.Params) { p.MaxSamples = 30 })})
	if err != nil {
		t.Fatal(err)
	}
	if r := res[0]; len(r.Samples) != 3 || r.Confidence != nil || r.Stability == nil || r.Stability.Figure != "throughputBitsPerSecond" {
		t.Errorf("%d samples, confidence %+v, stability %+v", len(r.Samples), r.Confidence, r.Stability)
	}
}
