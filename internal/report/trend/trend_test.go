package trend

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/stats"
	"github.com/cnperf/cnperf/internal/text"
)

func fp(v float64) *float64 { return &v }

var t0 = time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)

// stream is a TCP_STREAM result whose two samples average gbit Gbit/s; 0 makes a failed case.
func stream(gbit float64) api.Result {
	r := api.Result{Profile: api.TCPStream, Driver: "native", Path: api.PathLoopback,
		Params: api.Params{DurationSeconds: 10, Samples: 2, MessageSizeBytes: 131072, Parallel: 1}}
	if gbit == 0 {
		r.Samples = []api.Sample{{Index: 1, Error: "connect: connection refused"}}
		r.Error = "every sample failed"
	} else {
		r.Samples = []api.Sample{{Index: 1, ThroughputBitsPerSecond: fp(gbit*1e9 - 1e6)}, {Index: 2, ThroughputBitsPerSecond: fp(gbit*1e9 + 1e6)}}
	}
	r.Summary = stats.Summarize(r.Samples)
	return r
}

// rr is a TCP_RR result with a transaction rate and a latency p99 (µs).
func rr(tps, p99 float64) api.Result {
	r := api.Result{Profile: api.TCPRR, Driver: "native", Path: api.PathLoopback,
		Params:  api.Params{DurationSeconds: 10, Samples: 2, MessageSizeBytes: 1, Parallel: 1},
		Samples: []api.Sample{{Index: 1, TransactionsPerSecond: fp(tps)}, {Index: 2, TransactionsPerSecond: fp(tps)}}}
	r.Summary = stats.Summarize(r.Samples)
	r.Summary.LatencyMicroseconds = &api.Latency{P50: fp(p99 / 3), P99: fp(p99)}
	return r
}

// history makes one run per element of results, an hour apart, each in its own input named so
// that the inputs' order is not the runs' order.
func history(results ...[]api.Result) []Input {
	var in []Input
	for i := len(results) - 1; i >= 0; i-- {
		run := &api.Run{APIVersion: api.APIVersion, Kind: api.KindRun, UUID: fmt.Sprintf("run-%02d-uuid", i),
			StartTime: t0.Add(time.Duration(i) * time.Hour), Labels: map[string]string{"build": fmt.Sprint(100 + i)}, Results: results[i]}
		in = append(in, Input{Source: fmt.Sprintf("z%02d.jsonl", len(results)-i), Runs: []*api.Run{run}})
	}
	return in
}

func find(t *testing.T, h *History, figure string) Series {
	t.Helper()
	for _, s := range h.Series {
		if s.Figure == figure {
			return s
		}
	}
	t.Fatalf("no %s series in %+v", figure, h.Series)
	return Series{}
}

