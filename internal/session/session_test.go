package session

// Measure is tested with platformtest's fake platform, whose client answers with the real
// iperf3 output captured in internal/driver/iperf3/testdata/captured, parsed by the real
// driver. It is a fake because what is under test is the lifecycle around the runner —
// prepare, describe, record each case at once, close on every way out (a setup failure, an
// interruption between two cases) — at moments no real platform can be made to fail at; the
// real platforms run under it in test/integration (local) and test/e2e (kube).

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/driver/iperf3"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/logging"
	"github.com/cnperf/cnperf/internal/measure"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/platform/platformtest"
	"github.com/cnperf/cnperf/internal/runfile"
)

// noting annotates every case with a note, as a sink would add its figures.
type noting struct{ calls int }

func (n *noting) Annotate(_ context.Context, r *api.Result) error {
	n.calls++
	r.Notes = append(r.Notes, "annotated")
	return nil
}

func fake(t *testing.T) *platformtest.Platform {
	return &platformtest.Platform{T: t, Driver: iperf3.Name, Capture: "tcp_stream", DriverDir: filepath.Join("..", "driver"),
		Cluster: &api.ClusterDetails{NodeCount: 2, CNI: "fake"}}
}

func cases(n int) []plan.Case {
	var out []plan.Case
	for i := 0; i < n; i++ {
		out = append(out, plan.Case{Index: i, Profile: api.TCPStream, Driver: iperf3.Name, Path: api.PathLoopback,
			Params: api.Params{DurationSeconds: 1, Samples: 1, Parallel: 1, MessageSizeBytes: 131072}})
	}
	return out
}

var drivers = map[string]driver.Driver{iperf3.Name: iperf3.Driver{}}

const runID = "6f0d5a8e-1c1e-4a39-9a56-0c1d2f3e4a5b"

// TestMeasure: every finished case is annotated, in the run and in the results file; the
// cluster the platform describes is recorded; the platform is closed on every way out.
func TestMeasure(t *testing.T) {
	tests := []struct {
		name        string
		prepareErr  error
		interrupt   int // cancel after this execution (0: never)
		wantErr     string
		wantResults int
		interrupted bool
		samples     int // per case (0: 1)
	}{
		{name: "two cases", wantResults: 2},
		{name: "setup fails", prepareErr: errors.New("no node"), wantErr: "set up the fake platform: no node"},
		{name: "interrupted after the first case", interrupt: 1, wantResults: 1, interrupted: true,
			wantErr: "interrupted: 1 of 2 cases finished and were kept"},
		{name: "interrupted in the first case's second sample", interrupt: 1, samples: 2, wantResults: 1,
			interrupted: true,
			wantErr: "interrupted: 0 of 2 cases finished and were kept, and the case cut short " +
				"(interrupted after 1 of 2 samples)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			plat := fake(t)
			plat.PrepareErr = tt.prepareErr
			if tt.interrupt > 0 {
				plat.OnExec = func(n int) {
					if n == tt.interrupt {
						cancel()
					}
				}
			}
			path := filepath.Join(t.TempDir(), "run.jsonl")
			run := NewRun(Header{UUID: runID, Platform: plat.Name(), Labels: map[string]string{"cni": "fake"}, Timing: true})
			s, err := Start(run, path)
			if err != nil {
				t.Fatal(err)
			}
			ann := &noting{}
			s.Annotator = ann
			cs := cases(2)
			for i := range cs {
				cs[i].Params.Samples = max(tt.samples, 1)
			}
			err = s.Measure(ctx, plat, drivers, cs, nil)
			if ferr := s.Finish(); ferr != nil {
				t.Fatal(ferr)
			}
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("error %v, want %q", err, tt.wantErr)
			}
			if err != nil && exit.Code(err) != exit.Failed {
				t.Errorf("exit code %d, want %d", exit.Code(err), exit.Failed)
			}
			if _, closed, _ := plat.Counts(); closed != 1 {
				t.Errorf("platform closed %d times, want once", closed)
			}
			if run.Interrupted != tt.interrupted {
				t.Errorf("interrupted %t, want %t", run.Interrupted, tt.interrupted)
			}
			if ann.calls != tt.wantResults {
				t.Errorf("%d annotations, want %d", ann.calls, tt.wantResults)
			}
			runs, err := runfile.Read(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) != 1 {
				t.Fatalf("%d runs in the file", len(runs))
			}
			got := runs[0]
			if len(got.Results) != tt.wantResults || len(run.Results) != tt.wantResults {
				t.Fatalf("%d results in the file, %d in the run, want %d", len(got.Results), len(run.Results), tt.wantResults)
			}
			for _, r := range got.Results {
				wantErr := ""
				if tt.samples > 1 {
					wantErr = "interrupted after 1 of 2 samples"
				}
				if strings.Join(r.Notes, ",") != "annotated" || r.Summary.SamplesTotal != 1 || r.Error != wantErr {
					t.Errorf("result notes %q, %d samples, error %q", r.Notes, r.Summary.SamplesTotal, r.Error)
				}
			}
			if got.UUID != runID || got.Labels["cni"] != "fake" || got.EndTime.IsZero() || got.Interrupted != tt.interrupted {
				t.Errorf("header %+v", got)
			}
			if tt.prepareErr == nil && (got.Cluster == nil || got.Cluster.CNI != "fake") {
				t.Errorf("cluster %+v, want the platform's description", got.Cluster)
			}
			if got.Timing == nil || got.Timing.TeardownSeconds < 0 {
				t.Errorf("timing %+v", got.Timing)
			}
		})
	}
}

