package programming

import (
	"bufio"
	"context"
	"fmt"
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

// kubeProxyNote says how kube-proxy's figure differs from cnperf's.
const kubeProxyNote = "kube-proxy measures from the EndpointSlice's last-change-trigger-time annotation, which has " +
	"whole seconds (its figure is 0 to 1 s longer than from the same moment), to the end of its rules' sync (before " +
	"the first packet); a pod labelled into a Service brings the time it last turned Ready, not the label's (the " +
	"figure is then the pod's age); it counts every EndpointSlice change of the cluster in the window, none for a deletion"

// histogram is a Prometheus histogram's _sum and _count, over all its label sets.
type histogram struct{ Sum, Count float64 }

// parseHistogram reads metric's _sum and _count from Prometheus text (an HTTP response's
// headers before it are ignored), summed over the label sets (kube-proxy's ip_family). A
// histogram with no observation yet is not exposed: found says whether any line of it was.
func parseHistogram(text, metric string) (h histogram, found bool, err error) {
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "# TYPE "+metric+" histogram" {
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

// proxyScrape is one reading of a node's kube-proxy histogram.
type proxyScrape struct {
	h   histogram
	err error
}

// scrapeKubeProxy reads every client node's kube-proxy histogram through its hostNetwork pod.
func (r *Runner) scrapeKubeProxy(ctx context.Context) []proxyScrape {
	out := make([]proxyScrape, len(r.clients))
	var wg sync.WaitGroup
	cmd := driver.Command{Argv: []string{"sh", "-c", clusterinfo.LocalHTTPGet(clusterinfo.KubeProxyMetricsPort, "/metrics")}, Timeout: 30 * time.Second}
	for i, c := range r.clients {
		if c.Host == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := c.Host.Exec(ctx, cmd)
			if o.Err != nil || o.ExitCode != 0 {
				out[i].err = fmt.Errorf("read kube-proxy's metrics on %s: %s", c.Node, describe(o))
				return
			}
			text := string(o.Stdout)
			h, found, err := parseHistogram(text, KubeProxyMetric)
			switch {
			case err != nil:
				out[i].err = err
			case !found && !strings.Contains(text, "kubeproxy_"):
				out[i].err = fmt.Errorf("no kube-proxy metrics at 127.0.0.1:%d on %s (no kube-proxy, or it binds its metrics elsewhere)",
					clusterinfo.KubeProxyMetricsPort, c.Node)
			default:
				out[i].h = h
			}
		}()
	}
	wg.Wait()
	return out
}

// componentAgg sums the component's observations over one profile's changes on one node.
type componentAgg struct {
	count, sum float64
	err        error
}

// readComponent reads kube-proxy's histogram after a change of step s and adds the
// difference from the previous reading to the step's profile on each node.
func (r *Runner) readComponent(ctx context.Context, s step) {
	cur := r.scrapeKubeProxy(ctx)
	for i, c := range r.clients {
		if c.Host == nil {
			continue
		}
		key := resultKey(s.profile, 0, c.Node, "")
		a := r.comp[key]
		if a == nil {
			a = &componentAgg{}
			r.comp[key] = a
		}
		prev := r.lastProxy[i]
		switch {
		case cur[i].err != nil:
			a.err = cur[i].err
		case prev.err == nil:
			a.count += cur[i].h.Count - prev.h.Count
			a.sum += cur[i].h.Sum - prev.h.Sum
		}
		r.lastProxy[i] = cur[i]
	}
}

// component is kube-proxy's figure for a result, when it was read.
func (r *Runner) component(res *api.Result) *api.ComponentFigure {
	if res.Placement == nil || (res.Path != api.PathPodClusterIP && res.Path != api.PathPodNodePort) {
		return nil
	}
	a := r.comp[resultKey(res.Profile, 0, res.Placement.Client.Node, "")]
	if a == nil {
		return nil
	}
	f := &api.ComponentFigure{Metric: KubeProxyMetric, Count: a.count, Note: kubeProxyNote,
		Source: fmt.Sprintf("kube-proxy on %s (127.0.0.1:%d/metrics)", res.Placement.Client.Node, clusterinfo.KubeProxyMetricsPort)}
	if a.count > 0 {
		f.MeanSeconds = a.sum / a.count
	}
	if a.err != nil {
		f.Note = a.err.Error() + "; " + f.Note
	}
	return f
}
