package local

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/netip"
	"os/exec"
	"strings"
	"testing"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/driver/all"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/report/relative"
	"github.com/cnperf/cnperf/internal/runner"
	"github.com/cnperf/cnperf/internal/stats"
)

// TestLabPathsIPv6 runs iperf3 and netperf on every lab path on IPv4 and IPv6 (ipFamily
// dual): every case measures something and dials an address of its family (IPv6 ones from the
// lab's 2001:2::/48), and Close leaves no namespace behind. (The native driver's server is
// cnperf itself, which a test binary is not: test/integration's TestLabDualStackEveryDriver runs
// every driver, with the cnperf binary, on both families.)
func TestLabPathsIPv6(t *testing.T) {
	if err := lab.CheckPrivileges(); err != nil {
		t.Skip(err)
	}
	tools := map[string]string{"iperf3": "iperf3", "netperf": "netperf"}
	drivers := map[string]driver.Driver{}
	for _, name := range []string{"iperf3", "netperf"} {
		if bin, ok := tools[name]; ok {
			if _, err := exec.LookPath(bin); err != nil {
				t.Logf("%s: not installed (%s), not measured", name, bin)
				continue
			}
		}
		d, err := all.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		drivers[name] = d
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	runID := hex.EncodeToString(b)
	lo := lab.DefaultOptions()
	lo.ServiceProxies = []string{lab.ProxyNftables, lab.ProxyIptables}
	var log strings.Builder
	p := New(Options{Lab: &lo, RunID: runID}, &log)
	tag, _ := lab.RunTag(runID)

	paths := []api.Path{api.PathHostHost, api.PathPodPodSameNode, api.PathPodPodCrossNode, api.PathPodHost, api.PathHostPod, api.PathPodClusterIP}
	var cases []plan.Case
	for _, name := range []string{"iperf3", "netperf"} {
		if drivers[name] == nil {
			continue
		}
		prof, size := api.TCPStream, plan.DefaultMessageSize(api.TCPStream)
		for _, path := range paths {
			for _, fam := range plan.CaseFamilies(plan.IPFamilyDual) {
				c := plan.Case{Profile: prof, Path: path, Driver: name,
					Params: api.Params{DurationSeconds: 1, Samples: 1, MessageSizeBytes: size, Parallel: 1, IPFamily: fam}}
				if err := p.CheckPath(c); err != nil {
					t.Fatalf("CheckPath(%s %s %s): %v", name, path, fam, err)
				}
				cases = append(cases, c)
			}
		}
	}
	cases = p.ExpandCases(cases)
	for i := range cases {
		cases[i].Index = i
	}
	ctx := context.Background()
	closed := false
	defer func() {
		if !closed {
			_ = p.Close(context.Background())
		}
	}()
	if err := p.Prepare(ctx, cases, drivers); err != nil {
		t.Fatalf("prepare: %v\n%s", err, log.String())
	}
	r := runner.Runner{Platform: p, Drivers: drivers}
	results, err := r.Run(ctx, cases)
	if err != nil {
		t.Fatal(err)
	}
	measured := map[string]bool{}
	for _, res := range results {
		name := res.Driver + " " + relative.ResultName(res)
		if res.Failed() {
			t.Errorf("%s failed: %s", name, res.Error)
			continue
		}
		target, err := netip.ParseAddr(res.Placement.Target)
		switch {
		case err != nil:
			t.Errorf("%s: target %q: %v", name, res.Placement.Target, err)
		case res.Params.IPFamily == "ipv6" && !netip.MustParsePrefix(lab.CIDR6).Contains(target):
			t.Errorf("%s: target %s is not in the lab's IPv6 range %s", name, target, lab.CIDR6)
		case res.Params.IPFamily == "ipv4" && !target.Is4():
			t.Errorf("%s: target %s is not IPv4", name, target)
		}
		sum := stats.Summarize(res.Samples)
		fig, unit := sum.ThroughputBitsPerSecond, "Gbit/s"
		scale := 1e9
		if res.Profile.IsRR() {
			fig, unit, scale = sum.TransactionsPerSecond, "k trans/s", 1e3
		}
		if fig == nil || fig.Median <= 0 {
			t.Errorf("%s: no figure: %+v", name, res.Samples)
			continue
		}
		measured[res.Driver+" "+string(res.Path)+" "+res.Params.IPFamily] = true
		t.Logf("%-60s %-24s %8.2f %s", name, res.Placement.Target, fig.Median/scale, unit)
	}
	for d := range drivers {
		for _, path := range paths {
			if !measured[d+" "+string(path)+" ipv6"] {
				t.Errorf("%s on %s: no IPv6 result", d, path)
			}
		}
	}
	cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.Close(cctx); err != nil {
		t.Fatal(err)
	}
	closed = true
	out, _ := exec.Command("ip", "netns", "list").Output()
	if strings.Contains(string(out), lab.Prefix+tag) {
		t.Errorf("namespaces left after Close:\n%s", out)
	}
	out, _ = exec.Command("ip", "link").Output()
	if strings.Contains(string(out), ": "+lab.LinkPrefix+tag) {
		t.Errorf("lab links in the root namespace:\n%s", out)
	}
}
