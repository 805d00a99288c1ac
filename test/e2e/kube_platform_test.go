//go:build e2e

// End-to-end tests of the Kubernetes platform (internal/platform/kube) on the harness's real
// cluster: every path of issue 6 with the native, iperf3 and qperf drivers, the placement
// checked against the API server, the cluster details, the tolerance gate on real numbers,
// failures reported fast, the remote tool killed on cancel, and nothing left behind. These
// drive the platform through the same runner `cnperf run` uses; kube_cli_test.go drives the
// command itself.
package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/driver/all"
	"github.com/cnperf/cnperf/internal/gate"
	"github.com/cnperf/cnperf/internal/kube"
	"github.com/cnperf/cnperf/internal/plan"
	kubeplatform "github.com/cnperf/cnperf/internal/platform/kube"
	"github.com/cnperf/cnperf/internal/runner"
)

// kpCluster is the e2e cluster as the kube platform tests see it.
type kpCluster struct {
	kubeconfig string
	zones      int
	netMode    string
	// cni and cniMode are what cnperf must detect: "bridge" and "" for the harness's bridge
	// plugin (NET_MODE is the harness's, not the CNI's), "Flannel" and its backend for flannel,
	// "Calico" and its encapsulation and dataplane for calico, "Cilium" and its routing mode for
	// cilium.
	cni, cniMode string
	cs           kubernetes.Interface
}

func kpClusterFromEnv(t *testing.T) kpCluster {
	t.Helper()
	kc := os.Getenv("CNPERF_E2E_KUBECONFIG")
	if kc == "" {
		t.Skip("CNPERF_E2E_KUBECONFIG is not set: no e2e cluster given (run `make e2e`, or `make e2e-up` then `make e2e-test`)")
	}
	cs, _, err := kube.NewClientset(kc, "")
	if err != nil {
		t.Fatal(err)
	}
	zones, _ := strconv.Atoi(os.Getenv("CNPERF_E2E_ZONES"))
	if zones == 0 {
		zones = 1
	}
	cl := kpCluster{kubeconfig: kc, zones: zones, netMode: os.Getenv("CNPERF_E2E_NET_MODE"), cni: "bridge", cs: cs}
	switch c := os.Getenv("CNPERF_E2E_CNI"); c {
	case "", "bridge":
	case "flannel":
		cl.cni, cl.cniMode = "Flannel", os.Getenv("CNPERF_E2E_CNI_MODE")
	case "calico":
		// encapsulation (the IPPools' vxlanMode Always) and dataplane (FelixConfiguration)
		cl.cni, cl.cniMode = "Calico", "VXLAN, iptables"
	case "cilium": // read from cilium-config; the harness keeps kube-proxy
		cl.cni, cl.cniMode = "Cilium", "tunnel vxlan, eBPF, kube-proxy kept"
		if os.Getenv("CNPERF_E2E_CNI_MODE") == "native" {
			cl.cniMode = "native routing, eBPF, kube-proxy kept"
		}
	default:
		t.Fatalf("CNPERF_E2E_CNI=%q: this test knows bridge, flannel, calico and cilium", c)
	}
	return cl
}

// kpNamespace is a namespace name of its own per test, so tests never share objects.
func kpNamespace(prefix string) string { return prefix + "-" + uuid.NewString()[:6] }

// kpSyncBuffer collects the platform's progress lines for the test log.
type kpSyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *kpSyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *kpSyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// kpCases expands a plan of profiles × paths × drivers, 1 s per sample.
func kpCases(t *testing.T, profiles []api.Profile, paths []api.Path, drivers []string, samples int) []plan.Case {
	t.Helper()
	p := &api.Plan{APIVersion: api.APIVersion, Kind: api.KindPlan, Tests: []api.TestGroup{{
		Name: "e2e", Profiles: profiles, Paths: paths, Drivers: drivers, Duration: "1s", Samples: &samples,
	}}}
	cases, err := plan.Expand(p, all.Check)
	if err != nil {
		t.Fatalf("expand plan: %v", err)
	}
	return cases
}

