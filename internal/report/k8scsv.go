package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/figure"
	"github.com/cnperf/cnperf/internal/runfile"
	"github.com/cnperf/cnperf/internal/stats"
)

// k8sNetperfCommonHeader is k8s-netperf's commonCsvHeaderFields (pkg/archive, fb9a2ec): the
// columns both of its CSV files start with (the loss/retransmit file after its "Type").
var k8sNetperfCommonHeader = []string{"Driver", "Profile", "Same node", "Host Network", "VM mode", "Service",
	"External Server", "UDN Info", "Bridge Info", "SR-IOV Info", "Macvlan Info", "Localnet Info",
	"Duration", "Parallelism", "# of Samples", "Message Size", "Burst",
	"Confidence metric - low", "Confidence metric - high"}

// K8sNetperfCSVHeader is k8s-netperf's result CSV header, as its pkg/archive WriteCSVResult
// writes it (commonCsvHeaderFields and four more; k8s-netperf fb9a2ec).
var K8sNetperfCSVHeader = append(append([]string(nil), k8sNetperfCommonHeader...),
	"Avg Throughput", "Throughput Metric", "99%tile Observed Latency", "Latency Metric")

// K8sNetperfLossCSVHeader is the header of k8s-netperf's loss and retransmit CSV
// ("loss-rt-result-*.csv", pkg/archive WriteSpecificCSV): Type, the common columns, Value.
var K8sNetperfLossCSVHeader = append(append([]string{"Type"}, k8sNetperfCommonHeader...), "Value")

// encodeK8sNetperfCSV writes k8s-netperf's result CSV: one row per case that has a figure, with
// k8s-netperf's definitions (pkg/archive commonCsvDataFields and WriteCSVResult):
//
//   - Avg Throughput: the mean over the samples of each sample's figure, streams in Mb/s (10^6
//     bit/s), RR and CRR in OP/s, written with six decimals. UDP_STREAM is the rate RECEIVED,
//     as k8s-netperf writes it: its netperf driver reads omni THROUGHPUT, which for a UDP send
//     test netperf computes from what netserver received (THROUGHPUT equals
//     REMOTE_RECV_THROUGHPUT, not LOCAL_SEND_THROUGHPUT: capture udp_stream in
//     internal/driver/netperf/testdata/captured). cnperf's figure is the same received rate.
//   - Confidence metric - low/high: the 95% Student-t interval of the same per-sample figures,
//     0 and 0 with one sample, as k8s-netperf writes them.
//   - 99%tile Observed Latency: the mean over the samples of each sample's p99 in usec (not the
//     p99 of all transactions merged, which cnperf's own outputs give); on TCP_STREAM and
//     UDP_STREAM the p99 of netperf's send calls, as k8s-netperf writes it (k8sNetperfP99).
//   - VM mode true for a case with a VM endpoint (--vm); External Server true for the
//     external-service path; Macvlan Info "macvlan/MASTER" for a case on --macvlan's definition,
//     Bridge Info "VM Bridge (SERVER ADDRESS)" for a VM server on a secondary network (k8s-netperf's
//     --vm --bridge), else the NAMESPACE/NAME of a case on any other secondary network (--bridge,
//     --network), else empty
//     (k8sNetperfNetworkCells); UDN Info and SR-IOV Info for a network --udnl2, --udnl3, --cudn
//     or --sriov made, as k8s-netperf fills them; Localnet Info empty (k8s-netperf's --localnet
//     is for VMs; cnperf measures pods).
//
// Where k8s-netperf would write 0 for a missing figure, this writes an empty cell; a case with
// no successful sample is left out (it has no figure to write).
func encodeK8sNetperfCSV(w io.Writer, runs []*api.Run) error {
	return writeK8sNetperfRows(w, K8sNetperfCSVHeader, runs, func(r *api.Result) [][]string {
		if row, ok := k8sNetperfRow(r); ok {
			return [][]string{row}
		}
		return nil
	})
}

