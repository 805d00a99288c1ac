package programming

import (
	"context"
	"testing"
	"time"
)

// TestMeasureFloor: changes with no latency, on this machine's loopback, measured by the real
// probe: every figure is measured, none is negative, the median is above 0 (the wait for the
// next attempt is the method's floor, not zero) and the figures stay near the probe interval
// (a busy machine may delay an attempt, not by a whole second). The report carries them.
func TestMeasureFloor(t *testing.T) {
	p := Params{Interval: 5 * time.Millisecond, AttemptTimeout: 500 * time.Millisecond, Confirm: 3, Settle: 10 * time.Second, Timeout: 10 * time.Second}
	const n = 12
	obs, err := MeasureFloor(context.Background(), n, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(obs) != n {
		t.Fatalf("%d observations, want %d", len(obs), n)
	}
	for i, o := range obs {
		if o.Seconds == nil || *o.Seconds < 0 || *o.Seconds > 1 {
			t.Errorf("change %d: %v (%q)", i, o.Seconds, o.Error)
		}
		t.Logf("change %d: %.3f ms %s", i, *o.Seconds*1e3, o.Note)
	}
	f := floor(obs, nil)
	if f.Changes != n || len(f.Percentiles) != 4 || f.Percentiles[0].Seconds <= 0 || f.MeanSeconds <= 0 || f.Error != "" {
		t.Errorf("floor %+v", f)
	}
	// interrupted: an error, never a figure of 0
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	obs, err = MeasureFloor(ctx, 3, p)
	if f := floor(obs, err); err == nil || f.Changes != 0 || f.Error != "interrupted" {
		t.Errorf("interrupted: %d observations, err %v, floor %+v", len(obs), err, f)
	}
}

// TestFloorChanges: a run's floor has as many changes as the run makes, and never fewer than
// MinFloorChanges (a median of 3 figures was 0 in 0.7 % of floors on a loaded machine).
func TestFloorChanges(t *testing.T) {
	for _, c := range []struct{ count, want int }{{1, 12}, {3, 12}, {12, 12}, {13, 13}, {50, 50}} {
		if got := FloorChanges(c.count); got != c.want {
			t.Errorf("FloorChanges(%d) = %d, want %d", c.count, got, c.want)
		}
	}
}
