package programming

import (
	"bufio"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/clusterinfo"
	"github.com/cnperf/cnperf/internal/driver"
)

// KubeProxyMetric is kube-proxy's own network programming latency: from an EndpointSlice's
// endpoints.kubernetes.io/last-change-trigger-time annotation to the end of the sync that
// programmed it.
const KubeProxyMetric = "kubeproxy_network_programming_duration_seconds"

// FelixMetric is Felix's (Calico's) own dataplane apply time: a summary of how long each
// apply of a batch of updates to iptables, ipsets and routes took
// (felix/dataplane/linux/int_dataplane.go).
const FelixMetric = "felix_int_dataplane_apply_time_seconds"

// CiliumMetric is cilium-agent's own policy implementation delay: a histogram (labelled by
// the policy's source: k8s for a NetworkPolicy) of the time from the agent taking a policy into
// its repository to one of its endpoints running with that policy revision in the datapath,
// observed once per endpoint of the node (daemon/cmd/policy.go, policyAdd; v1.15).
const CiliumMetric = "cilium_policy_implementation_delay"

// CiliumMetricsPort is where the Helm chart has cilium-agent serve its metrics
// (prometheus.port, --prometheus-serve-addr=:9962); the agent serves none without that flag.
const CiliumMetricsPort = 9962

// FelixMetricsPort is Felix's default Prometheus port (prometheusMetricsPort); Felix serves
// its metrics only with prometheusMetricsEnabled (FELIX_PROMETHEUSMETRICSENABLED=true).
const FelixMetricsPort = 9091

// kubeProxyNote says how kube-proxy's figure differs from cnperf's.
const kubeProxyNote = "kube-proxy measures from the EndpointSlice's last-change-trigger-time annotation, which has " +
	"whole seconds (its figure is 0 to 1 s longer than from the same moment), to the end of its rules' sync (before " +
	"the first packet); a pod labelled into a Service brings the time it last turned Ready, not the label's (the " +
	"figure is then the pod's age); it counts every EndpointSlice change of the cluster in the window, none for a deletion"

// felixNote says how Felix's figure differs from cnperf's.
const felixNote = "Felix times each apply of a batch of updates to the dataplane (iptables, ipsets, routes), on the " +
	"server's node, whose Felix enforces the server's ingress policy for every client: not the way to it (the API " +
	"server's watch, Felix's calculation graph, its batching and rate limit), which cnperf's figure holds; it counts " +
	"every apply in the window (the change's, and any other work of that Felix), so its mean is one apply's time"

// ciliumNote says how Cilium's figure differs from cnperf's.
const ciliumNote = "cilium-agent times, on the server's node, whose agent enforces the server's ingress policy for " +
	"every client, from taking the policy into its repository (after the API server's watch delivered it, which " +
	"cnperf's figure holds) to each of that node's endpoints running with it in the datapath: one observation per " +
	"endpoint of the node (the server's, the client's there, any other pod's), none for a deletion"

// A component programs the dataplane on every node and reports its own programming latency as
// a Prometheus histogram or summary (its _sum and _count) on the node's loopback, which cnperf
// reads through a hostNetwork pod per client node around each change of the kinds it programs.
type component struct {
	name, metric string
	port         int
	// prefix starts every metric of the component's: text with one of them but without metric
	// is the component before its first observation.
	prefix string
	kinds  []Kind
	// atServer: every client's figure is the reading on the server's node (Felix enforces a
	// policy where the pod it selects runs), not on the client's own.
	atServer bool
	// absent says why the component's metrics may not be there; flag is the command's flag
	// that does without them.
	absent, flag string
	note         string
}

var (
	kubeProxy = component{name: "kube-proxy", metric: KubeProxyMetric, port: clusterinfo.KubeProxyMetricsPort, prefix: "kubeproxy_",
		kinds: []Kind{KindService, KindEndpoint}, flag: "--kube-proxy-metrics", absent: "no kube-proxy, or it binds its metrics elsewhere", note: kubeProxyNote}
	felix = component{name: "Felix", metric: FelixMetric, port: FelixMetricsPort, prefix: "felix_",
		kinds: []Kind{KindPolicyDeny, KindPolicyAllow}, atServer: true, flag: "--felix-metrics",
		absent: "no Calico, or its Felix serves no Prometheus metrics there: FelixConfiguration prometheusMetricsEnabled", note: felixNote}
	cilium = component{name: "Cilium", metric: CiliumMetric, port: CiliumMetricsPort, prefix: "cilium_",
		kinds: []Kind{KindPolicyDeny, KindPolicyAllow}, atServer: true, flag: "--cilium-metrics",
		absent: "no Cilium, or its agent serves no Prometheus metrics there: cilium-config prometheus-serve-addr", note: ciliumNote}
)

