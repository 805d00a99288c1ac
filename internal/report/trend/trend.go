// Package trend follows each case of a history of runs over time: one series per case (the key
// compare matches cases on) and headline figure, ordered by the runs' start times, and the
// points where a series changes level (internal/changepoint: E-divisive means with a
// significance test, Apache Otava's method), each judged better or worse in the figure's
// direction. A failed measurement is a gap with its cause, never a value.
package trend

import (
	"fmt"
	"math"
	"sort"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/changepoint"
	"github.com/cnperf/cnperf/internal/figure"
)

// DefaultMinRuns is the fewest successful runs a series needs before it is analysed: with
// fewer, the t-test behind a change point has under two degrees of freedom and one noisy run
// on a side is a "change".
const DefaultMinRuns = 5

// Options tune Analyze.
type Options struct {
	// Detect tunes the change point detection (the zero value is Otava's defaults).
	Detect changepoint.Options
	// MinRuns is the fewest successful runs a series needs; 0 means DefaultMinRuns.
	MinRuns int
}

// Input is the runs of one source (a results file).
type Input struct {
	Source string
	Runs   []*api.Run
}

// Run is one run of the history.
type Run struct {
	UUID      string            `json:"uuid"`
	StartTime time.Time         `json:"startTime"`
	Labels    map[string]string `json:"labels,omitempty"`
	Source    string            `json:"source"`
	// Interrupted runs count with the cases they finished.
	Interrupted bool `json:"interrupted,omitempty"`
}

// Point is one run's value of a series.
type Point struct {
	// Run indexes History.Runs.
	Run   int     `json:"run"`
	Value float64 `json:"value"`
}

// Gap is a run in which the case was measured but the figure has no value.
type Gap struct {
	Run   int    `json:"run"`
	Cause string `json:"cause"`
}

// Verdict of a change point, in the figure's direction.
type Verdict string

// Verdicts.
const (
	Better Verdict = "better"
	Worse  Verdict = "worse"
)

// Change is a change point of a series.
type Change struct {
	// Run is the first run of the new level, PreviousRun the last of the old one (History.Runs
	// indexes); Index is the point's index in the series' Points.
	Run         int `json:"run"`
	PreviousRun int `json:"previousRun"`
	Index       int `json:"index"`
	// The sides the test compared: from the previous change point (or the start) to Run, and
	// from Run to the next change point (or the end).
	RunsBefore int     `json:"runsBefore"`
	RunsAfter  int     `json:"runsAfter"`
	MeanBefore float64 `json:"meanBefore"`
	MeanAfter  float64 `json:"meanAfter"`
	// ChangePercent is (after − before) / |before| · 100 (figure.ChangePercent).
	ChangePercent float64 `json:"changePercent"`
	Verdict       Verdict `json:"verdict"`
	PValue        float64 `json:"pValue"`
}

// Series is one figure of one case across the history.
type Series struct {
	// Key is compare's case key (figure.CaseKey), Case its label.
	Key    string `json:"key"`
	Case   string `json:"case"`
	Figure string `json:"figure"`
	Label  string `json:"label"`
	Unit   string `json:"unit"`
	// HigherIsBetter gives the direction of "better".
	HigherIsBetter bool     `json:"higherIsBetter"`
	Points         []Point  `json:"points"`
	Gaps           []Gap    `json:"gaps,omitempty"`
	Changes        []Change `json:"changes"`
	// TooShort says why the series was not analysed (too few successful runs), "" when it was.
	TooShort string `json:"tooShort,omitempty"`

	fig figure.Figure
}

// History is the outcome of Analyze.
type History struct {
	Window       int      `json:"window"`
	MaxPValue    float64  `json:"maxPValue"`
	MinMagnitude float64  `json:"minMagnitude"`
	MinRuns      int      `json:"minRuns"`
	Runs         []Run    `json:"runs"`
	Series       []Series `json:"series"`
	Warnings     []string `json:"warnings,omitempty"`
}

// entry is what a series keeps of one run's result.
type entry struct {
	run    int
	result *api.Result
}

