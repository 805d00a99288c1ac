//go:build e2e

// End-to-end tests of the IP families: --ip-family dual on a dual-stack cluster (IP_FAMILY=dual)
// and the default family of an IPv6-only cluster (IP_FAMILY=ipv6): every path measured on each
// family, each result naming its family and dialling an address of it.
package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/exit"
)

// TestKubeDualStackEveryPath: `cnperf run --ip-family dual` with native and iperf3 on every
// path the harness's cluster has; each path gives an IPv4 and an IPv6 result, each result's
// client dialled an address of its own family, and nothing is left behind.
func TestKubeDualStackEveryPath(t *testing.T) {
	cl := kpClusterFromEnv(t)
	if f := os.Getenv("CNPERF_E2E_IP_FAMILY"); f != "dual" {
		t.Skipf("the cluster is not dual-stack (CNPERF_E2E_IP_FAMILY=%q): bring it up with IP_FAMILY=dual "+
			"(make e2e IP_FAMILY=dual) to measure every path on IPv4 and IPv6", f)
	}
	kpEveryPathFamilies(t, cl, "cnperf-e2e-dual", []string{"native", "iperf3"},
		[]string{"--profile", "TCP_STREAM", "--ip-family", "dual"}, []string{"ipv4", "ipv6"})
}

// TestKubeIPv6EveryPath: on an IPv6-only cluster (IP_FAMILY=ipv6), `cnperf run` without
// --ip-family measures every path on IPv6 and names the family in each result (the cluster's
// default family, not IPv4's ""): TCP_STREAM with native and iperf3, TCP_RR with iperf 2 (whose
// server needs -V for IPv6: before, its pods never started, "connection refused" on [node IP]:5001).
func TestKubeIPv6EveryPath(t *testing.T) {
	cl := kpClusterFromEnv(t)
	if f := os.Getenv("CNPERF_E2E_IP_FAMILY"); f != "ipv6" {
		t.Skipf("the cluster is not IPv6-only (CNPERF_E2E_IP_FAMILY=%q): bring it up with IP_FAMILY=ipv6 "+
			"(make e2e IP_FAMILY=ipv6) to measure every path on an IPv6-only cluster", f)
	}
	kpEveryPathFamilies(t, cl, "cnperf-e2e-ipv6", []string{"native", "iperf3"}, []string{"--profile", "TCP_STREAM"},
		[]string{"ipv6"})
	kpEveryPathFamilies(t, cl, "cnperf-e2e-ipv6", []string{"iperf2"}, []string{"--profile", "TCP_RR", "--message-size", "64"},
		[]string{"ipv6"})
}

