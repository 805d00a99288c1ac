package report

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/figure"
)

// Prometheus metrics (-o prometheus): each case's headline figures as gauges in Prometheus'
// text exposition format (version 0.0.4), in base units (seconds, bits per second, ratios),
// every family with HELP and TYPE lines. A failed case (CaseFailed) has cnperf_case_failed 1
// and no figure at all: never a 0 that would read as a measurement. The metric names and
// labels are listed in docs/reporting.md.

// promLabel is one label pair; values are escaped when written.
type promLabel struct{ name, value string }

// promSeries is one sample line of a family: the name suffix ("" or "_sum", "_count"), the
// labels and the value.
type promSeries struct {
	suffix string
	labels []promLabel
	value  float64
}

// promFamily is one metric family: its lines are written together under its HELP and TYPE.
type promFamily struct {
	name, help, typ string
	series          []promSeries
}

// The families in the order they are written.
const (
	famRunInfo = iota
	famRunStart
	famRunEnd
	famRunInterrupted
	famCaseFailed
	famCaseSamples
	famCaseFailedSamples
	famThroughput
	famPackets
	famTransactions
	famConnections
	famLatency
	famLatencyMean
	famJitter
	famLoss
	famRetransmits
	famCPU
	famCount
)

func promFamilies() []promFamily {
	return []promFamily{
		famRunInfo:           {"cnperf_run_info", "A cnperf run: its uuid, cnperf version, platform and CNI; always 1.", "gauge", nil},
		famRunStart:          {"cnperf_run_start_timestamp_seconds", "When the run started, in seconds since the Unix epoch.", "gauge", nil},
		famRunEnd:            {"cnperf_run_end_timestamp_seconds", "When the run ended, in seconds since the Unix epoch (absent when it has no end).", "gauge", nil},
		famRunInterrupted:    {"cnperf_run_interrupted", "1 when the run was cut short (Ctrl-C, SIGTERM, a missing end record), else 0.", "gauge", nil},
		famCaseFailed:        {"cnperf_case_failed", "1 when the case has no usable figure (it failed as a whole or every sample failed), else 0.", "gauge", nil},
		famCaseSamples:       {"cnperf_case_samples", "Measured samples of the case (warm-ups excluded).", "gauge", nil},
		famCaseFailedSamples: {"cnperf_case_failed_samples", "Measured samples of the case that failed.", "gauge", nil},
		famThroughput:        {"cnperf_throughput_bytes_per_second", "Throughput in bytes per second (Prometheus' base unit: bits / 8), mean over the case's successful samples.", "gauge", nil},
		famPackets:           {"cnperf_packets_per_second", "Packet rate, mean over the case's successful samples.", "gauge", nil},
		famTransactions:      {"cnperf_transactions_per_second", "Request/response transactions per second, mean over the case's successful samples.", "gauge", nil},
		famConnections:       {"cnperf_connections_per_second", "Connections (connect, transaction, close) per second, mean over the case's successful samples.", "gauge", nil},
		famLatency:           {"cnperf_latency_seconds", "Round-trip time of one transaction: percentiles, and sum and count of the transactions when they were counted.", "summary", nil},
		famLatencyMean:       {"cnperf_latency_mean_seconds", "Mean round-trip time of one transaction.", "gauge", nil},
		famJitter:            {"cnperf_jitter_seconds", "UDP jitter, mean over the case's successful samples.", "gauge", nil},
		famLoss:              {"cnperf_loss_ratio", "Share of datagrams lost (0-1), mean over the case's successful samples.", "gauge", nil},
		famRetransmits:       {"cnperf_retransmits", "TCP segments retransmitted in one sample, mean over the case's successful samples.", "gauge", nil},
		famCPU:               {"cnperf_process_cpu_seconds_per_second", "CPU time of the measuring process per second of the window (1 = one CPU busy), by role (client, server).", "gauge", nil},
	}
}