func TestAnalyze(t *testing.T) {
	var drop, flat, rise [][]api.Result
	for i := 0; i < 12; i++ {
		g := []float64{9.4, 9.6, 9.5, 9.3, 9.7, 9.5}[i%6]
		flat = append(flat, []api.Result{stream(g)})
		if i >= 7 {
			rise = append(rise, []api.Result{rr(20000, 60*g/9.5)})
			g *= 0.8
		} else {
			rise = append(rise, []api.Result{rr(20000, 40*g/9.5)})
		}
		drop = append(drop, []api.Result{stream(g)})
	}
	gapped := append(append(append([][]api.Result{}, drop[:3]...), []api.Result{stream(0)}), drop[3:]...)
	tests := []struct {
		name      string
		runs      [][]api.Result
		figure    string
		changes   []int // History.Runs indexes where changes start
		verdicts  []Verdict
		gaps      []int
		tooShort  bool
		changePct float64
	}{
		{"20% drop at run 7", drop, "throughputBitsPerSecond", []int{7}, []Verdict{Worse}, nil, false, -20},
		{"flat", flat, "throughputBitsPerSecond", []int{}, nil, nil, false, 0},
		{"latency p99 up 50% is worse", rise, "latencyMicroseconds.p99", []int{7}, []Verdict{Worse}, nil, false, 50},
		{"a failed run is a gap, not a zero", gapped, "throughputBitsPerSecond", []int{8}, []Verdict{Worse}, []int{3}, false, -20},
		{"too short", drop[:4], "throughputBitsPerSecond", []int{}, nil, nil, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := Analyze(history(tt.runs...), Options{})
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range h.Runs {
				if !r.StartTime.Equal(t0.Add(time.Duration(i) * time.Hour)) {
					t.Fatalf("run %d starts at %v: the history is not in start-time order", i, r.StartTime)
				}
			}
			s := find(t, h, tt.figure)
			var at []int
			var vs []Verdict
			for _, c := range s.Changes {
				at = append(at, c.Run)
				vs = append(vs, c.Verdict)
			}
			if at == nil {
				at = []int{}
			}
			if !reflect.DeepEqual(at, tt.changes) || !reflect.DeepEqual(vs, tt.verdicts) {
				t.Fatalf("changes at runs %v %v, want %v %v: %+v", at, vs, tt.changes, tt.verdicts, s.Changes)
			}
			var gaps []int
			for _, g := range s.Gaps {
				gaps = append(gaps, g.Run)
				if !strings.Contains(g.Cause, "connection refused") {
					t.Errorf("gap cause %q lacks the sample's error", g.Cause)
				}
			}
			if !reflect.DeepEqual(gaps, tt.gaps) {
				t.Errorf("gaps at %v, want %v", gaps, tt.gaps)
			}
			if (s.TooShort != "") != tt.tooShort {
				t.Errorf("too short: %q, want %v", s.TooShort, tt.tooShort)
			}
			for _, c := range s.Changes {
				if c.ChangePercent < tt.changePct-3 || c.ChangePercent > tt.changePct+3 {
					t.Errorf("change %+.1f%%, want about %+.0f%%", c.ChangePercent, tt.changePct)
				}
				if c.PreviousRun >= c.Run || !(c.PValue <= 0.001) {
					t.Errorf("change %+v", c)
				}
			}
		})
	}
}