// encodeK8sNetperfLossCSV writes k8s-netperf's loss and retransmit CSV (pkg/archive
// WriteSpecificCSV): a "UDP Percent Loss" row for each UDP_STREAM case and a "TCP
// Retransmissions" row for each case whose profile contains TCP_STREAM (TCP_STREAM_LAT too, as
// k8s-netperf's strings.Contains has it), Value the mean over the samples with six decimals.
// A case without the figure (a driver that does not count retransmits) gets an empty Value
// where k8s-netperf would write 0; a case with no successful sample is left out.
func encodeK8sNetperfLossCSV(w io.Writer, runs []*api.Run) error {
	return writeK8sNetperfRows(w, K8sNetperfLossCSVHeader, runs, func(r *api.Result) [][]string {
		common, ok := k8sNetperfCommon(r)
		if !ok {
			return nil
		}
		value := func(f figure.Figure) string {
			var xs []float64
			for i := range r.Samples {
				if s := &r.Samples[i]; stats.Successful(s) {
					if x, ok := f.Sample(s); ok {
						xs = append(xs, x)
					}
				}
			}
			if len(xs) == 0 {
				return ""
			}
			return fmt.Sprintf("%f", stats.Mean(xs))
		}
		var rows [][]string
		if r.Profile == api.UDPStream {
			v := value(figure.Loss)
			rows = append(rows, append(append([]string{"UDP Percent Loss"}, common...), v))
		}
		if strings.Contains(string(r.Profile), string(api.TCPStream)) {
			v := value(figure.Retransmits)
			rows = append(rows, append(append([]string{"TCP Retransmissions"}, common...), v))
		}
		return rows
	})
}

func writeK8sNetperfRows(w io.Writer, header []string, runs []*api.Run, rows func(*api.Result) [][]string) error {
	return runfile.WriteCSVRows(w, header, runs, func(_ *api.Run, r *api.Result) [][]string { return rows(r) })
}

