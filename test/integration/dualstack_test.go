package integration

import (
	"net/netip"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

// sockperfHasIPv6 reports whether the installed sockperf takes IPv6 addresses: sockperf 3.8
// added them; 3.7 (Debian 12's) refuses "::" with "'-i' Invalid address".
func sockperfHasIPv6(t *testing.T) (bool, string) {
	t.Helper()
	out, _ := exec.Command("sockperf", "--version").CombinedOutput()
	m := regexp.MustCompile(`version (\d+)\.(\d+)`).FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("sockperf --version printed no version: %s", out)
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	return major > 3 || major == 3 && minor >= 8, m[1] + "." + m[2]
}

// noIPv6 checks a dual run of a sockperf without IPv6: each of the want IPv6 cases failed
// with sockperf's reason and no sample, and every IPv4 case measured (its servers are
// others, so the IPv6 servers' refusal costs it nothing).
func noIPv6(t *testing.T, r *api.Run, stderr string, err error, want int) {
	t.Helper()
	if r == nil {
		t.Fatalf("the run recorded nothing: %v\n%s", err, stderr)
	}
	var v4 api.Run
	failed := 0
	for _, res := range r.Results {
		if res.Params.IPFamily == "ipv4" {
			v4.Results = append(v4.Results, res)
			continue
		}
		if !strings.Contains(res.Error, "'-i' Invalid address: ::") || len(res.Samples) != 0 {
			t.Errorf("%s %s ipv6: error %q with %d samples, want sockperf's reason and none",
				res.Profile, res.Path, res.Error, len(res.Samples))
		}
		failed++
	}
	if failed != want || len(v4.Results) != want {
		t.Fatalf("%d IPv6 and %d IPv4 results, want %d of each\n%s", failed, len(v4.Results), want, stderr)
	}
	ok(t, &v4, stderr, nil)
}

// TestLabDualStackEveryDriver runs every driver with --ip-family dual on the lab's pod-to-pod,
// ClusterIP and host-to-host paths, with the real tools: every path has a result of each family,
// each dialled an address of its family. (Before each tool's IPv6 server had a port of its own,
// iperf 2's one IPv4 server refused the IPv6 client, "tcp connect failed: Connection refused",
// and sockperf's IPv6 client reached the IPv4 server's port.) With a sockperf without IPv6
// (before 3.8) its IPv6 cases fail with sockperf's own reason and its IPv4 cases measure.
func TestLabDualStackEveryDriver(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the namespace lab needs root")
	}
	paths := []api.Path{api.PathPodPodCrossNode, api.PathPodClusterIP, api.PathHostHost}
	for _, tc := range []struct {
		driver, tool, profiles string
		args                   []string
	}{
		// One profile per server: the other drivers serve UDP from the same server as TCP.
		{"native", "", "TCP_RR", nil},
		{"netperf", "netperf", "TCP_RR", nil},
		{"iperf3", "iperf3", "TCP_STREAM", []string{"--message-size", "1400"}},
		{"uperf", "uperf", "TCP_RR", nil},
		{"qperf", "qperf", "TCP_RR", nil},
		{"sockperf", "sockperf", "TCP_RR,UDP_RR", nil},
		{"iperf2", "iperf", "TCP_RR", []string{"--message-size", "64"}},
	} {
		t.Run(tc.driver, func(t *testing.T) {
			if tc.tool != "" {
				need(t, tc.tool)
			}
			args := append([]string{"--driver", tc.driver, "--profile", tc.profiles, "--ip-family", "dual",
				"--path", "pod-pod-cross-node,pod-clusterip,host-host", "--overlay", "routed", "--service-proxy", "nftables",
				"--duration", "1s", "--samples", "1"}, tc.args...)
			r, stderr, err := cnperf(t, args...)
			if tc.driver == "sockperf" {
				if has, v := sockperfHasIPv6(t); !has {
					noIPv6(t, r, stderr, err, len(paths)*2)
					t.Logf("sockperf %s has no IPv6 (3.8 added it): its IPv6 cases failed with its reason, "+
						"its IPv4 cases measured", v)
					return
				}
			}
			ok(t, r, stderr, err)
			got := map[string]bool{}
			for _, res := range r.Results {
				target, perr := netip.ParseAddr(res.Placement.Target)
				if perr != nil || target.Is4() != (res.Params.IPFamily == "ipv4") {
					t.Errorf("%s %s %s dialled %q", res.Profile, res.Path, res.Params.IPFamily, res.Placement.Target)
				}
				got[string(res.Profile)+" "+string(res.Path)+" "+res.Params.IPFamily] = true
			}
			for _, p := range strings.Split(tc.profiles, ",") {
				for _, path := range paths {
					for _, fam := range []string{"ipv4", "ipv6"} {
						if !got[p+" "+string(path)+" "+fam] {
							t.Errorf("no %s %s %s result", p, path, fam)
						}
					}
				}
			}
		})
	}
}