func kpDrivers(t *testing.T, cases []plan.Case) map[string]driver.Driver {
	t.Helper()
	out := map[string]driver.Driver{}
	for _, c := range cases {
		d, err := all.Get(c.Driver)
		if err != nil {
			t.Fatal(err)
		}
		out[c.Driver] = d
	}
	return out
}

// kpLeftovers lists every object labelled with the run, in the whole cluster.
func kpLeftovers(ctx context.Context, t *testing.T, cs kubernetes.Interface, runID string) []string {
	t.Helper()
	lo := metav1.ListOptions{LabelSelector: kube.RunSelector(runID)}
	var left []string
	nss, err := cs.CoreV1().Namespaces().List(ctx, lo)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nss.Items {
		left = append(left, "namespace/"+n.Name+" ("+string(n.Status.Phase)+")")
	}
	pods, err := cs.CoreV1().Pods("").List(ctx, lo)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		left = append(left, "pod/"+p.Namespace+"/"+p.Name)
	}
	svcs, err := cs.CoreV1().Services("").List(ctx, lo)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range svcs.Items {
		left = append(left, "service/"+s.Namespace+"/"+s.Name)
	}
	sas, err := cs.CoreV1().ServiceAccounts("").List(ctx, lo)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sas.Items {
		left = append(left, "serviceaccount/"+s.Namespace+"/"+s.Name)
	}
	secs, err := cs.CoreV1().Secrets("").List(ctx, lo)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secs.Items {
		left = append(left, "secret/"+s.Namespace+"/"+s.Name)
	}
	return left
}

func kpNodeIPs(ctx context.Context, t *testing.T, cs kubernetes.Interface) map[string]string {
	t.Helper()
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, n := range nodes.Items {
		for _, a := range n.Status.Addresses {
			// the first InternalIP: the primary family's (a dual-stack node lists both)
			if _, seen := out[n.Name]; !seen && a.Type == corev1.NodeInternalIP {
				out[n.Name] = a.Address
			}
		}
	}
	return out
}

