package span

import (
	"testing"
	"time"
)

func TestOf(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	type iv struct{ s, e time.Time }
	times := func(x iv) (time.Time, time.Time) { return x.s, x.e }
	for _, tc := range []struct {
		name       string
		in         []iv
		start, end time.Time
	}{
		{"none", nil, time.Time{}, time.Time{}},
		{"one", []iv{{at(1), at(2)}}, at(1), at(2)},
		{"unordered", []iv{{at(3), at(9)}, {at(1), at(4)}, {at(5), at(6)}}, at(1), at(9)},
		{"a zero start is not the earliest", []iv{{time.Time{}, at(4)}, {at(2), at(3)}}, at(2), at(4)},
	} {
		s, e := Of(tc.in, times)
		if !s.Equal(tc.start) || !e.Equal(tc.end) {
			t.Errorf("%s: Of = %v, %v; want %v, %v", tc.name, s, e, tc.start, tc.end)
		}
	}
}
