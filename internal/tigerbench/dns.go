package tigerbench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/measure"
	tbreport "github.com/cnperf/cnperf/internal/report/tigerbench"
	"github.com/cnperf/cnperf/internal/ttfr"
)

// Labels of DNS test objects.
const (
	LabelDNS    = "cnperf.dev/dns"     // "target" or "client"
	LabelDNSRun = "cnperf.dev/dns-run" // one DNS test
	// DNSContainer is the container of every DNS test pod.
	DNSContainer = "dns"
)

// DNSSpec is one DNS latency test.
type DNSSpec struct {
	// PodTestSpec's Nodes get one measuring pod each.
	PodTestSpec
	// Target is the name to look up; empty creates an in-cluster target: TargetPods HTTP
	// servers behind a ClusterIP Service, looked up by its short name (through the pods'
	// search list, as applications do).
	Target     string
	Port       int
	TargetPods int
	Duration   time.Duration
	// Interval is the pause between one lookup+connect and the next in each pod (default 100ms).
	Interval time.Duration
}

// DNSTarget reads tiger-bench's DNSPerf target: TargetURL ("http://host[:port]/...") or
// TargetDomain. It returns "" when neither is set (the in-cluster default).
func DNSTarget(targetURL, targetDomain string) (name string, port int, err error) {
	switch {
	case targetURL != "":
		u, err := url.Parse(targetURL)
		if err != nil || u.Hostname() == "" {
			return "", 0, fmt.Errorf("DNSPerf.TargetURL %q is not a URL with a host", targetURL)
		}
		port := 80
		if u.Scheme == "https" {
			port = 443
		}
		if p := u.Port(); p != "" {
			port, err = strconv.Atoi(p)
			if err != nil {
				return "", 0, fmt.Errorf("DNSPerf.TargetURL %q: bad port", targetURL)
			}
		}
		return u.Hostname(), port, nil
	case targetDomain != "":
		if h, p, err := net.SplitHostPort(targetDomain); err == nil {
			n, err := strconv.Atoi(p)
			if err != nil {
				return "", 0, fmt.Errorf("DNSPerf.TargetDomain %q: bad port", targetDomain)
			}
			return h, n, nil
		}
		return targetDomain, 80, nil
	}
	return "", 0, nil
}

// dnsWaitReady is how long a measuring pod first waits, unmeasured, for the target to answer
// once: a new Service's endpoints reach kube-proxy a moment after its pod is ready, and that
// set-up race is not DNS latency. A target that never answers is then measured, and fails.
const dnsWaitReady = 30 * time.Second

// DNSRunner runs DNS latency tests.
type DNSRunner podTests

func (r *DNSRunner) logf(format string, a ...any) { (*podTests)(r).logf("dns", format, a...) }

// Run runs one DNS test and removes everything it created, also when ctx ends.
func (r *DNSRunner) Run(ctx context.Context, spec DNSSpec) (res *api.DNSResult, err error) {
	spec = spec.withDefaults()
	res = &api.DNSResult{Target: spec.Target, Port: spec.Port}
	if len(spec.Nodes) == 0 || spec.Duration <= 0 {
		return res, errors.New("dns: no test nodes or no duration")
	}
	ns := spec.Namespace
	sel := LabelDNSRun + "=" + spec.ID
	defer removeAfter(ctx, &err, func(ctx context.Context) error { return r.cleanup(ctx, ns, sel) })
	if spec.Target == "" {
		name, err := r.startTarget(ctx, spec)
		if err != nil {
			return res, err
		}
		spec.Target, spec.Port = name, ServicePort
		res.Target, res.Port = name, ServicePort
	}
	if spec.Port == 0 {
		spec.Port = 80
		res.Port = 80
	}
	names, err := r.startClients(ctx, spec)
	if err != nil {
		return res, err
	}
	res.Pods = len(names)
	r.logf("%d pods look up %s and connect to port %d for %s", len(names), spec.Target, spec.Port, spec.Duration)

	// Each pod ends by itself after Duration; read its line then.
	results := make([]ttfr.DNSReport, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func(i int, name string) {
			defer wg.Done()
			results[i], errs[i] = r.await(ctx, ns, name, spec.StartTimeout+spec.Duration+dnsWaitReady+time.Minute)
		}(i, name)
	}
	wg.Wait()
	if ctx.Err() != nil {
		return res, fmt.Errorf("dns test interrupted: %w", context.Cause(ctx))
	}
	failures := addDNSReports(res, spec.Nodes, names, results, errs)
	r.logf("%d lookups (%d failed), %d connects (%d failed)", res.Lookups, res.LookupFailures, res.Connects, res.ConnectFailures)
	if res.Lookups == 0 {
		return res, fmt.Errorf("dns: no lookup was made: %s", countsText(failures))
	}
	return res, nil
}

