package runfile

import (
	"fmt"
	"math"
	"strings"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/figure"
	"github.com/cnperf/cnperf/internal/stats"
)

// checkResult is how the readers distrust a stored result before anything reports it:
//   - a figure that is negative or not finite (NaN, ±Inf) is an error naming the field: no
//     measurement produces one;
//   - a result with samples gets its summary recomputed from them when the stored one
//     contradicts them (counts, or a figure's n, mean, median, min or max), and the returned
//     warning says what was wrong;
//   - a result without samples (CSV, imports of summaries) must have a summary that holds
//     together: no more failed samples than samples, min ≤ mean, median ≤ max.
func checkResult(r *api.Result) (warning string, err error) {
	if err := stats.CheckFigures(r.Params, "params"); err != nil {
		return "", err
	}
	for i := range r.Samples {
		if err := stats.CheckFigures(r.Samples[i], fmt.Sprintf("samples[%d]", i)); err != nil {
			return "", err
		}
	}
	if err := stats.CheckFigures(r.Summary, "summary"); err != nil {
		return "", err
	}
	if r.NodeResources != nil {
		if err := stats.CheckFigures(*r.NodeResources, "nodeResources"); err != nil {
			return "", err
		}
	}
	if len(r.Samples) == 0 {
		return "", checkSummary(r.Summary)
	}
	want := stats.Summarize(r.Samples)
	if diff := summaryDiff(r.Summary, want); diff != "" {
		r.Summary = want
		return fmt.Sprintf("%s: the stored summary contradicts its samples (%s); it was recomputed from the samples",
			resultLabel(r), diff), nil
	}
	return "", nil
}

func resultLabel(r *api.Result) string {
	return strings.TrimSpace(fmt.Sprintf("%s %s %s", r.Profile, r.Driver, r.Path))
}

// appendWarning adds a non-empty warning to the list and to the run's notes.
func appendWarning(warnings []string, run *api.Run, name, w string) []string {
	if w == "" {
		return warnings
	}
	run.Notes = append(run.Notes, w)
	return append(warnings, name+": "+w)
}

// summaryStats lists a summary's Stats by JSON name: every figure that has one (figure.All).
func summaryStats(s *api.Summary) []namedStat {
	var out []namedStat
	for _, f := range figure.All {
		if f.Stat != nil {
			out = append(out, namedStat{f.Key, f.Stat(s)})
		}
	}
	return out
}

type namedStat struct {
	name string
	st   *api.Stat
}

// checkSummary refuses a summary that cannot be true whatever its samples were.
func checkSummary(s api.Summary) error {
	if s.SamplesFailed > s.SamplesTotal {
		return fmt.Errorf("summary: samplesFailed %d is more than samplesTotal %d", s.SamplesFailed, s.SamplesTotal)
	}
	ok := s.SamplesTotal - s.SamplesFailed
	for _, ns := range summaryStats(&s) {
		st := ns.st
		if st == nil {
			continue
		}
		if st.N > ok {
			return fmt.Errorf("summary.%s: n %d is more than the %d successful samples", ns.name, st.N, ok)
		}
		if st.Min > st.Max || !within(st.Mean, st.Min, st.Max) || !within(st.Median, st.Min, st.Max) {
			return fmt.Errorf("summary.%s: mean %v and median %v are not between min %v and max %v", ns.name, st.Mean, st.Median, st.Min, st.Max)
		}
	}
	return nil
}

// within is lo ≤ x ≤ hi, allowing the rounding of a mean.
func within(x, lo, hi float64) bool {
	tol := 1e-9 * math.Max(math.Abs(lo), math.Abs(hi))
	return x >= lo-tol && x <= hi+tol
}

// summaryDiff describes the first way stored contradicts want ("" when they agree). Figures
// agree within a relative 1e-6, which absorbs other writers' rounding.
func summaryDiff(stored, want api.Summary) string {
	if stored.SamplesTotal != want.SamplesTotal || stored.SamplesFailed != want.SamplesFailed {
		return fmt.Sprintf("summary: %d of %d samples failed; samples: %d of %d failed",
			stored.SamplesFailed, stored.SamplesTotal, want.SamplesFailed, want.SamplesTotal)
	}
	ws := summaryStats(&want)
	for i, ns := range summaryStats(&stored) {
		if d := statDiff(ns.st, ws[i].st); d != "" {
			return ns.name + ": " + d
		}
	}
	return latencyDiff(stored.LatencyMicroseconds, want.LatencyMicroseconds)
}

func statDiff(got, want *api.Stat) string {
	switch {
	case got == nil && want == nil:
		return ""
	case got == nil:
		return fmt.Sprintf("missing from the summary, mean %v over %d samples", want.Mean, want.N)
	case want == nil:
		return fmt.Sprintf("summary says mean %v over %d samples, no successful sample carries it", got.Mean, got.N)
	}
	if got.N != want.N {
		return fmt.Sprintf("summary says n %d, the samples %d", got.N, want.N)
	}
	for _, f := range []struct {
		name      string
		got, want float64
	}{{"mean", got.Mean, want.Mean}, {"median", got.Median, want.Median}, {"min", got.Min, want.Min}, {"max", got.Max, want.Max}} {
		if !nearlyEqual(f.got, f.want) {
			return fmt.Sprintf("summary says %s %v, the samples %v", f.name, f.got, f.want)
		}
	}
	return ""
}

func latencyDiff(got, want *api.Latency) string {
	switch {
	case got == nil && want == nil:
		return ""
	case got == nil:
		return "latency missing from the summary"
	case want == nil:
		return "summary has a latency no successful sample carries"
	}
	for _, f := range []struct {
		name      string
		got, want *float64
	}{{"mean", got.Mean, want.Mean}, {"p50", got.P50, want.P50}, {"p99", got.P99, want.P99}, {"max", got.Max, want.Max}} {
		if (f.got == nil) != (f.want == nil) || (f.got != nil && !nearlyEqual(*f.got, *f.want)) {
			return fmt.Sprintf("latency %s: summary says %s, the samples %s", f.name, ptrText(f.got), ptrText(f.want))
		}
	}
	return ""
}

func ptrText(p *float64) string {
	if p == nil {
		return "none"
	}
	return fmt.Sprint(*p)
}

func nearlyEqual(a, b float64) bool {
	return a == b || math.Abs(a-b) <= 1e-6*math.Max(math.Abs(a), math.Abs(b))
}
