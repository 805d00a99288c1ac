// Package changepoint finds the points where a series of measurements (one figure of one case
// across a history of runs) changes level, with the method of Apache Otava (formerly Hunter,
// https://github.com/apache/otava; what cloud-bulldozer/orion runs over k8s-netperf's KPIs):
// E-divisive means (Matteson & James, https://doi.org/10.48550/arXiv.1306.4933) proposes a
// split that maximises the energy distance between the two sides, and Student's two-sided
// t-test decides whether the split is significant, in sliding windows, followed by Otava's
// merge step that drops the weakest points until every remaining one is significant
// (Fleming et al., "Hunter: Using Change Point Detection to Hunt for Performance
// Regressions", https://doi.org/10.1145/3578244.3583719).
//
// Detect follows otava/analysis.py's compute_change_points (apache-otava 0.8.0) step by step,
// with its defaults (window 50, p ≤ 0.001, no minimum magnitude), so that its verdicts are
// Otava's: the split step at a first-pass level ten times looser, the t-test with
// population standard deviations, and the merge step as Otava does it, including that it
// recomputes, after dropping a point, the two points after it but not the one before it.
// The package is pure: numbers in, points out.
package changepoint

import (
	"fmt"
	"math"
	"sort"

	"github.com/cnperf/cnperf/internal/stats"
)

// Otava's defaults (otava/series.py AnalysisOptions).
const (
	DefaultWindow    = 50
	DefaultMaxPValue = 0.001
)

// Options tune Detect. The zero value is Otava's defaults.
type Options struct {
	// Window is the number of points analysed at once (Otava's --window); the windows
	// overlap by half. 0 means DefaultWindow; it must otherwise be at least 2.
	Window int
	// MaxPValue is the largest p-value of a reported point (Otava's --pvalue); 0 means
	// DefaultMaxPValue.
	MaxPValue float64
	// MinMagnitude drops points whose relative change (Point.Magnitude) is not above it
	// (Otava's --magnitude, a fraction: 0.05 is 5 %). 0 keeps every significant point.
	MinMagnitude float64
}

func (o Options) withDefaults() (Options, error) {
	if o.Window == 0 {
		o.Window = DefaultWindow
	}
	if o.MaxPValue == 0 {
		o.MaxPValue = DefaultMaxPValue
	}
	switch {
	case o.Window < 2:
		return o, fmt.Errorf("window %d: want at least 2 points", o.Window)
	case !(o.MaxPValue > 0 && o.MaxPValue <= 1):
		return o, fmt.Errorf("maximum p-value %v: want a number in (0, 1]", o.MaxPValue)
	case !(o.MinMagnitude >= 0) || math.IsInf(o.MinMagnitude, 0):
		return o, fmt.Errorf("minimum magnitude %v: want a finite number ≥ 0", o.MinMagnitude)
	}
	return o, nil
}

// Point is a change point: the series is at one level before Index and another from Index on.
type Point struct {
	// Index is the first point of the new level (≥ 1).
	Index int
	// The two sides the test compared: the points from the previous change point (or the
	// start) to Index, and from Index to the next change point (or the end).
	NBefore, NAfter       int
	MeanBefore, MeanAfter float64
	// StdBefore and StdAfter are population standard deviations (Otava's np.std).
	StdBefore, StdAfter float64
	// PValue is the two-sided p-value of Student's t-test of the two sides.
	PValue float64
}

// RelChange is MeanAfter / MeanBefore − 1 (Otava's forward_rel_change); 0 when MeanBefore is 0.
func (p Point) RelChange() float64 {
	if p.MeanBefore == 0 {
		return 0
	}
	return p.MeanAfter/p.MeanBefore - 1
}

// Magnitude is the larger of |after/before − 1| and |before/after − 1| (Otava's
// change_magnitude), what MinMagnitude is compared with.
func (p Point) Magnitude() float64 {
	back := 0.0
	if p.MeanAfter != 0 {
		back = p.MeanBefore/p.MeanAfter - 1
	}
	return math.Max(math.Abs(p.RelChange()), math.Abs(back))
}