// Analyze orders the runs of inputs by start time (then source and run id), builds one series
// per case (figure.CaseKey, in the order the cases first appear) and headline figure
// (figure.Figure.Primary) and finds each series' change points.
func Analyze(inputs []Input, opt Options) (*History, error) {
	d := opt.Detect
	if d.Window == 0 {
		d.Window = changepoint.DefaultWindow
	}
	if d.MaxPValue == 0 {
		d.MaxPValue = changepoint.DefaultMaxPValue
	}
	if _, err := changepoint.Detect(nil, d); err != nil {
		return nil, err
	}
	minRuns := opt.MinRuns
	if minRuns == 0 {
		minRuns = DefaultMinRuns
	}
	if minRuns < 3 {
		return nil, fmt.Errorf("minimum of %d runs: a series needs at least 3 for a test with a degree of freedom", minRuns)
	}
	h := &History{Window: d.Window, MaxPValue: d.MaxPValue, MinMagnitude: d.MinMagnitude, MinRuns: minRuns}
	type sourced struct {
		run    *api.Run
		source string
	}
	var all []sourced
	seen := map[string]string{}
	for _, in := range inputs {
		for _, r := range in.Runs {
			if first, dup := seen[r.UUID]; dup && r.UUID != "" {
				h.Warnings = append(h.Warnings, fmt.Sprintf("%s: run %s is also in %s; it counts once", in.Source, r.UUID, first))
				continue
			}
			seen[r.UUID] = in.Source
			all = append(all, sourced{r, in.Source})
		}
	}
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if !a.run.StartTime.Equal(b.run.StartTime) {
			return a.run.StartTime.Before(b.run.StartTime)
		}
		if a.source != b.source {
			return a.source < b.source
		}
		return a.run.UUID < b.run.UUID
	})
	cases := map[string][]entry{}
	var order []string
	for i, s := range all {
		h.Runs = append(h.Runs, Run{UUID: s.run.UUID, StartTime: s.run.StartTime, Labels: s.run.Labels, Source: s.source, Interrupted: s.run.Interrupted})
		if s.run.Interrupted {
			h.Warnings = append(h.Warnings, fmt.Sprintf("%s: run %s was interrupted: %d finished case(s) count, the last may be partial",
				s.source, s.run.UUID, len(s.run.Results)))
		}
		inRun := map[string]bool{}
		for j := range s.run.Results {
			r := &s.run.Results[j]
			k := figure.CaseKey(r)
			if inRun[k] {
				h.Warnings = append(h.Warnings, fmt.Sprintf("%s: run %s measured %s more than once; the first result counts",
					s.source, s.run.UUID, figure.WorkloadLabel(r)))
				continue
			}
			inRun[k] = true
			if _, ok := cases[k]; !ok {
				order = append(order, k)
			}
			cases[k] = append(cases[k], entry{run: i, result: r})
		}
	}
	for _, k := range order {
		es := cases[k]
		for _, f := range figure.All {
			if !f.Primary || !carries(es, f) {
				continue
			}
			s := series(k, es, f, h.Runs)
			if err := s.analyze(d, minRuns); err != nil {
				return nil, fmt.Errorf("%s, %s: %w", s.Case, s.Label, err)
			}
			h.Series = append(h.Series, s)
		}
		if !carriesAny(es) { // a case that failed in every run: one series of its headline figure, all gaps
			f, _ := figure.Main(es[0].result)
			s := series(k, es, f, h.Runs)
			s.TooShort = fmt.Sprintf("no successful run of %d", len(es))
			h.Series = append(h.Series, s)
		}
	}
	return h, nil
}

// carries reports whether some result of es has figure f.
func carries(es []entry, f figure.Figure) bool {
	for _, e := range es {
		if _, ok := f.Value(&e.result.Summary); ok {
			return true
		}
	}
	return false
}

func carriesAny(es []entry) bool {
	for _, f := range figure.All {
		if f.Primary && carries(es, f) {
			return true
		}
	}
	return false
}

