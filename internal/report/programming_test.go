package report

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/stats"
)

// programmingRun is a run of cnperf programming as its results are built: one result per
// change and client node, a sample per change; one failed as a CNI without policies makes it.
func programmingRun() *api.Run {
	ok := func(p api.Profile, node string, path api.Path, vals ...float64) api.Result {
		r := api.Result{Profile: p, Driver: api.ProgrammingDriver, Path: path,
			Params:    api.Params{Samples: len(vals), Options: map[string]string{"node": node}},
			Placement: &api.Placement{Client: api.Endpoint{Node: node}},
			Programming: &api.Programming{Expect: "open", ProbeIntervalSeconds: 0.005, ErrorBoundSeconds: 0.005, SharedClock: true,
				ClockOffsetSeconds: 0, ClockUncertaintySeconds: 0}}
		for i, v := range vals {
			r.Samples = append(r.Samples, api.Sample{Index: i, ProgrammingSeconds: &v})
		}
		r.Summary = stats.Summarize(r.Samples)
		for _, q := range []float64{0.5, 0.9, 0.99, 1} {
			e, _ := stats.QuantileCI(vals, q, 0.95)
			pc := api.Percentile{Quantile: q, Seconds: e.Value}
			if e.HasLow {
				pc.CILow = &e.Low
			}
			if e.HasHigh {
				pc.CIHigh = &e.High
			}
			r.Programming.Percentiles = append(r.Programming.Percentiles, pc)
		}
		return r
	}
	vals := []float64{0.8, 0.9, 0.85, 0.95, 1.1, 0.7, 0.88, 0.91, 0.93, 0.99}
	failed := api.Result{Profile: api.PolicyDeny, Driver: api.ProgrammingDriver, Path: api.PathPodPodCrossNode,
		Params:      api.Params{Samples: 20, Options: map[string]string{"node": "node2", "standingPolicies": "0"}},
		Placement:   &api.Placement{Client: api.Endpoint{Node: "node2"}},
		Samples:     []api.Sample{{Error: "still open 30s after the probe was ready"}},
		Error:       "NetworkPolicy is not enforced here (does the CNI implement it?): the first change was seen by no client",
		Programming: &api.Programming{Expect: "closed", ProbeIntervalSeconds: 0.005, SharedClock: true}}
	failed.Summary = stats.Summarize(failed.Samples)
	withComponent := ok(api.ServiceCreate, "node1", api.PathPodClusterIP, vals...)
	withComponent.Params.IPFamily = "ipv4" // a Service's results say its family (spec.ipFamilies)
	withComponent.Programming.Component = &api.ComponentFigure{Metric: "kubeproxy_network_programming_duration_seconds", Count: 10,
		MeanSeconds: 1.5, Note: "kube-proxy measures from the EndpointSlice's last-change-trigger-time annotation"}
	atNodePort := ok(api.ServiceCreate, "node1", api.PathPodNodePort, vals...)
	atNodePort.Programming.Component = withComponent.Programming.Component
	atNodePort.Params.IPFamily = "ipv4"
	node2 := ok(api.ServiceCreate, "node2", api.PathPodClusterIP, vals...)
	node2.Params.IPFamily = "ipv4"
	return &api.Run{UUID: "prog", Results: []api.Result{withComponent, atNodePort, node2, failed}}
}

