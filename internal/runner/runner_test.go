package runner

// The runner is tested against a scripted platform and the real drivers' parsers fed with
// real captured tool outputs (internal/driver/*/testdata/captured). A fake platform is used
// because what is under test is the runner's reaction to faults at exact moments — the
// second of three samples refused by a busy server, a sample that hangs until its timeout, a
// Ctrl-C between two samples or in the middle of one — and no real server can be made to
// fail at a chosen sample deterministically. Hanging and interrupted samples run a real
// process (sleep) through the local platform's executor, so the kill on timeout and on
// cancellation, and the errors it reports, are the real ones.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/driver/iperf3"
	"github.com/cnperf/cnperf/internal/driver/qperf"
	"github.com/cnperf/cnperf/internal/driver/toolkit/fixture"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/platform"
	"github.com/cnperf/cnperf/internal/platform/local"
)

// step is what one Exec call of the scripted client does.
type step func(t *testing.T, ctx context.Context, cmd driver.Command) driver.Output

// replay answers with a real captured output of the tool.
func replay(tool, name string) step {
	return func(t *testing.T, _ context.Context, cmd driver.Command) driver.Output {
		f := fixture.Load(t, filepath.Join("..", "driver", tool, "testdata", "captured"), name)
		o := f.Output()
		o.Argv = cmd.Argv
		o.StartTime, o.EndTime = time.Now(), time.Now()
		return o
	}
}

// hang runs a real process that outlives any sample; the executor kills it when cmd.Timeout
// passes or ctx ends, as the local and kube platforms do.
func hang() step {
	return func(t *testing.T, ctx context.Context, cmd driver.Command) driver.Output {
		o := local.Exec(ctx, []string{"sleep", "30"}, nil, cmd.Timeout, nil)
		o.Argv = cmd.Argv
		return o
	}
}

// interruptDuring cancels the run while the sample's process runs.
func interruptDuring(cancel context.CancelFunc) step {
	return func(t *testing.T, ctx context.Context, cmd driver.Command) driver.Output {
		time.AfterFunc(50*time.Millisecond, cancel)
		return hang()(t, ctx, cmd)
	}
}

// script is a platform whose client runs the steps in order, one per Exec call, and
// records the commands it was given.
type script struct {
	t        *testing.T
	mu       sync.Mutex
	steps    []step
	calls    []driver.Command
	pairErr  map[int]error // case index → placement error
	pairHook func(c plan.Case)
	explain  func(context.Context, error) string
}

func (s *script) Name() string { return "script" }
func (s *script) Prepare(context.Context, []plan.Case, map[string]driver.Driver) error {
	return nil
}
func (s *script) Close(context.Context) error { return nil }

func (s *script) Pair(_ context.Context, c plan.Case) (*platform.Pair, error) {
	if s.pairHook != nil {
		s.pairHook(c)
	}
	if err := s.pairErr[c.Index]; err != nil {
		return nil, err
	}
	return &platform.Pair{Client: s, Target: driver.Target{Host: "127.0.0.1"},
		Placement: &api.Placement{Target: "127.0.0.1"}, Explain: s.explain}, nil
}

func (s *script) Exec(ctx context.Context, cmd driver.Command) driver.Output {
	s.mu.Lock()
	s.calls = append(s.calls, cmd)
	if len(s.steps) == 0 {
		s.mu.Unlock()
		s.t.Errorf("unexpected command %q: the script is exhausted", cmd.Argv)
		return driver.Output{Argv: cmd.Argv, Err: errors.New("script exhausted")}
	}
	st := s.steps[0]
	s.steps = s.steps[1:]
	s.mu.Unlock()
	return st(s.t, ctx, cmd)
}

// events records what the runner reported.
type events struct {
	mu      sync.Mutex
	log     []string
	onDone  func(s api.Sample)
	results []api.Result
}

func (e *events) CaseStarted(i, n int, c plan.Case, _ time.Duration) {
	e.add(fmt.Sprintf("case %d/%d %s", i+1, n, c.Profile))
}
func (e *events) SampleDone(_ plan.Case, s api.Sample) {
	e.add(fmt.Sprintf("sample %d err=%t", s.Index, s.Error != ""))
	if e.onDone != nil {
		e.onDone(s)
	}
}
func (e *events) CaseDone(i, _ int, r api.Result) { e.add(fmt.Sprintf("done %d", i+1)) }
func (e *events) add(s string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.log = append(e.log, s)
}

