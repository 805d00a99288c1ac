package gate

import (
	"math"
	"strings"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/plan"
)

func stat(mean, half float64) *api.Stat {
	return &api.Stat{N: 3, Mean: mean, Median: mean, Min: mean - half, Max: mean + half, CI95Low: mean - half, CI95High: mean + half}
}

func result(profile api.Profile, drv string, path api.Path, p api.Params, s api.Summary) api.Result {
	if p.MessageSizeBytes == 0 {
		p.MessageSizeBytes = 1024
	}
	if p.Parallel == 0 {
		p.Parallel = 1
	}
	return api.Result{Profile: profile, Driver: drv, Path: path, Params: p, Summary: s}
}

func tput(mean, half float64) api.Summary {
	return api.Summary{SamplesTotal: 3, ThroughputBitsPerSecond: stat(mean, half)}
}

func TestTolerance(t *testing.T) {
	host := func(drv string, mean float64) api.Result {
		return result(api.TCPStream, drv, api.PathHostHost, api.Params{}, tput(mean, mean*0.01))
	}
	pod := func(drv string, mean float64) api.Result {
		return result(api.TCPStream, drv, api.PathPodPodCrossNode, api.Params{}, tput(mean, mean*0.01))
	}
	tests := []struct {
		name       string
		results    []api.Result
		pct        float64
		violations int
		report     []string
		messages   []string
	}{
		{
			name:    "within tolerance",
			results: []api.Result{host("iperf3", 10e9), pod("iperf3", 9.5e9)},
			pct:     10,
			report: []string{`Tolerance 10.0%: pod network vs hostNetwork, same profile, driver, path class and parameters
CASE, PATHS                        MEAN ± 95% CI         N   DIFF  CIs OVERLAP  RESULT
TCP_STREAM iperf3 1024B x1
  hostNetwork  host-host           10.00 ± 0.10 Gbit/s   3
  pod network  pod-pod-cross-node  9.500 ± 0.095 Gbit/s  3  -5.0%  no           pass
PASS: 1 comparison(s) within 10.0% (diff = (pod - host) / host)
`},
			violations: 0,
		},
		{
			name:       "pod network slower beyond tolerance",
			results:    []api.Result{host("iperf3", 10e9), pod("iperf3", 8e9)},
			pct:        10,
			violations: 1,
			report:     []string{"-20.0%", "FAIL", "no"},
			messages:   []string{"pod network 8.000 Gbit/s is 20.0% slower than hostNetwork 10.00 Gbit/s, beyond the 10.0% tolerance"},
		},
		{
			name:       "pod network faster beyond tolerance counts too",
			results:    []api.Result{host("qperf", 5e9), pod("qperf", 6e9)},
			pct:        10,
			violations: 1,
			messages:   []string{"20.0% faster"},
		},
		{
			name:       "per driver: one passes, one fails",
			results:    []api.Result{host("iperf3", 10e9), host("native", 10e9), pod("iperf3", 9.9e9), pod("native", 7e9)},
			pct:        5,
			violations: 1,
			messages:   []string{"TCP_STREAM native host-host vs pod-pod-cross-node"},
		},
		{
			name: "different message sizes are not compared",
			results: []api.Result{host("iperf3", 10e9),
				result(api.TCPStream, "iperf3", api.PathPodPodCrossNode, api.Params{MessageSizeBytes: 8192}, tput(1e9, 1e7))},
			pct:        10,
			violations: 1,
			messages:   []string{"nothing to compare"},
		},
		{
			name: "overlapping intervals are said",
			results: []api.Result{result(api.TCPStream, "iperf3", api.PathHostHost, api.Params{}, tput(10e9, 3e9)),
				result(api.TCPStream, "iperf3", api.PathPodPodCrossNode, api.Params{}, tput(8e9, 3e9))},
			pct:        10,
			violations: 1,
			messages:   []string{"confidence intervals overlap"},
		},
		{
			name: "RR profiles compare transactions per second",
			results: []api.Result{
				result(api.TCPRR, "netperf", api.PathHostHost, api.Params{}, api.Summary{TransactionsPerSecond: stat(20000, 100)}),
				result(api.TCPRR, "netperf", api.PathPodPodCrossNode, api.Params{}, api.Summary{TransactionsPerSecond: stat(15000, 100)}),
			},
			pct:        10,
			violations: 1,
			report:     []string{"20.00 ± 0.10 k trans/s", "15.00 ± 0.10 k trans/s", "-25.0%"},
		},
		{
			name: "k8s-netperf style hostNetwork flag on a pod path, same node",
			results: []api.Result{
				result(api.TCPStream, "netperf", api.PathPodPodSameNode, api.Params{HostNetwork: true}, tput(30e9, 1e8)),
				result(api.TCPStream, "netperf", api.PathPodPodSameNode, api.Params{}, tput(29e9, 1e8)),
			},
			pct:    10,
			report: []string{"pod-pod-same-node+hostNetwork  30.00 ± 0.10 Gbit/s", "pod-pod-same-node              29.00", "pass"},
		},
		{
			name: "a side without data fails",
			results: []api.Result{host("iperf3", 10e9),
				result(api.TCPStream, "iperf3", api.PathPodPodCrossNode, api.Params{}, api.Summary{SamplesTotal: 3, SamplesFailed: 3})},
			pct:        10,
			violations: 1,
			messages:   []string{"cannot compare, no successful throughputBitsPerSecond on pod-pod-cross-node"},
		},
		{
			name: "the hostNetwork side without data fails too",
			results: []api.Result{result(api.TCPStream, "iperf3", api.PathHostHost, api.Params{}, api.Summary{SamplesTotal: 3, SamplesFailed: 3}),
				pod("iperf3", 9e9)},
			pct:        10,
			violations: 1,
			report:     []string{"FAIL (no data)", "FAIL: 1 of 1 comparison(s)"},
			messages:   []string{"cannot compare, no successful throughputBitsPerSecond on host-host"},
		},
		{
			name:       "more pod results than hostNetwork ones: each is compared with the last host one",
			results:    []api.Result{host("iperf3", 10e9), pod("iperf3", 9.5e9), pod("iperf3", 7e9)},
			pct:        10,
			violations: 1,
			report:     []string{"-5.0%", "-30.0%", "FAIL: 1 of 2 comparison(s)"},
			messages:   []string{"30.0% slower"},
		},
		{
			name:       "paths outside the comparison are ignored",
			results:    []api.Result{host("iperf3", 10e9), pod("iperf3", 9.8e9), result(api.TCPStream, "iperf3", api.PathPodNodePort, api.Params{}, tput(1e9, 1e7))},
			pct:        10,
			violations: 0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			report, vs := Tolerance(&api.Run{Results: tt.results}, tt.pct)
			if len(vs) != tt.violations {
				t.Errorf("%d violations, want %d: %v\n%s", len(vs), tt.violations, vs, report)
			}
			for _, w := range tt.report {
				if !strings.Contains(report, w) {
					t.Errorf("report lacks %q:\n%s", w, report)
				}
			}
			for _, w := range tt.messages {
				found := false
				for _, v := range vs {
					if strings.Contains(v.Message, w) {
						found = true
					}
				}
				if !found {
					t.Errorf("no violation says %q: %v", w, vs)
				}
			}
		})
	}
}

