package runfile

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

// csvColumn is one column of the CSV format: its header and how to write and read it.
type csvColumn struct {
	name string
	get  func(*api.Run, *api.Result) string
	set  func(*api.Run, *api.Result, string) error
}

func strCol(name string, p func(*api.Run, *api.Result) *string) csvColumn {
	return csvColumn{name,
		func(run *api.Run, r *api.Result) string { return *p(run, r) },
		func(run *api.Run, r *api.Result, v string) error { *p(run, r) = v; return nil }}
}

func intCol(name string, p func(*api.Result) *int) csvColumn {
	return valueCol(name, p, strconv.Itoa, strconv.Atoi)
}

func floatCol(name string, p func(*api.Result) *float64) csvColumn {
	return valueCol(name, p, fmtFloat, func(v string) (float64, error) { return strconv.ParseFloat(v, 64) })
}

func boolCol(name string, p func(*api.Result) *bool) csvColumn {
	return valueCol(name, p, strconv.FormatBool, strconv.ParseBool)
}

// valueCol is a column of a result field written with format and read back with parse; an
// empty cell leaves the field as it is.
func valueCol[T any](name string, p func(*api.Result) *T, format func(T) string, parse func(string) (T, error)) csvColumn {
	return csvColumn{name,
		func(_ *api.Run, r *api.Result) string { return format(*p(r)) },
		func(_ *api.Run, r *api.Result, v string) error {
			if v == "" {
				return nil
			}
			x, err := parse(v)
			*p(r) = x
			return err
		}}
}

func timeCol(name string, p func(*api.Run, *api.Result) *time.Time) csvColumn {
	return csvColumn{name,
		func(run *api.Run, r *api.Result) string {
			t := *p(run, r)
			if t.IsZero() {
				return ""
			}
			return t.Format(time.RFC3339Nano)
		},
		func(run *api.Run, r *api.Result, v string) error {
			if v == "" {
				return nil
			}
			t, err := time.Parse(time.RFC3339Nano, v)
			*p(run, r) = t
			return err
		}}
}