func newRunner(p *script, ev *events) *Runner {
	return &Runner{
		Platform: p,
		Drivers:  map[string]driver.Driver{iperf3.Name: iperf3.Driver{}, qperf.Name: qperf.Driver{}},
		Progress: ev,
		OnResult: func(r api.Result) error { ev.results = append(ev.results, r); return nil },
	}
}

func iperfCase(i, samples int, mut ...func(*api.Params)) plan.Case {
	c := plan.Case{Index: i, Profile: api.TCPStream, Driver: iperf3.Name, Path: api.PathLoopback,
		Params: api.Params{DurationSeconds: 1, Samples: samples, Parallel: 1, MessageSizeBytes: 131072}}
	for _, m := range mut {
		m(&c.Params)
	}
	return c
}

func qperfCase(i, samples int, mut ...func(*api.Params)) plan.Case {
	c := plan.Case{Index: i, Profile: api.TCPStream, Driver: qperf.Name, Path: api.PathLoopback,
		Params: api.Params{DurationSeconds: 1, Samples: samples, Parallel: 1, MessageSizeBytes: 1024}}
	for _, m := range mut {
		m(&c.Params)
	}
	return c
}

// tcp_stream.stdout, end.sum_received.bits_per_second (see the iperf3 driver's TestHandVerified).
const iperfStreamBps = 8472799261.412807

// tcp_bw_m1024.stdout and tcp_bw_m64.stdout, "bw" in bytes/sec times 8.
func qperfBps(t *testing.T, name string) float64 {
	t.Helper()
	f := fixture.Load(t, filepath.Join("..", "driver", "qperf", "testdata", "captured"), name)
	s, err := fixture.Parse(qperf.Driver{}, qperfCase(0, 1), []driver.Output{f.Output()})
	if err != nil {
		t.Fatal(err)
	}
	return *s.ThroughputBitsPerSecond
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

func TestRetriesRefusedSamples(t *testing.T) {
	busy, ok := replay("iperf3", "busy"), replay("iperf3", "tcp_stream")
	tests := []struct {
		name      string
		steps     []step
		wantCalls int
		wantErr   string // the sample's error; "" = measured
	}{
		{name: "refused twice, then measured", steps: []step{busy, busy, ok}, wantCalls: 3},
		{name: "refused on every attempt", steps: repeat(busy, maxRetries+1), wantCalls: maxRetries + 1,
			wantErr: "iperf3: the server is busy running a test. try again later"},
		// Connection refused is not a momentary refusal: one attempt, the cause kept.
		{name: "connection refused is not retried", steps: []step{replay("iperf3", "refused")}, wantCalls: 1,
			wantErr: "unable to connect to server: Connection refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &script{t: t, steps: tt.steps}
			ev := &events{}
			res, err := newRunner(p, ev).Run(context.Background(), []plan.Case{iperfCase(0, 1)})
			if err != nil {
				t.Fatal(err)
			}
			if len(p.calls) != tt.wantCalls {
				t.Errorf("%d attempts, want %d", len(p.calls), tt.wantCalls)
			}
			if len(res) != 1 || len(res[0].Samples) != 1 {
				t.Fatalf("results %+v", res)
			}
			s := res[0].Samples[0]
			if tt.wantErr == "" {
				if s.Error != "" || s.ThroughputBitsPerSecond == nil || !near(*s.ThroughputBitsPerSecond, iperfStreamBps) {
					t.Errorf("sample %+v, want the tcp_stream capture's %v bit/s", s, iperfStreamBps)
				}
				return
			}
			if !strings.Contains(s.Error, tt.wantErr) || s.ThroughputBitsPerSecond != nil {
				t.Errorf("sample error %q (throughput %v), want %q and no figure", s.Error, s.ThroughputBitsPerSecond, tt.wantErr)
			}
			if !strings.Contains(res[0].Error, "all 1 samples failed") {
				t.Errorf("case error %q", res[0].Error)
			}
		})
	}
}