// Detect returns the change points of series in index order. Every value must be a finite
// number: a failed measurement is left out of the series by the caller (it is a gap, not a
// value).
func Detect(series []float64, opt Options) ([]Point, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	for i, v := range series {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("point %d is %v: want a finite number", i, v)
		}
	}
	first := opt.MaxPValue
	switch {
	case first < 0.05:
		first *= 10
	case first < 0.5:
		first *= 2
	}
	weak := split(series, opt.Window, first)
	return merge(weak, series, opt.MaxPValue, opt.MinMagnitude), nil
}

// interval is the half-open range [start, stop) of a series.
type interval struct{ start, stop int }

// intervals cuts [0, n) at the sorted indexes of points (otava SignificanceTester.get_intervals).
func intervals(points []Point, n int) []interval {
	var out []interval
	prev := 0
	for _, p := range points {
		if p.Index != prev {
			out = append(out, interval{prev, p.Index})
		}
		prev = p.Index
	}
	if prev != n {
		out = append(out, interval{prev, n})
	}
	return out
}

// tTest compares two sides as otava's TTestSignificanceTester.compare: means, population
// standard deviations, and scipy's ttest_ind_from_stats (pooled variance, two-sided).
func tTest(index int, left, right []float64) Point {
	p := Point{Index: index, NBefore: len(left), NAfter: len(right)}
	p.MeanBefore, p.StdBefore = meanStd(left)
	p.MeanAfter, p.StdAfter = meanStd(right)
	if len(left)+len(right) <= 2 {
		p.PValue = 1
		return p
	}
	n1, n2 := float64(len(left)), float64(len(right))
	df := n1 + n2 - 2
	pooled := ((n1-1)*p.StdBefore*p.StdBefore + (n2-1)*p.StdAfter*p.StdAfter) / df
	t := (p.MeanBefore - p.MeanAfter) / math.Sqrt(pooled*(1/n1+1/n2))
	switch {
	case math.IsNaN(t): // two constant sides at the same level: scipy says nan, so does Otava
		p.PValue = math.NaN()
	case math.IsInf(t, 0): // two constant sides at different levels
		p.PValue = 0
	default:
		p.PValue = stats.RegIncBeta(df/2, 0.5, df/(df+t*t))
	}
	return p
}

func meanStd(xs []float64) (mean, std float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) < 2 {
		return mean, 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(xs)))
}

// split is otava's split: E-divisive with the t-test in windows of window points that
// overlap by half, the union of what each window finds (the weak change points), with each
// point's statistics then recomputed between its neighbours.
func split(series []float64, window int, maxP float64) []Point {
	var points []Point
	have := map[int]bool{}
	step := window / 2
	for start := 0; start < len(series); {
		end := min(start+window, len(series))
		found := detectWindow(series[start:end], maxP)
		last := 0
		for _, p := range found {
			p.Index += start
			last = p.Index
			if !have[p.Index] {
				have[p.Index] = true
				points = append(points, p)
			}
		}
		start = max(last, start+step)
	}
	sort.Slice(points, func(i, j int) bool { return points[i].Index < points[j].Index })
	return restat(points, series)
}

// restat recomputes every point's test between its neighbours (the merge-step statistics).
func restat(points []Point, series []float64) []Point {
	out := make([]Point, len(points))
	for i, p := range points {
		lo, hi := 0, len(series)
		if i > 0 {
			lo = points[i-1].Index
		}
		if i+1 < len(points) {
			hi = points[i+1].Index
		}
		out[i] = tTest(p.Index, series[lo:p.Index], series[p.Index:hi])
	}
	return out
}

// detectWindow is otava's ChangePointDetector.get_change_points on one window: repeatedly take
// the best E-divisive candidate over the current intervals and keep it while its t-test
// p-value is ≤ maxP.
func detectWindow(w []float64, maxP float64) []Point {
	e := newEnergy(w)
	var points []Point
	for {
		ivs := intervals(points, len(w))
		best, bestQ, found := interval{}, 0.0, false
		bestIndex := 0
		for _, iv := range ivs {
			if iv.stop-iv.start <= 1 {
				continue
			}
			idx, q := e.candidate(iv)
			if !found || q > bestQ {
				best, bestQ, bestIndex, found = iv, q, idx, true
			}
		}
		if !found {
			return points
		}
		p := tTest(bestIndex, w[best.start:bestIndex], w[bestIndex:best.stop])
		if !(p.PValue <= maxP) {
			return points
		}
		points = append(points, p)
		sort.Slice(points, func(i, j int) bool { return points[i].Index < points[j].Index })
	}
}

