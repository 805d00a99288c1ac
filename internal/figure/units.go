package figure

import (
	"math"
	"strconv"
)

// Unit prints values of one base unit scaled for people.
type Unit struct {
	// Base is the base unit's name as the JSON/CSV column carries it, e.g. "bit/s".
	Base string
	// Scales from largest to smallest; the first whose factor ≤ |value| is used.
	Scales []Scale
}

// Scale is one multiple of a base unit.
type Scale struct {
	Factor float64
	Name   string
}

// The units of cnperf's figures.
var (
	BitsPerSecond         = Unit{Base: "bit/s", Scales: []Scale{{1e12, "Tbit/s"}, {1e9, "Gbit/s"}, {1e6, "Mbit/s"}, {1e3, "kbit/s"}, {1, "bit/s"}}}
	PacketsPerSecond      = Unit{Base: "packets/s", Scales: []Scale{{1e6, "Mpps"}, {1e3, "kpps"}, {1, "pps"}}}
	TransactionsPerSecond = Unit{Base: "transactions/s", Scales: []Scale{{1e6, "M trans/s"}, {1e3, "k trans/s"}, {1, "trans/s"}}}
	ConnectionsPerSecond  = Unit{Base: "connections/s", Scales: []Scale{{1e6, "M conn/s"}, {1e3, "k conn/s"}, {1, "conn/s"}}}
	// Latency stays in microseconds at every size, so columns compare at a glance.
	Microseconds = Unit{Base: "µs", Scales: []Scale{{1, "µs"}}}
	Percent      = Unit{Base: "%", Scales: []Scale{{1, "%"}}}
	// Seconds scales to ms and µs: programming latencies span both.
	Seconds = Unit{Base: "s", Scales: []Scale{{1, "s"}, {1e-3, "ms"}, {1e-6, "µs"}}}
	Count   = Unit{Base: "", Scales: []Scale{{1, ""}}}
)

// Pick returns the scale for v.
func (u Unit) Pick(v float64) Scale {
	a := math.Abs(v)
	for _, s := range u.Scales {
		if a >= s.Factor {
			return s
		}
	}
	return u.Scales[len(u.Scales)-1]
}

// Number formats v (already scaled) with four significant digits, at most three decimals and
// none from 1000 up: 9.412, 94.12, 941.2, 9412.
func Number(v float64) string {
	return strconv.FormatFloat(v, 'f', decimals(v), 64)
}

// CountNumber formats a mean of counts: whole numbers without decimals, others with one.
func CountNumber(v float64) string {
	if v == math.Trunc(v) {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

func decimals(v float64) int {
	a := math.Abs(v)
	switch {
	case a == 0:
		return 0
	case a < 10:
		return 3
	case a < 100:
		return 2
	case a < 1000:
		return 1
	default:
		return 0
	}
}

// Format prints v in its best scale with its unit, e.g. "9.412 Gbit/s".
func (u Unit) Format(v float64) string {
	s := u.Pick(v)
	return join(Number(v/s.Factor), s.Name)
}

// FormatValue prints v in the given scale without the unit name.
func FormatValue(v float64, s Scale) string { return Number(v / s.Factor) }

// FormatIn prints a value and, when half > 0, "± half" in scale s with the value's precision,
// followed by the scale's name: "8.450 ± 0.020 Gbit/s".
func FormatIn(v, half float64, s Scale) string {
	x := v / s.Factor
	d := decimals(x)
	out := strconv.FormatFloat(x, 'f', d, 64)
	if half > 0 {
		out += " ± " + strconv.FormatFloat(half/s.Factor, 'f', d, 64)
	}
	return join(out, s.Name)
}

// FormatCI prints a mean and the half-width of its confidence interval in the mean's scale
// and precision, e.g. "9.412 ± 0.051 Gbit/s". A zero half-width prints no "±".
func (u Unit) FormatCI(mean, half float64) string { return FormatIn(mean, half, u.Pick(mean)) }

func join(num, unit string) string {
	switch unit {
	case "":
		return num
	case "%":
		return num + "%"
	}
	return num + " " + unit
}

// SignedPercent formats a ratio in percent with a sign, e.g. "+3.2%", "−12.0%", for changes.
func SignedPercent(p float64) string {
	if math.IsNaN(p) || math.IsInf(p, 0) {
		return "n/a"
	}
	s := strconv.FormatFloat(math.Abs(p), 'f', 1, 64)
	switch {
	case s == "0.0":
		return "±0.0%"
	case p < 0:
		return "−" + s + "%"
	}
	return "+" + s + "%"
}