// TestKubePlatformAllPaths runs native, iperf3 and qperf over every path of issue 6 and
// checks each result's placement against where the API server says the pods run.
func TestKubePlatformAllPaths(t *testing.T) {
	cl := kpClusterFromEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	paths := []api.Path{api.PathPodPodSameNode, api.PathPodPodCrossNode, api.PathHostHost, api.PathPodHost,
		api.PathHostPod, api.PathPodClusterIP, api.PathPodNodePort}
	if cl.zones >= 2 {
		paths = append(paths, api.PathPodPodCrossZone)
	}
	cases := kpCases(t, []api.Profile{api.TCPStream}, paths, []string{"native", "iperf3", "qperf"}, 2)
	cases = append(cases, kpCases(t, []api.Profile{api.TCPRR}, []api.Path{api.PathPodPodCrossNode, api.PathHostHost},
		[]string{"native", "qperf"}, 2)...)
	for i := range cases {
		cases[i].Index = i
		if cases[i].Driver == "qperf" && cases[i].Path == api.PathPodNodePort {
			// qperf's server tells the client which data port to dial, so the NodePort must
			// keep the numbers: ports in the NodePort range, as tiger-bench's 32000/32221.
			cases[i].Params.Options = map[string]string{"port": "32000", "dataPort": "32001"}
		}
	}
	runID := uuid.NewString()
	ns := kpNamespace("cnperf-e2e-paths")
	var log kpSyncBuffer
	p, err := kubeplatform.New(kubeplatform.Options{Kubeconfig: cl.kubeconfig, Namespace: ns, PodStartTimeout: 3 * time.Minute}, runID, &log)
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			_ = p.Close(context.Background())
		}
		t.Logf("platform log:\n%s", log.String())
	}()
	setup := time.Now()
	if err := p.Prepare(ctx, cases, kpDrivers(t, cases)); err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	t.Logf("setup for %d cases took %.1fs", len(cases), time.Since(setup).Seconds())

	cd, err := p.Describe(ctx)
	if err != nil {
		t.Fatalf("Describe: %v", err)
	}
	wantMTU := 1500
	if cl.netMode == "vxlan" && cl.cni != "Cilium" {
		// Cilium keeps the device's MTU on the pod's eth0 and lowers the MTU of its routes
		wantMTU = 1450
	}
	wantFamily := "ipv4"
	switch os.Getenv("CNPERF_E2E_IP_FAMILY") {
	case "dual":
		wantFamily = "dual-stack"
		if cl.cni == "Calico" {
			// felix writes the smaller of its VXLAN MTUs: over IPv6 the overhead is 70 bytes
			wantMTU = 1430
		}
	case "ipv6":
		wantFamily = "ipv6"
		if cl.netMode == "vxlan" {
			// VXLAN over IPv6 (Calico's, and the harness's own on an IPv6-only cluster): 70 bytes
			wantMTU = 1430
		}
	}
	if cd.KubernetesVersion != "v1.34.4" || cd.NodeCount < 2 || cd.CNI != cl.cni || cd.CNIMode != cl.cniMode || cd.KubeProxyMode != "iptables" ||
		cd.PodMTUBytes != wantMTU || cd.Cloud != "none" || cd.IPFamily != wantFamily || len(cd.Nodes) < 2 {
		t.Errorf("cluster details = %+v", cd)
	}
	for _, n := range cd.Nodes {
		if n.Kernel == "" || n.Arch == "" || !strings.HasPrefix(n.ContainerRuntime, "containerd://") || n.Zone == "" {
			t.Errorf("node details = %+v", n)
		}
	}

	nodeIPs := kpNodeIPs(ctx, t, cl.cs)
	run := &api.Run{Platform: "kube"}
	r := &runner.Runner{Platform: p, Drivers: kpDrivers(t, cases), OnResult: func(res api.Result) error {
		run.Results = append(run.Results, res)
		// The placement must say where the pods really are: ask the API server now.
		pl := res.Placement
		if pl == nil {
			t.Errorf("%s %s %s: no placement", res.Profile, res.Driver, res.Path)
			return nil
		}
		for _, ep := range []api.Endpoint{pl.Client, pl.Server} {
			pod, err := cl.cs.CoreV1().Pods(ns).Get(ctx, ep.Pod, metav1.GetOptions{})
			if err != nil {
				t.Errorf("%s: %s pod %q: %v", res.Path, ep.Role, ep.Pod, err)
				continue
			}
			if pod.Spec.NodeName != ep.Node || pod.Status.PodIP != ep.PodIP || pod.Status.HostIP != ep.HostIP || pod.Spec.HostNetwork != ep.HostNetwork {
				t.Errorf("%s: %s placement %+v, but the pod runs on %s (pod IP %s, host IP %s, hostNetwork %v)", res.Path, ep.Role, ep,
					pod.Spec.NodeName, pod.Status.PodIP, pod.Status.HostIP, pod.Spec.HostNetwork)
			}
		}
		same := pl.Client.Node == pl.Server.Node
		switch res.Path {
		case api.PathPodPodSameNode:
			if !same {
				t.Errorf("%s: client on %s, server on %s", res.Path, pl.Client.Node, pl.Server.Node)
			}
		case api.PathPodPodCrossZone:
			if pl.Client.Zone == pl.Server.Zone || pl.Client.Zone == "" {
				t.Errorf("%s: zones %q and %q", res.Path, pl.Client.Zone, pl.Server.Zone)
			}
		default:
			if same {
				t.Errorf("%s: client and server both on %s", res.Path, pl.Client.Node)
			}
		}
		wantHost := map[api.Path][2]bool{api.PathHostHost: {true, true}, api.PathPodHost: {false, true}, api.PathHostPod: {true, false}}[res.Path]
		if pl.Client.HostNetwork != wantHost[0] || pl.Server.HostNetwork != wantHost[1] {
			t.Errorf("%s: hostNetwork client %v server %v", res.Path, pl.Client.HostNetwork, pl.Server.HostNetwork)
		}
		switch res.Path {
		case api.PathPodClusterIP:
			svcs, _ := cl.cs.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
			found := false
			for _, s := range svcs.Items {
				if s.Spec.ClusterIP == pl.Target && s.Spec.Type == corev1.ServiceTypeClusterIP {
					found = true
				}
			}
			if !found {
				t.Errorf("%s: target %s is no ClusterIP of the run's services", res.Path, pl.Target)
			}
		case api.PathPodNodePort:
			if pl.Target != nodeIPs[pl.Server.Node] {
				t.Errorf("%s: target %s, want the server node's IP %s", res.Path, pl.Target, nodeIPs[pl.Server.Node])
			}
		case api.PathHostHost, api.PathPodHost:
			if pl.Target != nodeIPs[pl.Server.Node] || pl.Target != pl.Server.HostIP {
				t.Errorf("%s: target %s, want the server node's IP %s", res.Path, pl.Target, nodeIPs[pl.Server.Node])
			}
		default:
			if pl.Target != pl.Server.PodIP || net.ParseIP(pl.Target) == nil {
				t.Errorf("%s: target %s, want the server pod's IP %s", res.Path, pl.Target, pl.Server.PodIP)
			}
		}
		return nil
	}}
	measure := time.Now()
	results, err := r.Run(ctx, cases)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	t.Logf("measured %d cases in %.1fs", len(results), time.Since(measure).Seconds())
	for _, res := range results {
		fig := "-"
		if s := res.Summary.ThroughputBitsPerSecond; s != nil {
			fig = fmt.Sprintf("%.2f Gb/s [%.2f, %.2f]", s.Mean/1e9, s.CI95Low/1e9, s.CI95High/1e9)
		} else if s := res.Summary.TransactionsPerSecond; s != nil {
			fig = fmt.Sprintf("%.0f tx/s", s.Mean)
		}
		t.Logf("%-10s %-7s %-20s client %s%s -> %s (%s) %s", res.Profile, res.Driver, res.Path, res.Placement.Client.Node,
			kpHostMark(res.Placement.Client), res.Placement.Server.Node+kpHostMark(res.Placement.Server), res.Placement.Target, fig)
		if res.Failed() {
			var why []string
			for _, s := range res.Samples {
				if s.Error != "" {
					why = append(why, s.Error)
				}
			}
			t.Errorf("%s %s %s failed: %s %v", res.Profile, res.Driver, res.Path, res.Error, why)
		}
	}

	// --tolerance on these numbers: a violation exactly where |pod - host| / host > pct.
	var diffs []float64
	for _, h := range results {
		if h.Path != api.PathHostHost || h.Summary.ThroughputBitsPerSecond == nil {
			continue
		}
		for _, q := range results {
			if q.Path == api.PathPodPodCrossNode && q.Driver == h.Driver && q.Profile == h.Profile && q.Summary.ThroughputBitsPerSecond != nil {
				hm, pm := h.Summary.ThroughputBitsPerSecond.Mean, q.Summary.ThroughputBitsPerSecond.Mean
				diffs = append(diffs, math.Abs(pm-hm)/hm*100)
			}
		}
	}
	if len(diffs) == 0 {
		t.Fatal("no host-host / pod-pod-cross-node pair to gate")
	}
	for _, pct := range []float64{1000, 0.001, kpMedian(diffs)} {
		report, vs := gate.Tolerance(run, pct)
		want := 0
		for _, d := range diffs {
			if d > pct {
				want++
			}
		}
		// TCP_RR pairs are gated too (transactions per second); count them from the report.
		got := 0
		for _, v := range vs {
			if v.Profile == api.TCPStream {
				got++
			}
		}
		if got != want {
			t.Errorf("tolerance %.3f%%: %d stream violations, want %d (diffs %v)\n%s", pct, got, want, diffs, report)
		}
		t.Logf("tolerance %.3f%%:\n%s", pct, report)
	}

	teardown := time.Now()
	if err := p.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	closed = true
	t.Logf("teardown took %.1fs", time.Since(teardown).Seconds())
	if left := kpLeftovers(context.Background(), t, cl.cs, runID); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