// withDefaults fills the unset fields of the spec.
func (spec DNSSpec) withDefaults() DNSSpec {
	spec.PodTestSpec = spec.PodTestSpec.withDefaults()
	if spec.Interval <= 0 {
		spec.Interval = 100 * time.Millisecond
	}
	if spec.TargetPods <= 0 {
		spec.TargetPods = 1
	}
	return spec
}

// startClients creates the measuring pods, one on each node, and returns their names.
func (r *DNSRunner) startClients(ctx context.Context, spec DNSSpec) ([]string, error) {
	ns := spec.Namespace
	var names []string
	for i, node := range spec.Nodes {
		name := fmt.Sprintf("cnperf-dns-%s-%02d", spec.ID, i)
		names = append(names, name)
		argv := []string{"cnperf", "agent", "dns", "--target", spec.Target, "--port", strconv.Itoa(spec.Port),
			"--duration", spec.Duration.String(), "--interval", spec.Interval.String(), "--wait-ready", dnsWaitReady.String()}
		if _, err := r.Client.CoreV1().Pods(ns).Create(ctx, dnsPod(spec, name, node, "client", argv), metav1.CreateOptions{}); err != nil {
			return names, fmt.Errorf("create dns pod %s/%s: %w", ns, name, err)
		}
	}
	return names, nil
}

// addDNSReports adds the pods' reports (or their errors, as warnings) to res and returns the
// failures by cause.
func addDNSReports(res *api.DNSResult, nodes, names []string, reports []ttfr.DNSReport, errs []error) map[string]int {
	failures := map[string]int{}
	var lookups, connects []float64
	for i := range names {
		if errs[i] != nil {
			failures[errs[i].Error()]++
			res.Warnings = append(res.Warnings, fmt.Sprintf("pod %s on %s: %v", names[i], nodes[i], errs[i]))
			continue
		}
		d := reports[i]
		res.Lookups += d.Lookups
		res.LookupFailures += d.LookupFailures
		res.Connects += d.Connects
		res.ConnectFailures += d.ConnectFailures
		lookups = append(lookups, d.LookupSeconds...)
		connects = append(connects, d.ConnectSeconds...)
		for k, v := range d.Failures {
			failures[k] += v
		}
	}
	res.LookupSeconds = tbreport.Distribute(lookups)
	res.ConnectSeconds = tbreport.Distribute(connects)
	res.FailureReasons = sortedCounts(failures)
	return failures
}

// startTarget creates the in-cluster target (HTTP servers and a Service) and returns the
// Service's name once a server is ready.
func (r *DNSRunner) startTarget(ctx context.Context, spec DNSSpec) (string, error) {
	ns := spec.Namespace
	svcName := "cnperf-dns-" + spec.ID
	for i := 0; i < spec.TargetPods; i++ {
		node := spec.Nodes[i%len(spec.Nodes)]
		name := fmt.Sprintf("cnperf-dns-target-%s-%02d", spec.ID, i)
		p := dnsTargetPod(spec, name, node)
		if _, err := r.Client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			return "", fmt.Errorf("create dns target pod %s/%s: %w", ns, name, err)
		}
	}
	svc := dnsTargetService(spec, svcName)
	if _, err := r.Client.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return "", fmt.Errorf("create dns target service %s/%s: %w", ns, svcName, err)
	}
	wctx, cancel := context.WithTimeout(ctx, spec.StartTimeout)
	defer cancel()
	sel := LabelDNS + "=target," + LabelDNSRun + "=" + spec.ID
	var why string
	err := wait.PollUntilContextCancel(wctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		l, err := r.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			return false, nil
		}
		for i := range l.Items {
			if why = podProblem(&l.Items[i]); why == "" {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("dns test interrupted: %w", ctx.Err())
		}
		return "", fmt.Errorf("dns target pods not ready after %s: %s", spec.StartTimeout, why)
	}
	r.logf("target: service %s (port %d) in front of %d server pods", svcName, ServicePort, spec.TargetPods)
	return svcName, nil
}

