package plan

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// ParseDuration parses a plan duration: a Go duration ("10s", "1m", "1m30s", "500ms") or a
// plain number of seconds ("10", "2.5") as k8s-netperf and tiger-bench write them. It does not
// judge the sign or the length; validation does. A well-formed duration too long for a
// time.Duration (about 292 years) returns an error wrapping ErrDurationOverflow.
func ParseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("empty duration")
	}
	if f, err := strconv.ParseFloat(t, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		if math.IsNaN(f) {
			return 0, fmt.Errorf("%q is not a duration", s)
		}
		if math.IsInf(f, 0) || math.Abs(f) > float64(math.MaxInt64/int64(time.Second)) {
			return 0, fmt.Errorf("%q: %w", s, ErrDurationOverflow)
		}
		return time.Duration(f * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(t)
	if err != nil {
		if durationGrammar.MatchString(t) {
			return 0, fmt.Errorf("%q: %w", s, ErrDurationOverflow)
		}
		return 0, fmt.Errorf("%q is not a duration (use e.g. 10s, 1m30s, or a number of seconds)", s)
	}
	return d, nil
}

// ErrDurationOverflow is a duration written correctly but too long to represent; validation
// reports it as "too long (at most …)" with the field's limit.
var ErrDurationOverflow = errors.New("duration too long")

// durationGrammar is time.ParseDuration's syntax: what it refuses while this matches overflowed.
var durationGrammar = regexp.MustCompile(`^[-+]?([0-9]*(\.[0-9]*)?(ns|us|µs|μs|ms|s|m|h))+$`)

// ParseRate parses a bit rate in bits per second: a number with an optional decimal
// multiplier k, M, G or T (case-insensitive, powers of 1000, as iperf3's -b), optionally
// followed by "bit/s", "bps" or "bit": "10k", "500M", "1.5G", "1Gbit/s", "100000". "0" means
// unlimited.
func ParseRate(s string) (float64, error) {
	t := strings.TrimSpace(s)
	for _, unit := range []string{"bit/s", "bps", "bit"} {
		if len(t) > len(unit) && strings.EqualFold(t[len(t)-len(unit):], unit) {
			t = t[:len(t)-len(unit)]
			break
		}
	}
	mult := 1.0
	if t != "" {
		switch t[len(t)-1] {
		case 'k', 'K':
			mult = 1e3
		case 'm', 'M':
			mult = 1e6
		case 'g', 'G':
			mult = 1e9
		case 't', 'T':
			mult = 1e12
		}
		if mult != 1 {
			t = t[:len(t)-1]
		}
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || strings.ContainsAny(t, "xXpP_") {
		return 0, fmt.Errorf("%q is not a rate (use e.g. 10k, 500M, 1G: bits per second)", s)
	}
	if f < 0 {
		return 0, fmt.Errorf("rate %q is negative", s)
	}
	return f * mult, nil
}

// ParseSize parses a size in bytes: an integer with an optional binary multiplier k/K/KiB
// (1024), m/M/MiB (1048576) or g/G/GiB, as iperf3's -l: "1024", "64k", "1M", "128KiB".
func ParseSize(s string) (int, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	low := strings.ToLower(t)
	for _, suf := range []struct {
		s string
		m int64
	}{{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}} {
		if strings.HasSuffix(low, suf.s) && len(low) > len(suf.s) {
			mult = suf.m
			t = t[:len(t)-len(suf.s)]
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(t), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a size in bytes (use e.g. 1024, 64k, 1M)", s)
	}
	if n > math.MaxInt32/mult || n < math.MinInt32/mult {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return int(n * mult), nil
}