func repeat(s step, n int) []step {
	out := make([]step, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// TestSampleTimeout: a client that never ends is killed at the case's timeout; the sample
// fails with that cause, the next sample runs, and the next case runs.
func TestSampleTimeout(t *testing.T) {
	ok := replay("iperf3", "tcp_stream")
	p := &script{t: t, steps: []step{hang(), ok, ok}}
	ev := &events{}
	c := iperfCase(0, 2, func(p *api.Params) { p.TimeoutSeconds = 0.3 })
	start := time.Now()
	res, err := newRunner(p, ev).Run(context.Background(), []plan.Case{c, iperfCase(1, 1)})
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("the hung sample was not cut at its 300ms timeout (run took %s)", el)
	}
	if p.calls[0].Timeout != 300*time.Millisecond {
		t.Errorf("command timeout %s, want the case's 300ms", p.calls[0].Timeout)
	}
	if len(res) != 2 {
		t.Fatalf("%d results", len(res))
	}
	s := res[0].Samples[0]
	if !strings.Contains(s.Error, "did not finish within 300ms and was killed") || s.ThroughputBitsPerSecond != nil {
		t.Errorf("timed-out sample: error %q, throughput %v", s.Error, s.ThroughputBitsPerSecond)
	}
	if res[0].Samples[1].Error != "" || res[0].Error != "" {
		t.Errorf("the sample after the timeout did not run: %+v", res[0])
	}
	if res[1].Error != "" || len(res[1].Samples) != 1 {
		t.Errorf("next case: %+v", res[1])
	}
	// The default timeout is the duration plus warm-up plus 30 s.
	q := &script{t: t, steps: []step{ok}}
	if _, err := newRunner(q, &events{}).Run(context.Background(), []plan.Case{iperfCase(0, 1, func(p *api.Params) { p.DurationSeconds = 5; p.WarmupSeconds = 2 })}); err != nil {
		t.Fatal(err)
	}
	if q.calls[0].Timeout != 37*time.Second {
		t.Errorf("default timeout %s, want 37s", q.calls[0].Timeout)
	}
}

// TestWarmupExcluded: a driver that cannot exclude warm-up itself (qperf) gets a separate
// run of the warm-up length first, whose figures appear nowhere; a failed warm-up is a note,
// not a failed sample. A driver that can (iperf3 -O) gets no separate run.
func TestWarmupExcluded(t *testing.T) {
	warm, meas := replay("qperf", "tcp_bw_m64"), replay("qperf", "tcp_bw_m1024")
	want := qperfBps(t, "tcp_bw_m1024")
	if near(want, qperfBps(t, "tcp_bw_m64")) {
		t.Fatal("the two captures must differ for this test to mean anything")
	}
	t.Run("separate warm-up run", func(t *testing.T) {
		p := &script{t: t, steps: []step{warm, meas, meas}}
		res, err := newRunner(p, &events{}).Run(context.Background(), []plan.Case{qperfCase(0, 2, func(p *api.Params) { p.WarmupSeconds = 2; p.DurationSeconds = 5 })})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.calls) != 3 {
			t.Fatalf("%d commands, want warm-up + 2 samples", len(p.calls))
		}
		if a := strings.Join(p.calls[0].Argv, " "); !strings.Contains(a, " -t 2 ") {
			t.Errorf("warm-up argv %q does not run for the warm-up time", a)
		}
		if a := strings.Join(p.calls[1].Argv, " "); !strings.Contains(a, " -t 5 ") {
			t.Errorf("sample argv %q does not run for the duration", a)
		}
		if p.calls[0].Timeout != 32*time.Second {
			t.Errorf("warm-up timeout %s, want warm-up + 30s", p.calls[0].Timeout)
		}
		r := res[0]
		if len(r.Samples) != 2 {
			t.Fatalf("%d samples, want 2 (the warm-up is not one)", len(r.Samples))
		}
		for i, s := range r.Samples {
			if s.Warmup || s.Index != i || s.Error != "" || !near(*s.ThroughputBitsPerSecond, want) {
				t.Errorf("sample %d: %+v", i, s)
			}
		}
		if st := r.Summary.ThroughputBitsPerSecond; st == nil || st.N != 2 || !near(st.Mean, want) || !near(st.Min, want) {
			t.Errorf("summary %+v includes the warm-up", st)
		}
	})
	t.Run("failed warm-up is a note", func(t *testing.T) {
		p := &script{t: t, steps: []step{replay("qperf", "refused"), meas}}
		res, err := newRunner(p, &events{}).Run(context.Background(), []plan.Case{qperfCase(0, 1, func(p *api.Params) { p.WarmupSeconds = 1 })})
		if err != nil {
			t.Fatal(err)
		}
		r := res[0]
		if r.Error != "" || len(r.Samples) != 1 || r.Samples[0].Error != "" || r.Summary.SamplesFailed != 0 {
			t.Errorf("result %+v", r)
		}
		if len(r.Notes) != 1 || !strings.HasPrefix(r.Notes[0], "warm-up failed: ") || !strings.Contains(r.Notes[0], "failed to connect") {
			t.Errorf("notes %q", r.Notes)
		}
	})
	t.Run("inline warm-up", func(t *testing.T) {
		p := &script{t: t, steps: []step{replay("iperf3", "tcp_stream")}}
		if _, err := newRunner(p, &events{}).Run(context.Background(), []plan.Case{iperfCase(0, 1, func(p *api.Params) { p.WarmupSeconds = 1 })}); err != nil {
			t.Fatal(err)
		}
		if len(p.calls) != 1 || !strings.Contains(strings.Join(p.calls[0].Argv, " "), " -O 1") {
			t.Errorf("commands %+v, want one iperf3 run with -O 1", p.calls)
		}
	})
}