// TestToleranceReportFitsTheTerminal: the report is for people and fits 120 columns even for
// long labels (a hostNetwork flag on a pod path, a burst, IPv6, a missing side), with its
// columns aligned: every line of the old one-row layout was 150 to 250 columns wide.
func TestToleranceReportFitsTheTerminal(t *testing.T) {
	p := api.Params{MessageSizeBytes: 131072, Parallel: 16, Burst: 64, IPFamily: "ipv6"}
	hostP := p
	hostP.HostNetwork = true
	rr := func(mean float64) api.Summary {
		return api.Summary{SamplesTotal: 3, TransactionsPerSecond: stat(mean, mean/3)}
	}
	for _, tc := range []struct {
		name    string
		results []api.Result
		verdict string
	}{
		{"throughput", []api.Result{
			result(api.TCPStream, "sockperf", api.PathPodPodSameNode, hostP, tput(14.63e9, 0.35e9)),
			result(api.TCPStream, "sockperf", api.PathPodPodSameNode, p, tput(12.19e9, 0.52e9))}, "pass"},
		{"transactions, one side without data", []api.Result{
			result(api.TCPRR, "sockperf", api.PathPodPodSameNode, hostP, rr(139.0e3)),
			result(api.TCPRR, "sockperf", api.PathPodPodSameNode, p, api.Summary{SamplesTotal: 3})}, "FAIL (no data)"},
	} {
		report, _ := Tolerance(&api.Run{Results: tc.results}, 25)
		lines := strings.Split(strings.TrimSuffix(report, "\n"), "\n")
		for _, l := range lines {
			if n := len([]rune(l)); n > 120 {
				t.Errorf("%s: a line of %d columns:\n%s", tc.name, n, l)
			}
		}
		if len(lines) != 6 {
			t.Fatalf("%s: %d lines, want title, header, case, two rows and the verdict:\n%s", tc.name, len(lines), report)
		}
		col := func(l int, word string) int {
			i := strings.Index(lines[l], word)
			if i < 0 {
				t.Fatalf("%s: line %d lacks %q:\n%s", tc.name, l, word, report)
			}
			return len([]rune(lines[l][:i]))
		}
		startsAt := func(l, c int) bool { r := []rune(lines[l]); return len(r) > c && r[c-1] == ' ' && r[c] != ' ' }
		if m := col(1, "MEAN"); !startsAt(3, m) || !startsAt(4, m) {
			t.Errorf("%s: the figures are not under MEAN:\n%s", tc.name, report)
		}
		if col(1, "RESULT") != col(4, tc.verdict) {
			t.Errorf("%s: the verdict is not under RESULT:\n%s", tc.name, report)
		}
		if strings.Contains(report, " \n") {
			t.Errorf("%s: trailing blanks:\n%q", tc.name, report)
		}
	}
}