// optFloatCol is a pointer figure: empty when absent.
func optFloatCol(name string, p func(*api.Result) **float64) csvColumn {
	return csvColumn{name,
		func(_ *api.Run, r *api.Result) string {
			if v := *p(r); v != nil {
				return fmtFloat(*v)
			}
			return ""
		},
		func(_ *api.Run, r *api.Result, v string) error {
			if v == "" {
				return nil
			}
			f, err := strconv.ParseFloat(v, 64)
			*p(r) = &f
			return err
		}}
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// statCols are the nine columns of one Stat; the Stat is created when any is set.
func statCols(prefix string, p func(*api.Result) **api.Stat) []csvColumn {
	field := func(suffix string, get func(*api.Stat) *float64) csvColumn {
		return csvColumn{prefix + "." + suffix,
			func(_ *api.Run, r *api.Result) string {
				if s := *p(r); s != nil {
					return fmtFloat(*get(s))
				}
				return ""
			},
			func(_ *api.Run, r *api.Result, v string) error {
				if v == "" {
					return nil
				}
				f, err := strconv.ParseFloat(v, 64)
				if err != nil {
					return err
				}
				if *p(r) == nil {
					*p(r) = &api.Stat{}
				}
				*get(*p(r)) = f
				return nil
			}}
	}
	n := csvColumn{prefix + ".n",
		func(_ *api.Run, r *api.Result) string {
			if s := *p(r); s != nil {
				return strconv.Itoa(s.N)
			}
			return ""
		},
		func(_ *api.Run, r *api.Result, v string) error {
			if v == "" {
				return nil
			}
			n, err := strconv.Atoi(v)
			if err != nil {
				return err
			}
			if *p(r) == nil {
				*p(r) = &api.Stat{}
			}
			(*p(r)).N = n
			return nil
		}}
	return []csvColumn{n,
		field("mean", func(s *api.Stat) *float64 { return &s.Mean }),
		field("median", func(s *api.Stat) *float64 { return &s.Median }),
		field("stddev", func(s *api.Stat) *float64 { return &s.Stddev }),
		field("cov", func(s *api.Stat) *float64 { return &s.CoV }),
		field("min", func(s *api.Stat) *float64 { return &s.Min }),
		field("max", func(s *api.Stat) *float64 { return &s.Max }),
		field("ci95Low", func(s *api.Stat) *float64 { return &s.CI95Low }),
		field("ci95High", func(s *api.Stat) *float64 { return &s.CI95High }),
	}
}

func cpuStat(client bool) func(*api.Result) **api.Stat {
	return func(r *api.Result) **api.Stat {
		if r.Summary.CPUPercent == nil {
			r.Summary.CPUPercent = &api.CPUSummary{}
		}
		if client {
			return &r.Summary.CPUPercent.Client
		}
		return &r.Summary.CPUPercent.Server
	}
}

func latency(r *api.Result) *api.Latency {
	if r.Summary.LatencyMicroseconds == nil {
		r.Summary.LatencyMicroseconds = &api.Latency{}
	}
	return r.Summary.LatencyMicroseconds
}

func latCols() []csvColumn {
	f := func(name string, get func(*api.Latency) **float64) csvColumn {
		return optFloatCol("latencyMicroseconds."+name, func(r *api.Result) **float64 { return get(latency(r)) })
	}
	return []csvColumn{
		{"latencyMicroseconds.count",
			func(_ *api.Run, r *api.Result) string {
				if l := r.Summary.LatencyMicroseconds; l != nil && l.Count != nil {
					return strconv.FormatInt(*l.Count, 10)
				}
				return ""
			},
			func(_ *api.Run, r *api.Result, v string) error {
				if v == "" {
					return nil
				}
				n, err := strconv.ParseInt(v, 10, 64)
				latency(r).Count = &n
				return err
			}},
		f("mean", func(l *api.Latency) **float64 { return &l.Mean }),
		f("min", func(l *api.Latency) **float64 { return &l.Min }),
		f("max", func(l *api.Latency) **float64 { return &l.Max }),
		f("stddev", func(l *api.Latency) **float64 { return &l.Stddev }),
		f("p50", func(l *api.Latency) **float64 { return &l.P50 }),
		f("p75", func(l *api.Latency) **float64 { return &l.P75 }),
		f("p90", func(l *api.Latency) **float64 { return &l.P90 }),
		f("p99", func(l *api.Latency) **float64 { return &l.P99 }),
		f("p999", func(l *api.Latency) **float64 { return &l.P999 }),
		f("p9999", func(l *api.Latency) **float64 { return &l.P9999 }),
		strCol("latencyMicroseconds.method", func(_ *api.Run, r *api.Result) *string { return &latency(r).Method }),
		strCol("latencyMicroseconds.note", func(_ *api.Run, r *api.Result) *string { return &latency(r).Note }),
		strCol("latencyMicroseconds.provenance", func(_ *api.Run, r *api.Result) *string { return &latency(r).Provenance }),
	}
}

// csvColumns is the CSV format: run identity, the case, its parameters, every summary field.
// Names follow the JSON field paths; values are in base units.
var csvColumns = func() []csvColumn {
	cols := []csvColumn{
		strCol("run.uuid", func(run *api.Run, _ *api.Result) *string { return &run.UUID }),
		timeCol("run.startTime", func(run *api.Run, _ *api.Result) *time.Time { return &run.StartTime }),
		strCol("run.platform", func(run *api.Run, _ *api.Result) *string { return &run.Platform }),
		strCol("run.cluster.cni", func(run *api.Run, _ *api.Result) *string {
			if run.Cluster == nil {
				run.Cluster = &api.ClusterDetails{}
			}
			return &run.Cluster.CNI
		}),
		strCol("name", func(_ *api.Run, r *api.Result) *string { return &r.Name }),
		strCol("group", func(_ *api.Run, r *api.Result) *string { return &r.Group }),
		{"profile", func(_ *api.Run, r *api.Result) string { return string(r.Profile) },
			func(_ *api.Run, r *api.Result, v string) error { r.Profile = api.Profile(v); return nil }},
		strCol("driver", func(_ *api.Run, r *api.Result) *string { return &r.Driver }),
		{"path", func(_ *api.Run, r *api.Result) string { return string(r.Path) },
			func(_ *api.Run, r *api.Result, v string) error { r.Path = api.Path(v); return nil }},
		strCol("topology.flavour", func(_ *api.Run, r *api.Result) *string {
			if r.Topology == nil {
				r.Topology = &api.Topology{}
			}
			return &r.Topology.Flavour
		}),
		floatCol("params.durationSeconds", func(r *api.Result) *float64 { return &r.Params.DurationSeconds }),
		floatCol("params.warmupSeconds", func(r *api.Result) *float64 { return &r.Params.WarmupSeconds }),
		intCol("params.samples", func(r *api.Result) *int { return &r.Params.Samples }),
		intCol("params.messageSizeBytes", func(r *api.Result) *int { return &r.Params.MessageSizeBytes }),
		intCol("params.responseSizeBytes", func(r *api.Result) *int { return &r.Params.ResponseSizeBytes }),
		intCol("params.parallel", func(r *api.Result) *int { return &r.Params.Parallel }),
		intCol("params.burst", func(r *api.Result) *int { return &r.Params.Burst }),
		floatCol("params.rateBitsPerSecond", func(r *api.Result) *float64 { return &r.Params.RateBitsPerSecond }),
		boolCol("params.hostNetwork", func(r *api.Result) *bool { return &r.Params.HostNetwork }),
		boolCol("params.service", func(r *api.Result) *bool { return &r.Params.Service }),
		strCol("params.ipFamily", func(_ *api.Run, r *api.Result) *string { return &r.Params.IPFamily }),
		timeCol("startTime", func(_ *api.Run, r *api.Result) *time.Time { return &r.StartTime }),
		timeCol("endTime", func(_ *api.Run, r *api.Result) *time.Time { return &r.EndTime }),
		strCol("error", func(_ *api.Run, r *api.Result) *string { return &r.Error }),
		intCol("samplesTotal", func(r *api.Result) *int { return &r.Summary.SamplesTotal }),
		intCol("samplesFailed", func(r *api.Result) *int { return &r.Summary.SamplesFailed }),
	}
	cols = append(cols, statCols("throughputBitsPerSecond", func(r *api.Result) **api.Stat { return &r.Summary.ThroughputBitsPerSecond })...)
	cols = append(cols, statCols("packetsPerSecond", func(r *api.Result) **api.Stat { return &r.Summary.PacketsPerSecond })...)
	cols = append(cols, statCols("transactionsPerSecond", func(r *api.Result) **api.Stat { return &r.Summary.TransactionsPerSecond })...)
	cols = append(cols, statCols("connectionsPerSecond", func(r *api.Result) **api.Stat { return &r.Summary.ConnectionsPerSecond })...)
	cols = append(cols, statCols("retransmits", func(r *api.Result) **api.Stat { return &r.Summary.Retransmits })...)
	cols = append(cols, statCols("lossPercent", func(r *api.Result) **api.Stat { return &r.Summary.LossPercent })...)
	cols = append(cols, statCols("jitterMicroseconds", func(r *api.Result) **api.Stat { return &r.Summary.JitterMicroseconds })...)
	cols = append(cols, statCols("cpuPercent.client", cpuStat(true))...)
	cols = append(cols, statCols("cpuPercent.server", cpuStat(false))...)
	cols = append(cols, latCols()...)
	// cnperf programming's figure, last: the columns before it keep their places
	cols = append(cols, statCols("programmingSeconds", func(r *api.Result) **api.Stat { return &r.Summary.ProgrammingSeconds })...)
	return cols
}()

// CSVHeader lists the CSV columns in order.
func CSVHeader() []string {
	h := make([]string, len(csvColumns))
	for i, c := range csvColumns {
		h[i] = c.name
	}
	return h
}

// WriteCSV writes runs as CSV, one row per case with every summary field in base units (the
// column names are the JSON paths): cnperf run -o csv, read back by ReadCSV.
func WriteCSV(w io.Writer, runs []*api.Run) error {
	row := make([]string, len(csvColumns))
	return WriteCSVRows(w, CSVHeader(), runs, func(run *api.Run, res *api.Result) [][]string {
		// Getters allocate absent optional sub-objects (cluster, topology, CPU, latency) on the
		// struct they are given; shallow copies keep the caller's runs unmodified.
		rc, r := *run, *res
		for j, c := range csvColumns {
			row[j] = c.get(&rc, &r)
		}
		return [][]string{row}
	})
}

// WriteCSVRows writes header, then for each result of runs, in order, the rows that rows gives.
func WriteCSVRows(w io.Writer, header []string, runs []*api.Run, rows func(*api.Run, *api.Result) [][]string) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	for _, run := range runs {
		for i := range run.Results {
			for _, row := range rows(run, &run.Results[i]) {
				if err := cw.Write(row); err != nil {
					return fmt.Errorf("write csv: %w", err)
				}
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	return nil
}

// ReadCSV reads what the csv format writes back into runs (grouped by run.uuid, in order of
// first appearance) with their results' parameters and summaries; raw samples are not part of
// the CSV format. Unknown columns are an error naming the column; missing columns stay unset.
func ReadCSV(r io.Reader, name string) ([]*api.Run, error) {
	cr := csv.NewReader(r)
	header, err := cr.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: empty CSV", name)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	idx := make([]*csvColumn, len(header))
	for i, h := range header {
		for j := range csvColumns {
			if csvColumns[j].name == h {
				idx[i] = &csvColumns[j]
			}
		}
		if idx[i] == nil {
			return nil, fmt.Errorf("%s: line 1: unknown column %q", name, h)
		}
	}
	var runs []*api.Run
	byUUID := map[string]*api.Run{}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		line, _ := cr.FieldPos(0)
		var tmp api.Run
		var res api.Result
		for i, v := range rec {
			if err := idx[i].set(&tmp, &res, v); err != nil {
				return nil, fmt.Errorf("%s: line %d: column %s: %w", name, line, header[i], err)
			}
		}
		normalizeRead(&tmp, &res)
		if _, err := checkResult(&res); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		run := byUUID[tmp.UUID]
		if run == nil {
			run = &api.Run{APIVersion: api.APIVersion, Kind: api.KindRun, UUID: tmp.UUID,
				StartTime: tmp.StartTime, Platform: tmp.Platform, Cluster: tmp.Cluster, Results: []api.Result{}}
			byUUID[tmp.UUID] = run
			runs = append(runs, run)
		}
		run.Results = append(run.Results, res)
	}
	return runs, nil
}

// normalizeRead drops the empty sub-objects that setters allocate for absent values.
func normalizeRead(run *api.Run, r *api.Result) {
	if run.Cluster != nil && run.Cluster.CNI == "" { // only the CNI comes from CSV
		run.Cluster = nil
	}
	if r.Topology != nil && *r.Topology == (api.Topology{}) {
		r.Topology = nil
	}
	if c := r.Summary.CPUPercent; c != nil && c.Client == nil && c.Server == nil {
		r.Summary.CPUPercent = nil
	}
	if l := r.Summary.LatencyMicroseconds; l != nil && *l == (api.Latency{}) {
		r.Summary.LatencyMicroseconds = nil
	}
}
