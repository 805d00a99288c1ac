package stats

import (
	"math"
	"testing"
)

func TestStudentTQuantileAgainstTables(t *testing.T) {
	// Two-sided 95% critical values t(0.975, df) from standard t tables (e.g. NIST/SEMATECH
	// e-Handbook 1.3.6.7.2), to 4 decimals; fractional df checked against SciPy's t.ppf.
	tests := []struct {
		p, df, want float64
	}{
		{0.975, 1, 12.7062},
		{0.975, 2, 4.3027},
		{0.975, 3, 3.1824},
		{0.975, 4, 2.7764},
		{0.975, 5, 2.5706},
		{0.975, 6, 2.4469},
		{0.975, 7, 2.3646},
		{0.975, 8, 2.3060},
		{0.975, 9, 2.2622},
		{0.975, 10, 2.2281},
		{0.975, 20, 2.0860},
		{0.975, 30, 2.0423},
		{0.975, 60, 2.0003},
		{0.975, 120, 1.9799},
		{0.975, 1000, 1.9623},
		{0.975, math.Inf(1), 1.9600},
		{0.975, 2.5, 3.5747},
		{0.975, 5.882, 2.4589},
		{0.995, 1, 63.6567},
		{0.95, 10, 1.8125},
		{0.025, 5, -2.5706},
		{0.5, 7, 0},
	}
	for _, tc := range tests {
		got := StudentTQuantile(tc.p, tc.df)
		if math.Abs(got-tc.want) > 0.5e-4 {
			t.Errorf("StudentTQuantile(%v, %v) = %.6f, want %.4f", tc.p, tc.df, got, tc.want)
		}
	}
}

func TestStudentTCDFClosedForms(t *testing.T) {
	// df = 1 is the Cauchy distribution: F(t) = 1/2 + atan(t)/π.
	// df = 2 has F(t) = 1/2 + t / (2·sqrt(2 + t²)).
	for _, x := range []float64{-30, -3, -1, -0.2, 0, 0.5, 1, 2.5, 12.706, 100} {
		if got, want := StudentTCDF(x, 1), 0.5+math.Atan(x)/math.Pi; math.Abs(got-want) > 1e-12 {
			t.Errorf("CDF(%v, 1) = %v, want %v", x, got, want)
		}
		if got, want := StudentTCDF(x, 2), 0.5+x/(2*math.Sqrt(2+x*x)); math.Abs(got-want) > 1e-12 {
			t.Errorf("CDF(%v, 2) = %v, want %v", x, got, want)
		}
	}
	// Other df against SciPy's t.cdf.
	if got := StudentTCDF(2, 3); math.Abs(got-0.9303370157) > 1e-9 {
		t.Errorf("CDF(2, 3) = %v", got)
	}
	if got := StudentTCDF(-1.5, 7.3); math.Abs(got-0.0877815464) > 1e-9 {
		t.Errorf("CDF(-1.5, 7.3) = %v", got)
	}
}

func TestStudentTQuantileInvertsCDF(t *testing.T) {
	for _, df := range []float64{1, 1.5, 3, 17, 250} {
		for _, p := range []float64{0.001, 0.1, 0.4, 0.6, 0.9, 0.975, 0.9999} {
			q := StudentTQuantile(p, df)
			if got := StudentTCDF(q, df); math.Abs(got-p) > 1e-10 {
				t.Errorf("CDF(Quantile(%v, %v)) = %v", p, df, got)
			}
		}
	}
}

func TestStudentBadArguments(t *testing.T) {
	for _, v := range []float64{
		StudentTQuantile(0.5, 0), StudentTQuantile(-0.1, 3), StudentTQuantile(1.1, 3),
		StudentTCDF(1, -1), RegIncBeta(0, 1, 0.5), RegIncBeta(1, 1, 2),
	} {
		if !math.IsNaN(v) {
			t.Errorf("want NaN, got %v", v)
		}
	}
	if !math.IsInf(StudentTQuantile(1, 3), 1) || !math.IsInf(StudentTQuantile(0, 3), -1) {
		t.Error("p = 0 / 1 should give -Inf / +Inf")
	}
}

func TestRegIncBetaKnownValues(t *testing.T) {
	// I_x(1, 1) = x; I_x(a, 1) = x^a; I_x(1, b) = 1 − (1−x)^b.
	for _, x := range []float64{0.01, 0.3, 0.5, 0.77, 0.999} {
		if got := RegIncBeta(1, 1, x); math.Abs(got-x) > 1e-13 {
			t.Errorf("I_%v(1,1) = %v", x, got)
		}
		if got, want := RegIncBeta(3.5, 1, x), math.Pow(x, 3.5); math.Abs(got-want) > 1e-13 {
			t.Errorf("I_%v(3.5,1) = %v, want %v", x, got, want)
		}
		if got, want := RegIncBeta(1, 4, x), 1-math.Pow(1-x, 4); math.Abs(got-want) > 1e-13 {
			t.Errorf("I_%v(1,4) = %v, want %v", x, got, want)
		}
	}
}