func kpHostMark(e api.Endpoint) string {
	if e.HostNetwork {
		return "(host)"
	}
	return ""
}

func kpMedian(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s[len(s)/2]
}

// TestKubePlatformCancel interrupts a run in the middle of a sample: the remote tool must
// die (checked in the pod before teardown) and Close must leave nothing of the run.
func TestKubePlatformCancel(t *testing.T) {
	cl := kpClusterFromEnv(t)
	runID := uuid.NewString()
	ns := kpNamespace("cnperf-e2e-cancel")
	var log kpSyncBuffer
	p, err := kubeplatform.New(kubeplatform.Options{Kubeconfig: cl.kubeconfig, Namespace: ns}, runID, &log)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { t.Logf("platform log:\n%s", log.String()) }()
	cases := kpCases(t, []api.Profile{api.TCPStream}, []api.Path{api.PathPodPodCrossNode}, []string{"iperf3"}, 1)
	cases[0].Params.DurationSeconds = 60
	bg := context.Background()
	if err := p.Prepare(bg, cases, kpDrivers(t, cases)); err != nil {
		_ = p.Close(bg)
		t.Fatal(err)
	}
	pair, err := p.Pair(bg, cases[0])
	if err != nil {
		_ = p.Close(bg)
		t.Fatal(err)
	}
	d, _ := all.Get("iperf3")
	job, err := d.Job(cases[0])
	if err != nil {
		t.Fatal(err)
	}
	cmds, err := job.Client(pair.Target, false)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(bg)
	done := make(chan driver.Output, 1)
	go func() { done <- pair.Client.Exec(ctx, cmds[0]) }()
	// Wait until iperf3 runs in the client pod, then "press Ctrl-C". pidof matches the process
	// name only (busybox timeout's watcher carries the tool's argv but is called timeout).
	probe := driver.Command{Argv: []string{"sh", "-c", "pidof iperf3 | wc -w"}, Timeout: 20 * time.Second}
	running := false
	for i := 0; i < 60 && !running; i++ {
		out := pair.Client.Exec(bg, probe)
		running = strings.TrimSpace(string(out.Stdout)) != "0" && out.Err == nil
		if !running {
			time.Sleep(250 * time.Millisecond)
		}
	}
	if !running {
		t.Fatal("iperf3 never started in the client pod")
	}
	cancel()
	out := <-done
	if out.Err == nil || !strings.Contains(out.Err.Error(), "stopped") {
		t.Errorf("Exec after cancel: err %v", out.Err)
	}
	after := pair.Client.Exec(bg, probe)
	if got := strings.TrimSpace(string(after.Stdout)); got != "0" || after.Err != nil {
		t.Errorf("iperf3 still runs in the client pod after cancel (count %q, err %v)", got, after.Err)
	}
	if err := p.Close(bg); err != nil {
		t.Fatal(err)
	}
	if left := kpLeftovers(bg, t, cl.cs, runID); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestKubePlatformFailsFast: an image that cannot be pulled is reported with the kubelet's
// reason as soon as it happens, not after the start-up timeout.
func TestKubePlatformFailsFast(t *testing.T) {
	cl := kpClusterFromEnv(t)
	runID := uuid.NewString()
	p, err := kubeplatform.New(kubeplatform.Options{Kubeconfig: cl.kubeconfig, Namespace: kpNamespace("cnperf-e2e-fail"),
		Image: "localhost/cnperf/not-there:v0", ImagePullPolicy: "Never", PodStartTimeout: 10 * time.Minute}, runID, nil)
	if err != nil {
		t.Fatal(err)
	}
	cases := kpCases(t, []api.Profile{api.TCPStream}, []api.Path{api.PathPodPodSameNode}, []string{"iperf3"}, 1)
	err = p.Prepare(context.Background(), cases, kpDrivers(t, cases))
	var se *kube.StartError
	if !errors.As(err, &se) || se.Reason != "failed" || !strings.Contains(err.Error(), "ErrImageNeverPull") {
		t.Errorf("Prepare error = %v, want an immediate ErrImageNeverPull", err)
	} else {
		t.Logf("reported: %v", err)
	}
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if left := kpLeftovers(context.Background(), t, cl.cs, runID); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestKubePlatformCrossZoneOneZone: with one zone, pod-pod-cross-zone is a clear error
// before anything is created.
func TestKubePlatformCrossZoneOneZone(t *testing.T) {
	cl := kpClusterFromEnv(t)
	if cl.zones >= 2 {
		t.Skip("the cluster has two zones (pod-pod-cross-zone runs in TestKubePlatformAllPaths)")
	}
	runID := uuid.NewString()
	p, err := kubeplatform.New(kubeplatform.Options{Kubeconfig: cl.kubeconfig, Namespace: kpNamespace("cnperf-e2e-zone")}, runID, nil)
	if err != nil {
		t.Fatal(err)
	}
	cases := kpCases(t, []api.Profile{api.TCPStream}, []api.Path{api.PathPodPodCrossZone}, []string{"native"}, 1)
	err = p.Prepare(context.Background(), cases, kpDrivers(t, cases))
	if err == nil || !strings.Contains(err.Error(), "needs nodes in two zones") {
		t.Errorf("error = %v", err)
	}
	_ = p.Close(context.Background())
	if left := kpLeftovers(context.Background(), t, cl.cs, runID); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestKubePlatformGuaranteed: --resources with --guaranteed gives endpoints Guaranteed QoS
// (the kubelet's verdict, read from the pods), and they measure.
func TestKubePlatformGuaranteed(t *testing.T) {
	cl := kpClusterFromEnv(t)
	runID := uuid.NewString()
	ns := kpNamespace("cnperf-e2e-qos")
	p, err := kubeplatform.New(kubeplatform.Options{Kubeconfig: cl.kubeconfig, Namespace: ns, Resources: []string{"cpu=200m", "memory=128Mi"}, Guaranteed: true}, runID, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	defer func() { _ = p.Close(ctx) }()
	cases := kpCases(t, []api.Profile{api.TCPRR}, []api.Path{api.PathPodPodSameNode}, []string{"native"}, 1)
	if err := p.Prepare(ctx, cases, kpDrivers(t, cases)); err != nil {
		t.Fatal(err)
	}
	pods, err := cl.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: kube.RunSelector(runID)})
	if err != nil || len(pods.Items) != 2 {
		t.Fatalf("pods: %v (%v)", pods, err)
	}
	for _, pod := range pods.Items {
		if pod.Status.QOSClass != corev1.PodQOSGuaranteed {
			t.Errorf("pod %s has QoS %s", pod.Name, pod.Status.QOSClass)
		}
	}
	results, err := (&runner.Runner{Platform: p, Drivers: kpDrivers(t, cases)}).Run(ctx, cases)
	if err != nil || len(results) != 1 || results[0].Failed() {
		t.Fatalf("run: %v %+v", err, results)
	}
	t.Logf("TCP_RR same node, Guaranteed 200m CPU: %.0f tx/s", results[0].Summary.TransactionsPerSecond.Mean)
}
