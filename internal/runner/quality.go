package runner

import (
	"fmt"
	"math"
	"strings"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/figure"
	"github.com/cnperf/cnperf/internal/stats"
)

// Reasons a confidence target was not met (api.ConfidenceOutcome.Reasons).
const (
	ReasonNoisy    = "noisy path"
	ReasonTrend    = "trend"
	ReasonOutliers = "outliers"
	ReasonFailed   = "failed samples"
)

// headline returns the case's headline figure (figure.Main over the samples so far) and its
// value in every successful, not excluded sample, in sample order, with the positions of those
// samples in samples.
func headline(samples []api.Sample, profile api.Profile) (figure.Figure, []float64, []int, bool) {
	probe := api.Result{Profile: profile, Summary: stats.Summarize(samples)}
	f, ok := figure.Main(&probe)
	if !ok {
		return f, nil, nil, false
	}
	var xs []float64
	var at []int
	for i := range samples {
		if !stats.Successful(&samples[i]) {
			continue
		}
		if v, ok := f.Sample(&samples[i]); ok {
			xs = append(xs, v)
			at = append(at, i)
		}
	}
	return f, xs, at, true
}

// markOutliers flags the successful samples whose headline figure is outside median ± 3·MAD
// and, with exclude, leaves them out of the summary. Flags from an earlier call are replaced.
func markOutliers(samples []api.Sample, profile api.Profile, exclude bool) {
	for i := range samples {
		samples[i].Outlier, samples[i].Excluded = false, false
	}
	_, xs, at, ok := headline(samples, profile)
	if !ok {
		return
	}
	for _, k := range stats.Outliers(xs) {
		samples[at[k]].Outlier = true
		samples[at[k]].Excluded = exclude
	}
}

// targetMet is the stopping rule: the interval of the headline figure over the successful,
// not excluded samples is within the case's target, with at least Params.Samples samples taken.
func targetMet(samples []api.Sample, c *api.Params, profile api.Profile) bool {
	if len(samples) < c.Samples {
		return false
	}
	_, xs, _, ok := headline(samples, profile)
	if !ok {
		return false
	}
	_, met := stats.TargetMet(xs, 2, c.Confidence.Level/100, c.Confidence.HalfWidthPercent)
	return met
}

// Futility is when a case gives up on its confidence target: once it has MinSamples samples
// (and its minimum) and their spread says the target needs more than Factor times its maximum,
// more samples would cost time without getting there.
type Futility struct {
	MinSamples int
	Factor     int
}

// DefaultFutility is the rule the runner applies. The values come from make bench-adaptive
// (docs/performance.md): replayed over the recorded sample sequences of a run with {6, 3},
// giving up after 4 when the target needs more than the maximum lost no case that met its
// target and cut the time per case by 30 to 60 %; 3 samples were as good but leave the
// estimate of the spread too few degrees of freedom.
var DefaultFutility = Futility{MinSamples: 4, Factor: 1}

// StopReason says why a case with a confidence target stops taking samples.
type StopReason int

const (
	// Continue means the case takes another sample.
	Continue StopReason = iota
	// TargetMet means the interval is within the target.
	TargetMet
	// AllFailed means the minimum number of samples ran and every one failed.
	AllFailed
	// GaveUp means the spread says the target needs more than the futility rule allows.
	GaveUp
	// AtLimit means the case took its maximum number of samples.
	AtLimit
)

// Stop is the stopping rule of a case with a confidence target, applied after each sample:
// it marks the outliers of samples (as the result will show them) and says whether the case
// stops, and why. limit is the case's maximum (SampleLimit). The runner calls it after every
// sample; bench/cmd/adaptive replays recorded samples through it with other rules.
func Stop(samples []api.Sample, c *api.Params, profile api.Profile, limit int, rule Futility) StopReason {
	markOutliers(samples, profile, c.ExcludeOutliers)
	switch {
	case targetMet(samples, c, profile):
		return TargetMet
	case hopeless(samples, c.Samples):
		return AllFailed
	case len(samples) >= limit:
		return AtLimit
	case futile(samples, c, profile, limit, rule):
		return GaveUp
	}
	return Continue
}

// futile reports that the case should stop before its maximum (see Futility); Stop has
// already stopped a case at its limit.
func futile(samples []api.Sample, c *api.Params, profile api.Profile, limit int, rule Futility) bool {
	if len(samples) < max(c.Samples, rule.MinSamples) {
		return false
	}
	_, xs, _, ok := headline(samples, profile)
	if !ok || len(xs) < rule.MinSamples {
		return false
	}
	cov := stats.StdDev(xs) / math.Abs(stats.Mean(xs))
	return stats.SamplesNeeded(cov, c.Confidence.Level/100, c.Confidence.HalfWidthPercent, rule.Factor*limit) > rule.Factor*limit
}

// setSteadyState compares a sample's first interval with the others.
func setSteadyState(s *api.Sample) {
	var rates []float64
	for _, iv := range s.Intervals {
		switch {
		case iv.TransactionsPerSecond != nil:
			rates = append(rates, *iv.TransactionsPerSecond)
		case iv.BitsPerSecond != nil:
			rates = append(rates, *iv.BitsPerSecond)
		}
	}
	if len(rates) != len(s.Intervals) {
		return
	}
	if ss, ok := stats.SteadyStateOf(rates); ok {
		s.SteadyState = &api.SteadyState{FirstIntervalPercent: ss.FirstPercent, NoisePercent: ss.NoisePercent, RampUp: ss.RampUp}
	}
}

