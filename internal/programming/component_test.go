package programming

import (
	"context"
	"io"
	"math"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/clusterinfo"
	"github.com/cnperf/cnperf/internal/driver"
)

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestParseHistogram: kube-proxy's histogram read from its real /metrics (v1.34.4 on the
// harness's node1, after programming runs; and just after it started, before any observation,
// when the histogram is not exposed), also behind the HTTP headers nc prints.
func TestParseHistogram(t *testing.T) {
	real := readTestdata(t, "kube-proxy-v1.34.4-node1.metrics")
	fresh := readTestdata(t, "kube-proxy-v1.34.4-node1-fresh.metrics")
	for _, c := range []struct {
		name        string
		text        string
		found       bool
		sum, count  float64
		errContains string
	}{
		// grep '^kubeproxy_network_programming_duration_seconds_\(sum\|count\)' on the capture
		{"after runs", real, true, 5097.269382237, 46, ""},
		{"behind nc's headers", "HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\n\r\n" + real, true, 5097.269382237, 46, ""},
		{"fresh kube-proxy", fresh, false, 0, 0, ""},
		// Felix's summary (v3.28.4 on the harness's node1, after a policy-deny run), its quantile
		// lines left out
		{"Felix's summary", readTestdata(t, "felix-v3.28.4-node1-after.metrics"), true, 3.906664713000001, 119, ""},
		// cilium-agent v1.15.19's histogram (harness node1, after one policy-deny change: three
		// endpoints reached its revision), its three source label sets summed
		{"Cilium's histogram", readTestdata(t, "cilium-v1.15.19-node1-after.metrics"), true, 0.09462173, 3, ""},
		{"two families", KubeProxyMetric + `_sum{ip_family="IPv4"} 1.5` + "\n" + KubeProxyMetric + `_sum{ip_family="IPv6"} 2` + "\n" +
			KubeProxyMetric + `_count{ip_family="IPv4"} 1` + "\n" + KubeProxyMetric + `_count{ip_family="IPv6"} 3`, true, 3.5, 4, ""},
		{"no labels", KubeProxyMetric + "_sum 2.5\n" + KubeProxyMetric + "_count 2\n" + KubeProxyMetric + "_sum_other 9", true, 2.5, 2, ""},
		{"bad value", KubeProxyMetric + `_count{ip_family="IPv4"} many`, false, 0, 0, `value in "kubeproxy_network_programming_duration_seconds_count{ip_family=\"IPv4\"} many"`},
	} {
		metric := KubeProxyMetric
		switch {
		case strings.HasPrefix(c.name, "Felix"):
			metric = FelixMetric
		case strings.HasPrefix(c.name, "Cilium"):
			metric = CiliumMetric
		}
		h, found, err := parseHistogram(c.text, metric)
		switch {
		case c.errContains != "":
			if err == nil || !strings.Contains(err.Error(), c.errContains) {
				t.Errorf("%s: error %v, want %q", c.name, err, c.errContains)
			}
		case err != nil || found != c.found || math.Abs(h.Sum-c.sum) > 1e-9 || h.Count != c.count:
			t.Errorf("%s: %+v found %v (%v), want sum %v count %v found %v", c.name, h, found, err, c.sum, c.count, c.found)
		}
	}
}

// metricsExec answers the metrics GET of a component on port (kube-proxy's when 0) with the
// next of its texts (the last one again once they are used up), as a hostNetwork pod on a
// node would.
type metricsExec struct {
	mu    sync.Mutex
	port  int
	texts []string
}

