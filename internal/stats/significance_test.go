package stats

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestWelchTTest(t *testing.T) {
	// Hand check of the first case: means 3 and 6, variances 2.5 and 10, so
	// SE² = 2.5/5 + 10/5 = 2.5, t = −3/√2.5 = −1.8973666,
	// df = 2.5² / ((0.5²)/4 + 2²/4) = 6.25/1.0625 = 5.8823529; p from SciPy's ttest_ind(equal_var=False).
	tests := []struct {
		name     string
		a, b     []float64
		t, df, p float64
	}{
		{"textbook", []float64{1, 2, 3, 4, 5}, []float64{2, 4, 6, 8, 10}, -1.8973666, 5.8823529, 0.10753119},
		{"throughput drop", []float64{9.1, 9.3, 9.2}, []float64{8.7, 8.8, 8.75}, 6.9713700, 2.9411765, 0.00645759},
		{"identical constants", []float64{5, 5}, []float64{5, 5, 5}, 0, 3, 1},
		{"different constants", []float64{5, 5}, []float64{6, 6}, math.Inf(-1), 2, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := WelchTTest(tc.a, tc.b)
			if err != nil {
				t.Fatal(err)
			}
			if r.Test != MethodWelch {
				t.Errorf("Test = %q", r.Test)
			}
			if !(math.IsInf(tc.t, 0) && r.Statistic == tc.t) && math.Abs(r.Statistic-tc.t) > 1e-6 {
				t.Errorf("t = %v, want %v", r.Statistic, tc.t)
			}
			if math.Abs(r.DF-tc.df) > 1e-6 {
				t.Errorf("df = %v, want %v", r.DF, tc.df)
			}
			if math.Abs(r.PValue-tc.p) > 1e-7 {
				t.Errorf("p = %v, want %v", r.PValue, tc.p)
			}
		})
	}
	if _, err := WelchTTest([]float64{1}, []float64{1, 2}); !errors.Is(err, ErrTooFewSamples) {
		t.Errorf("one value: err = %v, want ErrTooFewSamples", err)
	}
}

func TestMannWhitneyU(t *testing.T) {
	// Exact p-values by counting: 5 vs 5 fully separated has 2 of C(10,5) = 252 extreme
	// arrangements → p = 2·1/252 = 0.0079365; 3 vs 3 separated → 2·1/20 = 0.1.
	// The others are from SciPy's mannwhitneyu (method exact / asymptotic with continuity).
	tests := []struct {
		name  string
		a, b  []float64
		u, p  float64
		exact bool
	}{
		{"5v5 separated", []float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}, 0, 2.0 / 252, true},
		{"5v5 separated reversed", []float64{6, 7, 8, 9, 10}, []float64{1, 2, 3, 4, 5}, 25, 2.0 / 252, true},
		{"3v3 separated", []float64{1, 2, 3}, []float64{4, 5, 6}, 0, 0.1, true},
		{"4v5 mixed", []float64{1.1, 2.5, 3.3, 7.0}, []float64{2.0, 4.1, 5.5, 6.2, 8.8}, 6, 0.41269841, true},
		{"ties use normal approximation", []float64{1, 2, 2, 3, 4, 5}, []float64{3, 3, 6, 7, 8, 9}, 5, 0.04345280, false},
		{"all equal", []float64{1, 1}, []float64{1, 1, 1}, 3, 1, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := MannWhitneyU(tc.a, tc.b)
			if err != nil {
				t.Fatal(err)
			}
			if r.Statistic != tc.u {
				t.Errorf("U = %v, want %v", r.Statistic, tc.u)
			}
			if math.Abs(r.PValue-tc.p) > 1e-7 {
				t.Errorf("p = %v, want %v", r.PValue, tc.p)
			}
			if r.Exact != tc.exact {
				t.Errorf("exact = %v, want %v", r.Exact, tc.exact)
			}
		})
	}
}