// assess fills a finished case's Stability and Confidence from its samples (already marked by
// markOutliers) and summary.
func assess(res *api.Result) {
	f, xs, _, ok := headline(res.Samples, res.Profile)
	st := &api.Stability{}
	for i := range res.Samples {
		s := &res.Samples[i]
		if s.Outlier {
			st.OutlierSamples = append(st.OutlierSamples, s.Index)
		}
		if s.Excluded {
			st.ExcludedSamples = append(st.ExcludedSamples, s.Index)
		}
		if s.SteadyState != nil && s.SteadyState.RampUp && !s.Warmup {
			st.RampUpSamples = append(st.RampUpSamples, s.Index)
		}
	}
	// The trend is over every successful sample in order, outliers included: a rank test is
	// not swayed by one extreme value, and a drifting run is exactly what it should see.
	var all, clean []float64
	if ok {
		for i := range res.Samples {
			s := &res.Samples[i]
			if s.Warmup || s.Error != "" {
				continue
			}
			if v, has := f.Sample(s); has {
				all = append(all, v)
				if !s.Outlier {
					clean = append(clean, v)
				}
			}
		}
		st.Figure = f.Key
	}
	var trend *stats.Trend
	if len(all) >= stats.TrendMinN {
		if t, ok := stats.SpearmanTrend(all); ok {
			trend = &t
			st.Trend = &api.Trend{SpearmanRho: t.Rho, PValue: t.PValue, Significant: t.Significant()}
		}
	}
	if ok {
		res.Stability = st
	}
	c := res.Params.Confidence
	if c == nil {
		return
	}
	out := &api.ConfidenceOutcome{ConfidenceTarget: *c, Samples: len(measured(res.Samples))}
	if ok {
		out.Figure = f.Key
	}
	w := stats.RelativeHalfWidth(xs, c.Level/100)
	if !math.IsInf(w, 0) && !math.IsNaN(w) {
		out.FinalHalfWidthPercent = &w
	}
	out.Met = len(measured(res.Samples)) >= res.Params.Samples && w <= c.HalfWidthPercent
	if !out.Met {
		out.Reasons = missReasons(res, clean, trend, len(st.OutlierSamples))
	}
	res.Confidence = out
}

// missReasons says why a target was not met. Failed samples and a significant trend are named
// first, outliers next (unless they were excluded), then "noisy path" when the samples that
// are not outliers (clean) still spread too widely for the samples taken, with how many that
// spread would need.
func missReasons(res *api.Result, xs []float64, trend *stats.Trend, outliers int) []string {
	var out []string
	if res.Summary.SamplesFailed > 0 {
		out = append(out, fmt.Sprintf("%s (%d of %d)", ReasonFailed, res.Summary.SamplesFailed, res.Summary.SamplesTotal))
	}
	if trend != nil && trend.Significant() {
		dir := "rising"
		if trend.Rho < 0 {
			dir = "falling"
		}
		out = append(out, fmt.Sprintf("%s (%s, Spearman ρ %.2f, %s)", ReasonTrend, dir, trend.Rho, figure.PValueText(trend.PValue)))
	}
	if outliers > 0 && !res.Params.ExcludeOutliers {
		out = append(out, fmt.Sprintf("%s (%d outside median ± 3·MAD)", ReasonOutliers, outliers))
	}
	if len(xs) >= 2 {
		c := res.Params.Confidence
		cov := stats.StdDev(xs) / math.Abs(stats.Mean(xs))
		need := stats.SamplesNeeded(cov, c.Level/100, c.HalfWidthPercent, 1000)
		if need > len(xs) {
			what := fmt.Sprintf("about %d", need)
			if need > 1000 {
				what = "more than 1000"
			}
			out = append(out, fmt.Sprintf("%s (CoV %.1f%%: %s samples needed)", ReasonNoisy, cov*100, what))
		}
	} else if len(out) == 0 {
		out = append(out, "fewer than 2 successful samples")
	}
	if len(out) == 0 {
		out = append(out, fmt.Sprintf("fewer than the minimum of %d samples", res.Params.Samples))
	}
	return out
}

// measured returns the samples that are not warm-up.
func measured(samples []api.Sample) []api.Sample {
	var out []api.Sample
	for _, s := range samples {
		if !s.Warmup {
			out = append(out, s)
		}
	}
	return out
}

// ConfidenceText is a one-line account of a confidence outcome, e.g. "±2.1% at 95% after
// 4 samples (target ±5%): met" or "... not met: noisy path (CoV 9.8%: about 19 samples needed)".
func ConfidenceText(c *api.ConfidenceOutcome) string {
	width := "no interval"
	if c.FinalHalfWidthPercent != nil {
		width = fmt.Sprintf("±%.1f%%", *c.FinalHalfWidthPercent)
	}
	s := fmt.Sprintf("%s at %g%% after %d samples (target ±%g%%): ", width, c.Level, c.Samples, c.HalfWidthPercent)
	if c.Met {
		return s + "met"
	}
	if c.GaveUp {
		s += "gave up, "
	}
	return s + "not met: " + strings.Join(c.Reasons, "; ")
}