// programmingFelixRun is a run of policy changes with Felix's figure (the server's node's, for
// every client) under 100 standing policies, and the probe's floor the run measured.
func programmingFelixRun() *api.Run {
	run := programmingRun()
	felix := &api.ComponentFigure{Metric: "felix_int_dataplane_apply_time_seconds", Count: 4, MeanSeconds: 0.0125,
		Source: "Felix on node1 (the server's node) (127.0.0.1:9091/metrics)", Note: "Felix times each apply"}
	floor := &api.ProbeFloor{Where: "cnperf's own machine", Changes: 10, MeanSeconds: 0.0026,
		Percentiles: []api.Percentile{{Quantile: 0.5, Seconds: 0.0025}, {Quantile: 0.9, Seconds: 0.0045}, {Quantile: 0.99, Seconds: 0.0049},
			{Quantile: 1, Seconds: 0.0049}}}
	var out []api.Result
	for i, node := range []string{"node1", "node2"} {
		r := run.Results[2] // SERVICE_CREATE from node2, as a template of a measured result
		pr := *r.Programming
		r.Profile, r.Placement = api.PolicyDeny, &api.Placement{Client: api.Endpoint{Node: node}}
		r.Path = []api.Path{api.PathPodPodSameNode, api.PathPodPodCrossNode}[i]
		pr.StandingPolicies, pr.Component, pr.ProbeFloor = 100, felix, floor
		r.Programming = &pr
		out = append(out, r)
	}
	return &api.Run{UUID: "felix", Results: out}
}

