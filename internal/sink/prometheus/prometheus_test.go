package prometheus

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

func TestParsePromDuration(t *testing.T) {
	for s, want := range map[string]time.Duration{"15s": 15 * time.Second, "1m": time.Minute, "1m30s": 90 * time.Second,
		"500ms": 500 * time.Millisecond, "1d": 24 * time.Hour} {
		if got, err := parsePromDuration(s); err != nil || got != want {
			t.Errorf("%s = %v %v", s, got, err)
		}
	}
	if _, err := parsePromDuration("soon"); err == nil {
		t.Error("bad duration accepted")
	}
	if promRange(2500*time.Millisecond) != "3s" || promRange(0) != "1s" {
		t.Error("promRange")
	}
}

func TestAgentOf(t *testing.T) {
	c, _ := New(Config{URL: "http://p:9090"})
	for pod, want := range map[string]string{"cilium-x7k2p": "cilium", "cilium-operator-6d9-abc": "cilium-operator",
		"calico-node-abcde": "calico-node", "kube-proxy-q8z": "kube-proxy", "coredns-55-x": "", "kube-flannel-ds-2kq": "kube-flannel-ds"} {
		if got := c.agentOf(pod); got != want {
			t.Errorf("agentOf(%s) = %q, want %q", pod, got, want)
		}
	}
	if _, err := New(Config{URL: "prom:9090"}); err == nil {
		t.Error("URL without scheme accepted")
	}
	_, err := New(Config{URL: "ftp://u:topsecret@h"})
	if err == nil || strings.Contains(err.Error(), "topsecret") {
		t.Errorf("err = %v", err)
	}
}

// stand-in Prometheus: it answers the API with fixed kubelet (cAdvisor) and node series, as a
// cluster's Prometheus would; a kubelet cannot run here. The real-Prometheus path is tested in
// integration_test.go.
type stub struct {
	mu      sync.Mutex
	scrape  string
	auth    []string
	queries []string
}

