package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/figure"
)

// PerfdashData is perfdash's document ("PerfData" in kubernetes/perf-tests clusterloader2's
// perftype.go, also written by cilium's connectivity perf): a version and data items.
type PerfdashData struct {
	Version   string             `json:"version"`
	DataItems []PerfdashDataItem `json:"dataItems"`
	Labels    map[string]string  `json:"labels,omitempty"`
}

// PerfdashDataItem is one series point: buckets (e.g. "Perc99") to values in Unit. Items
// with the same labels must have the same buckets and unit.
type PerfdashDataItem struct {
	Data   map[string]float64 `json:"data"`
	Unit   string             `json:"unit"`
	Labels map[string]string  `json:"labels,omitempty"`
}

// Perfdash converts runs to perfdash data items, following cilium's labels and units:
// "Throughput" in Mb/s for streams, "Throughput" in ops/s for RR/CRR rates (metric
// "TransactionRate"), and latency "Perc50"/"Perc90"/"Perc99" in us (metric "Latency").
// Labels are cilium's scenario, node, test_type and metric, plus cnperf's path, message size,
// parallel and burst so that every case is its own series; with several runs each item also
// carries the run's uuid. Failed cases produce no items.
func Perfdash(runs []*api.Run) PerfdashData {
	out := PerfdashData{Version: "v1", DataItems: []PerfdashDataItem{}}
	for _, run := range runs {
		for i := range run.Results {
			r := &run.Results[i]
			labels := func(metric string) map[string]string {
				node := "other-node"
				if row, _ := r.Path.Row(); row.SameHost() {
					node = "same-node"
				}
				l := map[string]string{
					"scenario":  scenario(r),
					"node":      node,
					"test_type": r.Driver + "-" + string(r.Profile),
					"metric":    metric,
					"path":      string(r.Path),
					"msg_size":  strconv.Itoa(r.Params.MessageSizeBytes),
					"parallel":  strconv.Itoa(r.Params.Parallel),
					"burst":     strconv.Itoa(r.Params.Burst),
				}
				if r.Topology != nil && r.Topology.Flavour != "" {
					l["topology"] = r.Topology.Flavour
				}
				if len(runs) > 1 {
					l["run"] = run.UUID
				}
				return l
			}
			s := &r.Summary
			if st := s.ThroughputBitsPerSecond; st != nil && r.Profile.IsStream() {
				out.DataItems = append(out.DataItems, PerfdashDataItem{
					Data: map[string]float64{"Throughput": st.Mean / 1e6}, Unit: "Mb/s", Labels: labels("Throughput")})
			}
			var rate *api.Stat
			if f, ok := figure.Main(r); ok && (f.Key == figure.ConnectionRate.Key || f.Key == figure.TransactionRate.Key) {
				rate = f.Stat(s)
			}
			if rate != nil && r.Profile.IsRR() {
				out.DataItems = append(out.DataItems, PerfdashDataItem{
					Data: map[string]float64{"Throughput": rate.Mean}, Unit: "ops/s", Labels: labels("TransactionRate")})
			}
			if l := s.LatencyMicroseconds; l != nil && l.P50 != nil && l.P90 != nil && l.P99 != nil {
				out.DataItems = append(out.DataItems, PerfdashDataItem{
					Data: map[string]float64{"Perc50": *l.P50, "Perc90": *l.P90, "Perc99": *l.P99},
					Unit: "us", Labels: labels("Latency")})
			}
		}
	}
	return out
}

// scenario names the path the way cilium's perf labels do ("pod-to-pod", "host-to-host"):
// its networks, with k8s-netperf's hostNetwork switch applied, or how the client gets in.
func scenario(r *api.Result) string {
	row, ok := r.Path.Row()
	switch {
	case !ok || row.ClientNetwork == "":
		return string(r.Path)
	case row.Service():
		return "pod-to-service"
	case row.Access == api.AccessExternal:
		return "pod-to-external"
	}
	if r.Params.HostNetwork && row.TakesHostNetwork() {
		row.ClientNetwork, row.ServerNetwork = api.NetworkHost, api.NetworkHost
	}
	return string(row.ClientNetwork) + "-to-" + string(row.ServerNetwork)
}

func encodePerfdash(w io.Writer, runs []*api.Run) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(Perfdash(runs)); err != nil {
		return fmt.Errorf("encode perfdash: %w", err)
	}
	return nil
}
