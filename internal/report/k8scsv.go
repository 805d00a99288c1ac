package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/stats"
)

// K8sNetperfCSVHeader is k8s-netperf's result CSV header, as its pkg/archive WriteCSVResult
// writes it (commonCsvHeaderFields and four more; k8s-netperf fb9a2ec).
var K8sNetperfCSVHeader = []string{"Driver", "Profile", "Same node", "Host Network", "VM mode", "Service",
	"External Server", "UDN Info", "Bridge Info", "SR-IOV Info", "Macvlan Info", "Localnet Info",
	"Duration", "Parallelism", "# of Samples", "Message Size", "Burst",
	"Confidence metric - low", "Confidence metric - high",
	"Avg Throughput", "Throughput Metric", "99%tile Observed Latency", "Latency Metric"}

// encodeK8sNetperfCSV writes k8s-netperf's result CSV: one row per case that has a figure, with
// k8s-netperf's definitions (pkg/archive commonCsvDataFields and WriteCSVResult):
//
//   - Avg Throughput: the mean over the samples of each sample's figure, streams in Mb/s (10^6
//     bit/s), RR and CRR in OP/s, written with six decimals. UDP_STREAM is the rate as sent,
//     as k8s-netperf's netperf (omni THROUGHPUT of a send test) and iperf3 (end.sum) give it,
//     computed from each sample's bytes sent and window; cnperf's own outputs give the rate as
//     received (docs/reporting.md).
//   - Confidence metric - low/high: the 95% Student-t interval of the same per-sample figures,
//     0 and 0 with one sample, as k8s-netperf writes them.
//   - 99%tile Observed Latency: the mean over the samples of each sample's p99 in usec (not the
//     p99 of all transactions merged, which cnperf's own outputs give).
//   - VM mode false; External Server true for the external-service path; the UDN, bridge,
//     SR-IOV, macvlan and localnet columns empty (cnperf makes none of those networks).
//
// Where k8s-netperf would write 0 for a missing figure, this writes an empty cell; a case with
// no successful sample is left out (it has no figure to write).
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

// k8sNetperfFigure is one sample's figure in k8s-netperf's unit, or false.
func k8sNetperfFigure(p api.Profile, s *api.Sample) (float64, bool) {
	switch {
	case p == api.UDPStream:
		if s.BytesSent != nil && s.DurationSeconds > 0 {
			return float64(*s.BytesSent) * 8 / s.DurationSeconds / 1e6, true
		}
		if s.ThroughputBitsPerSecond != nil {
			return *s.ThroughputBitsPerSecond / 1e6, true
		}
	case p.IsStream():
		if s.ThroughputBitsPerSecond != nil {
			return *s.ThroughputBitsPerSecond / 1e6, true
		}
	case p == api.TCPCRR && s.ConnectionsPerSecond != nil:
		return *s.ConnectionsPerSecond, true
	default:
		if s.TransactionsPerSecond != nil {
			return *s.TransactionsPerSecond, true
		}
	}
	return 0, false
}

func k8sNetperfRow(r *api.Result) ([]string, bool) {
	metric := "OP/s"
	if r.Profile.IsStream() {
		metric = "Mb/s"
	}
	var figs, p99s []float64
	for i := range r.Samples {
		s := &r.Samples[i]
		if !stats.Successful(s) {
			continue
		}
		if v, ok := k8sNetperfFigure(r.Profile, s); ok {
			figs = append(figs, v)
		}
		if v, ok := stats.SampleP99(s); ok {
			p99s = append(p99s, v)
		}
	}
	if len(figs) == 0 {
		return nil, false
	}
	st := stats.Describe(figs)
	lo, hi := 0.0, 0.0
	if len(figs) > 1 {
		lo, hi = st.CI95Low, st.CI95High
	}
	lat := ""
	if len(p99s) > 0 {
		lat = fmt.Sprint(stats.Mean(p99s))
	}
	p := r.Params
	sameNode := r.Path == api.PathPodPodSameNode || r.Path == api.PathLoopback
	hostNet := p.HostNetwork || r.Path == api.PathHostHost
	service := p.Service || r.Path == api.PathPodClusterIP || r.Path == api.PathPodNodePort
	samples := p.Samples
	if samples == 0 {
		samples = r.Summary.SamplesTotal
	}
	return []string{
		r.Driver,
		string(r.Profile),
		strconv.FormatBool(sameNode),
		strconv.FormatBool(hostNet),
		"false",
		strconv.FormatBool(service),
		strconv.FormatBool(r.Path == api.PathExternalService),
		"", "", "", "", "",
		strconv.Itoa(int(p.DurationSeconds + 0.5)),
		strconv.Itoa(p.Parallel),
		strconv.Itoa(samples),
		strconv.Itoa(p.MessageSizeBytes),
		strconv.Itoa(p.Burst),
		strconv.FormatFloat(lo, 'f', -1, 64),
		strconv.FormatFloat(hi, 'f', -1, 64),
		fmt.Sprintf("%f", st.Mean),
		metric,
		lat,
		"usec",
	}, true
}