func (s *stub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.auth = append(s.auth, r.Header.Get("Authorization"))
	q := r.URL.Query().Get("query")
	ok := func(data any) { _ = json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": data}) }
	vec := func(series ...map[string]any) {
		ok(map[string]any{"resultType": "vector", "result": series})
	}
	one := func(labels map[string]string, v string) map[string]any {
		return map[string]any{"metric": labels, "value": []any{1700000000.0, v}}
	}
	switch r.URL.Path {
	case "/api/v1/targets":
		ok(map[string]any{"activeTargets": []any{map[string]any{"scrapeInterval": s.scrape, "health": "up"}}})
		return
	case "/api/v1/query_range":
		s.queries = append(s.queries, "range "+r.URL.Query().Get("step")+" "+q)
		ok(map[string]any{"resultType": "matrix", "result": []any{map[string]any{"metric": map[string]string{"instance": "n1:9100"},
			"values": []any{[]any{1.0, "40"}, []any{2.0, "95.5"}, []any{3.0, "60"}}}}})
		return
	}
	s.queries = append(s.queries, q)
	n1 := map[string]string{"instance": "n1:9100"}
	switch {
	case q == "node_uname_info":
		vec(one(map[string]string{"instance": "n1:9100", "nodename": "worker-1"}, "1"))
	case strings.HasPrefix(q, "count by (instance)"):
		vec(one(n1, "8"))
	case strings.Contains(q, `mode="user"`):
		vec(one(n1, "12.5"))
	case strings.Contains(q, `mode="system"`):
		vec(one(n1, "30"))
	case strings.Contains(q, `mode="softirq"`):
		// absent: no softirq series
		vec()
	case strings.Contains(q, `mode="idle"`):
		vec(one(n1, "50"))
	case strings.HasPrefix(q, "rate(node_network_receive_drop_total"):
		vec(one(map[string]string{"instance": "n1:9100", "device": "eth0"}, "3.5"))
	case strings.HasPrefix(q, "rate("):
		vec()
	case strings.Contains(q, "node_network"):
		vec(one(n1, "0"))
	case strings.Contains(q, "container_cpu_usage_seconds_total"):
		vec(one(map[string]string{"namespace": "kube-system", "pod": "cilium-x7k2p", "node": "worker-1"}, "0.42"),
			one(map[string]string{"namespace": "kube-system", "pod": "kube-proxy-q8z", "node": "worker-1"}, "0.05"))
	case strings.Contains(q, "container_memory_working_set_bytes"):
		vec(one(map[string]string{"namespace": "kube-system", "pod": "cilium-x7k2p", "node": "worker-1"}, "183500800"))
	default:
		w.WriteHeader(400)
		_ = json.NewEncoder(w).Encode(map[string]any{"status": "error", "errorType": "bad_data", "error": "unexpected query " + q})
	}
}

func TestCollectWithStandIn(t *testing.T) {
	st := &stub{scrape: "15s"}
	srv := httptest.NewServer(st)
	defer srv.Close()
	c, err := New(Config{URL: srv.URL, BearerToken: "tok-123", AllowPlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	end := time.Date(2025, 3, 14, 9, 27, 3, 0, time.UTC)
	start := end.Add(-10 * time.Second)
	res := &api.Result{StartTime: start.Add(-5 * time.Second), EndTime: end.Add(time.Second),
		Samples: []api.Sample{{Warmup: true, StartTime: start.Add(-5 * time.Second), EndTime: start},
			{StartTime: start, EndTime: start.Add(5 * time.Second)}, {StartTime: start.Add(5 * time.Second), EndTime: end}}}
	if err := c.Annotate(context.Background(), res); err != nil {
		t.Fatal(err)
	}
	m := res.Metrics
	// Window: the measured samples (warm-up excluded): 10 s, widened to two 15 s scrapes.
	if !m.WindowStart.Equal(start) || !m.WindowEnd.Equal(end) || m.WindowSeconds != 10 || m.StepSeconds != 15 {
		t.Errorf("window %v–%v %vs step %v", m.WindowStart, m.WindowEnd, m.WindowSeconds, m.StepSeconds)
	}
	if len(m.Warnings) < 2 || !strings.Contains(m.Warnings[0], "shorter than two scrape intervals (15s): figures cover the 30s") ||
		!strings.Contains(strings.Join(m.Warnings, "\n"), "node CPU softirq: no data") {
		t.Errorf("warnings = %q", m.Warnings)
	}
	for _, q := range st.queries {
		if strings.Contains(q, "[") && !strings.Contains(q, "[30s]") && !strings.HasPrefix(q, "range") {
			t.Errorf("query not over the widened 30s window: %s", q)
		}
	}
	n := m.Nodes[0]
	if n.Node != "worker-1" || n.CPUs != 8 || *n.CPUUserPercent != 12.5 || *n.CPUSystemPercent != 30 || n.CPUSoftIRQPercent != nil ||
		*n.CPUBusyPercent != 50 || *n.CPUBusyMaxPercent != 95.5 || *n.RxDropsPerSecond != 0 {
		t.Errorf("node = %+v", n)
	}
	if len(m.Interfaces) != 1 || m.Interfaces[0].Device != "eth0" || m.Interfaces[0].RxDropsPerSecond != 3.5 {
		t.Errorf("interfaces = %+v", m.Interfaces)
	}
	if len(m.Pods) != 2 || m.Pods[0].Agent != "cilium" || *m.Pods[0].CPUCores != 0.42 || *m.Pods[0].MemoryMaxBytes != 183500800 ||
		m.Pods[1].Agent != "kube-proxy" || m.Pods[1].MemoryMaxBytes != nil || m.Pods[0].Node != "worker-1" {
		t.Errorf("pods = %+v", m.Pods)
	}
	for _, a := range st.auth {
		if a != "Bearer tok-123" {
			t.Errorf("auth = %q", a)
		}
	}
}

func TestCollectUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	c, _ := New(Config{URL: url, Timeout: 2 * time.Second})
	r := &api.Result{StartTime: time.Now().Add(-time.Minute), EndTime: time.Now()}
	err := c.Annotate(context.Background(), r)
	var a *APIError
	if err == nil || errors.As(err, &a) || r.Metrics != nil {
		t.Errorf("err = %v, metrics %v", err, r.Metrics)
	}
	if err := (&Collector{}).Annotate(context.Background(), &api.Result{}); err != nil {
		t.Errorf("result without a window: %v", err)
	}
}

// TestCollectAPIErrors: a Prometheus that refuses every query (an API error, not a transport
// one) gives warnings, no figures and no error; a step below a second is a second; an empty
// window is an error.
func TestCollectAPIErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/v1/targets" {
			_ = json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": map[string]any{
				"activeTargets": []any{map[string]any{"scrapeInterval": "100ms", "health": "up"}}}})
			return
		}
		w.WriteHeader(400)
		_ = json.NewEncoder(w).Encode(map[string]any{"status": "error", "errorType": "bad_data", "error": "refused"})
	}))
	defer srv.Close()
	c, err := New(Config{URL: srv.URL, AllowPlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	end := time.Date(2025, 3, 14, 9, 27, 3, 0, time.UTC)
	m, err := c.Collect(context.Background(), end.Add(-5*time.Second), end)
	if err != nil {
		t.Fatal(err)
	}
	if m.StepSeconds != 1 || len(m.Nodes) != 0 || len(m.Interfaces) != 0 || len(m.Pods) != 0 {
		t.Errorf("step %v, nodes %v, interfaces %v, pods %v", m.StepSeconds, m.Nodes, m.Interfaces, m.Pods)
	}
	warnings := strings.Join(m.Warnings, "\n")
	for _, w := range []string{"node CPUs: ", "node CPU busy (max): ", "interface transmit errors: ", "agent pod CPU: ", "agent pod memory: "} {
		if !strings.Contains(warnings, w) {
			t.Errorf("no warning %q in:\n%s", w, warnings)
		}
	}
	if len(m.Warnings) != 12 {
		t.Errorf("%d warnings, want 12 (10 node queries, 2 pod queries):\n%s", len(m.Warnings), warnings)
	}
	if _, err := c.Collect(context.Background(), end, end); err == nil || !strings.Contains(err.Error(), "prometheus: empty window") {
		t.Errorf("empty window: %v", err)
	}
}