func (e *metricsExec) Exec(_ context.Context, cmd driver.Command) driver.Output {
	port := e.port
	if port == 0 {
		port = clusterinfo.KubeProxyMetricsPort
	}
	if strings.Join(cmd.Argv, " ") != "sh -c "+clusterinfo.LocalHTTPGet(port, "/metrics") {
		return driver.Output{ExitCode: 2, Stderr: []byte("unexpected command")}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	t := e.texts[0]
	if len(e.texts) > 1 {
		e.texts = e.texts[1:]
	}
	return driver.Output{Stdout: []byte(t)}
}

func (e *metricsExec) ExecStream(context.Context, driver.Command, io.Writer) error {
	return io.ErrUnexpectedEOF
}

// TestRunnerComponent: with kube-proxy's metrics read around each change, each Service result
// carries kube-proxy's observations of its own changes (the difference between the readings
// before and after), on both paths; a node whose readings fail says why.
func TestRunnerComponent(t *testing.T) {
	fresh := readTestdata(t, "kube-proxy-v1.34.4-node1-fresh.metrics")
	real := readTestdata(t, "kube-proxy-v1.34.4-node1.metrics")
	cs, port := fakeCluster(t, 20*time.Millisecond)
	r := testRunner(t, cs, port, true, KindService)
	r.o.KubeProxyMetrics, r.o.Count = true, 1
	// n1: nothing before the creation, the capture after it, no change around the deletion
	// (read before and after each change); n2: no kube-proxy at all
	r.clients[0].Host = &metricsExec{texts: []string{fresh, real, real, real}}
	r.clients[1].Host = &metricsExec{texts: []string{"# HELP go_goroutines\ngo_goroutines 12\n"}}
	if err := r.Measure(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, x := range r.Results() {
		c := x.Programming.Component
		node := x.Placement.Client.Node
		switch {
		case c == nil:
			t.Errorf("%s from %s on %s: no component figure", x.Profile, node, x.Path)
		case node == "n2":
			if !strings.Contains(c.Note, "no kube-proxy metrics at 127.0.0.1:10249 on n2") || c.Count != 0 {
				t.Errorf("%s from n2: %+v", x.Profile, c)
			}
		case x.Profile == api.ServiceCreate:
			if c.Metric != KubeProxyMetric || c.Count != 46 || math.Abs(c.MeanSeconds-5097.269382237/46) > 1e-9 || !strings.Contains(c.Note, "whole seconds") {
				t.Errorf("SERVICE_CREATE from n1 on %s: %+v", x.Path, c)
			}
		case x.Profile == api.ServiceDelete:
			if c.Count != 0 || c.MeanSeconds != 0 {
				t.Errorf("SERVICE_DELETE from n1 on %s: %+v", x.Path, c)
			}
		}
	}
}

// TestRunnerFelix: with Felix's metrics read around each policy change, every client's result
// carries the observations of the Felix on the server's node (n1: it enforces the server's
// policy), read just before the change and after it; the other node's Felix is not read into
// it (n2 has none here). With Cilium's metrics also asked for, Felix's, which the node serves,
// are the ones read.
func TestRunnerFelix(t *testing.T) {
	before := readTestdata(t, "felix-v3.28.4-node1-before.metrics")
	after := readTestdata(t, "felix-v3.28.4-node1-after.metrics")
	bh, _, err := parseHistogram(before, FelixMetric)
	if err != nil {
		t.Fatal(err)
	}
	ah, _, err := parseHistogram(after, FelixMetric)
	if err != nil || ah.Count <= bh.Count {
		t.Fatalf("captures: before %+v, after %+v (%v)", bh, ah, err)
	}
	cs, port := fakePolicyCluster(t, 20*time.Millisecond)
	r := testRunner(t, cs, port, false, KindPolicyDeny)
	// Cilium's metrics asked for too (the defaults): Felix's, served, are chosen by the reading
	// before the first change, then read before and after it
	r.o.FelixMetrics, r.o.CiliumMetrics, r.o.KubeProxyMetrics, r.o.Count, r.o.ServerNode = true, true, true, 1, "n1"
	r.clients[0].Host = &metricsExec{port: FelixMetricsPort, texts: []string{before, before, after}}
	r.clients[1].Host = &metricsExec{port: FelixMetricsPort, texts: []string{"# HELP go_goroutines\ngo_goroutines 12\n"}}
	if err := r.Measure(context.Background()); err != nil {
		t.Fatal(err)
	}
	res := r.Results()
	if len(res) != 2 {
		t.Fatalf("%d results, want POLICY_DENY from n1 and n2", len(res))
	}
	for _, x := range res {
		c := x.Programming.Component
		if x.Error != "" || c == nil || c.Metric != FelixMetric || c.Count != ah.Count-bh.Count ||
			math.Abs(c.MeanSeconds-(ah.Sum-bh.Sum)/(ah.Count-bh.Count)) > 1e-12 ||
			c.Source != "Felix on n1 (the server's node) (127.0.0.1:9091/metrics)" || !strings.Contains(c.Note, "calculation graph") {
			t.Errorf("%s from %s: error %q, component %+v", x.Profile, x.Placement.Client.Node, x.Error, c)
		}
	}
}

// TestRunnerCilium: with Felix's and Cilium's metrics both asked for (the defaults), on a
// Cilium cluster (no Felix: its port answers nothing) the run reads Cilium's
// cilium_policy_implementation_delay on the server's node, chosen by one reading before the
// first change; each client's result carries the difference between the readings just before
// and after the change (real captures from cilium-agent v1.15.19 on the harness's node1 around
// a policy-deny change). With neither served, the figure says why, naming both.
func TestRunnerCilium(t *testing.T) {
	before := readTestdata(t, "cilium-v1.15.19-node1-before.metrics")
	after := readTestdata(t, "cilium-v1.15.19-node1-after.metrics")
	bh, found, err := parseHistogram(before, CiliumMetric)
	if err != nil || !found {
		t.Fatalf("capture before: %+v found %v (%v)", bh, found, err)
	}
	ah, _, err := parseHistogram(after, CiliumMetric)
	if err != nil || ah.Count <= bh.Count {
		t.Fatalf("captures: before %+v, after %+v (%v)", bh, ah, err)
	}
	for _, c := range []struct {
		name   string
		served bool
	}{{"Cilium serves its metrics", true}, {"no component serves any", false}} {
		cs, port := fakePolicyCluster(t, 20*time.Millisecond)
		r := testRunner(t, cs, port, false, KindPolicyDeny)
		r.o.FelixMetrics, r.o.CiliumMetrics, r.o.Count, r.o.ServerNode = true, true, 1, "n1"
		none := "# HELP go_goroutines\ngo_goroutines 12\n"
		if c.served {
			// the choice's reading, then the ones before and after the change
			r.clients[0].Host = &metricsExec{port: CiliumMetricsPort, texts: []string{before, before, after}}
		} else {
			r.clients[0].Host = &metricsExec{port: CiliumMetricsPort, texts: []string{none}}
		}
		r.clients[1].Host = &metricsExec{port: CiliumMetricsPort, texts: []string{none}}
		if err := r.Measure(context.Background()); err != nil {
			t.Fatal(err)
		}
		res := r.Results()
		if len(res) != 2 {
			t.Fatalf("%s: %d results, want POLICY_DENY from n1 and n2", c.name, len(res))
		}
		for _, x := range res {
			f := x.Programming.Component
			node := x.Placement.Client.Node
			switch {
			case f == nil || x.Error != "":
				t.Errorf("%s: %s from %s: error %q, component %+v", c.name, x.Profile, node, x.Error, f)
			case c.served && (f.Metric != CiliumMetric || f.Count != ah.Count-bh.Count ||
				math.Abs(f.MeanSeconds-(ah.Sum-bh.Sum)/(ah.Count-bh.Count)) > 1e-12 ||
				f.Source != "Cilium on n1 (the server's node) (127.0.0.1:9962/metrics)" || !strings.Contains(f.Note, "per endpoint")):
				t.Errorf("%s: %s from %s: component %+v, want %v observations of %s", c.name, x.Profile, node, f, ah.Count-bh.Count, CiliumMetric)
			case !c.served && (f.Count != 0 || !strings.Contains(f.Note, "read Felix's metrics at 127.0.0.1:9091 on n1 (no Calico") ||
				!strings.Contains(f.Note, "no Cilium metrics at 127.0.0.1:9962 on n1 (no Cilium")):
				t.Errorf("%s: %s from %s: component %+v, want both causes", c.name, x.Profile, node, f)
			}
		}
	}
}
