// Package dashboard builds cnperf's Grafana dashboard (deploy/grafana/cnperf-dashboard.json)
// from code, with Grafana's own typed builders (grafana-foundation-sdk), over the metrics a
// scheduled cnperf pushes (internal/report's -o prometheus, through a Pushgateway): the headline
// figures per path and driver over time, the node pairs, the failures and the alerts of
// deploy/prometheus/cnperf-rules.yaml. The plan, path, driver and profile are variables, and
// the run's labels (label_<name>) are ad hoc filters. TestShippedJSON keeps the shipped file
// equal to JSON(); test/integration's TestPushedRunsInRealPrometheus runs every query of the
// shipped file against a real Prometheus fed by real runs.
package dashboard

import (
	"encoding/json"
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// UID is the dashboard's uid (stable, so that links and provisioning find it).
const UID = "cnperf-always-on"

// The selectors the queries share: the run's group (job, plan) and the case's variables.
const (
	runSel  = `job=~"$job",plan=~"$plan"`
	caseSel = runSel + `,path=~"$path",driver=~"$driver",profile=~"$profile"`
	// legend of a case's series: what tells two cases of one path apart
	caseLegend = "{{path}} {{driver}} {{profile}} {{message_size_bytes}}B x{{parallel}}"
)

func ds() common.DataSourceRef {
	return common.DataSourceRef{Type: cog.ToPtr("prometheus"), Uid: cog.ToPtr("${datasource}")}
}

func query(expr, legend string) *prometheus.DataqueryBuilder {
	return prometheus.NewDataqueryBuilder().Datasource(ds()).Expr(expr).LegendFormat(legend)
}

func instant(expr string) *prometheus.DataqueryBuilder {
	return prometheus.NewDataqueryBuilder().Datasource(ds()).Expr(expr).Instant().Format(prometheus.PromQueryFormatTable)
}

// status is a stat panel of the Status row: a quarter of the row, the instant value of target
// on a background green below the first of steps and coloured by them above.
func status(title, desc string, target *prometheus.DataqueryBuilder, steps ...dashboard.Threshold) *stat.PanelBuilder {
	return stat.NewPanelBuilder().Title(title).Span(6).Height(4).Datasource(ds()).Description(desc).
		ColorMode(common.BigValueColorModeBackground).
		Thresholds(dashboard.NewThresholdsConfigBuilder().Mode(dashboard.ThresholdsModeAbsolute).
			Steps(append([]dashboard.Threshold{{Color: "green"}}, steps...))).
		WithTarget(target.Instant())
}

// series is a time series panel of one or more queries. Points, not lines only: a figure
// changes once a run (hourly), and a failed case is a gap, never a 0.
func series(title, desc, unit string, span uint32, targets ...*prometheus.DataqueryBuilder) *timeseries.PanelBuilder {
	p := timeseries.NewPanelBuilder().Title(title).Description(desc).Unit(unit).Datasource(ds()).
		Span(span).Height(8).ShowPoints(common.VisibilityModeAlways).PointSize(5).
		LineInterpolation(common.LineInterpolationStepAfter).SpanNulls(common.BoolOrFloat64{Bool: cog.ToPtr(false)}).
		Legend(common.NewVizLegendOptionsBuilder().DisplayMode(common.LegendDisplayModeTable).
			Placement(common.LegendPlacementBottom).ShowLegend(true).Calcs([]string{"lastNotNull", "min", "max"})).
		Tooltip(common.NewVizTooltipOptionsBuilder().Mode(common.TooltipDisplayModeMulti).Sort(common.SortOrderDescending))
	for _, t := range targets {
		p = p.WithTarget(t)
	}
	return p
}

func variable(name, label, metric, labelName string) *dashboard.QueryVariableBuilder {
	q := fmt.Sprintf("label_values(%s, %s)", metric, labelName)
	return dashboard.NewQueryVariableBuilder(name).Label(label).Datasource(ds()).
		Query(dashboard.StringOrMap{String: cog.ToPtr(q)}).Definition(q).
		Multi(true).IncludeAll(true).AllValue(".*").Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
		Sort(dashboard.VariableSortAlphabeticalAsc).
		Current(dashboard.VariableOption{Text: dashboard.StringOrArrayOfString{String: cog.ToPtr("All")},
			Value: dashboard.StringOrArrayOfString{String: cog.ToPtr("$__all")}})
}

// Build returns the dashboard. It is Grafana's classic dashboard JSON (the SDK's dashboard
// package), which every Grafana and its dashboard sidecar load; the SDK prefers its
// dashboardv2 schema, which only Grafana 12's new dashboard API reads.
//
//nolint:staticcheck // the classic schema on purpose (above)
func Build() (dashboard.Dashboard, error) {
	b := dashboard.NewDashboardBuilder("cnperf always on").
		Uid(UID).
		Description("Network performance measured by scheduled cnperf runs (Helm chart deploy/helm/cnperf), pushed to a Pushgateway: "+
			"the last run's figures per case, failures and cnperf's alerts. docs/always-on.md").
		Tags([]string{"cnperf", "network"}).
		Refresh("5m").
		Time("now-7d", "now").
		Timezone(common.TimeZoneBrowser).
		Tooltip(dashboard.DashboardCursorSyncCrosshair).
		WithVariable(dashboard.NewDatasourceVariableBuilder("datasource").Label("Prometheus").Type("prometheus")).
		WithVariable(variable("job", "Pushgateway job", "cnperf_run_info", "job")).
		WithVariable(variable("plan", "Plan", `cnperf_run_info{job=~"$job"}`, "plan")).
		WithVariable(variable("path", "Path", `cnperf_case_samples{`+runSel+`}`, "path")).
		WithVariable(variable("driver", "Driver", `cnperf_case_samples{`+runSel+`}`, "driver")).
		WithVariable(variable("profile", "Profile", `cnperf_case_samples{`+runSel+`}`, "profile")).
		// The run's labels (label_cluster, label_cni, ...) are not known in advance: ad hoc
		// filters apply any label=value to every query.
		WithVariable(dashboard.NewAdHocVariableBuilder("filters").Label("Run labels").Datasource(ds())).

		// What to look at first: is it measuring, is it failing, is it alerting.
		WithRow(dashboard.NewRowBuilder("Status")).
		WithPanel(status("Last run", "Time since the last run of each plan started (the CnperfRunsStopped alert fires after 3 hours).",
			query(`time() - max by (plan) (cnperf_run_start_timestamp_seconds{`+runSel+`})`, "{{plan}}"),
			dashboard.Threshold{Value: cog.ToPtr(2.0 * 3600), Color: "orange"}, dashboard.Threshold{Value: cog.ToPtr(3.0 * 3600), Color: "red"}).Unit("s")).
		WithPanel(status("Failed cases", "Cases of the last runs without a figure (cnperf_case_failed 1: failed, interrupted, or every sample failed).",
			query(`sum(cnperf_case_failed{`+caseSel+`})`, "failed cases"), dashboard.Threshold{Value: cog.ToPtr(1.0), Color: "red"})).
		WithPanel(status("Interrupted runs", "Last runs that were cut short (a CronJob's activeDeadlineSeconds, SIGTERM).",
			query(`sum(cnperf_run_interrupted{`+runSel+`})`, "interrupted runs"), dashboard.Threshold{Value: cog.ToPtr(1.0), Color: "orange"})).
		WithPanel(status("Firing alerts", "cnperf's alerts (deploy/prometheus/cnperf-rules.yaml) firing now.",
			query(`count(ALERTS{alertname=~"Cnperf.+",alertstate="firing"})`, "firing"), dashboard.Threshold{Value: cog.ToPtr(1.0), Color: "red"}).NoValue("0")).

		// The headline figures of every case over time (one point per run).
		WithRow(dashboard.NewRowBuilder("Figures per path and driver")).
		WithPanel(series("Throughput", "Mean throughput of the last run's samples (TCP_STREAM, UDP_STREAM, ...), per case.", "bps", 12,
			query(`cnperf_throughput_bytes_per_second{`+caseSel+`} * 8`, caseLegend))).
		WithPanel(series("Transactions per second", "Request/response rate (TCP_RR, UDP_RR, TCP_CRR), per case.", "reqps", 12,
			query(`cnperf_transactions_per_second{`+caseSel+`}`, caseLegend))).
		WithPanel(series("Latency p50 and p99", "Round-trip time of one transaction, median and 99th percentile.", "s", 12,
			query(`cnperf_latency_seconds{`+caseSel+`,quantile="0.5"}`, "p50 "+caseLegend),
			query(`cnperf_latency_seconds{`+caseSel+`,quantile="0.99"}`, "p99 "+caseLegend))).
		WithPanel(series("Connections per second", "TCP connection rate (TCP_CRR: connect, transaction, close), per case.", "cps", 12,
			query(`cnperf_connections_per_second{`+caseSel+`}`, caseLegend))).
		WithPanel(series("UDP loss", "Share of datagrams lost (UDP_STREAM), per case.", "percentunit", 8,
			query(`cnperf_loss_ratio{`+caseSel+`}`, caseLegend))).
		WithPanel(series("TCP retransmits", "TCP segments retransmitted per sample, per case.", "short", 8,
			query(`cnperf_retransmits{`+caseSel+`}`, caseLegend))).
		WithPanel(series("CPU of the measuring processes", "CPU seconds per second of the load generator, client and server (1 = one CPU busy).", "short", 8,
			query(`cnperf_process_cpu_seconds_per_second{`+caseSel+`}`, "{{role}} "+caseLegend))).

		// The node pairs of the last runs: which client node to which server node, and how fast.
		WithRow(dashboard.NewRowBuilder("Node pairs")).
		WithPanel(nodePairs("Throughput by node pair (last run)", "throughput", "bps",
			"The last run's throughput of each client node → server node, per path and profile.",
			`max by (client_node, server_node, path, profile) (cnperf_throughput_bytes_per_second{`+caseSel+`}) * 8`)).
		WithPanel(nodePairs("Transactions per second by node pair (last run)", "transactions/s", "reqps",
			"The last run's request/response rate of each client node → server node, per path and profile.",
			`max by (client_node, server_node, path, profile) (cnperf_transactions_per_second{`+caseSel+`})`)).

		// Failures and alerts.
		WithRow(dashboard.NewRowBuilder("Failures and alerts")).
		WithPanel(series("Failed cases and samples", "Cases without a figure and failed samples of the last runs, per plan (the figures' gaps).", "short", 12,
			query(`sum by (plan) (cnperf_case_failed{`+caseSel+`})`, "failed cases {{plan}}"),
			query(`sum by (plan) (cnperf_case_failed_samples{`+caseSel+`})`, "failed samples {{plan}}"),
			query(`max by (plan) (cnperf_run_interrupted{`+runSel+`})`, "interrupted {{plan}}"))).
		WithPanel(table.NewPanelBuilder().Title("Failing cases (last run)").Span(12).Height(8).Datasource(ds()).
			Description("The cases of the last runs that have no figure; cnperf report -o wide on the run's results file has the cause.").
			WithTarget(instant(`cnperf_case_failed{` + caseSel + `} == 1`)).
			Transformations(organize(map[string]any{
				"excludeByName": map[string]any{"Time": true, "Value": true, "__name__": true, "instance": true},
			}))).
		WithPanel(table.NewPanelBuilder().Title("cnperf alerts firing").Span(24).Height(8).Datasource(ds()).
			Description("The alerts of deploy/prometheus/cnperf-rules.yaml firing now, with their labels.").
			WithTarget(instant(`ALERTS{alertname=~"Cnperf.+",alertstate="firing"}`)).
			Transformations(organize(map[string]any{
				"excludeByName": map[string]any{"Time": true, "Value": true, "__name__": true, "alertstate": true},
			})))
	return b.Build()
}

// organize is a table's one transformation: Grafana's "organize fields" with opts
// (excludeByName, renameByName).
func organize(opts map[string]any) []dashboard.DataTransformerConfig {
	return []dashboard.DataTransformerConfig{{Id: "organize", Options: opts}}
}

// nodePairs is a table of the last run's figure of each client node → server node: expr's
// instant value, its column named value, in unit.
func nodePairs(title, value, unit, desc, expr string) *table.PanelBuilder {
	return table.NewPanelBuilder().Title(title).Span(12).Height(8).Datasource(ds()).Unit(unit).
		Description(desc).
		WithTarget(instant(expr)).
		Transformations(organize(map[string]any{
			"excludeByName": map[string]any{"Time": true},
			"renameByName":  map[string]any{"client_node": "client node", "server_node": "server node", "Value": value},
		}))
}

// JSON is the dashboard as the shipped file has it (indented, with a final newline).
func JSON() ([]byte, error) {
	d, err := Build()
	if err != nil {
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	out, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	return append(out, '\n'), nil
}
