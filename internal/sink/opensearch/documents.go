package opensearch

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/figure"
)

// Document is one bulk-indexed document.
type Document struct {
	ID     string
	Source *ResultDoc
}

// ResultDoc is the indexed form of one result: the case with its raw samples and summary,
// the run's metadata and cluster details, and the headline figure flattened for dashboards.
type ResultDoc struct {
	Timestamp     time.Time           `json:"@timestamp"`
	Tool          string              `json:"tool"`
	RunID         string              `json:"runId"`
	RunStartTime  *time.Time          `json:"runStartTime,omitempty"`
	RunEndTime    *time.Time          `json:"runEndTime,omitempty"`
	CnperfVersion string              `json:"cnperfVersion,omitempty"`
	Platform      string              `json:"platform,omitempty"`
	Interrupted   bool                `json:"interrupted,omitempty"`
	Imported      bool                `json:"imported,omitempty"`
	Labels        map[string]string   `json:"labels,omitempty"`
	Cluster       *api.ClusterDetails `json:"cluster,omitempty"`
	Host          *api.HostInfo       `json:"host,omitempty"`

	CaseIndex int            `json:"caseIndex"`
	Name      string         `json:"name,omitempty"`
	Group     string         `json:"group,omitempty"`
	Profile   api.Profile    `json:"profile"`
	Driver    string         `json:"driver"`
	Path      api.Path       `json:"path"`
	Params    api.Params     `json:"params"`
	Placement *api.Placement `json:"placement,omitempty"`
	Topology  *api.Topology  `json:"topology,omitempty"`
	StartTime time.Time      `json:"startTime"`
	EndTime   time.Time      `json:"endTime"`
	Error     string         `json:"error,omitempty"`
	Failed    bool           `json:"failed"`
	Notes     []string       `json:"notes,omitempty"`
	Commands  [][]string     `json:"commands,omitempty"`
	Samples   []api.Sample   `json:"samples"`
	Summary   api.Summary    `json:"summary"`
	// Metrics are the Prometheus figures of the case's window, when collected.
	Metrics *api.ClusterMetrics `json:"metrics,omitempty"`

	// Metric, Value and Unit are the headline figure (mean over successful samples, base
	// unit), absent for a case without one; LatencyP99Microseconds is the merged p99.
	Metric                 string   `json:"metric,omitempty"`
	Value                  *float64 `json:"value,omitempty"`
	Unit                   string   `json:"unit,omitempty"`
	LatencyP99Microseconds *float64 `json:"latencyP99Microseconds,omitempty"`
}

// DocumentID is a result's stable id: the run uuid and its case number from 1.
func DocumentID(runID string, caseIndex int) string { return fmt.Sprintf("%s-%04d", runID, caseIndex) }

// Documents turns a run into one document per result.
func Documents(run *api.Run) []Document {
	docs := make([]Document, 0, len(run.Results))
	for i := range run.Results {
		r := &run.Results[i]
		d := &ResultDoc{
			Timestamp: r.StartTime, Tool: "cnperf", RunID: run.UUID, CnperfVersion: run.CnperfVersion,
			Platform: run.Platform, Interrupted: run.Interrupted, Imported: run.Imported, Labels: run.Labels,
			Cluster: run.Cluster, Host: run.Host,
			CaseIndex: i + 1, Name: r.Name, Group: r.Group, Profile: r.Profile, Driver: r.Driver, Path: r.Path,
			Params: r.Params, Placement: r.Placement, Topology: r.Topology, StartTime: r.StartTime, EndTime: r.EndTime,
			Error: figure.FailureCause(r), Failed: r.Failed(), Notes: r.Notes, Commands: r.Commands,
			Samples: r.Samples, Summary: r.Summary, Metrics: r.Metrics,
		}
		if d.Samples == nil {
			d.Samples = []api.Sample{}
		}
		if d.Timestamp.IsZero() {
			d.Timestamp = run.StartTime
		}
		if !run.StartTime.IsZero() {
			t := run.StartTime
			d.RunStartTime = &t
		}
		if !run.EndTime.IsZero() {
			t := run.EndTime
			d.RunEndTime = &t
		}
		if f, ok := figure.Main(r); ok {
			v := f.Stat(&r.Summary).Mean
			d.Metric, d.Value, d.Unit = f.Key, &v, f.Unit.Base
		}
		if l := r.Summary.LatencyMicroseconds; l != nil && l.P99 != nil {
			p := *l.P99
			d.LatencyP99Microseconds = &p
		}
		docs = append(docs, Document{ID: DocumentID(run.UUID, i+1), Source: d})
	}
	return docs
}