func TestRegressions(t *testing.T) {
	var runs [][]api.Result
	for i := 0; i < 14; i++ {
		g := []float64{9.4, 9.6, 9.5, 9.3, 9.7, 9.5}[i%6]
		if i >= 5 {
			g *= 0.8 // worse by 20 %
		}
		if i >= 10 {
			g *= 1.1 // partly recovered: the last change point is better
		}
		runs = append(runs, []api.Result{stream(g)})
	}
	h, err := Analyze(history(runs[:10]...), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r := h.Regressions(15); len(r) != 1 || !strings.Contains(r[0].String(), "since run run-05-u at 2026-11-01 07:00:00 (9.500 Gbit/s → 7.568 Gbit/s") {
		t.Errorf("gate at 15%%: %v, want the 20%% drop at run 5", r)
	}
	if r := h.Regressions(25); len(r) != 0 {
		t.Errorf("gate at 25%%: %v, want none", r)
	}
	if h, err = Analyze(history(runs...), Options{}); err != nil {
		t.Fatal(err)
	}
	if r := h.Regressions(5); len(r) != 0 {
		t.Errorf("last change point is a recovery, gate at 5%%: %v, want none", r)
	}
	failedLast := append(append([][]api.Result{}, runs[:10]...), []api.Result{stream(0)})
	if h, err = Analyze(history(failedLast...), Options{}); err != nil {
		t.Fatal(err)
	}
	r := h.Regressions(50)
	if len(r) != 1 || !strings.Contains(r[0].Reason, "failed in its newest run run-10-u") || !strings.Contains(r[0].Reason, "connection refused") {
		t.Errorf("newest run failed, gate at 50%%: %v", r)
	}
}

func TestAnalyzeDuplicatesAndNeverSucceeded(t *testing.T) {
	in := history([]api.Result{stream(0), stream(0)}, []api.Result{stream(0)})
	in = append(in, Input{Source: "copy.jsonl", Runs: in[0].Runs})
	in[1].Runs[0].Interrupted = true
	h, err := Analyze(in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Runs) != 2 || len(h.Warnings) != 3 || !strings.Contains(strings.Join(h.Warnings, "\n"), "was interrupted: 2 finished case(s) count") {
		t.Fatalf("runs %d, warnings %q: want 2 runs, an interrupted run, a duplicate run and a case measured twice", len(h.Runs), h.Warnings)
	}
	if len(h.Series) != 1 || h.Series[0].TooShort != "no successful run of 2" || len(h.Series[0].Gaps) != 2 {
		t.Fatalf("series %+v", h.Series)
	}
}

func TestWriteTableFits(t *testing.T) {
	var runs [][]api.Result
	for i := 0; i < 12; i++ {
		g := []float64{9.4, 9.6, 9.5, 9.3, 9.7, 9.5}[i%6]
		p := 40.0
		udp := api.Result{Profile: api.UDPStream, Driver: "native", Path: api.PathLoopback, Params: api.Params{MessageSizeBytes: 1400, Parallel: 1},
			Samples: []api.Sample{{Index: 1, ThroughputBitsPerSecond: fp(1e9)}}}
		udp.Summary = stats.Summarize(udp.Samples)
		if i >= 6 {
			g, p = g*0.5, 55
		}
		res := []api.Result{stream(g), rr(20000+float64(i%3)*300, p+float64(i%2))}
		if i < 3 {
			res = append(res, udp)
		}
		if i == 9 || i == 10 {
			res[1] = stream(0)
			res[1].Profile, res[1].Params.MessageSizeBytes = api.TCPRR, 1
		}
		runs = append(runs, res)
	}
	h, err := Analyze(history(runs...), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteTable(&b, h, 0); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, l := range strings.Split(out, "\n") {
		if text.Width(l) > text.DefaultWidth {
			t.Errorf("line of %d columns: %q", text.Width(l), l)
		}
	}
	for _, want := range []string{"12 run(s) from 2026-11-01 02:00:00 to 2026-11-01 13:00:00 UTC, 12 source(s)",
		"TCP_STREAM native loopback 128KiB x1", "9.500 Gbit/s → 4.750 Gbit/s", "-50.0% worse", "transactions",
		"latency p99", "+", "Runs where a change starts:", "run-06-u 2026-11-01 08:00:00 z06.jsonl build=106", "too short (< 5 runs)",
		"Failed measurements", "TCP_RR native loopback 1B x1: run run-09-u at 2026-11-01 11:00:00: failed: every sample failed: connect: connection refused"} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	t.Log("\n" + out)
}

func TestWriteHTML(t *testing.T) {
	var runs [][]api.Result
	for i := 0; i < 12; i++ {
		g := []float64{9.4, 9.6, 9.5, 9.3, 9.7, 9.5}[i%6]
		if i >= 6 {
			g *= 0.5
		}
		runs = append(runs, []api.Result{stream(g)})
	}
	runs[3] = []api.Result{stream(0)}
	runs[3][0].Error = `every sample failed <script>alert(1)</script>`
	h, err := Analyze(history(runs...), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteHTML(&b, h); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{"<h2>TCP_STREAM native loopback 128KiB x1</h2>", "<strong>throughput</strong>", "<svg ",
		`<line class="change"`, `>-50.2% worse</text>`, `<path class="gap"`, "at 2026-11-01 05:00:00: failed: every sample failed &lt;script&gt;",
		"change at run run-06-u at 2026-11-01 08:00:00: 9.540 Gbit/s → 4.750 Gbit/s"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, "<script>") {
		t.Error("a failure cause reached the page unescaped")
	}
	if n := strings.Count(page, `<circle class="dot"`); n != 11 {
		t.Errorf("%d dots, want one per successful run (11)", n)
	}
	if n := strings.Count(page, `<line class="level"`); n != 2 {
		t.Errorf("%d levels, want 2 (before and after the change)", n)
	}
}