// kpEveryPathFamilies runs drivers on every path of cl with the extra flags (--profile: one),
// and checks that each driver, path and family in families gave a result that dialled an
// address of its family, and that nothing is left behind.
func kpEveryPathFamilies(t *testing.T, cl kpCluster, nsPrefix string, drivers, extra, families []string) {
	t.Helper()
	paths := []api.Path{api.PathPodPodSameNode, api.PathPodPodCrossNode, api.PathHostHost, api.PathPodHost,
		api.PathHostPod, api.PathPodClusterIP, api.PathPodNodePort, api.PathPodHairpin}
	if cl.zones >= 2 {
		paths = append(paths, api.PathPodPodCrossZone)
	}
	var names []string
	for _, p := range paths {
		names = append(names, string(p))
	}
	runID := uuid.NewString()
	ns := kpNamespace(nsPrefix)
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	args := append([]string{"run", "--platform", "kube", "--kubeconfig", cl.kubeconfig, "-n", ns, "--uuid", runID,
		"--driver", strings.Join(drivers, ","), "--path", strings.Join(names, ",")}, extra...)
	out, stderr, code := kpRunCLI(ctx, append(args, "--duration", "1s", "--samples", "1", "-o", "json", "--no-progress")...)
	t.Logf("stderr:\n%s", stderr)
	if code != exit.OK {
		t.Errorf("exit code %d", code)
	}
	run := kpDecodeRun(t, out)
	got := map[string]bool{}
	for _, r := range run.Results {
		fam := r.Params.IPFamily
		name := r.Driver + " " + string(r.Path) + " " + fam
		if r.Failed() || r.Summary.SamplesFailed > 0 {
			t.Errorf("%s failed: %s", name, r.Error)
			continue
		}
		if r.Placement == nil {
			t.Errorf("%s: no placement", name)
			continue
		}
		host := r.Placement.Target
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		ip := net.ParseIP(strings.Trim(host, "[]"))
		if ip == nil || (ip.To4() != nil) != (fam == "ipv4") {
			t.Errorf("%s: dialled %q, not an %s address", name, r.Placement.Target, fam)
		}
		figure := "no figure"
		if st := r.Summary.ThroughputBitsPerSecond; st != nil {
			figure = fmt.Sprintf("%.2f Gb/s", st.Mean/1e9)
		} else if st := r.Summary.TransactionsPerSecond; st != nil {
			figure = fmt.Sprintf("%.0f trans/s", st.Mean)
		}
		t.Logf("%s: %s -> %s: %s", name, r.Placement.Client.Node, r.Placement.Target, figure)
		got[name] = true
	}
	for _, d := range drivers {
		for _, p := range paths {
			for _, fam := range families {
				if !got[d+" "+string(p)+" "+fam] {
					t.Errorf("no %s result of %s on %s", fam, d, p)
				}
			}
		}
	}
	if left := kpLeftovers(context.Background(), t, cl.cs, runID); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestKubeRefusedIPv6Server: on a cluster with IPv6 (IP_FAMILY=ipv6 or dual), a server the tool
// refuses fails its cases with the tool's reason and the run goes on, as on the lab: the agent
// image's sockperf 3.7 (Debian 12's) has no IPv6 ("sockperf: '-i' Invalid address: ::"). Before,
// the whole run stopped ("endpoints did not start (failed): ... container sockperf-tcp-v6 exited").
func TestKubeRefusedIPv6Server(t *testing.T) {
	cl := kpClusterFromEnv(t)
	var extra []string
	switch f := os.Getenv("CNPERF_E2E_IP_FAMILY"); f {
	case "ipv6":
	case "dual":
		extra = []string{"--ip-family", "dual"}
	default:
		t.Skipf("the cluster has no IPv6 (CNPERF_E2E_IP_FAMILY=%q): bring it up with IP_FAMILY=ipv6 or dual "+
			"(make e2e IP_FAMILY=ipv6) for a server that refuses IPv6", f)
	}
	runID := uuid.NewString()
	ns := kpNamespace("cnperf-e2e-refused")
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	args := append([]string{"run", "--platform", "kube", "--kubeconfig", cl.kubeconfig, "-n", ns, "--uuid", runID,
		"--driver", "native,sockperf", "--profile", "TCP_RR,UDP_RR", "--path", "pod-pod-cross-node,host-host",
		"--duration", "1s", "--samples", "1", "-o", "json", "--no-progress"}, extra...)
	out, stderr, code := kpRunCLI(ctx, args...)
	t.Logf("stderr:\n%s", stderr)
	run := kpDecodeRun(t, out)
	refused := 0
	for _, r := range run.Results {
		name := string(r.Profile) + " " + r.Driver + " " + string(r.Path) + " " + r.Params.IPFamily
		v6sockperf := r.Driver == "sockperf" && r.Params.IPFamily == "ipv6"
		switch {
		case v6sockperf && !r.Failed():
			t.Skipf("%s measured: the agent image's sockperf has IPv6 (3.8 or later), no server refuses it", name)
		case v6sockperf:
			if !strings.Contains(r.Error, "exited before it was ready") || !strings.Contains(r.Error, "Invalid address") {
				t.Errorf("%s failed without the tool's reason: %s", name, r.Error)
			}
			refused++
		case r.Failed():
			t.Errorf("%s failed (only sockperf's IPv6 cases should): %s", name, r.Error)
		}
	}
	if refused != 4 {
		t.Errorf("%d sockperf IPv6 cases failed as refused, want 4 (TCP_RR and UDP_RR on two paths)", refused)
	}
	if code != exit.Failed {
		t.Errorf("exit code %d, want %d (cases failed)", code, exit.Failed)
	}
	if left := kpLeftovers(context.Background(), t, cl.cs, runID); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}
