package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

// K8sNetperfCSVHeader is k8s-netperf's result CSV header (its README, "Output to CSV").
var K8sNetperfCSVHeader = []string{"Driver", "Profile", "Same node", "Host Network", "Service", "Duration",
	"Parallelism", "# of Samples", "Message Size", "Confidence metric - low", "Confidence metric - high",
	"Avg Throughput", "Throughput Metric", "99%tile Observed Latency", "Latency Metric"}

// encodeK8sNetperfCSV writes k8s-netperf's CSV: one row per case that has a figure, streams in
// Mb/s, RR and CRR in OP/s, latency p99 in usec. Values are formatted as k8s-netperf formats
// them: the interval with full precision, the average with six decimals, the latency as Go
// prints a float. Where k8s-netperf would write 0 for a missing figure, this writes an empty
// cell; a case with no successful sample is left out (it has no figure to write).
func encodeK8sNetperfCSV(w io.Writer, runs []*api.Run) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(K8sNetperfCSVHeader); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	for _, run := range runs {
		for i := range run.Results {
			r := &run.Results[i]
			row, ok := k8sNetperfRow(r)
			if !ok {
				continue
			}
			if err := cw.Write(row); err != nil {
				return fmt.Errorf("write csv: %w", err)
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	return nil
}

func k8sNetperfRow(r *api.Result) ([]string, bool) {
	var st *api.Stat
	var metric string
	scale := 1.0
	switch {
	case r.Profile.IsStream():
		st, metric, scale = r.Summary.ThroughputBitsPerSecond, "Mb/s", 1e6
	case r.Profile == api.TCPCRR:
		st, metric = r.Summary.ConnectionsPerSecond, "OP/s"
		if st == nil {
			st = r.Summary.TransactionsPerSecond
		}
	default:
		st, metric = r.Summary.TransactionsPerSecond, "OP/s"
	}
	if st == nil {
		return nil, false
	}
	p := r.Params
	sameNode := r.Path == api.PathPodPodSameNode || r.Path == api.PathLoopback
	hostNet := p.HostNetwork || r.Path == api.PathHostHost
	service := p.Service || r.Path == api.PathPodClusterIP || r.Path == api.PathPodNodePort
	lat := ""
	if l := r.Summary.LatencyMicroseconds; l != nil && l.P99 != nil {
		lat = fmt.Sprint(*l.P99)
	}
	samples := p.Samples
	if samples == 0 {
		samples = r.Summary.SamplesTotal
	}
	return []string{
		r.Driver,
		string(r.Profile),
		strconv.FormatBool(sameNode),
		strconv.FormatBool(hostNet),
		strconv.FormatBool(service),
		strconv.Itoa(int(p.DurationSeconds + 0.5)),
		strconv.Itoa(p.Parallel),
		strconv.Itoa(samples),
		strconv.Itoa(p.MessageSizeBytes),
		strconv.FormatFloat(st.CI95Low/scale, 'f', -1, 64),
		strconv.FormatFloat(st.CI95High/scale, 'f', -1, 64),
		fmt.Sprintf("%f", st.Mean/scale),
		metric,
		lat,
		"usec",
	}, true
}
