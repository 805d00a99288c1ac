package hdr

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"sort"
	"strings"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

func TestIndexBoundsContiguous(t *testing.T) {
	// Every bucket's [low, low+width) must start where the previous one ended.
	next := int64(0)
	for i := 0; i < NumBuckets; i++ {
		low, w := BucketBounds(i)
		if low != next {
			t.Fatalf("bucket %d starts at %d, want %d", i, low, next)
		}
		if Index(low) != i || Index(low+w-1) != i {
			t.Fatalf("bucket %d [%d,+%d): Index(low)=%d Index(high)=%d", i, low, w, Index(low), Index(low+w-1))
		}
		next = low + w
		if i == NumBuckets-1 && low+w-1 != math.MaxInt64 {
			t.Fatalf("last bucket ends at %d, want MaxInt64", low+w-1)
		}
	}
	if Index(-5) != 0 {
		t.Fatalf("negative value index %d", Index(-5))
	}
}

func TestRelativeErrorBound(t *testing.T) {
	// From 1 µs to 10 s, a single recorded value must come back within 1% (the midpoint
	// scheme gives 0.4%).
	r := rand.New(rand.NewPCG(1, 2))
	worst := 0.0
	for k := 0; k < 200000; k++ {
		v := int64(math.Exp(math.Log(1e3) + r.Float64()*(math.Log(1e10)-math.Log(1e3))))
		got := representative(Index(v))
		e := math.Abs(float64(got-v)) / float64(v)
		if e > worst {
			worst = e
		}
	}
	if worst > 0.01 {
		t.Fatalf("worst relative error %.4f%% > 1%%", worst*100)
	}
	t.Logf("worst relative error over 1µs..10s: %.3f%%", worst*100)
}

func TestQuantilesAgainstExact(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	h := New()
	vals := make([]int64, 100000)
	for i := range vals {
		// log-normal-ish latencies around 50 µs with a long tail
		vals[i] = int64(50e3 * math.Exp(r.NormFloat64()))
		h.Record(vals[i])
	}
	sort.Slice(vals, func(a, b int) bool { return vals[a] < vals[b] })
	for _, q := range []float64{0.01, 0.25, 0.5, 0.9, 0.99, 0.999, 0.9999} {
		rank := int(math.Ceil(q*float64(len(vals)))) - 1
		want := vals[rank]
		got := h.Quantile(q)
		if e := math.Abs(float64(got-want)) / float64(want); e > 0.01 {
			t.Errorf("q=%v: got %d want %d (err %.3f%%)", q, got, want, e*100)
		}
	}
	if h.Quantile(0) != vals[0] || h.Quantile(1) != vals[len(vals)-1] {
		t.Errorf("q0/q1 = %d/%d, want min/max %d/%d", h.Quantile(0), h.Quantile(1), vals[0], vals[len(vals)-1])
	}
	if h.Min() != vals[0] || h.Max() != vals[len(vals)-1] || h.Count() != int64(len(vals)) {
		t.Errorf("min/max/count = %d/%d/%d", h.Min(), h.Max(), h.Count())
	}
	var sum, sq float64
	for _, v := range vals {
		sum += float64(v)
	}
	mean := sum / float64(len(vals))
	for _, v := range vals {
		sq += (float64(v) - mean) * (float64(v) - mean)
	}
	sd := math.Sqrt(sq / float64(len(vals)))
	if math.Abs(h.Mean()-mean) > 1e-6*mean {
		t.Errorf("mean %f want %f", h.Mean(), mean)
	}
	if math.Abs(h.Stddev()-sd)/sd > 0.01 {
		t.Errorf("stddev %f want %f", h.Stddev(), sd)
	}
}

func TestEmpty(t *testing.T) {
	h := New()
	if h.Count() != 0 || h.Min() != 0 || h.Max() != 0 || h.Mean() != 0 || h.Stddev() != 0 || h.Quantile(0.5) != 0 {
		t.Fatal("empty histogram reports non-zero figures")
	}
	back, err := FromAPI(h.ToAPI())
	if err != nil {
		t.Fatal(err)
	}
	if back.Count() != 0 {
		t.Fatal("empty round trip not empty")
	}
}

