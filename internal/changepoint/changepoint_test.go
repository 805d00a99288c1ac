package changepoint

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// noisy is n points around level with uniform noise of ±spread·level, deterministic per seed.
func noisy(seed uint64, n int, level, spread float64) []float64 {
	r := rand.New(rand.NewPCG(seed, 7))
	out := make([]float64, n)
	for i := range out {
		out[i] = level * (1 + spread*(2*r.Float64()-1))
	}
	return out
}

func concat(parts ...[]float64) []float64 {
	var out []float64
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func indexes(ps []Point) []int {
	out := []int{}
	for _, p := range ps {
		out = append(out, p.Index)
	}
	return out
}

func TestDetect(t *testing.T) {
	tests := []struct {
		name   string
		series []float64
		opt    Options
		want   []int
	}{
		{"empty", nil, Options{}, []int{}},
		{"one point", []float64{5}, Options{}, []int{}},
		{"constant", []float64{3, 3, 3, 3, 3, 3, 3, 3}, Options{}, []int{}},
		{"clean step", []float64{1, 1, 1, 1, 2, 2, 2, 2}, Options{}, []int{4}},
		{"20% drop in 5% noise", concat(noisy(1, 20, 100, 0.05), noisy(2, 20, 80, 0.05)), Options{}, []int{20}},
		{"20% rise in 5% noise", concat(noisy(3, 15, 100, 0.05), noisy(4, 25, 120, 0.05)), Options{}, []int{15}},
		{"noise only", noisy(5, 60, 100, 0.1), Options{}, []int{}},
		{"two steps", concat(noisy(6, 15, 100, 0.02), noisy(7, 15, 70, 0.02), noisy(8, 15, 100, 0.02)), Options{}, []int{15, 30}},
		{"steps across windows", concat(noisy(9, 40, 100, 0.03), noisy(10, 40, 60, 0.03), noisy(11, 40, 90, 0.03)), Options{}, []int{40, 80}},
		{"one outlier is not a step", concat(noisy(12, 20, 100, 0.03), []float64{40}, noisy(13, 20, 100, 0.03)), Options{}, []int{}},
		{"small step kept without a minimum", concat(noisy(14, 30, 100, 0.005), noisy(15, 30, 103, 0.005)), Options{}, []int{30}},
		{"small step dropped under --magnitude", concat(noisy(14, 30, 100, 0.005), noisy(15, 30, 103, 0.005)), Options{MinMagnitude: 0.05}, []int{}},
		{"step too noisy for p 1e-6", concat(noisy(16, 6, 100, 0.1), noisy(17, 6, 85, 0.1)), Options{MaxPValue: 1e-6}, []int{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Detect(tt.series, tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(indexes(got), tt.want) {
				t.Fatalf("change points at %v, want %v: %+v", indexes(got), tt.want, got)
			}
			for _, p := range got {
				if !(p.PValue <= DefaultMaxPValue) && tt.opt.MaxPValue == 0 {
					t.Errorf("point %d: p = %v above the default level", p.Index, p.PValue)
				}
			}
		})
	}
}

func TestDetectStatistics(t *testing.T) {
	got, err := Detect([]float64{10, 12, 10, 12, 20, 22, 20, 22}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("got %+v, want one point", got)
	}
	p := got[0]
	if p.Index != 4 || p.MeanBefore != 11 || p.MeanAfter != 21 || p.StdBefore != 1 || p.StdAfter != 1 || p.NBefore != 4 || p.NAfter != 4 {
		t.Fatalf("point %+v", p)
	}
	// scipy.stats.ttest_ind_from_stats(11, 1, 4, 21, 1, 4) = (-14.142135623730951, 7.807348932620025e-06)
	if math.Abs(p.PValue-7.807348932620025e-06)/7.807348932620025e-06 > 1e-9 {
		t.Errorf("p = %v, want scipy's 7.807348932620025e-06", p.PValue)
	}
	if math.Abs(p.RelChange()-10.0/11) > 1e-12 || math.Abs(p.Magnitude()-10.0/11) > 1e-12 {
		t.Errorf("relative change %v, magnitude %v, want 10/11", p.RelChange(), p.Magnitude())
	}
}

func TestDetectRejects(t *testing.T) {
	for _, tt := range []struct {
		name   string
		series []float64
		opt    Options
	}{
		{"NaN point", []float64{1, math.NaN(), 2}, Options{}},
		{"infinite point", []float64{1, math.Inf(1)}, Options{}},
		{"window 1", []float64{1, 2}, Options{Window: 1}},
		{"p above 1", []float64{1, 2}, Options{MaxPValue: 2}},
		{"negative magnitude", []float64{1, 2}, Options{MinMagnitude: -1}},
	} {
		if _, err := Detect(tt.series, tt.opt); err == nil {
			t.Errorf("%s: no error", tt.name)
		}
	}
}

// TestRealLoopbackHistory: the throughput of a real history of loopback runs, throttled by a
// token-bucket filter from its 8th run on (testdata/real-loopback.json), changes there and only
// there; the transaction rate, which the filter does not limit, does not change.
func TestRealLoopbackHistory(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "real-loopback.json"))
	if err != nil {
		t.Fatal(err)
	}
	var real struct{ Series map[string][]float64 }
	if err := json.Unmarshal(b, &real); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]int{
		"real loopback: TCP_STREAM native loopback 128KiB x1, throughput": {7},
		"real loopback: TCP_RR native loopback 1B x1, transactions":       {},
	} {
		got, err := Detect(real.Series[name], Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(indexes(got), want) {
			t.Errorf("%s: change points at %v, want %v", name, indexes(got), want)
		}
	}
}