// TestFailedSampleAccounting: failed samples are kept with their cause and no figure, are
// counted, and stay out of the statistics; a case whose every sample failed, or whose
// endpoints could not be placed, is recorded with the cause and the run goes on.
func TestFailedSampleAccounting(t *testing.T) {
	ok, refused := replay("iperf3", "tcp_stream"), replay("iperf3", "refused")
	garbage, truncated := replay("iperf3", "garbage"), replay("iperf3", "truncated")
	p := &script{t: t, steps: []step{ok, refused, garbage, ok, refused, truncated},
		pairErr: map[int]error{2: errors.New("no node fits the server pod")}}
	ev := &events{}
	cases := []plan.Case{iperfCase(0, 4), iperfCase(1, 2), iperfCase(2, 1), iperfCase(3, 1, func(p *api.Params) {})}
	cases[3].Driver = "nosuch"
	res, err := newRunner(p, ev).Run(context.Background(), cases)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 4 || len(ev.results) != 4 {
		t.Fatalf("%d results, %d recorded; want every case", len(res), len(ev.results))
	}
	r := res[0]
	if r.Error != "" || r.Summary.SamplesTotal != 4 || r.Summary.SamplesFailed != 2 {
		t.Errorf("case 1: error %q, %d/%d failed", r.Error, r.Summary.SamplesFailed, r.Summary.SamplesTotal)
	}
	for i, s := range r.Samples {
		failed := i == 1 || i == 2
		if s.Index != i || (s.Error != "") != failed || (s.ThroughputBitsPerSecond == nil) != failed {
			t.Errorf("case 1 sample %d: error %q throughput %v", i, s.Error, s.ThroughputBitsPerSecond)
		}
	}
	// A failed sample keeps what the tool printed (the refused capture's JSON error, its
	// garbage), as a successful one keeps its output.
	if raw := r.Samples[1].Raw; !strings.HasPrefix(raw, "--- stdout ---\n") || !strings.Contains(raw, "Connection refused") {
		t.Errorf("failed sample's raw output: %q", raw)
	}
	if raw := r.Samples[2].Raw; !strings.Contains(raw, "not a report at all") {
		t.Errorf("garbage sample's raw output: %q", raw)
	}
	if st := r.Summary.ThroughputBitsPerSecond; st == nil || st.N != 2 || !near(st.Mean, iperfStreamBps) {
		t.Errorf("case 1 summary %+v: the failed samples must not count", st)
	}
	if r := res[1]; r.Summary.SamplesFailed != 2 || r.Summary.ThroughputBitsPerSecond != nil ||
		!strings.HasPrefix(r.Error, "all 2 samples failed; first: ") || !strings.Contains(r.Error, "Connection refused") {
		t.Errorf("case 2: error %q, summary %+v", r.Error, r.Summary)
	}
	if r := res[2]; r.Error != "place endpoints: no node fits the server pod" || len(r.Samples) != 0 {
		t.Errorf("case 3: error %q, %d samples", r.Error, len(r.Samples))
	}
	if r := res[3]; r.Error != `driver "nosuch" is not loaded` {
		t.Errorf("case 4: error %q", r.Error)
	}
	if got := strings.Join(ev.log, ", "); got != "case 1/4 TCP_STREAM, sample 0 err=false, sample 1 err=true, sample 2 err=true, sample 3 err=false, done 1, "+
		"case 2/4 TCP_STREAM, sample 0 err=true, sample 1 err=true, done 2, case 3/4 TCP_STREAM, done 3, case 4/4 TCP_STREAM, done 4" {
		t.Errorf("progress: %s", got)
	}
}