// encodePrometheus writes runs as Prometheus metrics. With several runs every series carries
// the run's uuid (run_uuid), so that the cases of different runs stay different series.
func encodePrometheus(w io.Writer, runs []*api.Run) error {
	fams := promFamilies()
	add := func(f int, suffix string, labels []promLabel, v float64) {
		fams[f].series = append(fams[f].series, promSeries{suffix, labels, v})
	}
	for _, run := range runs {
		runLabels, err := promRunLabels(run)
		if err != nil {
			return err
		}
		var base []promLabel
		if len(runs) > 1 {
			base = append(base, promLabel{"run_uuid", run.UUID})
		}
		info := []promLabel{{"run_uuid", run.UUID}, {"cnperf_version", run.CnperfVersion}, {"platform", run.Platform}}
		if run.Cluster != nil {
			info = append(info, promLabel{"cni", run.Cluster.CNI}, promLabel{"cni_version", run.Cluster.CNIVersion})
		}
		add(famRunInfo, "", promJoin(info, runLabels), 1)
		runSeries := promJoin(base, runLabels)
		if !run.StartTime.IsZero() {
			add(famRunStart, "", runSeries, promTimestamp(run))
		}
		if !run.EndTime.IsZero() {
			add(famRunEnd, "", runSeries, float64(run.EndTime.UnixNano())/1e9)
		}
		add(famRunInterrupted, "", runSeries, promBool(run.Interrupted))

		cases := promCaseLabels(run.Results)
		for i := range run.Results {
			r := &run.Results[i]
			l := promJoin(base, cases[i], runLabels)
			failed := CaseFailed(r)
			add(famCaseFailed, "", l, promBool(failed))
			add(famCaseSamples, "", l, float64(r.Summary.SamplesTotal))
			add(famCaseFailedSamples, "", l, float64(r.Summary.SamplesFailed))
			if failed {
				continue
			}
			s := &r.Summary
			// The figures of figure.All that are a mean over samples, in base units.
			for _, st := range []struct {
				fam  int
				fig  figure.Figure
				div  float64
				role string // the role label of a CPU figure
			}{
				{famThroughput, figure.Throughput, 8, ""},
				{famPackets, figure.PacketRate, 1, ""},
				{famTransactions, figure.TransactionRate, 1, ""},
				{famConnections, figure.ConnectionRate, 1, ""},
				{famJitter, figure.Jitter, 1e6, ""},
				{famLoss, figure.Loss, 100, ""},
				{famRetransmits, figure.Retransmits, 1, ""},
				{famCPU, figure.CPUClient, 100, "client"},
				{famCPU, figure.CPUServer, 100, "server"},
			} {
				if x := st.fig.Stat(s); x != nil && x.N > 0 {
					labels := l
					if st.role != "" {
						labels = promJoin(l, []promLabel{{"role", st.role}})
					}
					add(st.fam, "", labels, x.Mean/st.div)
				}
			}
			if lat := s.LatencyMicroseconds; lat != nil {
				for _, q := range latPoints {
					if v := q.get(lat); v != nil {
						add(famLatency, "", promJoin(l, []promLabel{{"quantile", q.q}}), *v/1e6)
					}
				}
				if lat.Count != nil && lat.Mean != nil {
					add(famLatency, "_sum", l, *lat.Mean*float64(*lat.Count)/1e6)
					add(famLatency, "_count", l, float64(*lat.Count))
				}
				if lat.Mean != nil {
					add(famLatencyMean, "", l, *lat.Mean/1e6)
				}
			}
		}
	}
	var b strings.Builder
	for _, f := range fams {
		if len(f.series) == 0 {
			continue
		}
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", f.name, promEscapeHelp(f.help), f.name, f.typ)
		for _, s := range f.series {
			b.WriteString(f.name + s.suffix)
			if len(s.labels) > 0 {
				b.WriteByte('{')
				for i, l := range s.labels {
					if i > 0 {
						b.WriteByte(',')
					}
					b.WriteString(l.name + `="` + promEscapeValue(l.value) + `"`)
				}
				b.WriteByte('}')
			}
			b.WriteString(" " + promFloat(s.value) + "\n")
		}
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write prometheus metrics: %w", err)
	}
	return nil
}

func promTimestamp(run *api.Run) float64 { return float64(run.StartTime.UnixNano()) / 1e9 }

