//go:build e2e

// End-to-end test of --ip-family dual on a dual-stack cluster (IP_FAMILY=dual): every path
// measured on IPv4 and on IPv6, each result naming its family and dialling an address of it.
package e2e

import (
	"context"
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
	ns := kpNamespace("cnperf-e2e-dual")
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	out, stderr, code := kpRunCLI(ctx, "run", "--platform", "kube", "--kubeconfig", cl.kubeconfig, "-n", ns, "--uuid", runID,
		"--driver", "native,iperf3", "--profile", "TCP_STREAM", "--path", strings.Join(names, ","), "--ip-family", "dual",
		"--duration", "1s", "--samples", "1", "-o", "json", "--no-progress")
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
		t.Logf("%s: %s -> %s: %.2f Gb/s", name, r.Placement.Client.Node, r.Placement.Target, r.Summary.ThroughputBitsPerSecond.Mean/1e9)
		got[name] = true
	}
	for _, d := range []string{"native", "iperf3"} {
		for _, p := range paths {
			for _, fam := range []string{"ipv4", "ipv6"} {
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