// components are the components whose metrics the options ask for.
func (o Options) components() []*component {
	var cs []*component
	if o.KubeProxyMetrics {
		cs = append(cs, &kubeProxy)
	}
	if o.FelixMetrics {
		cs = append(cs, &felix)
	}
	if o.CiliumMetrics {
		cs = append(cs, &cilium)
	}
	return cs
}

// hostsFor says whose metrics the hostNetwork pods read and the flags that do without them.
func (r *Runner) hostsFor() (whose, flags string) {
	var names, fl []string
	for _, k := range r.o.Kinds {
		for _, c := range r.componentsOf(k) {
			if !slices.Contains(names, c.name+"'s") {
				names, fl = append(names, c.name+"'s"), append(fl, c.flag+"=false")
			}
		}
	}
	if len(fl) == 1 {
		return names[0], fl[0] + " does"
	}
	return strings.Join(names, " and "), strings.Join(fl, " and ") + " do"
}

// componentsOf are the components that may program kind's changes, whose metrics the options
// ask for: kube-proxy Services; Felix or Cilium, whichever the cluster runs, policies.
func (r *Runner) componentsOf(k Kind) []*component {
	var cs []*component
	for _, c := range r.o.components() {
		if slices.Contains(c.kinds, k) {
			cs = append(cs, c)
		}
	}
	return cs
}

// componentOf is the component whose figure is read for kind's changes, nil for none: of
// several that may program them (Felix and Cilium), the first whose metric a node serves,
// read once before kind's first change (and kept for the run); when none does, the first,
// whose readings then say so, with the others' causes (unread).
func (r *Runner) componentOf(ctx context.Context, k Kind) *component {
	cs := r.componentsOf(k)
	if len(cs) < 2 {
		if len(cs) == 0 {
			return nil
		}
		return cs[0]
	}
	if c, ok := r.chosen[k]; ok {
		return c
	}
	var causes []string
	for i, c := range cs {
		for _, s := range r.scrape(ctx, c) {
			switch {
			case s.read:
				r.chosen[k] = c
				return c
			case i > 0 && s.err != nil && !slices.Contains(causes, s.err.Error()):
				causes = append(causes, s.err.Error())
			}
		}
	}
	r.chosen[k] = cs[0]
	r.unread[cs[0]] = strings.Join(causes, "; ")
	return cs[0]
}

// histogram is a Prometheus histogram's (or summary's) _sum and _count, over all its label sets.
type histogram struct{ Sum, Count float64 }

// parseHistogram reads metric's _sum and _count from Prometheus text (an HTTP response's
// headers before it are ignored), summed over the label sets (kube-proxy's ip_family); a
// summary's are read the same way (its quantile lines are not). A histogram with no
// observation yet is not exposed: found says whether any line of it was.
func parseHistogram(text, metric string) (h histogram, found bool, err error) {
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "# TYPE "+metric+" histogram" || line == "# TYPE "+metric+" summary" {
			found = true
			continue
		}
		name := line
		if k := strings.IndexAny(line, "{ "); k >= 0 {
			name = line[:k]
		}
		var dst *float64
		switch name {
		case metric + "_sum":
			dst = &h.Sum
		case metric + "_count":
			dst = &h.Count
		default:
			continue
		}
		f := strings.Fields(line[strings.LastIndexByte(line, '}')+1:])
		if len(f) == 0 || (strings.IndexByte(line, '{') < 0 && len(f) < 2) {
			return h, found, fmt.Errorf("%s: no value in %q", metric, line)
		}
		val := f[0]
		if strings.IndexByte(line, '{') < 0 {
			val = f[1] // "NAME VALUE"
		}
		v, err := strconv.ParseFloat(val, 64)
		if err != nil {
			return h, found, fmt.Errorf("%s: value in %q: %w", metric, line, err)
		}
		*dst += v
		found = true
	}
	return h, found, sc.Err()
}