// promCaseLabels are the labels naming each case: profile, driver, path, the IP family and
// whether the endpoints use the host network, the traffic parameters, the secondary network
// (NAMESPACE/NAME of its NetworkAttachmentDefinition) when the case ran on one, the local topology and
// the client's and server's nodes when known. Two cases of a run with the same labels (a
// plan that measures the same case twice) get a case label, their 1-based index in the run,
// so that each stays its own series.
func promCaseLabels(results []api.Result) [][]promLabel {
	out := make([][]promLabel, len(results))
	seen := map[string][]int{}
	for i := range results {
		r := &results[i]
		p := r.Params
		family := p.IPFamily
		if family == "" {
			family = "ipv4"
		}
		l := []promLabel{
			{"profile", string(r.Profile)}, {"driver", r.Driver}, {"path", string(r.Path)},
			{"ip_family", family}, {"host_network", strconv.FormatBool(p.HostNetwork)},
			{"message_size_bytes", strconv.Itoa(p.MessageSizeBytes)}, {"parallel", strconv.Itoa(p.Parallel)},
			{"burst", strconv.Itoa(p.Burst)},
		}
		if p.ResponseSizeBytes > 0 {
			l = append(l, promLabel{"response_size_bytes", strconv.Itoa(p.ResponseSizeBytes)})
		}
		if p.RateBitsPerSecond > 0 {
			l = append(l, promLabel{"rate_bits_per_second", strconv.FormatFloat(p.RateBitsPerSecond, 'g', -1, 64)})
		}
		if p.Service {
			l = append(l, promLabel{"service", "true"})
		}
		if p.Network != "" {
			l = append(l, promLabel{"network", p.Network})
		}
		if r.Topology != nil && r.Topology.Flavour != "" {
			l = append(l, promLabel{"topology", r.Topology.Flavour})
		}
		if pl := r.Placement; pl != nil {
			if pl.Client.Node != "" {
				l = append(l, promLabel{"client_node", pl.Client.Node})
			}
			if pl.Server.Node != "" {
				l = append(l, promLabel{"server_node", pl.Server.Node})
			}
		}
		out[i] = l
		k := promKey(l)
		seen[k] = append(seen[k], i)
	}
	for _, idx := range seen {
		if len(idx) < 2 {
			continue
		}
		for _, i := range idx {
			out[i] = append(out[i], promLabel{"case", strconv.Itoa(i + 1)})
		}
	}
	return out
}

func promKey(l []promLabel) string {
	var b strings.Builder
	for _, p := range l {
		b.WriteString(p.name + "=" + strconv.Quote(p.value) + ",")
	}
	return b.String()
}

// promRunLabels are the run's labels (--label k=v) as label_<name>, the name sanitised to
// Prometheus' rules (every character outside [a-zA-Z0-9_] becomes _), sorted by name. Two
// labels that sanitise to the same name are an error naming both.
func promRunLabels(run *api.Run) ([]promLabel, error) {
	keys := make([]string, 0, len(run.Labels))
	for k := range run.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	from := map[string]string{}
	out := make([]promLabel, 0, len(keys))
	for _, k := range keys {
		name := "label_" + promLabelName(k)
		if prev, ok := from[name]; ok {
			return nil, fmt.Errorf("run %s: labels %q and %q are both the Prometheus label %s", run.UUID, prev, k, name)
		}
		from[name] = k
		out = append(out, promLabel{name, run.Labels[k]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

// PrometheusLabel is one label pair of the Prometheus metrics.
type PrometheusLabel struct{ Name, Value string }

// PrometheusRunLabels are the labels every series of run carries for the run's labels in
// -o prometheus (label_<name>, sorted, empty values dropped as Prometheus drops them): the
// Pushgateway sink groups a run's metrics by them, so the grouping key and the series agree.
func PrometheusRunLabels(run *api.Run) ([]PrometheusLabel, error) {
	l, err := promRunLabels(run)
	if err != nil {
		return nil, err
	}
	var out []PrometheusLabel
	for _, p := range promJoin(l) {
		out = append(out, PrometheusLabel{p.name, p.value})
	}
	return out, nil
}

// promLabelName sanitises s to Prometheus' label name rules: every character outside
// [a-zA-Z0-9_] becomes _ (the label_ prefix before it makes a leading digit valid).
func promLabelName(s string) string {
	return strings.Map(func(c rune) rune {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' {
			return c
		}
		return '_'
	}, s)
}

// promJoin concatenates label lists, dropping labels with an empty value (Prometheus treats
// an empty value as an absent label).
func promJoin(lists ...[]promLabel) []promLabel {
	var out []promLabel
	for _, l := range lists {
		for _, p := range l {
			if p.value != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

func promBool(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// promFloat formats a sample value as the exposition format spells it.
func promFloat(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// promEscapeValue escapes a label value: backslash, double quote and line feed.
func promEscapeValue(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}

// promEscapeHelp escapes a HELP text: backslash and line feed.
func promEscapeHelp(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(s)
}