// series reads figure f of every entry: a value, or a gap with its cause.
func series(key string, es []entry, f figure.Figure, runs []Run) Series {
	s := Series{Key: key, Case: figure.WorkloadLabel(es[0].result), Figure: f.Key, Label: f.Label, Unit: f.Unit.Base,
		HigherIsBetter: f.HigherIsBetter, Changes: []Change{}, Points: []Point{}, fig: f}
	for _, e := range es {
		v, ok := f.Value(&e.result.Summary)
		switch {
		case ok && !math.IsNaN(v) && !math.IsInf(v, 0):
			s.Points = append(s.Points, Point{Run: e.run, Value: v})
		case ok:
			s.Gaps = append(s.Gaps, Gap{Run: e.run, Cause: fmt.Sprintf("%s %v is not a finite number", f.Label, v)})
		default:
			cause := "the result has no " + f.Label
			if _, succeeded := figure.Main(e.result); !succeeded {
				if c := figure.FailureCause(e.result); c != "" {
					cause = "failed: " + c
				} else {
					cause = "failed without a cause recorded"
				}
			}
			if runs[e.run].Interrupted {
				cause += " (the run was interrupted)"
			}
			s.Gaps = append(s.Gaps, Gap{Run: e.run, Cause: cause})
		}
	}
	return s
}

func (s *Series) analyze(d changepoint.Options, minRuns int) error {
	if len(s.Points) < minRuns {
		s.TooShort = fmt.Sprintf("%d successful run(s), at least %d are needed to tell a change from noise", len(s.Points), minRuns)
		return nil
	}
	values := make([]float64, len(s.Points))
	for i, p := range s.Points {
		values[i] = p.Value
	}
	points, err := changepoint.Detect(values, d)
	if err != nil {
		return err
	}
	for _, p := range points {
		c := Change{
			Run: s.Points[p.Index].Run, PreviousRun: s.Points[p.Index-1].Run, Index: p.Index,
			RunsBefore: p.NBefore, RunsAfter: p.NAfter, MeanBefore: p.MeanBefore, MeanAfter: p.MeanAfter,
			ChangePercent: figure.ChangePercent(p.MeanBefore, p.MeanAfter), PValue: p.PValue, Verdict: Worse,
		}
		if math.IsNaN(c.ChangePercent) { // before is 0: JSON has no NaN
			c.ChangePercent = 0
		}
		if s.fig.Better(p.MeanBefore, p.MeanAfter) {
			c.Verdict = Better
		}
		s.Changes = append(s.Changes, c)
	}
	return nil
}

// Regression is a series that fails the gate.
type Regression struct {
	Case   string
	Figure string
	Reason string
}

func (r Regression) String() string { return r.Case + ", " + r.Figure + ": " + r.Reason }

// Regressions are the series whose last change point is worse by thresholdPercent or more,
// and the series whose newest run failed (a gap at the end: a case that stopped measuring
// never passes by accident).
func (h *History) Regressions(thresholdPercent float64) []Regression {
	var out []Regression
	for _, s := range h.Series {
		if n := len(s.Changes); n > 0 {
			c := s.Changes[n-1]
			if c.Verdict == Worse && math.Abs(c.ChangePercent) >= thresholdPercent {
				r := h.Runs[c.Run]
				out = append(out, Regression{Case: s.Case, Figure: s.Label, Reason: fmt.Sprintf(
					"%+.1f%% since run %s at %s (%s → %s, p=%.1e)", c.ChangePercent, short(r.UUID), r.StartTime.UTC().Format(time.DateTime),
					s.fig.Unit.Format(c.MeanBefore), s.fig.Unit.Format(c.MeanAfter), c.PValue)})
			}
		}
		if g := len(s.Gaps); g > 0 && (len(s.Points) == 0 || s.Gaps[g-1].Run > s.Points[len(s.Points)-1].Run) {
			r := h.Runs[s.Gaps[g-1].Run]
			out = append(out, Regression{Case: s.Case, Figure: s.Label, Reason: fmt.Sprintf(
				"failed in its newest run %s at %s: %s", short(r.UUID), r.StartTime.UTC().Format(time.DateTime), s.Gaps[g-1].Cause)})
		}
	}
	return out
}

// short is the first 8 characters of a run id, as the tables print it.
func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