// scrape is one reading of a node's component metric.
type scrape struct {
	h histogram
	// read: the metric (or the component before its first observation) was there
	read bool
	err  error
}

// scrape reads the component's metric on every client node through its hostNetwork pod (an
// atServer component's only on the server's node, when a client runs there).
func (r *Runner) scrape(ctx context.Context, comp *component) []scrape {
	out := make([]scrape, len(r.clients))
	var wg sync.WaitGroup
	cmd := driver.Command{Argv: []string{"sh", "-c", clusterinfo.LocalHTTPGet(comp.port, "/metrics")}, Timeout: 30 * time.Second}
	from := r.serverClient()
	for i, c := range r.clients {
		if c.Host == nil || (comp.atServer && from >= 0 && i != from) {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := c.Host.Exec(ctx, cmd)
			if o.Err != nil || o.ExitCode != 0 {
				out[i].err = fmt.Errorf("read %s's metrics at 127.0.0.1:%d on %s (%s): %s", comp.name, comp.port, c.Node, comp.absent, describe(o))
				return
			}
			text := string(o.Stdout)
			h, found, err := parseHistogram(text, comp.metric)
			switch {
			case err != nil:
				out[i].err = err
			case !found && !strings.Contains(text, comp.prefix):
				out[i].err = fmt.Errorf("no %s metrics at 127.0.0.1:%d on %s (%s)", comp.name, comp.port, c.Node, comp.absent)
			default:
				out[i].h, out[i].read = h, true
			}
		}()
	}
	wg.Wait()
	return out
}

// componentAgg sums the component's observations over one result's changes: those of the
// node whose reading it takes.
type componentAgg struct {
	comp *component
	node string
	// server: node is the server's (an atServer component's reading)
	server     bool
	count, sum float64
	err        error
}

// readComponent reads comp's metric after a change of step s and adds the difference from
// the reading just before it (lastScrape) to the step's result on each client node.
func (r *Runner) readComponent(ctx context.Context, comp *component, s step, standing int) {
	cur := r.scrape(ctx, comp)
	from := r.serverClient() // whose reading an atServer component gives every client
	for i, c := range r.clients {
		if c.Host == nil {
			continue
		}
		j := i
		if comp.atServer && from >= 0 {
			j = from
		}
		key := resultKey(s.profile, standing, c.Node, "")
		a := r.comp[key]
		if a == nil {
			a = &componentAgg{comp: comp, node: r.clients[j].Node, server: j == from && comp.atServer}
			r.comp[key] = a
		}
		prev := r.lastScrape[j]
		switch {
		case cur[j].err != nil && r.unread[comp] != "":
			a.err = fmt.Errorf("%w; %s", cur[j].err, r.unread[comp])
		case cur[j].err != nil:
			a.err = cur[j].err
		case prev.err == nil:
			a.count += cur[j].h.Count - prev.h.Count
			a.sum += cur[j].h.Sum - prev.h.Sum
		}
	}
}

// serverClient is the index of the client on the server's node with a hostNetwork pod, -1 for
// none.
func (r *Runner) serverClient() int {
	for i, c := range r.clients {
		if c.Node == r.o.ServerNode && c.Host != nil {
			return i
		}
	}
	return -1
}

// component is the component's figure for a result, when it was read.
func (r *Runner) component(res *api.Result) *api.ComponentFigure {
	if res.Placement == nil || res.Programming == nil {
		return nil
	}
	a := r.comp[resultKey(res.Profile, res.Programming.StandingPolicies, res.Placement.Client.Node, "")]
	if a == nil {
		return nil
	}
	where := a.node
	if a.server {
		where += " (the server's node)"
	}
	f := &api.ComponentFigure{Metric: a.comp.metric, Count: a.count, Note: a.comp.note,
		Source: fmt.Sprintf("%s on %s (127.0.0.1:%d/metrics)", a.comp.name, where, a.comp.port)}
	if a.count > 0 {
		f.MeanSeconds = a.sum / a.count
	}
	if a.err != nil {
		f.Note = a.err.Error() + "; " + f.Note
	}
	return f
}
