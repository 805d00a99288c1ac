package mesh

import (
	"math"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

func TestOutliers(t *testing.T) {
	for _, tc := range []struct {
		name           string
		values         []float64
		higherIsBetter bool
		wantOK         bool
		wantMedian     float64
		wantMAD        float64
		wantFlags      []bool
	}{
		{name: "too few", values: []float64{1, 100}, higherIsBetter: true, wantFlags: []bool{false, false}},
		{
			// median 10.05; |dev| .05 .25 .15 .05 .15 5.05 → median .15 → MAD .15·1.4826 = .22239;
			// threshold 10.05 − 3·.22239 = 9.383: only 5.0 is below.
			name: "one slow pair", values: []float64{10.1, 10.3, 9.9, 10.0, 10.2, 5.0}, higherIsBetter: true, wantOK: true,
			wantMedian: 10.05, wantMAD: 0.15 * 1.4826, wantFlags: []bool{false, false, false, false, false, true},
		},
		{
			// The fast pair is not an outlier of a higher-is-better metric.
			name: "one fast pair", values: []float64{10.1, 10.3, 9.9, 10.0, 10.2, 50}, higherIsBetter: true, wantOK: true,
			wantMedian: 10.15, wantMAD: 0.15 * 1.4826, wantFlags: make([]bool, 6),
		},
		{
			// Latency: lower is better, the slow (high) pair is the outlier.
			name: "latency", values: []float64{95, 97, 96, 94, 300, 95}, wantOK: true,
			wantMedian: 95.5, wantMAD: 1 * 1.4826, wantFlags: []bool{false, false, false, false, true, false},
		},
		{
			// Identical values: MAD floored at 0.5 % of the median (0.05), threshold 9.85.
			name: "identical", values: []float64{10, 10, 10, 10, 9.9, 9.8}, higherIsBetter: true, wantOK: true,
			wantMedian: 10, wantMAD: 0.05, wantFlags: []bool{false, false, false, false, false, true},
		},
		{
			// Three equal and one bad value: the 3-cell minimum is met.
			name: "three cells", values: []float64{4, 4.1, 1}, higherIsBetter: true, wantOK: true,
			wantMedian: 4, wantMAD: 0.1 * 1.4826, wantFlags: []bool{false, false, true},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp, flags, ok := Outliers(tc.values, 3, tc.higherIsBetter)
			if ok != tc.wantOK {
				t.Fatalf("ok = %v", ok)
			}
			for i := range flags {
				if flags[i] != tc.wantFlags[i] {
					t.Fatalf("flags %v, want %v (spread %+v)", flags, tc.wantFlags, sp)
				}
			}
			if !ok {
				return
			}
			if math.Abs(sp.Median-tc.wantMedian) > 1e-9 || math.Abs(sp.MAD-tc.wantMAD) > 1e-9 {
				t.Fatalf("median %v MAD %v, want %v %v", sp.Median, sp.MAD, tc.wantMedian, tc.wantMAD)
			}
			want := tc.wantMedian + 3*tc.wantMAD
			if tc.higherIsBetter {
				want = tc.wantMedian - 3*tc.wantMAD
			}
			if math.Abs(sp.Threshold-want) > 1e-9 {
				t.Fatalf("threshold %v, want %v", sp.Threshold, want)
			}
		})
	}
}

func TestFinishSkipsFailedCells(t *testing.T) {
	v := func(x float64) *float64 { return &x }
	m := &api.MeshMatrix{Network: "pod", Cells: []api.MeshCell{
		{Client: "a", Server: "b", Value: v(10)},
		{Client: "b", Server: "a", Value: v(10.1)},
		{Client: "a", Server: "c", Error: "connection refused"},
		{Client: "c", Server: "a", Value: v(9.9)},
		{Client: "b", Server: "c", Value: v(2)},
		{Client: "c", Server: "b", Value: v(10.05)},
	}}
	Finish(m, 3, true)
	if m.Median == nil || *m.Median != 10 {
		t.Fatalf("median %v", m.Median)
	}
	for i, c := range m.Cells {
		want := i == 4
		if c.Outlier != want {
			t.Errorf("cell %s→%s outlier %v, want %v", c.Client, c.Server, c.Outlier, want)
		}
	}
	// Fewer than 3 good cells: no spread, no outliers.
	m2 := &api.MeshMatrix{Cells: []api.MeshCell{{Value: v(1)}, {Value: v(5)}, {Error: "x"}}}
	Finish(m2, 3, true)
	if m2.Median != nil || m2.Cells[0].Outlier {
		t.Fatalf("spread on 2 cells: %+v", m2)
	}
}