// energy holds the prefix sums of the pairwise distances |x_i − x_j| of a window, so that the
// sum of the distances between any two ranges costs O(1).
type energy struct {
	n   int
	sum []float64 // (n+1)², sum[i*(n+1)+j] = Σ_{a<i, b<j} |x_a − x_b|
}

func newEnergy(w []float64) *energy {
	n := len(w)
	e := &energy{n: n, sum: make([]float64, (n+1)*(n+1))}
	for i := 0; i < n; i++ {
		row := 0.0
		for j := 0; j < n; j++ {
			row += math.Abs(w[i] - w[j])
			e.sum[(i+1)*(n+1)+j+1] = e.sum[i*(n+1)+j+1] + row
		}
	}
	return e
}

// rect is Σ |x_a − x_b| for a in [r0, r1), b in [c0, c1).
func (e *energy) rect(r0, r1, c0, c1 int) float64 {
	m := e.n + 1
	return e.sum[r1*m+c1] - e.sum[r0*m+c1] - e.sum[r1*m+c0] + e.sum[r0*m+c0]
}

// candidate is otava's PairDistanceCalculator.get_candidate_change_point: the τ (and κ) in
// start < τ < κ ≤ stop maximising Q(X = x[start:τ], Y = x[τ:κ]) =
// 2/(m+n) Σ|X−Y| − 2m/((m+n)(n−1)) Σ_{i<k}|X_i−X_k| − 2n/((m+n)(m−1)) Σ_{j<k}|Y_j−Y_k|,
// the first maximum in τ-then-κ order as numpy's argmax finds it.
func (e *energy) candidate(iv interval) (int, float64) {
	bestTau, bestQ := 0, math.Inf(-1)
	for tau := iv.start + 1; tau < iv.stop; tau++ {
		n := float64(tau - iv.start)
		withinX := e.rect(iv.start, tau, iv.start, tau) / 2
		for kappa := tau + 1; kappa <= iv.stop; kappa++ {
			m := float64(kappa - tau)
			q := 2 / (m + n) * e.rect(iv.start, tau, tau, kappa)
			if n > 1 {
				q -= 2 * m / ((m + n) * (n - 1)) * withinX
			}
			if m > 1 {
				q -= 2 * n / ((m + n) * (m - 1)) * e.rect(tau, kappa, tau, kappa) / 2
			}
			if q > bestQ {
				bestTau, bestQ = tau, q
			}
		}
	}
	return bestTau, bestQ
}

// merge is otava's merge: while some point is not significant at maxP, drop the one with the
// largest p-value; once all are, drop the one with the smallest magnitude while it is not
// above minMagnitude. After each drop the points at the dropped one's place and the next are
// recomputed between their neighbours, as Otava does.
func merge(points []Point, series []float64, maxP, minMagnitude float64) []Point {
	for len(points) > 0 {
		weakest := 0
		for i, p := range points { // Python's max: the first largest; NaN is never larger
			if p.PValue > points[weakest].PValue {
				weakest = i
			}
		}
		if points[weakest].PValue < maxP {
			weakest = 0
			for i, p := range points {
				if p.Magnitude() < points[weakest].Magnitude() {
					weakest = i
				}
			}
			if points[weakest].Magnitude() > minMagnitude {
				return points
			}
		}
		points = append(points[:weakest], points[weakest+1:]...)
		for _, i := range []int{weakest, weakest + 1} {
			if i >= len(points) {
				continue
			}
			lo, hi := 0, len(series)
			if i > 0 {
				lo = points[i-1].Index
			}
			if i+1 < len(points) {
				hi = points[i+1].Index
			}
			points[i] = tTest(points[i].Index, series[lo:points[i].Index], series[points[i].Index:hi])
		}
	}
	return points
}
