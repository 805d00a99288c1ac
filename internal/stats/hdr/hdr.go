// Package hdr is a log-linear (HDR-style) latency histogram in nanoseconds.
//
// Values below 2^SubBucketBits ns are counted exactly; above, every power of two is split into
// 2^SubBucketBits equal buckets, so a bucket is at most 1/128 (0.78%) of its lower bound wide and
// a quantile, reported as the bucket's midpoint, is within 0.4% of the true value over the whole
// int64 range (1 ns to 292 years), which covers the 1 µs to 10 s the issue asks for.
//
// A Histogram is not safe for concurrent use: give each goroutine/thread its own, Record into it
// without locks, and Merge them after the run. Record never allocates.
package hdr

import (
	"errors"
	"fmt"
	"math"
	"math/bits"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

// Scheme names the bucket layout in serialised histograms.
const Scheme = "loglinear-ns-v1"

// SubBucketBits is log2 of the number of buckets per power of two.
const SubBucketBits = 7

const (
	subCount = 1 << SubBucketBits
	// NumBuckets is the number of buckets needed for every non-negative int64.
	NumBuckets = (63-SubBucketBits)*subCount + subCount // 7296
)

// Histogram counts values (nanoseconds) in log-linear buckets.
type Histogram struct {
	count  int64
	min    int64
	max    int64
	sum    float64
	counts [NumBuckets]int64
}

// New returns an empty histogram.
func New() *Histogram {
	return &Histogram{min: math.MaxInt64}
}

// Index returns the bucket index of value v (negative values count as 0).
func Index(v int64) int {
	if v < subCount {
		if v < 0 {
			return 0
		}
		return int(v)
	}
	u := uint64(v)
	shift := bits.Len64(u) - 1 - SubBucketBits
	return (shift+1)*subCount + int(u>>uint(shift)) - subCount
}

// BucketBounds returns the lowest value of bucket i and its width.
func BucketBounds(i int) (low, width int64) {
	if i < subCount {
		return int64(i), 1
	}
	shift := i/subCount - 1
	m := int64(subCount + i%subCount)
	return m << uint(shift), int64(1) << uint(shift)
}

// representative is the value reported for bucket i: its midpoint.
func representative(i int) int64 {
	low, w := BucketBounds(i)
	return low + (w-1)/2
}

// Record counts one value in nanoseconds; negative values count as 0. It never allocates.
func (h *Histogram) Record(ns int64) {
	if ns < 0 {
		ns = 0
	}
	h.counts[Index(ns)]++
	h.count++
	h.sum += float64(ns)
	if ns < h.min {
		h.min = ns
	}
	if ns > h.max {
		h.max = ns
	}
}

// Reset empties the histogram.
func (h *Histogram) Reset() {
	*h = Histogram{min: math.MaxInt64}
}

// Merge adds every count of o into h.
func (h *Histogram) Merge(o *Histogram) {
	if o == nil || o.count == 0 {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.count += o.count
	h.sum += o.sum
	if o.min < h.min {
		h.min = o.min
	}
	if o.max > h.max {
		h.max = o.max
	}
}

// Count is the number of recorded values.
func (h *Histogram) Count() int64 { return h.count }

// Min is the smallest recorded value (0 when empty).
func (h *Histogram) Min() int64 {
	if h.count == 0 {
		return 0
	}
	return h.min
}

// Max is the largest recorded value (0 when empty).
func (h *Histogram) Max() int64 { return h.max }

// Sum is the exact sum of recorded values in nanoseconds (as a float64).
func (h *Histogram) Sum() float64 { return h.sum }

// Mean is the exact mean in nanoseconds (0 when empty).
func (h *Histogram) Mean() float64 {
	if h.count == 0 {
		return 0
	}
	return h.sum / float64(h.count)
}

// Stddev is the population standard deviation in nanoseconds, from bucket midpoints around
// the exact mean.
func (h *Histogram) Stddev() float64 {
	if h.count < 2 {
		return 0
	}
	mean := h.Mean()
	var acc float64
	for i, c := range h.counts {
		if c == 0 {
			continue
		}
		d := float64(representative(i)) - mean
		acc += float64(c) * d * d
	}
	return math.Sqrt(acc / float64(h.count))
}

// Quantile returns the value at quantile q in [0,1] in nanoseconds: the midpoint of the bucket
// holding the ceil(q*count)-th smallest value, clamped to [Min, Max]. Quantile(0) is Min and
// Quantile(1) is Max. It returns 0 when the histogram is empty.
func (h *Histogram) Quantile(q float64) int64 {
	if h.count == 0 {
		return 0
	}
	if !(q > 0) { // also NaN
		return h.min
	}
	if q >= 1 {
		return h.max
	}
	rank := int64(math.Ceil(q * float64(h.count)))
	if rank < 1 {
		rank = 1
	}
	var cum int64
	for i, c := range h.counts {
		cum += c
		if cum >= rank {
			v := representative(i)
			if v < h.min {
				v = h.min
			}
			if v > h.max {
				v = h.max
			}
			return v
		}
	}
	return h.max
}

// Latency is the latency summary of the histogram's transactions in microseconds (the
// histogram holds nanoseconds): count, mean, min, max, stddev and percentiles, method
// "histogram". The one conversion of the agent's, uperf's and the merged summaries.
func (h *Histogram) Latency() *api.Latency {
	us := func(ns float64) *float64 { v := ns / 1000; return &v }
	q := func(p float64) *float64 { return us(float64(h.Quantile(p))) }
	count := h.Count()
	return &api.Latency{
		Count:      &count,
		Mean:       us(h.Mean()),
		Min:        us(float64(h.Min())),
		Max:        us(float64(h.Max())),
		Stddev:     us(h.Stddev()),
		P50:        q(0.50),
		P75:        q(0.75),
		P90:        q(0.90),
		P99:        q(0.99),
		P999:       q(0.999),
		P9999:      q(0.9999),
		Method:     "histogram",
		Provenance: api.LatencyMeasured,
	}
}

// ToAPI serialises the histogram with sparse [index, count] buckets in ascending index order.
func (h *Histogram) ToAPI() *api.LatencyHistogram {
	out := &api.LatencyHistogram{
		Scheme:         Scheme,
		SubBucketBits:  SubBucketBits,
		Count:          h.count,
		MinNanoseconds: h.Min(),
		MaxNanoseconds: h.max,
		SumNanoseconds: h.sum,
		Buckets:        [][2]int64{},
	}
	for i, c := range h.counts {
		if c != 0 {
			out.Buckets = append(out.Buckets, [2]int64{int64(i), c})
		}
	}
	return out
}

// FromAPI rebuilds a histogram from its serialised form, checking the scheme, the sub-bucket
// bits, every bucket index and count, and that count, min, max and sum agree with the buckets.
func FromAPI(a *api.LatencyHistogram) (*Histogram, error) {
	if a == nil {
		return nil, errors.New("latency histogram: missing")
	}
	if a.Scheme != Scheme {
		return nil, fmt.Errorf("latency histogram: scheme %q, want %q", a.Scheme, Scheme)
	}
	if a.SubBucketBits != SubBucketBits {
		return nil, fmt.Errorf("latency histogram: subBucketBits %d, want %d", a.SubBucketBits, SubBucketBits)
	}
	if a.Count < 0 {
		return nil, fmt.Errorf("latency histogram: negative count %d", a.Count)
	}
	h := New()
	if a.Count == 0 {
		if len(a.Buckets) != 0 || a.MinNanoseconds != 0 || a.MaxNanoseconds != 0 || a.SumNanoseconds != 0 {
			return nil, errors.New("latency histogram: count 0 but buckets, min, max or sum set")
		}
		return h, nil
	}
	prev := -1
	var total int64
	for k, b := range a.Buckets {
		idx, c := b[0], b[1]
		if idx < 0 || idx >= NumBuckets {
			return nil, fmt.Errorf("latency histogram: bucket %d: index %d out of range [0,%d)", k, idx, NumBuckets)
		}
		if int(idx) <= prev {
			return nil, fmt.Errorf("latency histogram: bucket %d: index %d not after %d", k, idx, prev)
		}
		if c <= 0 {
			return nil, fmt.Errorf("latency histogram: bucket %d: count %d not positive", k, c)
		}
		if c > a.Count-total {
			return nil, fmt.Errorf("latency histogram: bucket counts exceed count %d", a.Count)
		}
		total += c
		prev = int(idx)
		h.counts[idx] = c
	}
	if total != a.Count {
		return nil, fmt.Errorf("latency histogram: bucket counts add up to %d, count is %d", total, a.Count)
	}
	if a.MinNanoseconds < 0 || a.MaxNanoseconds < a.MinNanoseconds {
		return nil, fmt.Errorf("latency histogram: min %d / max %d inconsistent", a.MinNanoseconds, a.MaxNanoseconds)
	}
	first, last := int(a.Buckets[0][0]), int(a.Buckets[len(a.Buckets)-1][0])
	if Index(a.MinNanoseconds) != first {
		return nil, fmt.Errorf("latency histogram: min %d ns is not in the first bucket %d", a.MinNanoseconds, first)
	}
	if Index(a.MaxNanoseconds) != last {
		return nil, fmt.Errorf("latency histogram: max %d ns is not in the last bucket %d", a.MaxNanoseconds, last)
	}
	s := a.SumNanoseconds
	lo, hi := float64(a.MinNanoseconds)*float64(a.Count), float64(a.MaxNanoseconds)*float64(a.Count)
	slack := 1e-9*hi + 1
	if math.IsNaN(s) || math.IsInf(s, 0) || s < lo-slack || s > hi+slack {
		return nil, fmt.Errorf("latency histogram: sum %g outside [count*min, count*max]", s)
	}
	h.count = a.Count
	h.min = a.MinNanoseconds
	h.max = a.MaxNanoseconds
	h.sum = s
	return h, nil
}