// TestExecErrorKept: when a tool is killed, the parse error and the execution error both
// reach the sample.
func TestFailedRawIsCapped(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 3*MaxRawBytes)
	big = append(big, "Error saying goodbye with 127.0.0.1\n"...)
	raw := failedRaw([]driver.Output{
		{Argv: []string{"uperf", "-m"}, Stdout: big, Stderr: []byte("double free")},
		{Argv: []string{"netperf"}, Stderr: []byte("establish control: refused\n")},
	})
	if len(raw) > MaxRawBytes*2 || !strings.Contains(raw, "Error saying goodbye") || !strings.Contains(raw, "bytes cut") ||
		!strings.Contains(raw, "command 1 (uperf -m) stderr ---\ndouble free\n") || !strings.Contains(raw, "command 2 (netperf) stderr") {
		t.Errorf("%d bytes: %q", len(raw), raw[len(raw)-300:])
	}
}

func TestExecErrorKept(t *testing.T) {
	p := &script{t: t, steps: []step{hang()}}
	res, err := newRunner(p, &events{}).Run(context.Background(), []plan.Case{iperfCase(0, 1, func(p *api.Params) { p.TimeoutSeconds = 0.2 })})
	if err != nil {
		t.Fatal(err)
	}
	e := res[0].Samples[0].Error
	if !strings.Contains(e, "iperf3") || !strings.Contains(e, "did not finish within 200ms") {
		t.Errorf("error %q lacks the parse or the execution cause", e)
	}
}

// TestFailureExplained: the platform's look at the endpoints after a failed sample is added
// to the sample's error (with the error it was given); a successful sample asks nothing.
func TestFailureExplained(t *testing.T) {
	var asked []string
	p := &script{t: t, steps: []step{hang(), replay("iperf3", "tcp_stream")},
		explain: func(_ context.Context, err error) string {
			asked = append(asked, err.Error())
			return "server pod ns/srv is gone: it was deleted"
		}}
	res, err := newRunner(p, &events{}).Run(context.Background(), []plan.Case{iperfCase(0, 2, func(p *api.Params) { p.TimeoutSeconds = 0.2 })})
	if err != nil {
		t.Fatal(err)
	}
	s := res[0].Samples
	if len(s) != 2 || !strings.HasSuffix(s[0].Error, "did not finish within 200ms and was killed; exit code -1 (output: iperf3 printed nothing on stdout) (server pod ns/srv is gone: it was deleted)") || s[1].Error != "" {
		t.Fatalf("errors %q, %q", s[0].Error, s[1].Error)
	}
	if len(asked) != 1 || !strings.Contains(asked[0], "did not finish within 200ms") {
		t.Errorf("explain was asked %q", asked)
	}
}

