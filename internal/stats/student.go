package stats

import (
	"math"
)

// StudentTCDF returns P(T ≤ t) for Student's t distribution with df degrees of freedom
// (df > 0, not necessarily an integer, as Welch's test needs). It returns NaN for df ≤ 0.
func StudentTCDF(t, df float64) float64 {
	if !(df > 0) || math.IsNaN(t) {
		return math.NaN()
	}
	if math.IsInf(t, 1) {
		return 1
	}
	if math.IsInf(t, -1) {
		return 0
	}
	if math.IsInf(df, 1) {
		return normalCDF(t)
	}
	// P(|T| > |t|) = I_x(df/2, 1/2) with x = df / (df + t²).
	x := df / (df + t*t)
	tail := 0.5 * RegIncBeta(df/2, 0.5, x)
	if t > 0 {
		return 1 - tail
	}
	return tail
}

// StudentTQuantile returns the t such that StudentTCDF(t, df) = p, for 0 < p < 1 and df > 0.
// It inverts the CDF numerically (bracketing, then bisection to full float64 precision), so it
// is accurate for any df, including the fractional df of Welch's test. Out-of-range
// arguments give NaN; p = 0 and p = 1 give ∓Inf.
func StudentTQuantile(p, df float64) float64 {
	switch {
	case !(df > 0) || math.IsNaN(p) || p < 0 || p > 1:
		return math.NaN()
	case p == 0:
		return math.Inf(-1)
	case p == 1:
		return math.Inf(1)
	case p == 0.5:
		return 0
	case p < 0.5:
		return -StudentTQuantile(1-p, df)
	}
	if math.IsInf(df, 1) {
		return normalQuantile(p)
	}
	// Bracket the root in [lo, hi] with lo ≥ 0 (p > 0.5 so t > 0).
	lo, hi := 0.0, 1.0
	for StudentTCDF(hi, df) < p {
		lo = hi
		hi *= 2
		if hi > 1e300 {
			return math.Inf(1)
		}
	}
	for i := 0; i < 2000; i++ {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if StudentTCDF(mid, df) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo + (hi-lo)/2
}

// normalCDF is the standard normal distribution function.
func normalCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// normalQuantile is the inverse of normalCDF.
func normalQuantile(p float64) float64 { return -math.Sqrt2 * math.Erfcinv(2*p) }

// RegIncBeta is the regularised incomplete beta function I_x(a, b) for a, b > 0 and
// 0 ≤ x ≤ 1, evaluated with the continued fraction of Abramowitz & Stegun 26.5.8 (modified
// Lentz's method), using the symmetry I_x(a,b) = 1 − I_{1−x}(b,a) where it converges faster.
func RegIncBeta(a, b, x float64) float64 {
	switch {
	case !(a > 0) || !(b > 0) || math.IsNaN(x) || x < 0 || x > 1:
		return math.NaN()
	case x == 0:
		return 0
	case x == 1:
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	// front = x^a (1-x)^b / B(a,b)
	front := math.Exp(lab - la - lb + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaContinuedFraction(a, b, x) / a
	}
	return 1 - front*betaContinuedFraction(b, a, 1-x)/b
}

// betaContinuedFraction evaluates the continued fraction for I_x(a,b) by the modified Lentz method.
func betaContinuedFraction(a, b, x float64) float64 {
	const (
		maxIter = 10000
		eps     = 1e-16
		tiny    = 1e-300
	)
	qab, qap, qam := a+b, a+1, a-1
	c := 1.0
	d := 1 - qab*x/qap
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	// step is one step of the modified Lentz method with coefficient aa: the factor for h.
	step := func(aa float64) float64 {
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		return d * c
	}
	for m := 1; m <= maxIter; m++ {
		fm := float64(m)
		m2 := 2 * fm
		h *= step(fm * (b - fm) * x / ((qam + m2) * (a + m2)))
		del := step(-(a + fm) * (qab + fm) * x / ((a + m2) * (qap + m2)))
		h *= del
		if math.Abs(del-1) < eps {
			break
		}
	}
	return h
}