// TestProgrammingViewFelix: policy results show their number of standing policies beside
// Felix's figure, and the note states the probe's floor.
func TestProgrammingViewFelix(t *testing.T) {
	enc, err := Lookup("table", Width(120))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := enc.Encode(&b, []*api.Run{programmingFelixRun()}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"(felix_int_dataplane_apply_time_seconds):",
		"CHANGE       CLIENT NODE  POLICIES  OBSERVED  ITS MEAN  CNPERF'S MEAN  DIFFERENCE",
		// 12.5 ms - 901.0 ms
		"POLICY_DENY  node1             100         4  12.50 ms       901.0 ms   -888.5 ms",
		"POLICY_DENY  node2             100         4  12.50 ms       901.0 ms   -888.5 ms",
		"Felix times each apply.",
		"The probe's own floor, measured on cnperf's machine (10 changes with no latency",
		"median 2.500 ms, at most 4.900 ms",
	} {
		// the note is wrapped: compare words
		if !strings.Contains(strings.Join(strings.Fields(out), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "  POLICY_DENY  node1             100         4  12.50 ms       901.0 ms   -888.5 ms\n") {
		t.Errorf("the components' rows are not aligned as expected:\n%s", out)
	}
}

// TestProgrammingView: the table of a programming run ends with the view (percentiles with
// their intervals per node, the error bound, the shared clock, the failure's cause), every
// line within 120 columns, and the case rows have no sizes or flows.
func TestProgrammingView(t *testing.T) {
	enc, err := Lookup("table", Width(120))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := enc.Encode(&b, []*api.Run{programmingRun()}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"How fast the network obeyed",
		// 10 values: the median is the 5th smallest (0.9), its interval ranks 2 and 9 (P(B ≤ 1) =
		// 11/1024 ≤ 0.025 < P(B ≤ 2); P(B ≤ 8) = 1013/1024 ≥ 0.975 > P(B ≤ 7))
		"SERVICE_CREATE  node1        ClusterIP v4  10/10  900.0 ms [800.0 ms, 990.0 ms]  990.0 ms [930.0 ms, -]",
		"SERVICE_CREATE  node1        NodePort v4   10/10  900.0 ms [800.0 ms, 990.0 ms]  990.0 ms [930.0 ms, -]",
		"most 5.000 ms",
		"one clock, no offset applied",
		"failed: POLICY_DENY from node2 via pod IP: NetworkPolicy is not enforced here",
		// once per change and node (its ClusterIP and NodePort results share it): 1.5 s - 0.901 s
		"The components' own figures over the same changes",
		"their mean beside cnperf's",
		"(kubeproxy_network_programming_duration_seconds):",
		"SERVICE_CREATE  node1              10   1.500 s       901.0 ms   +599.0 ms",
		"kube-proxy measures from the EndpointSlice's last-change-trigger-time annotation.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	rows := 0
	for _, l := range strings.Split(out, "\n") {
		if len([]rune(l)) > 120 {
			t.Errorf("line of %d columns: %s", len([]rune(l)), l)
		}
		// "1  SERVICE_CREATE  probe  pod-clusterip  -  -  10/10 ..."
		if f := strings.Fields(l); len(f) > 5 && f[2] == api.ProgrammingDriver {
			rows++
			if f[4] != "-" || f[5] != "-" {
				t.Errorf("case row with sizes or flows: %s", l)
			}
		}
	}
	if rows != 4 {
		t.Errorf("%d case rows, want 4", rows)
	}
}

// TestProgrammingCSV: -o csv carries a programming result's figure (programmingSeconds.*, the
// last columns; before, the CSV had no column for it) and reads back the same.
func TestProgrammingCSV(t *testing.T) {
	run := programmingRun()
	recs := csvRecords(t, encode(t, "csv", run))
	h := recs[0]
	mean, n := slices.Index(h, "programmingSeconds.mean"), slices.Index(h, "programmingSeconds.n")
	if mean < 0 || n < 0 || h[len(h)-1] != "programmingSeconds.ci95High" {
		t.Fatalf("no programmingSeconds columns at the end: %v", h)
	}
	// rows 1..3: the SERVICE_CREATE results, 10 changes of mean 0.901 s; row 4 failed: empty
	for i, want := range []string{"0.901", "0.901", "0.901", ""} {
		if got := recs[i+1][mean]; got != want {
			t.Errorf("row %d: programmingSeconds.mean %q, want %q", i+1, got, want)
		}
	}
	if recs[1][n] != "10" {
		t.Errorf("programmingSeconds.n %q, want 10", recs[1][n])
	}
}

// TestProgrammingHTMLChart: the HTML report charts a programming run's figure per profile
// (before, it had no chart for these profiles).
func TestProgrammingHTMLChart(t *testing.T) {
	out := string(encode(t, "html", programmingRun()))
	for _, want := range []string{"SERVICE_CREATE programming", "POLICY_DENY programming"} {
		if !strings.Contains(out, want) {
			t.Errorf("no chart %q in the HTML report", want)
		}
	}
}

// TestVia: the programming table's "via" column reads the path's row: the kind of Service,
// or the server pod's IP; a path that is neither keeps its name.
func TestVia(t *testing.T) {
	for _, tc := range []struct {
		path api.Path
		want string
	}{
		{api.PathPodClusterIP, "ClusterIP"},
		{api.PathPodHairpin, "ClusterIP"},
		{api.PathPodNodePort, "NodePort"},
		{api.PathPodPodSameNode, "pod IP"},
		{api.PathPodPodCrossNode, "pod IP"},
		{api.PathHostPod, "pod IP"},
		{api.PathHostHost, "host-host"},
		{api.PathLoopback, "loopback"},
		{api.PathExternalService, "external-service"},
		{"no-such-path", "no-such-path"},
	} {
		if got := via(tc.path); got != tc.want {
			t.Errorf("via(%s) = %q, want %q", tc.path, got, tc.want)
		}
	}
}

// TestViaCell: a programming row says the IP family its probe used when the result records
// one (a Service's, from spec.ipFamilies), IPv4 too; a pod IP's result records none.
func TestViaCell(t *testing.T) {
	for _, tc := range []struct {
		path   api.Path
		family string
		want   string
	}{
		{api.PathPodClusterIP, "ipv4", "ClusterIP v4"},
		{api.PathPodClusterIP, "ipv6", "ClusterIP v6"},
		{api.PathPodNodePort, "ipv6", "NodePort v6"},
		{api.PathPodNodePort, "", "NodePort"},
		{api.PathPodPodCrossNode, "", "pod IP"},
	} {
		r := &api.Result{Path: tc.path, Params: api.Params{IPFamily: tc.family}}
		if got := viaCell(r); got != tc.want {
			t.Errorf("viaCell(%s, %q) = %q, want %q", tc.path, tc.family, got, tc.want)
		}
	}
}
