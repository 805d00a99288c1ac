package runner

// The sample attempt is tested with the scripted executor of runner_test.go (a fake: what is
// under test is the order of hook, execution, parse and retry around refusals at chosen
// attempts, which no real server produces on demand) and the real iperf3 parser fed with
// real captured outputs. The real executors are covered by test/integration (local) and
// test/e2e (kube, mesh).

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/driver/iperf3"
)

// hookLog records, in order, the hook's calls and the executions between them.
type hookLog struct {
	mu  sync.Mutex
	log []string
}

func (h *hookLog) add(s string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.log = append(h.log, s)
}

// around is a Sampler.Around that logs its calls and adds a note to every measured sample.
func (h *hookLog) around(ctx context.Context, warmup bool) func(context.Context, *api.Sample) {
	h.add(fmt.Sprintf("begin warmup=%t", warmup))
	return func(_ context.Context, s *api.Sample) {
		if s == nil {
			h.add("end failed")
			return
		}
		h.add(fmt.Sprintf("end sample %d", s.Index))
		s.Notes = append(s.Notes, "hooked")
	}
}

// logged logs an execution before the step runs.
func (h *hookLog) logged(s step) step {
	return func(t *testing.T, ctx context.Context, cmd driver.Command) driver.Output {
		h.add("exec")
		return s(t, ctx, cmd)
	}
}

func TestSampler(t *testing.T) {
	ok, busy, refused := replay("iperf3", "tcp_stream"), replay("iperf3", "busy"), replay("iperf3", "refused")
	tests := []struct {
		name    string
		driver  driver.Driver
		steps   []step
		index   int
		warmup  bool
		wantLog []string
		wantErr string // the sample's error; "" = measured
		wantRaw string // a piece of the raw output kept
	}{
		{name: "measured", driver: iperf3.Driver{}, steps: []step{ok}, index: 0,
			wantLog: []string{"begin warmup=false", "exec", "end sample 0"}, wantRaw: `"bits_per_second"`},
		{name: "warm-up", driver: iperf3.Driver{}, steps: []step{ok}, index: -1, warmup: true,
			wantLog: []string{"begin warmup=true", "exec", "end sample -1"}},
		{name: "refused twice, then measured: the hook runs around every attempt", driver: iperf3.Driver{},
			steps: []step{busy, busy, ok}, index: 2,
			wantLog: []string{"begin warmup=false", "exec", "end failed", "begin warmup=false", "exec", "end failed",
				"begin warmup=false", "exec", "end sample 2"}},
		{name: "failed: cause and raw output kept, nothing added", driver: iperf3.Driver{}, steps: []step{refused}, index: 1,
			wantLog: []string{"begin warmup=false", "exec", "end failed"},
			wantErr: "unable to connect to server: Connection refused", wantRaw: "--- stdout ---"},
		{name: "no client command: nothing runs", driver: flows{n: 0}, index: 0,
			wantErr: "driver flows built no client command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &hookLog{}
			var steps []step
			for _, s := range tt.steps {
				steps = append(steps, h.logged(s))
			}
			ex := &script{t: t, steps: steps}
			c := iperfCase(0, 3)
			c.Driver = tt.driver.Name()
			job, err := tt.driver.Job(c)
			if err != nil {
				t.Fatal(err)
			}
			sp := Sampler{Driver: tt.driver, Job: job, Exec: ex, Target: driver.Target{Host: "127.0.0.1"}, Around: h.around}
			got := sp.Sample(context.Background(), c, tt.index, tt.warmup)
			if strings.Join(h.log, "; ") != strings.Join(tt.wantLog, "; ") {
				t.Errorf("hook and executions:\n got %q\nwant %q", h.log, tt.wantLog)
			}
			if len(ex.steps) != 0 {
				t.Errorf("%d scripted executions left", len(ex.steps))
			}
			if got.Index != tt.index || got.Warmup != tt.warmup {
				t.Errorf("index %d warmup %t, want %d %t", got.Index, got.Warmup, tt.index, tt.warmup)
			}
			if got.StartTime.IsZero() || got.EndTime.Before(got.StartTime) {
				t.Errorf("times %v – %v", got.StartTime, got.EndTime)
			}
			if tt.wantErr != "" {
				if !strings.Contains(got.Error, tt.wantErr) || got.ThroughputBitsPerSecond != nil || len(got.Notes) != 0 {
					t.Errorf("sample %+v, want error %q, no figure, no notes", got.Sample, tt.wantErr)
				}
			} else {
				if got.Error != "" || got.ThroughputBitsPerSecond == nil || !near(*got.ThroughputBitsPerSecond, iperfStreamBps) {
					t.Errorf("sample %+v, want the tcp_stream capture's %v bit/s", got.Sample, iperfStreamBps)
				}
				if strings.Join(got.Notes, ",") != "hooked" {
					t.Errorf("notes %q, want the hook's", got.Notes)
				}
				if len(got.Commands) != 1 || got.Commands[0][0] != "iperf3" {
					t.Errorf("commands %q", got.Commands)
				}
			}
			if !strings.Contains(got.Raw, tt.wantRaw) {
				t.Errorf("raw %q lacks %q", got.Raw, tt.wantRaw)
			}
		})
	}
}

// TestSummarize: a case whose every sample failed says so with the first cause; one with a
// measured sample, or an error of its own, keeps its error.
func TestSummarize(t *testing.T) {
	v := 1e9
	failed := api.Sample{Error: "refused"}
	good := api.Sample{DurationSeconds: 1, ThroughputBitsPerSecond: &v}
	tests := []struct {
		name    string
		res     api.Result
		wantErr string
	}{
		{name: "all failed", res: api.Result{Samples: []api.Sample{failed, {Error: "timeout"}}}, wantErr: "all 2 samples failed; first: refused"},
		{name: "one measured", res: api.Result{Samples: []api.Sample{failed, good}}},
		{name: "no samples", res: api.Result{Samples: []api.Sample{}}},
		{name: "own error kept", res: api.Result{Error: "place endpoints: no node", Samples: []api.Sample{failed}}, wantErr: "place endpoints: no node"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			Summarize(&tt.res)
			if tt.res.Error != tt.wantErr {
				t.Errorf("error %q, want %q", tt.res.Error, tt.wantErr)
			}
			if tt.res.Summary.SamplesTotal != len(tt.res.Samples) {
				t.Errorf("summary counts %d samples of %d", tt.res.Summary.SamplesTotal, len(tt.res.Samples))
			}
		})
	}
}