func TestMergeEqualsSingle(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	all, a, b := New(), New(), New()
	for i := 0; i < 50000; i++ {
		v := r.Int64N(int64(1e9))
		all.Record(v)
		if i%3 == 0 {
			a.Record(v)
		} else {
			b.Record(v)
		}
	}
	a.Merge(b)
	a.Merge(nil)
	a.Merge(New())
	if !reflect.DeepEqual(a.ToAPI().Buckets, all.ToAPI().Buckets) || a.Count() != all.Count() ||
		a.Min() != all.Min() || a.Max() != all.Max() {
		t.Fatal("merged histogram differs from the one that saw every value")
	}
	if math.Abs(a.Sum()-all.Sum()) > 1e-9*all.Sum() {
		t.Fatalf("merged sum %f vs %f", a.Sum(), all.Sum())
	}
}

func TestRoundTripJSON(t *testing.T) {
	h := New()
	for _, v := range []int64{0, 1, 127, 128, 1000, 1500, 2e6, 9e9, math.MaxInt64 / 2} {
		h.Record(v)
	}
	b, err := json.Marshal(h.ToAPI())
	if err != nil {
		t.Fatal(err)
	}
	var a api.LatencyHistogram
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatal(err)
	}
	back, err := FromAPI(&a)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.ToAPI(), h.ToAPI()) {
		t.Fatalf("round trip differs:\n%+v\n%+v", back.ToAPI(), h.ToAPI())
	}
	for _, q := range []float64{0, 0.3, 0.5, 0.99, 1} {
		if back.Quantile(q) != h.Quantile(q) {
			t.Fatalf("quantile %v differs", q)
		}
	}
}

func TestFromAPIRejects(t *testing.T) {
	good := func() *api.LatencyHistogram {
		h := New()
		h.Record(1000)
		h.Record(2000)
		h.Record(2000)
		return h.ToAPI()
	}
	tests := []struct {
		name   string
		mutate func(a *api.LatencyHistogram)
		want   string
	}{
		{"scheme", func(a *api.LatencyHistogram) { a.Scheme = "hdr" }, "scheme"},
		{"bits", func(a *api.LatencyHistogram) { a.SubBucketBits = 8 }, "subBucketBits"},
		{"negative count", func(a *api.LatencyHistogram) { a.Count = -1 }, "negative"},
		{"count mismatch", func(a *api.LatencyHistogram) { a.Count = 4 }, "add up"},
		{"count too small", func(a *api.LatencyHistogram) { a.Count = 2 }, "exceed"},
		{"index range", func(a *api.LatencyHistogram) { a.Buckets[1][0] = NumBuckets }, "out of range"},
		{"negative index", func(a *api.LatencyHistogram) { a.Buckets[0][0] = -1 }, "out of range"},
		{"order", func(a *api.LatencyHistogram) { a.Buckets[0], a.Buckets[1] = a.Buckets[1], a.Buckets[0] }, "not after"},
		{"zero count bucket", func(a *api.LatencyHistogram) { a.Buckets[0][1] = 0 }, "not positive"},
		{"huge bucket", func(a *api.LatencyHistogram) { a.Buckets[0][1] = math.MaxInt64 }, "exceed"},
		{"min", func(a *api.LatencyHistogram) { a.MinNanoseconds = 5 }, "min"},
		{"max", func(a *api.LatencyHistogram) { a.MaxNanoseconds = 1e9 }, "max"},
		{"max<min", func(a *api.LatencyHistogram) { a.MaxNanoseconds = 10 }, "inconsistent"},
		{"sum", func(a *api.LatencyHistogram) { a.SumNanoseconds = 1 }, "sum"},
		{"sum nan", func(a *api.LatencyHistogram) { a.SumNanoseconds = math.NaN() }, "sum"},
		{"empty with buckets", func(a *api.LatencyHistogram) { a.Count = 0 }, "count 0"},
	}
	if _, err := FromAPI(good()); err != nil {
		t.Fatalf("good histogram rejected: %v", err)
	}
	if _, err := FromAPI(nil); err == nil {
		t.Fatal("nil accepted")
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := good()
			tt.mutate(a)
			_, err := FromAPI(a)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestRecordDoesNotAllocate(t *testing.T) {
	h := New()
	v := int64(12345)
	if n := testing.AllocsPerRun(1000, func() { h.Record(v); v += 977 }); n != 0 {
		t.Fatalf("Record allocates %v times", n)
	}
}

func BenchmarkRecord(b *testing.B) {
	h := New()
	vals := make([]int64, 4096)
	r := rand.New(rand.NewPCG(7, 8))
	for i := range vals {
		vals[i] = int64(20e3 * math.Exp(r.NormFloat64()))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.Record(vals[i&4095])
	}
}
