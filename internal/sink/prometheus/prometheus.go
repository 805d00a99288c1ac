// Package prometheus queries Prometheus for what the cluster did during each case: node CPU
// (user, system, softirq, busy), the CPU and memory of CNI and proxy agent pods, and interface
// drops and errors, over the case's exact time window. An absent metric is a warning in the
// result, never a failure. It also reads the nodes' hardware from their node-exporters
// (NodeHardware) for the cluster details.
package prometheus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/sink/httpclient"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/span"
)

// EnvToken is read for the bearer token when none is configured.
const EnvToken = "CNPERF_PROMETHEUS_TOKEN"

// DefaultAgents are the pod name prefixes of CNI and proxy agents, longest first so the most
// specific name wins.
var DefaultAgents = []string{
	"cilium-operator", "cilium-envoy", "cilium-agent", "cilium",
	"calico-typha", "calico-node", "calico-kube-controllers",
	"ovnkube-controller", "ovnkube-node", "ovs-node", "ovs-vswitchd", "ovs",
	"kube-flannel-ds", "kube-flannel", "flannel",
	"antrea-agent", "kube-router", "weave-net", "kindnet", "aws-node", "canal", "kube-proxy",
}

// Config says how to reach Prometheus.
type Config struct {
	URL string
	// BearerToken is sent as Authorization: Bearer; empty reads $CNPERF_PROMETHEUS_TOKEN.
	BearerToken           string
	InsecureSkipTLSVerify bool
	CAFile                string
	// AllowPlainHTTP lets the token or the URL's password go to an http:// URL (refused
	// otherwise).
	AllowPlainHTTP bool
	Timeout        time.Duration
	// Agents overrides DefaultAgents.
	Agents []string
}

// Collector queries one Prometheus.
type Collector struct {
	base     *url.URL
	user     *url.Userinfo
	token    string
	http     *http.Client
	agents   []string
	agentsRE string
	scrubber *httpclient.Scrubber
}

// New checks the configuration; it does not contact Prometheus.
func New(cfg Config) (*Collector, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("prometheus: invalid URL %q (want http(s)://host:port)", redact(cfg.URL))
	}
	c := &Collector{token: cfg.BearerToken, agents: cfg.Agents}
	if c.token == "" {
		c.token = os.Getenv(EnvToken)
	}
	if len(c.agents) == 0 {
		c.agents = DefaultAgents
	}
	quoted := make([]string, len(c.agents))
	for i, a := range c.agents {
		quoted[i] = regexp.QuoteMeta(a)
	}
	c.agentsRE = "(" + strings.Join(quoted, "|") + ")-.*"
	c.user = u.User
	c.base = httpclient.BaseURL(u)
	pass, hasPass := "", false
	if c.user != nil {
		pass, hasPass = c.user.Password()
	}
	c.scrubber = httpclient.NewScrubber(c.user.Username(), pass, c.token)
	c.http, err = httpclient.ClientFor(c.base, c.token != "" || hasPass, cfg.AllowPlainHTTP, cfg.InsecureSkipTLSVerify,
		cfg.CAFile, cfg.Timeout, 30*time.Second)
	if err != nil {
		return nil, fmt.Errorf("prometheus: %w", err)
	}
	return c, nil
}

func redact(s string) string {
	if i := strings.Index(s, "://"); i >= 0 {
		if at := strings.LastIndex(s[i+3:], "@"); at >= 0 {
			return s[:i+3] + "REDACTED@" + s[i+3+at+1:]
		}
	}
	return s
}

// URL is Prometheus's URL without credentials.
func (c *Collector) URL() string { return c.base.String() }

// Sample is one series of a query's answer: its labels (with __name__ when the expression
// keeps it) and its value.
type Sample struct {
	Labels map[string]string
	Value  float64
}