// await waits for a measuring pod to end and reads its JSON line.
func (r *DNSRunner) await(ctx context.Context, ns, name string, timeout time.Duration) (ttfr.DNSReport, error) {
	var out ttfr.DNSReport
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last *corev1.Pod
	var ended bool
	var exitWhy string
	err := wait.PollUntilContextCancel(wctx, time.Second, false, func(ctx context.Context) (bool, error) {
		p, err := r.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = p
		if f := podFatal(p); f != "" {
			return false, errors.New(f)
		}
		ended, exitWhy = containerExited(p, DNSContainer)
		return ended, nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		why := err.Error()
		if last != nil && !ended {
			if pr := podProblem(last); pr != "" && wctx.Err() != nil {
				why = fmt.Sprintf("no result within %s: %s", timeout.Round(time.Second), pr)
			}
		}
		return out, errors.New(why)
	}
	lctx, lcancel := measure.Cleanup(ctx, 30*time.Second)
	defer lcancel()
	logs, err := (*podTests)(r).logs(lctx, ns, name, DNSContainer)
	if err != nil {
		return out, fmt.Errorf("read pod log: %s", errText(err))
	}
	for _, line := range bytes.Split(logs, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) > 0 && line[0] == '{' && json.Unmarshal(line, &out) == nil {
			return out, nil
		}
	}
	return out, fmt.Errorf("no result line in the log (%s): %s", exitWhy, strings.TrimSpace(string(logs)))
}

func dnsLabels(spec DNSSpec, role string) map[string]string {
	return spec.labels("dns", LabelDNS, LabelDNSRun, role)
}

func dnsPod(spec DNSSpec, name, node, role string, argv []string) *corev1.Pod {
	return spec.pod(name, node, DNSContainer, dnsLabels(spec, role), argv)
}

// dnsTargetPod is one in-cluster target: an HTTP server on the pod network.
func dnsTargetPod(spec DNSSpec, name, node string) *corev1.Pod {
	p := dnsPod(spec, name, node, "target", []string{"cnperf", "agent", "ttfr", "--listen", ":" + strconv.Itoa(ServiceTargetPort)})
	p.Spec.HostNetwork = false
	p.Spec.DNSPolicy = ""
	kube.ServeTCP(&p.Spec.Containers[0], "http", ServiceTargetPort)
	return p
}

// dnsTargetService is the ClusterIP Service over the target pods.
func dnsTargetService(spec DNSSpec, name string) *corev1.Service {
	return kube.ServiceOptions{
		Name: name, Namespace: spec.Namespace, Labels: dnsLabels(spec, "target"), Type: corev1.ServiceTypeClusterIP,
		Selector: map[string]string{LabelDNS: "target", LabelDNSRun: spec.ID},
		Ports: []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: ServicePort,
			TargetPort: intstr.FromInt32(ServiceTargetPort)}},
	}.Service()
}

// cleanup deletes the test's pods and Service and waits for the pods to go.
func (r *DNSRunner) cleanup(ctx context.Context, ns, sel string) error {
	var errs []error
	if svcs, err := r.Client.CoreV1().Services(ns).List(ctx, metav1.ListOptions{LabelSelector: sel}); err == nil {
		for _, s := range svcs.Items {
			if _, err := deleteIfExists(ctx, func(ctx context.Context) error {
				return r.Client.CoreV1().Services(ns).Delete(ctx, s.Name, metav1.DeleteOptions{})
			}); err != nil {
				errs = append(errs, fmt.Errorf("dns cleanup: delete service %s/%s: %w", ns, s.Name, err))
			}
		}
	}
	if err := (*TTFRRunner)(r).cleanup(ctx, ns, sel); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