func TestToleranceViolationFields(t *testing.T) {
	run := &api.Run{Results: []api.Result{
		result(api.TCPStream, "iperf3", api.PathHostHost, api.Params{}, tput(10e9, 1e8)),
		result(api.TCPStream, "iperf3", api.PathPodPodCrossNode, api.Params{}, tput(8.5e9, 1e8)),
	}}
	_, vs := Tolerance(run, -10) // a negative tolerance means the same as a positive one
	if len(vs) != 1 {
		t.Fatalf("violations %v", vs)
	}
	v := vs[0]
	if v.Driver != "iperf3" || v.HostPath != api.PathHostHost || v.PodPath != api.PathPodPodCrossNode || v.Metric != "throughputBitsPerSecond" ||
		math.Abs(v.DiffPercent+15) > 1e-9 || v.TolerancePercent != 10 || v.Host.Mean != 10e9 || v.Pod.Mean != 8.5e9 {
		t.Errorf("violation = %+v", v)
	}
}

func TestCheckPlan(t *testing.T) {
	c := func(path api.Path, hostNet bool) plan.Case {
		return plan.Case{Profile: api.TCPStream, Driver: "iperf3", Path: path,
			Params: api.Params{MessageSizeBytes: 1024, Parallel: 1, HostNetwork: hostNet}}
	}
	if err := CheckPlan([]plan.Case{c(api.PathHostHost, false), c(api.PathPodPodCrossNode, false)}); err != nil {
		t.Errorf("host-host + pod-pod-cross-node: %v", err)
	}
	if err := CheckPlan([]plan.Case{c(api.PathPodPodSameNode, true), c(api.PathPodPodSameNode, false)}); err != nil {
		t.Errorf("hostNetwork flag pair: %v", err)
	}
	if err := CheckPlan([]plan.Case{c(api.PathPodPodCrossNode, false), c(api.PathPodClusterIP, false)}); err == nil {
		t.Error("no hostNetwork side accepted")
	}
}