// k8sNetperfFigure is one sample's figure in k8s-netperf's unit, or false.
func k8sNetperfFigure(p api.Profile, s *api.Sample) (float64, bool) {
	switch {
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

// k8sNetperfFigures are the successful samples' figures.
func k8sNetperfFigures(r *api.Result) []float64 {
	var figs []float64
	for i := range r.Samples {
		s := &r.Samples[i]
		if !stats.Successful(s) {
			continue
		}
		if v, ok := k8sNetperfFigure(r.Profile, s); ok {
			figs = append(figs, v)
		}
	}
	return figs
}

// k8sNetperfCommon is k8s-netperf's commonCsvDataFields of a case, or false when the case has
// no figure.
func k8sNetperfCommon(r *api.Result) ([]string, bool) {
	figs := k8sNetperfFigures(r)
	if len(figs) == 0 {
		return nil, false
	}
	st := stats.Describe(figs)
	lo, hi := 0.0, 0.0
	if len(figs) > 1 {
		lo, hi = st.CI95Low, st.CI95High
	}
	p := r.Params
	row, _ := r.Path.Row()
	sameNode := row.SameHost()
	hostNet := p.HostNetwork || row.HostNetwork()
	service := p.Service || row.Service()
	udn, bridge, sriov, macvlan := k8sNetperfNetworkCells(r)
	samples := p.Samples
	if samples == 0 {
		samples = r.Summary.SamplesTotal
	}
	return []string{
		r.Driver,
		string(r.Profile),
		strconv.FormatBool(sameNode),
		strconv.FormatBool(hostNet),
		strconv.FormatBool(k8sNetperfVM(r)),
		strconv.FormatBool(service),
		strconv.FormatBool(row.Access == api.AccessExternal),
		udn, bridge, sriov, macvlan, "",
		strconv.Itoa(int(p.DurationSeconds + 0.5)),
		strconv.Itoa(p.Parallel),
		strconv.Itoa(samples),
		strconv.Itoa(p.MessageSizeBytes),
		strconv.Itoa(p.Burst),
		strconv.FormatFloat(lo, 'f', -1, 64),
		strconv.FormatFloat(hi, 'f', -1, 64),
	}, true
}

// k8sNetperfNetworkCells are the "Bridge Info" and "Macvlan Info" cells of a case, as
// k8s-netperf writes them (cmd/k8s-netperf, executeWorkload): they say which of its flags put
// the case on the network, not what the network is. Its --macvlan MASTER measures on the
// definition it creates, macvlan-netperf, and writes "macvlan/MASTER" in Macvlan Info; its
// --bridge takes any definition (a macvlan or ipvlan one too) and writes its NAMESPACE/NAME in
// Bridge Info. So: Macvlan Info for a macvlan network named macvlan-netperf with a master (what
// --macvlan makes, in cnperf too), Bridge Info for every other secondary network; both empty
// on the cluster's own networks.
//
// A network one of its modes made is said as k8s-netperf says it: UDN Info "layer2" or "layer3"
// for --udnl2 and --udnl3, "Cudn -VALUE" for --cudn VALUE (VALUE as given, k8s-netperf's
// spelling, no space after the dash), SR-IOV Info "sriov/PF" for --sriov PF; Bridge Info empty.
func k8sNetperfNetworkCells(r *api.Result) (udn, bridge, sriov, macvlan string) {
	if r.Placement == nil || r.Placement.Attachment == nil {
		return "", "", "", ""
	}
	a := r.Placement.Attachment
	if m := a.Mode; m != nil {
		switch m.Kind {
		case "udn":
			return m.Value, "", "", ""
		case "cudn":
			return "Cudn -" + m.Value, "", "", ""
		case "sriov":
			return "", "", "sriov/" + m.Value, ""
		}
	}
	if _, name, _ := strings.Cut(a.Network, "/"); a.Type == "macvlan" && name == api.K8sNetperfMacvlanName && a.Master != "" {
		return "", "", "", "macvlan/" + a.Master
	}
	if r.Placement.Server.VM != nil && a.ServerIP != "" {
		// k8s-netperf's --vm --bridge: "VM Bridge (SERVER ADDRESS)" (executeWorkload, fb9a2ec)
		return "", "VM Bridge (" + a.ServerIP + ")", "", ""
	}
	return "", a.Network, "", ""
}

// k8sNetperfVM is k8s-netperf's "VM mode" cell: whether the case's endpoints are VMs (--vm).
func k8sNetperfVM(r *api.Result) bool {
	return r.Placement != nil && (r.Placement.Server.VM != nil || r.Placement.Client.VM != nil)
}

func k8sNetperfRow(r *api.Result) ([]string, bool) {
	common, ok := k8sNetperfCommon(r)
	if !ok {
		return nil, false
	}
	metric := "OP/s"
	if r.Profile.IsStream() {
		metric = "Mb/s"
	}
	var p99s []float64
	for i := range r.Samples {
		s := &r.Samples[i]
		if !stats.Successful(s) {
			continue
		}
		if v, ok := k8sNetperfP99(s); ok {
			p99s = append(p99s, v)
		}
	}
	lat := ""
	if len(p99s) > 0 {
		lat = fmt.Sprint(stats.Mean(p99s))
	}
	return append(common,
		fmt.Sprintf("%f", stats.Mean(k8sNetperfFigures(r))),
		metric,
		lat,
		"usec",
	), true
}

// k8sNetperfP99 is one sample's p99 in usec as k8s-netperf reads it from its tool: the round
// trip's (stats.SampleP99), else on a stream the send calls' (netperf's P99_LATENCY, which
// k8s-netperf asks for on every test); for parallel flows without a combined figure, the mean
// of the flows' p99s truncated to a whole number, as super-netperf averages its netperf
// processes' P99_LATENCY (`echo $l/$counter | bc`: bc's scale 0 truncates).
func k8sNetperfP99(s *api.Sample) (float64, bool) {
	if v, ok := stats.SampleP99(s); ok {
		return v, true
	}
	if l := s.SendCallMicroseconds; l != nil && l.P99 != nil {
		return *l.P99, true
	}
	if len(s.Flows) == 0 {
		return 0, false
	}
	var sum float64
	for i := range s.Flows {
		v, ok := k8sNetperfP99(&s.Flows[i])
		if !ok {
			return 0, false
		}
		sum += v
	}
	return math.Trunc(sum / float64(len(s.Flows))), true
}