// Template is the composable index template for an index: every number a double (so a first
// integral value cannot make a field integer), times dates, strings keywords; raw tool
// output, latency histograms, per-flow detail and node labels are kept in _source only.
func Template(index string) map[string]any {
	date := map[string]any{"type": "date"}
	stored := map[string]any{"type": "object", "enabled": false}
	return map[string]any{
		"index_patterns": []string{index, index + "-*"},
		"priority":       200,
		"_meta":          map[string]any{"created_by": "cnperf", "schema": api.APIVersion},
		"template": map[string]any{
			"mappings": map[string]any{
				"dynamic_templates": []any{
					map[string]any{"numbers_as_doubles": map[string]any{"match_mapping_type": "long", "mapping": map[string]any{"type": "double"}}},
					// A fractional JSON number is a float by default: the same field, integral in
					// another document of the bulk, would then be refused (float vs double).
					map[string]any{"fractions_as_doubles": map[string]any{"match_mapping_type": "double", "mapping": map[string]any{"type": "double"}}},
					map[string]any{"strings_as_keywords": map[string]any{"match_mapping_type": "string", "mapping": map[string]any{"type": "keyword", "ignore_above": 1024}}},
				},
				"properties": map[string]any{
					"@timestamp":   date,
					"runStartTime": date,
					"runEndTime":   date,
					"startTime":    date,
					"endTime":      date,
					"caseIndex":    map[string]any{"type": "integer"},
					"error":        map[string]any{"type": "text", "fields": map[string]any{"keyword": map[string]any{"type": "keyword", "ignore_above": 1024}}},
					"notes":        map[string]any{"type": "text"},
					"cluster": map[string]any{"properties": map[string]any{
						"nodes": map[string]any{"properties": map[string]any{"labels": stored}},
					}},
					"metrics": map[string]any{"properties": map[string]any{
						"windowStart": date,
						"windowEnd":   date,
						"warnings":    map[string]any{"type": "text"},
					}},
					"samples": map[string]any{"properties": map[string]any{
						"startTime":        date,
						"endTime":          date,
						"error":            map[string]any{"type": "text"},
						"raw":              map[string]any{"type": "keyword", "index": false, "doc_values": false},
						"latencyHistogram": stored,
						"flows":            stored,
						"notes":            map[string]any{"type": "text"},
					}},
				},
			},
		},
	}
}

// SearchRun returns the documents of one run, ordered by case number.
func (c *Client) SearchRun(ctx context.Context, runID string) ([]ResultDoc, error) {
	q := map[string]any{
		"size":  10000,
		"query": map[string]any{"term": map[string]any{"runId": runID}},
		"sort":  []any{map[string]any{"caseIndex": "asc"}},
	}
	hits, err := c.search(ctx, q)
	if err != nil {
		return nil, err
	}
	out := make([]ResultDoc, 0, len(hits))
	for _, h := range hits {
		out = append(out, h.Source)
	}
	return out, nil
}

// searchHit is one document of a search answer with its sort values (for search_after).
type searchHit struct {
	Source ResultDoc       `json:"_source"`
	Sort   json.RawMessage `json:"sort"`
}

// search runs query q on the index and returns its hits.
func (c *Client) search(ctx context.Context, q map[string]any) ([]searchHit, error) {
	body, _ := json.Marshal(q)
	data, err := c.do(ctx, http.MethodPost, "/"+url.PathEscape(c.index)+"/_search", "application/json", body)
	if err != nil {
		return nil, err
	}
	var sr struct {
		Hits struct {
			Hits []searchHit `json:"hits"`
		} `json:"hits"`
	}
	if err := json.Unmarshal(data, &sr); err != nil {
		return nil, fmt.Errorf("opensearch: search answer: %w", err)
	}
	return sr.Hits.Hits, nil
}

// Mapping returns the index's mapping as OpenSearch reports it (for checks).
func (c *Client) Mapping(ctx context.Context) (map[string]any, error) {
	data, err := c.do(ctx, http.MethodGet, "/"+url.PathEscape(c.index)+"/_mapping", "", nil)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("opensearch: mapping answer: %w", err)
	}
	return m, nil
}
