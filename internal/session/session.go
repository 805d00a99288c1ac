// Package session is a run's lifecycle, the same for every command that makes a run (run,
// tiger-bench, mesh, import): the api.Run header (NewRun), every finished case recorded at
// once (Record: sinks' annotation, the run, the results file), metadata learnt later (Update),
// and the end (Finish). Do is a run from its start to its end for every command that measures
// (run, tiger-bench, mesh, programming); Units runs a command's units (internal/measure) within
// it, and Measure is the platform's unit and the runner (cnperf run).
package session

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/hostinfo"
	"github.com/cnperf/cnperf/internal/keyval"
	"github.com/cnperf/cnperf/internal/logging"
	"github.com/cnperf/cnperf/internal/pathmtu"
	"github.com/cnperf/cnperf/internal/runfile"
	"github.com/cnperf/cnperf/internal/version"
)

// Header is what a run says about itself before its first case.
type Header struct {
	// UUID is the run id ("" for a run that gets one later, as an import does).
	UUID     string
	Platform string
	Labels   map[string]string
	// Start is when the run started (zero: now).
	Start time.Time
	// Imported marks a run read from a tool's saved outputs: its times are its samples'
	// (the importer sets them), not now.
	Imported bool
	// Host describes the machine cnperf runs on (hostinfo) in the run.
	Host bool
	// Timing gives the run a Timing to fill in (setup, measure, teardown).
	Timing bool
}

// NewRun is a run with h's header, no results yet.
func NewRun(h Header) *api.Run {
	run := &api.Run{
		APIVersion: api.APIVersion, Kind: api.KindRun, UUID: h.UUID, CnperfVersion: version.Version,
		Platform: h.Platform, Labels: h.Labels, Results: []api.Result{},
	}
	switch {
	case h.Imported:
		run.Imported = true
	case h.Start.IsZero():
		run.StartTime = time.Now().UTC()
	default:
		run.StartTime = h.Start.UTC()
	}
	if h.Host {
		run.Host = hostinfo.Get()
	}
	if h.Timing {
		run.Timing = &api.Timing{}
	}
	return run
}

// RunID is the run id of a --uuid flag: a random UUID when empty, else the flag's value when
// it is a UUID.
func RunID(flag string) (string, error) {
	if flag == "" {
		return uuid.NewString(), nil
	}
	if _, err := uuid.Parse(flag); err != nil {
		return "", exit.Usage("--uuid: %q is not a UUID: %v", flag, err)
	}
	return flag, nil
}

// ParseLabels reads --label KEY=VALUE flags (nil when there are none).
func ParseLabels(in []string) (map[string]string, error) { return keyval.Parse("--label", in) }

// Annotator adds what a sink knows about a finished case to it before it is recorded
// (prometheus.Collector: what the cluster did during the case).
type Annotator interface {
	Annotate(ctx context.Context, r *api.Result) error
}

// Session records one run as it happens.
type Session struct {
	Run *api.Run
	// Log gets warnings (stderr); Start sets a logger that writes nothing.
	Log *slog.Logger
	// Annotator, when set, annotates every case Record records.
	Annotator Annotator
	// CheckPathMTU, when set, makes Measure check the path MTU of every path of the cases
	// (internal/pathmtu) once the platform is set up, before the first case is measured.
	CheckPathMTU *pathmtu.Options
	rw           *runfile.Writer
}

// Start starts recording run; with a resultsFile, the run's header is written to it at once
// and every case as it is recorded. A results file that cannot be created is bad input (exit
// code 2): callers start the session before anything runs.
func Start(run *api.Run, resultsFile string) (*Session, error) {
	s := &Session{Run: run, Log: logging.Discard()}
	if resultsFile != "" {
		rw, err := runfile.Create(resultsFile, run)
		if err != nil {
			return nil, exit.Usage("--results: %w", err)
		}
		s.rw = rw
	}
	return s, nil
}

// Record records a finished case: annotated by the sink, added to the run and written to the
// results file.
func (s *Session) Record(ctx context.Context, res api.Result) error {
	if s.Annotator != nil {
		if err := s.Annotator.Annotate(ctx, &res); err != nil {
			s.Log.Warn(fmt.Sprintf("prometheus metrics for case %q: %v", res.Name, err))
		}
		if res.Metrics != nil {
			for _, w := range res.Metrics.Warnings {
				s.Log.Warn("prometheus: " + w)
			}
		}
	}
	s.Run.Results = append(s.Run.Results, res)
	return s.Save(res)
}

// Save writes a case the caller already added to the run to the results file.
func (s *Session) Save(res api.Result) error {
	if s.rw == nil {
		return nil
	}
	return s.rw.AppendResult(res)
}

// Update records the run's metadata learnt after it started (the cluster, a finished test)
// in the results file.
func (s *Session) Update() error {
	if s.rw == nil {
		return nil
	}
	return s.rw.UpdateRun(*s.Run)
}

// Finish ends the run now and closes the results file.
func (s *Session) Finish() error {
	s.Run.EndTime = time.Now().UTC()
	if s.rw == nil {
		return nil
	}
	if err := s.rw.Close(*s.Run); err != nil {
		return fmt.Errorf("close results file: %w", err)
	}
	return nil
}

// WriteFile writes a finished run to a results file at once (import, which records its runs
// when they are complete).
func WriteFile(path string, run *api.Run) error {
	w, err := runfile.Create(path, run)
	if err != nil {
		return err
	}
	for _, r := range run.Results {
		if err := w.AppendResult(r); err != nil {
			return errors.Join(err, w.Close(*run))
		}
	}
	return w.Close(*run)
}
