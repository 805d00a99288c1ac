// Package span finds the window a set of intervals covers: the one implementation behind a
// sample's, a result's and a run's start and end times.
package span

import "time"

// Of is the earliest non-zero start and the latest end of the intervals times gives for xs
// (zero times when there are none).
func Of[T any](xs []T, times func(x T) (start, end time.Time)) (start, end time.Time) {
	for _, x := range xs {
		s, e := times(x)
		if !s.IsZero() && (start.IsZero() || s.Before(start)) {
			start = s
		}
		if e.After(end) {
			end = e
		}
	}
	return start, end
}