func TestChooseAndTest(t *testing.T) {
	tests := []struct {
		name string
		a, b []float64
		want string
	}{
		{"few samples", []float64{9.1, 9.3, 9.2}, []float64{8.7, 8.8, 8.75}, MethodWelch},
		{"symmetric", []float64{1, 2, 3, 4, 5}, []float64{2, 3, 4, 5, 6}, MethodWelch},
		{"skewed, enough samples", []float64{1, 1, 1, 1, 2, 10}, []float64{3, 3.1, 3.2, 3.3, 3.4, 3.5}, MethodMannWhitney},
		{"skewed, too few", []float64{1, 1, 10}, []float64{3, 3.1, 3.2}, MethodWelch},
	}
	for _, tc := range tests {
		r, err := ChooseAndTest(tc.a, tc.b)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if r.Test != tc.want {
			t.Errorf("%s: test = %s, want %s (%s)", tc.name, r.Test, tc.want, r.Reason)
		}
		if r.Reason == "" {
			t.Errorf("%s: no reason given", tc.name)
		}
	}
	if _, err := ChooseAndTest([]float64{1}, []float64{1, 2, 3}); !errors.Is(err, ErrTooFewSamples) {
		t.Errorf("err = %v", err)
	}
}

// TestTestResultJSONWithoutInfinity: two constant sample sets with different means give an
// infinite Welch statistic, which encoding/json refuses; the result must still encode, the
// statistic as null with its sign kept.
func TestTestResultJSONWithoutInfinity(t *testing.T) {
	cases := []struct {
		name string
		a, b []float64
		want string
	}{
		{"constant, a lower", []float64{0, 0}, []float64{3, 3}, `"statistic":null,"statisticInfinite":"-"`},
		{"constant, a higher", []float64{5, 5, 5}, []float64{1, 1}, `"statistic":null,"statisticInfinite":"+"`},
		{"constant, equal", []float64{2, 2}, []float64{2, 2}, `"statistic":0`},
		{"varying", []float64{1, 2, 3}, []float64{2, 3, 4}, `"statistic":-1.22474487139158`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := WelchTTest(c.a, c.b)
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatalf("marshal %+v: %v", r, err)
			}
			if !strings.Contains(string(b), c.want) {
				t.Errorf("got %s, want it to contain %s", b, c.want)
			}
			if strings.Count(string(b), `"statistic"`) != 1 {
				t.Errorf("statistic written more than once: %s", b)
			}
		})
	}
}

// TestTestResultJSONHasEveryField: MarshalJSON lists the fields by hand; a field added to
// TestResult must be added there too.
func TestTestResultJSONHasEveryField(t *testing.T) {
	r := TestResult{Test: MethodMannWhitney, Statistic: 3, DF: 4, PValue: 0.5, Exact: true, Reason: "x"}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if n := reflect.TypeOf(r).NumField(); len(m) != n {
		t.Errorf("JSON has %d keys, TestResult %d fields: %s", len(m), n, b)
	}
}

// TestWelchHugeValues: Welch's t and df do not depend on the scale, so values × 1e300 give
// the same test as the values themselves (their variances overflowed to +Inf before: p NaN).
func TestWelchHugeValues(t *testing.T) {
	a, b := []float64{9.41, 9.38, 9.52, 9.44}, []float64{8.45, 8.47, 8.44, 8.50}
	want, err := WelchTTest(a, b)
	if err != nil {
		t.Fatal(err)
	}
	big := func(xs []float64) []float64 {
		out := make([]float64, len(xs))
		for i, x := range xs {
			out[i] = x * 1e300
		}
		return out
	}
	got, err := WelchTTest(big(a), big(b))
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got.Statistic-want.Statistic) > 1e-9*math.Abs(want.Statistic) || math.Abs(got.PValue-want.PValue) > 1e-9 ||
		math.Abs(got.DF-want.DF) > 1e-9*want.DF {
		t.Errorf("huge: %+v, want %+v", got, want)
	}
}
