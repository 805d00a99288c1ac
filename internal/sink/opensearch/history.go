package opensearch

import (
	"context"
	"encoding/json"
	"fmt"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

// MaxHistoryDocuments bounds what ReadRuns takes from an index: at about 2 KiB a document
// without its samples, the runs it rebuilds stay within a few hundred MiB.
const MaxHistoryDocuments = 200000

// historyPage is the number of documents one search returns.
const historyPage = 1000

// ReadRuns reads every result document of the index back into runs (one per run id, its
// results in case order), for `cnperf trend --opensearch`. The raw samples, commands, host
// and cluster metrics stay in the index: a result keeps its parameters, topology, summary and,
// when it failed, its cause (the document's error). The documents are paged with
// search_after in the order of their runs' start times; more than MaxHistoryDocuments is an
// error.
func (c *Client) ReadRuns(ctx context.Context) ([]*api.Run, error) {
	var runs []*api.Run
	byID := map[string]*api.Run{}
	var after json.RawMessage
	read := 0
	for {
		q := map[string]any{
			"size":    historyPage,
			"query":   map[string]any{"match_all": map[string]any{}},
			"_source": map[string]any{"excludes": []string{"samples", "commands", "metrics", "host"}},
			"sort": []any{
				map[string]any{"runStartTime": map[string]any{"order": "asc", "missing": "_first"}},
				map[string]any{"runId": "asc"},
				map[string]any{"caseIndex": "asc"},
			},
		}
		if after != nil {
			q["search_after"] = after
		}
		hits, err := c.search(ctx, q)
		if err != nil {
			return nil, err
		}
		for _, h := range hits {
			d := h.Source
			run := byID[d.RunID]
			if run == nil {
				run = runOf(&d)
				byID[d.RunID] = run
				runs = append(runs, run)
			}
			run.Results = append(run.Results, resultOf(&d))
		}
		read += len(hits)
		if read > MaxHistoryDocuments {
			return nil, fmt.Errorf("opensearch: index %s holds more than %d result documents: too many to read at once", c.index, MaxHistoryDocuments)
		}
		if len(hits) < historyPage {
			break
		}
		after = hits[len(hits)-1].Sort
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("opensearch: index %s holds no result documents", c.index)
	}
	return runs, nil
}

// runOf is the run a document belongs to, from the run's fields every document carries.
func runOf(d *ResultDoc) *api.Run {
	r := &api.Run{APIVersion: api.APIVersion, Kind: api.KindRun, UUID: d.RunID, CnperfVersion: d.CnperfVersion,
		Platform: d.Platform, Interrupted: d.Interrupted, Imported: d.Imported, Labels: d.Labels, Cluster: d.Cluster}
	switch {
	case d.RunStartTime != nil:
		r.StartTime = *d.RunStartTime
	default:
		r.StartTime = d.Timestamp
	}
	if d.RunEndTime != nil {
		r.EndTime = *d.RunEndTime
	}
	return r
}

// resultOf is a document's result without its samples.
func resultOf(d *ResultDoc) api.Result {
	r := api.Result{Name: d.Name, Group: d.Group, Profile: d.Profile, Driver: d.Driver, Path: d.Path, Params: d.Params,
		Placement: d.Placement, Topology: d.Topology, StartTime: d.StartTime, EndTime: d.EndTime, Summary: d.Summary, Notes: d.Notes}
	if d.Failed {
		r.Error = d.Error
	}
	return r
}