// TestNoResultsFile: without --results a session keeps the run in memory only.
func TestNoResultsFile(t *testing.T) {
	run := NewRun(Header{UUID: runID, Platform: "fake"})
	s, err := Start(run, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Measure(context.Background(), fake(t), drivers, cases(1), nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Finish(); err != nil {
		t.Fatal(err)
	}
	if len(run.Results) != 1 || run.EndTime.Before(run.StartTime) || run.Timing == nil {
		t.Errorf("run %+v", run)
	}
}

func TestNewRun(t *testing.T) {
	run := NewRun(Header{UUID: runID, Platform: "local", Host: true})
	if run.APIVersion != api.APIVersion || run.Kind != api.KindRun || run.StartTime.IsZero() || run.Host == nil ||
		run.Results == nil || run.Timing != nil || run.CnperfVersion == "" {
		t.Errorf("run %+v", run)
	}
	imp := NewRun(Header{Platform: "imported", Imported: true})
	if !imp.Imported || !imp.StartTime.IsZero() || imp.UUID != "" || imp.Host != nil {
		t.Errorf("imported run %+v: its times are its samples'", imp)
	}
}

func TestRunID(t *testing.T) {
	if id, err := RunID(""); err != nil || len(id) != 36 {
		t.Errorf("random id %q, %v", id, err)
	}
	if id, err := RunID(runID); err != nil || id != runID {
		t.Errorf("given id %q, %v", id, err)
	}
	var ue *exit.UsageError
	if _, err := RunID("run-1"); !errors.As(err, &ue) || !strings.Contains(err.Error(), `--uuid: "run-1" is not a UUID`) {
		t.Errorf("error %v, want a usage error naming --uuid", err)
	}
}

// TestParseLabels: --label is keyval.Parse (its table is TestParse there) under its own name.
func TestParseLabels(t *testing.T) {
	if got, err := ParseLabels([]string{" cni=calico", "empty="}); err != nil || len(got) != 2 || got["cni"] != "calico" {
		t.Errorf("%v, %v; want cni=calico and empty=", got, err)
	}
	var ue *exit.UsageError
	if _, err := ParseLabels([]string{"cni"}); !errors.As(err, &ue) || err.Error() != `--label: "cni" is not KEY=VALUE` {
		t.Errorf("error %v, want a usage error naming --label", err)
	}
}

// TestWriteFile: a run written at once reads back whole (mesh and import write their runs so).
func TestWriteFile(t *testing.T) {
	run := NewRun(Header{UUID: runID, Platform: "kube"})
	run.Results = append(run.Results, api.Result{Profile: api.TCPStream, Driver: "native", Samples: []api.Sample{}, Error: "boom"})
	run.Notes = []string{"node c skipped"}
	path := filepath.Join(t.TempDir(), "run.jsonl")
	if err := WriteFile(path, run); err != nil {
		t.Fatal(err)
	}
	runs, err := runfile.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || len(runs[0].Results) != 1 || runs[0].Results[0].Error != "boom" || strings.Join(runs[0].Notes, ",") != "node c skipped" {
		t.Errorf("read back %+v", runs)
	}
	if err := WriteFile(filepath.Join(t.TempDir(), "run.jsonl"), NewRun(Header{Platform: "imported", Imported: true})); err == nil {
		t.Error("a run without a uuid was written")
	}
}

// TestUnits: what a unit whose Close failed may have left is said on the session's log even
// at -q's level (a person must see it), and only then; the run's Timing, when it has one, gets
// the times; the errors of Measure and Close are both returned.
func TestUnits(t *testing.T) {
	errMeasure, errClose := errors.New("measure failed"), errors.New("close failed")
	for _, c := range []struct {
		name              string
		closeErr, measure error
		timing            bool
		said              string
	}{
		{"clean", nil, nil, true, ""},
		{"close fails", errClose, nil, false, "cnperf: clean-up did not finish; pods in ns x\n"},
		{"both fail", errClose, errMeasure, true, "cnperf: clean-up did not finish; pods in ns x\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			run := NewRun(Header{UUID: runID, Platform: "kube", Timing: c.timing})
			var log strings.Builder
			err := Do(context.Background(), run, "", func(sess *Session) error {
				sess.Log = logging.New(&log, logging.Quiet, nil)
				return sess.Units(context.Background(), measure.Unit{
					Measure:   func(context.Context) error { return c.measure },
					Close:     func(context.Context) error { return c.closeErr },
					Leftovers: func() string { return "pods in ns x" },
				})
			})
			if log.String() != c.said {
				t.Errorf("said %q, want %q", log.String(), c.said)
			}
			for _, want := range []error{c.measure, c.closeErr} {
				if want != nil && !errors.Is(err, want) {
					t.Errorf("error %v, want it to hold %v", err, want)
				}
			}
			if c.closeErr == nil && c.measure == nil && err != nil {
				t.Errorf("error %v", err)
			}
			if (run.Timing != nil) != c.timing || run.EndTime.IsZero() {
				t.Errorf("timing %+v (want one: %v), end %v", run.Timing, c.timing, run.EndTime)
			}
		})
	}
}