// TestInterruption: a Ctrl-C between samples or during one keeps the samples finished so
// far (the case is recorded, marked interrupted), loses nothing recorded before, and runs
// nothing after; a case interrupted before its first sample is not recorded.
func TestInterruption(t *testing.T) {
	ok := replay("iperf3", "tcp_stream")
	t.Run("between samples", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		p := &script{t: t, steps: []step{ok, ok, ok}}
		ev := &events{}
		n := 0
		ev.onDone = func(api.Sample) {
			if n++; n == 3 { // the first case's only sample, then the second's first
				cancel()
			}
		}
		res, err := newRunner(p, ev).Run(ctx, []plan.Case{iperfCase(0, 1), iperfCase(1, 3), iperfCase(2, 1)})
		if !errors.Is(err, ErrInterrupted) {
			t.Fatalf("err %v, want ErrInterrupted", err)
		}
		if len(res) != 2 || len(ev.results) != 2 {
			t.Fatalf("%d results, %d recorded; want the finished case and the interrupted one", len(res), len(ev.results))
		}
		if res[0].Error != "" || len(res[0].Samples) != 1 {
			t.Errorf("finished case changed: %+v", res[0])
		}
		r := res[1]
		if r.Error != "interrupted after 2 of 3 samples" || len(r.Samples) != 2 || r.Summary.SamplesTotal != 2 || r.Summary.SamplesFailed != 0 {
			t.Errorf("interrupted case: error %q, %d samples, summary %d/%d", r.Error, len(r.Samples), r.Summary.SamplesFailed, r.Summary.SamplesTotal)
		}
		if len(p.calls) != 3 {
			t.Errorf("%d commands ran after the interruption", len(p.calls)-3)
		}
	})
	t.Run("during a sample", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		p := &script{t: t, steps: []step{ok, interruptDuring(cancel)}}
		ev := &events{}
		start := time.Now()
		res, err := newRunner(p, ev).Run(ctx, []plan.Case{iperfCase(0, 3), iperfCase(1, 1)})
		if !errors.Is(err, ErrInterrupted) {
			t.Fatalf("err %v", err)
		}
		if el := time.Since(start); el > 10*time.Second {
			t.Errorf("the running sample was not stopped at once (%s)", el)
		}
		if len(res) != 1 || len(ev.results) != 1 {
			t.Fatalf("%d results", len(res))
		}
		r := res[0]
		// The cut sample measured nothing: it is dropped, not recorded as a failure.
		if r.Error != "interrupted after 1 of 3 samples" || len(r.Samples) != 1 || r.Samples[0].Error != "" || r.Summary.SamplesFailed != 0 {
			t.Errorf("interrupted case: error %q, samples %+v", r.Error, r.Samples)
		}
	})
	t.Run("before the first sample", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		p := &script{t: t, steps: []step{ok}}
		p.pairHook = func(c plan.Case) {
			if c.Index == 1 {
				cancel()
			}
		}
		ev := &events{}
		res, err := newRunner(p, ev).Run(ctx, []plan.Case{iperfCase(0, 1), iperfCase(1, 2), iperfCase(2, 1)})
		if !errors.Is(err, ErrInterrupted) {
			t.Fatalf("err %v", err)
		}
		if len(res) != 1 || len(ev.results) != 1 || res[0].Error != "" {
			t.Errorf("results %+v; want only the finished first case", res)
		}
	})
	t.Run("before the run", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		p := &script{t: t}
		res, err := newRunner(p, &events{}).Run(ctx, []plan.Case{iperfCase(0, 1)})
		if !errors.Is(err, ErrInterrupted) || len(res) != 0 || len(p.calls) != 0 {
			t.Errorf("err %v, %d results, %d commands", err, len(res), len(p.calls))
		}
	})
}

// TestRecordErrorStops: when a finished case cannot be recorded (results file full), the run
// stops with that error instead of measuring cases it cannot keep.
func TestRecordErrorStops(t *testing.T) {
	ok := replay("iperf3", "tcp_stream")
	p := &script{t: t, steps: []step{ok}}
	r := newRunner(p, &events{})
	r.OnResult = func(api.Result) error { return errors.New("write results.jsonl: no space left on device") }
	res, err := r.Run(context.Background(), []plan.Case{iperfCase(0, 1), iperfCase(1, 1)})
	if err == nil || !strings.Contains(err.Error(), "record result of case 1") || !strings.Contains(err.Error(), "no space left") {
		t.Errorf("err %v", err)
	}
	if len(res) != 1 || len(p.calls) != 1 {
		t.Errorf("%d results, %d commands: the run went on", len(res), len(p.calls))
	}
}

