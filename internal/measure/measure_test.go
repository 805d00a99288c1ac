package measure

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

// recorder builds units that log what ran, failing where asked.
type recorder struct {
	log  []string
	said []string
}

func (r *recorder) unit(name string, fail string, cancel context.CancelFunc) Unit {
	step := func(what string) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			r.log = append(r.log, what+" "+name)
			if what == "close" && ctx.Err() != nil {
				return errors.New("close got an ended context")
			}
			if what == "measure" && cancel != nil {
				cancel() // a Ctrl-C during the measurement
			}
			if fail == what {
				return errors.New(what + " " + name + " failed")
			}
			return nil
		}
	}
	return Unit{Prepare: step("prepare"), Measure: step("measure"), Close: step("close"),
		Leftovers: func() string { return name + " may be left" }}
}

func TestRun(t *testing.T) {
	tests := []struct {
		name      string
		fail      map[string]string // unit → step that fails
		interrupt bool
		wantLog   string
		wantErr   []string
		wantSaid  string
	}{
		{name: "all well", wantLog: "prepare a,prepare b,measure a,measure b,close b,close a"},
		{name: "second prepare fails: both closed, nothing measured", fail: map[string]string{"b": "prepare"},
			wantLog: "prepare a,prepare b,close b,close a", wantErr: []string{"prepare b failed"}},
		{name: "first prepare fails: the second never starts", fail: map[string]string{"a": "prepare"},
			wantLog: "prepare a,close a", wantErr: []string{"prepare a failed"}},
		{name: "measure and close fail: errors joined, leftovers said", fail: map[string]string{"a": "measure", "b": "close"},
			wantLog: "prepare a,prepare b,measure a,close b,close a", wantErr: []string{"measure a failed", "close b failed"},
			wantSaid: "cnperf: clean-up did not finish; b may be left"},
		{name: "interrupted: clean-up runs on a live context", interrupt: true,
			wantLog: "prepare a,prepare b,measure a,measure b,close b,close a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			r := &recorder{}
			var stop context.CancelFunc
			if tt.interrupt {
				stop = cancel
			}
			err := Run(ctx, Options{Say: func(_ context.Context, l string) { r.said = append(r.said, l) }},
				r.unit("a", tt.fail["a"], stop), r.unit("b", tt.fail["b"], nil))
			if got := strings.Join(r.log, ","); got != tt.wantLog {
				t.Errorf("ran %s, want %s", got, tt.wantLog)
			}
			var got []string
			for _, e := range Errors(err) {
				got = append(got, e.Error())
			}
			if strings.Join(got, "|") != strings.Join(tt.wantErr, "|") {
				t.Errorf("errors %q, want %q", got, tt.wantErr)
			}
			if strings.Join(r.said, "|") != tt.wantSaid {
				t.Errorf("said %q, want %q", r.said, tt.wantSaid)
			}
		})
	}
}

// Each phase's time goes to its own Timing field: set-up, measure and tear-down take at least
// 1, 4 and 16 steps, so a time in the wrong field is short of its step count or out of order.
func TestRunTiming(t *testing.T) {
	const step = 20 * time.Millisecond
	sleep := func(n int) func(context.Context) error {
		return func(context.Context) error { time.Sleep(time.Duration(n) * step); return nil }
	}
	timing := &api.Timing{}
	if err := Run(context.Background(), Options{Timing: timing},
		Unit{Prepare: sleep(1), Measure: sleep(4), Close: sleep(16)}); err != nil {
		t.Fatal(err)
	}
	s := step.Seconds()
	if timing.SetupSeconds < s || timing.MeasureSeconds < 4*s || timing.TeardownSeconds < 16*s ||
		timing.SetupSeconds >= timing.MeasureSeconds || timing.MeasureSeconds >= timing.TeardownSeconds {
		t.Errorf("timing %+v, want at least %.2fs, %.2fs and %.2fs, in that order", timing, s, 4*s, 16*s)
	}
}

type key struct{}

func TestCleanup(t *testing.T) {
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
	cancel()
	cctx, ccancel := Cleanup(ctx, 0)
	defer ccancel()
	if cctx.Err() != nil || cctx.Value(key{}) != "v" {
		t.Fatalf("clean-up context ended with the run's (%v) or lost its values", cctx.Err())
	}
	if d, ok := cctx.Deadline(); !ok || time.Until(d) > CleanupTimeout || time.Until(d) < CleanupTimeout-time.Minute {
		t.Errorf("deadline %v, want CleanupTimeout from now", d)
	}
}