// get calls an API endpoint and decodes data.
func (c *Collector) get(ctx context.Context, path string, q url.Values, data any) error {
	u := c.URL() + path + "?" + q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	} else if c.user != nil {
		p, _ := c.user.Password()
		req.SetBasicAuth(c.user.Username(), p)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return c.scrubber.Error(fmt.Errorf("prometheus: GET %s%s: %w", c.URL(), path, errors.Unwrap(err)))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return fmt.Errorf("prometheus: GET %s%s: %w", c.URL(), path, err)
	}
	var env struct {
		Status    string          `json:"status"`
		Data      json.RawMessage `json:"data"`
		ErrorType string          `json:"errorType"`
		Error     string          `json:"error"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return &APIError{URL: c.URL() + path, Status: resp.StatusCode, Message: "not a Prometheus API answer"}
	}
	if env.Status != "success" {
		return &APIError{URL: c.URL() + path, Status: resp.StatusCode, Message: c.scrubber.Scrub(env.ErrorType + ": " + env.Error)}
	}
	return json.Unmarshal(env.Data, data)
}

// Query evaluates a PromQL expression at t (an instant query) and returns its vector; an
// error of Prometheus (a bad expression) is an *APIError with its message.
func (c *Collector) Query(ctx context.Context, query string, t time.Time) ([]Sample, error) {
	var d struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		} `json:"result"`
	}
	q := url.Values{"query": {query}, "time": {unix(t)}}
	if err := c.get(ctx, "/api/v1/query", q, &d); err != nil {
		return nil, err
	}
	if d.ResultType != "vector" {
		return nil, fmt.Errorf("prometheus: %s: a %s, want a vector", query, d.ResultType)
	}
	var out []Sample
	for _, r := range d.Result {
		v, err := parseValue(r.Value[1])
		if err != nil {
			return nil, fmt.Errorf("prometheus: %s: %w", query, err)
		}
		out = append(out, Sample{Labels: r.Metric, Value: v})
	}
	return out, nil
}

// rangeMax evaluates a PromQL expression over [start, end] at step and returns each series'
// largest value.
func (c *Collector) rangeMax(ctx context.Context, query string, start, end time.Time, step time.Duration) ([]Sample, error) {
	var d struct {
		Result []struct {
			Metric map[string]string `json:"metric"`
			Values [][2]any          `json:"values"`
		} `json:"result"`
	}
	q := url.Values{"query": {query}, "start": {unix(start)}, "end": {unix(end)},
		"step": {strconv.FormatFloat(step.Seconds(), 'f', -1, 64)}}
	if err := c.get(ctx, "/api/v1/query_range", q, &d); err != nil {
		return nil, err
	}
	var out []Sample
	for _, r := range d.Result {
		best := math.Inf(-1)
		for _, v := range r.Values {
			x, err := parseValue(v[1])
			if err != nil {
				return nil, fmt.Errorf("prometheus: %s: %w", query, err)
			}
			best = math.Max(best, x)
		}
		if !math.IsInf(best, -1) {
			out = append(out, Sample{Labels: r.Metric, Value: best})
		}
	}
	return out, nil
}

func parseValue(v any) (float64, error) {
	s, ok := v.(string)
	if !ok {
		return 0, fmt.Errorf("sample value %v is not a string", v)
	}
	return strconv.ParseFloat(s, 64)
}

func unix(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixNano())/1e9, 'f', 3, 64)
}

// ScrapeInterval is the longest scrape interval among Prometheus's active targets, 0 when
// Prometheus does not say.
func (c *Collector) ScrapeInterval(ctx context.Context) (time.Duration, error) {
	var d struct {
		ActiveTargets []struct {
			ScrapeInterval string `json:"scrapeInterval"`
			Health         string `json:"health"`
		} `json:"activeTargets"`
	}
	if err := c.get(ctx, "/api/v1/targets", url.Values{"state": {"active"}}, &d); err != nil {
		return 0, err
	}
	var longest time.Duration
	for _, t := range d.ActiveTargets {
		if iv, err := parsePromDuration(t.ScrapeInterval); err == nil && iv > longest {
			longest = iv
		}
	}
	return longest, nil
}

// parsePromDuration reads Prometheus durations like "15s", "1m", "1m30s", "500ms".
func parsePromDuration(s string) (time.Duration, error) {
	if d, err := time.ParseDuration(s); err == nil {
		return d, nil
	}
	re := regexp.MustCompile(`^(\d+)(ms|s|m|h|d|w|y)`)
	var total time.Duration
	units := map[string]time.Duration{"ms": time.Millisecond, "s": time.Second, "m": time.Minute, "h": time.Hour,
		"d": 24 * time.Hour, "w": 7 * 24 * time.Hour, "y": 365 * 24 * time.Hour}
	rest := s
	for rest != "" {
		m := re.FindStringSubmatch(rest)
		if m == nil {
			return 0, fmt.Errorf("bad duration %q", s)
		}
		n, _ := strconv.Atoi(m[1])
		total += time.Duration(n) * units[m[2]]
		rest = rest[len(m[0]):]
	}
	return total, nil
}

// promRange renders a duration as a PromQL range in whole seconds (at least 1s).
func promRange(d time.Duration) string {
	return strconv.Itoa(int(math.Max(1, math.Ceil(d.Seconds())))) + "s"
}

// queryWindow is what one Collect queries over: the window ending at end (widened to two
// scrape intervals when shorter), the step of its range queries, and both as PromQL ranges
// (rateWin: the range of a rate at each step).
type queryWindow struct {
	end          time.Time
	window, step time.Duration
	w, rateWin   string
}

// warnf adds a warning to m.
func warnf(m *api.ClusterMetrics, format string, a ...any) {
	m.Warnings = append(m.Warnings, fmt.Sprintf(format, a...))
}

// Collect queries the figures for the window [start, end]. Rates and CPU percentages are
// averages over the window, memory its maximum, busy CPU also its maximum at a step of a tenth
// of the window (but no finer than the scrape interval). A window shorter than two scrape
// intervals holds too few points for a rate: it is widened to two intervals ending at end,
// and a warning says so. Metrics that are absent produce warnings; only an unreachable
// Prometheus is an error.
func (c *Collector) Collect(ctx context.Context, start, end time.Time) (*api.ClusterMetrics, error) {
	if !end.After(start) {
		return nil, fmt.Errorf("prometheus: empty window %s – %s", start.Format(time.RFC3339), end.Format(time.RFC3339))
	}
	m := &api.ClusterMetrics{Source: c.URL(), WindowStart: start, WindowEnd: end, WindowSeconds: end.Sub(start).Seconds()}
	scrape, err := c.ScrapeInterval(ctx)
	if err != nil {
		return nil, err
	}
	q := newQueryWindow(m, start, end, scrape)
	if err := c.collectNodes(ctx, q, m); err != nil {
		return nil, err
	}
	m.Interfaces = append(m.Interfaces, c.collectInterfaces(ctx, q)...)
	if err := c.collectPods(ctx, q, m); err != nil {
		return nil, err
	}
	return m, nil
}

// newQueryWindow widens a window shorter than two scrape intervals (saying so in m) and
// picks the step: a tenth of the window, no finer than the scrape interval nor a second.
func newQueryWindow(m *api.ClusterMetrics, start, end time.Time, scrape time.Duration) queryWindow {
	window := end.Sub(start)
	if scrape > 0 && window < 2*scrape {
		warnf(m, "window %s is shorter than two scrape intervals (%s): figures cover the %s ending with the case",
			window.Round(time.Millisecond), scrape, 2*scrape)
		window = 2 * scrape
	}
	step := window / 10
	if step < scrape {
		step = scrape
	}
	if step < time.Second {
		step = time.Second
	}
	m.StepSeconds = step.Seconds()
	return queryWindow{end: end, window: window, step: step, w: promRange(window), rateWin: promRange(max(2*scrape, 2*step))}
}

// nodeQuery is one figure of every node: a PromQL query by instance and the field it sets;
// rng: the maximum of a range query at the window's step, else an instant query at its end.
type nodeQuery struct {
	what  string
	query string
	set   func(*api.NodeMetrics, float64)
	rng   bool
}

// nodeQueries are the node figures: CPU (percent of all the node's CPUs) and the interfaces'
// drops and errors.
func nodeQueries(q queryWindow) []nodeQuery {
	w := q.w
	cpus := `count by (instance) (node_cpu_seconds_total{mode="idle"})`
	return []nodeQuery{
		{"node CPUs", cpus, func(n *api.NodeMetrics, v float64) { n.CPUs = int(v) }, false},
		{"node CPU user", fmt.Sprintf(`100 * sum by (instance) (rate(node_cpu_seconds_total{mode="user"}[%s])) / %s`, w, cpus),
			func(n *api.NodeMetrics, v float64) { n.CPUUserPercent = new(v) }, false},
		{"node CPU system", fmt.Sprintf(`100 * sum by (instance) (rate(node_cpu_seconds_total{mode="system"}[%s])) / %s`, w, cpus),
			func(n *api.NodeMetrics, v float64) { n.CPUSystemPercent = new(v) }, false},
		{"node CPU softirq", fmt.Sprintf(`100 * sum by (instance) (rate(node_cpu_seconds_total{mode="softirq"}[%s])) / %s`, w, cpus),
			func(n *api.NodeMetrics, v float64) { n.CPUSoftIRQPercent = new(v) }, false},
		{"node CPU busy", fmt.Sprintf(`100 * (1 - sum by (instance) (rate(node_cpu_seconds_total{mode="idle"}[%s])) / %s)`, w, cpus),
			func(n *api.NodeMetrics, v float64) { n.CPUBusyPercent = new(v) }, false},
		{"node CPU busy (max)", fmt.Sprintf(`100 * (1 - sum by (instance) (rate(node_cpu_seconds_total{mode="idle"}[%s])) / %s)`, q.rateWin, cpus),
			func(n *api.NodeMetrics, v float64) { n.CPUBusyMaxPercent = new(v) }, true},
		{"interface receive drops", fmt.Sprintf(`sum by (instance) (rate(node_network_receive_drop_total{device!="lo"}[%s]))`, w),
			func(n *api.NodeMetrics, v float64) { n.RxDropsPerSecond = new(v) }, false},
		{"interface transmit drops", fmt.Sprintf(`sum by (instance) (rate(node_network_transmit_drop_total{device!="lo"}[%s]))`, w),
			func(n *api.NodeMetrics, v float64) { n.TxDropsPerSecond = new(v) }, false},
		{"interface receive errors", fmt.Sprintf(`sum by (instance) (rate(node_network_receive_errs_total{device!="lo"}[%s]))`, w),
			func(n *api.NodeMetrics, v float64) { n.RxErrorsPerSecond = new(v) }, false},
		{"interface transmit errors", fmt.Sprintf(`sum by (instance) (rate(node_network_transmit_errs_total{device!="lo"}[%s]))`, w),
			func(n *api.NodeMetrics, v float64) { n.TxErrorsPerSecond = new(v) }, false},
	}
}

// collectNodes sets m.Nodes, by instance, named from node_uname_info; an unreachable
// Prometheus is the error, a query without an answer a warning.
func (c *Collector) collectNodes(ctx context.Context, q queryWindow, m *api.ClusterMetrics) error {
	nodes := map[string]*api.NodeMetrics{}
	for _, nq := range nodeQueries(q) {
		var res []Sample
		var err error
		if nq.rng {
			res, err = c.rangeMax(ctx, nq.query, q.end.Add(-q.window+q.step), q.end, q.step)
		} else {
			res, err = c.Query(ctx, nq.query, q.end)
		}
		if err != nil {
			if isTransport(err) {
				return err
			}
			warnf(m, "%s: %v", nq.what, err)
			continue
		}
		if len(res) == 0 {
			warnf(m, "%s: no data (metric absent, or no scrape in the window)", nq.what)
			continue
		}
		for _, s := range res {
			inst := s.Labels["instance"]
			if nodes[inst] == nil {
				nodes[inst] = &api.NodeMetrics{Instance: inst}
			}
			nq.set(nodes[inst], s.Value)
		}
	}
	// Node names from node_uname_info.
	if res, err := c.Query(ctx, `node_uname_info`, q.end); err == nil {
		for _, s := range res {
			if n, ok := nodes[s.Labels["instance"]]; ok {
				n.Node = s.Labels["nodename"]
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(nodes)) {
		m.Nodes = append(m.Nodes, *nodes[k])
	}
	return nil
}

// collectInterfaces returns the interfaces with any drops or errors in the window.
func (c *Collector) collectInterfaces(ctx context.Context, q queryWindow) []api.InterfaceMetrics {
	ifs := map[[2]string]*api.InterfaceMetrics{}
	for _, iq := range []struct {
		metric string
		set    func(*api.InterfaceMetrics, float64)
	}{
		{"node_network_receive_drop_total", func(i *api.InterfaceMetrics, v float64) { i.RxDropsPerSecond = v }},
		{"node_network_transmit_drop_total", func(i *api.InterfaceMetrics, v float64) { i.TxDropsPerSecond = v }},
		{"node_network_receive_errs_total", func(i *api.InterfaceMetrics, v float64) { i.RxErrorsPerSecond = v }},
		{"node_network_transmit_errs_total", func(i *api.InterfaceMetrics, v float64) { i.TxErrorsPerSecond = v }},
	} {
		res, err := c.Query(ctx, fmt.Sprintf(`rate(%s[%s]) > 0`, iq.metric, q.w), q.end)
		if err != nil {
			continue // the per-node query already warned
		}
		for _, s := range res {
			k := [2]string{s.Labels["instance"], s.Labels["device"]}
			if ifs[k] == nil {
				ifs[k] = &api.InterfaceMetrics{Instance: k[0], Device: k[1]}
			}
			iq.set(ifs[k], s.Value)
		}
	}
	return byKey(ifs)
}

// collectPods sets m.Pods: the agent pods' CPU and memory (cAdvisor metrics from the
// kubelets); an unreachable Prometheus is the error, a query without an answer a warning.
func (c *Collector) collectPods(ctx context.Context, q queryWindow, m *api.ClusterMetrics) error {
	sel := fmt.Sprintf(`container!="",container!="POD",pod=~%q`, c.agentsRE)
	pods := map[[2]string]*api.PodMetrics{}
	pod := func(l map[string]string) *api.PodMetrics {
		k := [2]string{l["namespace"], l["pod"]}
		if pods[k] == nil {
			pods[k] = &api.PodMetrics{Namespace: k[0], Pod: k[1], Node: l["node"], Agent: c.agentOf(k[1])}
		}
		return pods[k]
	}
	if res, err := c.Query(ctx, fmt.Sprintf(`sum by (namespace, pod, node) (rate(container_cpu_usage_seconds_total{%s}[%s]))`, sel, q.w), q.end); err != nil {
		if isTransport(err) {
			return err
		}
		warnf(m, "agent pod CPU: %v", err)
	} else if len(res) == 0 {
		warnf(m, "agent pod CPU: no data (no container_cpu_usage_seconds_total for pods named %s)", strings.Join(c.agents, ", "))
	} else {
		for _, s := range res {
			pod(s.Labels).CPUCores = new(s.Value)
		}
	}
	if res, err := c.Query(ctx, fmt.Sprintf(`max by (namespace, pod, node) (max_over_time(container_memory_working_set_bytes{%s}[%s]))`, sel, q.w), q.end); err != nil {
		warnf(m, "agent pod memory: %v", err)
	} else if len(res) == 0 {
		warnf(m, "agent pod memory: no data (no container_memory_working_set_bytes for the agent pods)")
	} else {
		for _, s := range res {
			pod(s.Labels).MemoryMaxBytes = new(s.Value)
		}
	}
	m.Pods = append(m.Pods, byKey(pods)...)
	return nil
}

// byKey returns the values of m in the order of their two-part keys, so a report never depends
// on map order.
func byKey[V any](m map[[2]string]*V) []V {
	keys := make([][2]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i][0] != keys[j][0] {
			return keys[i][0] < keys[j][0]
		}
		return keys[i][1] < keys[j][1]
	})
	out := make([]V, 0, len(keys))
	for _, k := range keys {
		out = append(out, *m[k])
	}
	return out
}

func (c *Collector) agentOf(pod string) string {
	for _, a := range c.agents {
		if strings.HasPrefix(pod, a+"-") {
			return a
		}
	}
	return ""
}

// APIError is an answer from Prometheus that is not a success (a bad query, a refused token).
type APIError struct {
	URL     string
	Status  int
	Message string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("prometheus: GET %s: HTTP %d: %s", e.URL, e.Status, e.Message)
}

// isTransport tells a Prometheus that cannot be reached from one that answered with an error.
func isTransport(err error) bool {
	var a *APIError
	return err != nil && !errors.As(err, &a)
}

// Annotate queries the figures for a result's window and attaches them; an unreachable
// Prometheus is returned as an error and leaves the result unchanged. A result without a
// window (no start or end time) is left alone.
func (c *Collector) Annotate(ctx context.Context, r *api.Result) error {
	start, end := window(r)
	if start.IsZero() || end.IsZero() || !end.After(start) {
		return nil
	}
	m, err := c.Collect(ctx, start, end)
	if err != nil {
		return err
	}
	r.Metrics = m
	return nil
}

// window is a result's measured window: from the first measured sample's start to the last
// one's end (warm-up excluded), else the result's own times.
func window(r *api.Result) (time.Time, time.Time) {
	start, end := span.Of(r.Samples, func(s api.Sample) (time.Time, time.Time) {
		if s.Warmup || s.StartTime.IsZero() || s.EndTime.IsZero() {
			return time.Time{}, time.Time{}
		}
		return s.StartTime, s.EndTime
	})
	if start.IsZero() {
		return r.StartTime, r.EndTime
	}
	return start, end
}