// TestParallelFlows: the commands of one sample run at the same time and all their outputs
// reach the parser.
func TestParallelFlows(t *testing.T) {
	var mu sync.Mutex
	running, peak := 0, 0
	all := make(chan struct{})
	overlap := func(t *testing.T, ctx context.Context, cmd driver.Command) driver.Output {
		mu.Lock()
		running++
		if running > peak {
			peak = running
		}
		if running == 3 {
			close(all)
		}
		mu.Unlock()
		// Each command runs until all three have started: a fixed sleep would let a loaded
		// machine start the third after the first had ended. Commands run one after another
		// never get there, and the test fails after the wait.
		select {
		case <-all:
		case <-time.After(5 * time.Second):
		}
		mu.Lock()
		running--
		mu.Unlock()
		return driver.Output{Argv: cmd.Argv, Stdout: []byte(`{}`), StartTime: time.Now(), EndTime: time.Now()}
	}
	p := &script{t: t, steps: []step{overlap, overlap, overlap}}
	d := flows{n: 3}
	r := &Runner{Platform: p, Drivers: map[string]driver.Driver{"flows": d}}
	c := iperfCase(0, 1)
	c.Driver = "flows"
	res, err := r.Run(context.Background(), []plan.Case{c})
	if err != nil {
		t.Fatal(err)
	}
	if peak != 3 {
		t.Errorf("at most %d commands ran at once, want 3", peak)
	}
	if s := res[0].Samples[0]; s.Error != "" || *s.ThroughputBitsPerSecond != 3 {
		t.Errorf("sample %+v", s)
	}
}

// flows is a driver of n parallel client processes; its Parse counts the outputs it gets.
type flows struct{ n int }

func (flows) Name() string                        { return "flows" }
func (flows) Capabilities() driver.Capabilities   { return driver.Capabilities{Parallel: true} }
func (f flows) Job(plan.Case) (driver.Job, error) { return f, nil }
func (flows) Servers() []driver.Server            { return nil }
func (f flows) Client(driver.Target, bool) ([]driver.Command, error) {
	out := make([]driver.Command, f.n)
	for i := range out {
		out[i] = driver.Command{Argv: []string{"flow", fmt.Sprint(i)}}
	}
	return out, nil
}
func (flows) Parse(outs []driver.Output) (api.Sample, error) {
	v := float64(len(outs))
	return api.Sample{ThroughputBitsPerSecond: &v}, nil
}

// TestAbsurdFigureFailsTheSample (issue 28, finding 7): a tool that prints a rate of 1e300
// (the real iperf3 capture with its receiver rate edited, derived input) must not become a
// figure, which overflowed the statistics into NaN: the sample fails with the field and the
// reason, the other samples are summarised as usual.
func TestAbsurdFigureFailsTheSample(t *testing.T) {
	absurd := func(t *testing.T, ctx context.Context, cmd driver.Command) driver.Output {
		o := replay("iperf3", "tcp_stream")(t, ctx, cmd)
		o.Stdout = bytes.ReplaceAll(o.Stdout, []byte("8472799261.4128075"), []byte("1e300"))
		return o
	}
	p := &script{t: t, steps: []step{replay("iperf3", "tcp_stream"), absurd, replay("iperf3", "tcp_stream")}}
	res, err := newRunner(p, &events{}).Run(context.Background(), []plan.Case{iperfCase(0, 3)})
	if err != nil {
		t.Fatal(err)
	}
	r := res[0]
	if e := r.Samples[1].Error; !strings.Contains(e, "iperf3 output not believed: sample.throughputBitsPerSecond is 1e+300: beyond physical sense (more than 10 Tbit/s)") {
		t.Errorf("sample 2 error %q", e)
	}
	if st := r.Summary.ThroughputBitsPerSecond; st == nil || st.N != 2 || !near(st.Mean, iperfStreamBps) {
		t.Errorf("summary %+v", st)
	}
	if !strings.Contains(r.Samples[1].Raw, "1e300") {
		t.Errorf("the failed sample lost its raw output: %q", r.Samples[1].Raw)
	}
}
