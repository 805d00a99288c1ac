package local

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/driver/all"
	"github.com/cnperf/cnperf/internal/driver/iperf3"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/report/relative"
	"github.com/cnperf/cnperf/internal/runner"
	"github.com/cnperf/cnperf/internal/stats"
)

// TestLabPathsIperf3 runs a short iperf3 TCP_STREAM on every lab path through the runner,
// as `cnperf run --platform local --paths …` does, and checks every case measured something,
// recorded its topology and placement, and that Close leaves nothing behind.
func TestLabPathsIperf3(t *testing.T) {
	if err := lab.CheckPrivileges(); err != nil {
		t.Skip(err)
	}
	if _, err := exec.LookPath("iperf3"); err != nil {
		t.Skip("needs iperf3")
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	runID := hex.EncodeToString(b)
	lo := lab.DefaultOptions()
	lo.ServiceProxies = []string{lab.ProxyNftables, lab.ProxyIptables}
	var log strings.Builder
	p := New(Options{Lab: &lo, RunID: runID}, &log)
	tag, _ := lab.RunTag(runID)

	var cases []plan.Case
	for _, path := range lab.Paths {
		c := plan.Case{Profile: api.TCPStream, Path: path, Driver: iperf3.Name,
			Params: api.Params{DurationSeconds: 1, Samples: 1, MessageSizeBytes: 131072, Parallel: 1}}
		if err := p.CheckPath(c); err != nil {
			t.Fatalf("CheckPath(%s): %v", path, err)
		}
		cases = append(cases, c)
	}
	cases = p.ExpandCases(cases)
	// host-host 1, same-node 1, cross-node 2, pod-host 2, host-pod 2, clusterip 2.
	if len(cases) != 10 {
		t.Fatalf("%d cases after expansion, want 10", len(cases))
	}
	d, err := all.Get(iperf3.Name)
	if err != nil {
		t.Fatal(err)
	}
	drivers := map[string]driver.Driver{iperf3.Name: d}
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
	for _, res := range results {
		name := relative.ResultName(res)
		if res.Failed() {
			t.Errorf("%s failed: %s %+v", name, res.Error, res.Samples)
			continue
		}
		if res.Topology == nil || res.Topology.Flavour == "" || res.Topology.MTUBytes == 0 {
			t.Errorf("%s: topology not recorded: %+v", name, res.Topology)
		}
		if res.Placement == nil || res.Placement.Client.NetNS == "" || !strings.HasPrefix(res.Placement.Client.NetNS, lab.Prefix+tag) {
			t.Errorf("%s: placement %+v", name, res.Placement)
		}
		// Summarised here: the runner's summary is filled in by a deferred function (see report).
		tp := stats.Summarize(res.Samples).ThroughputBitsPerSecond
		if tp == nil || tp.Median <= 0 {
			t.Errorf("%s: no throughput: %+v", name, res.Samples)
			continue
		}
		t.Logf("%-55s %6.2f Gbit/s", name, tp.Median/1e9)
	}
	cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.Close(cctx); err != nil {
		t.Fatal(err)
	}
	closed = true
	if err := p.Close(cctx); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	out, _ := exec.Command("ip", "netns", "list").Output()
	if strings.Contains(string(out), lab.Prefix+tag) {
		t.Errorf("namespaces left after Close:\n%s", out)
	}
	out, _ = exec.Command("ip", "link").Output()
	if strings.Contains(string(out), ": "+lab.LinkPrefix+tag) {
		t.Errorf("lab links in the root namespace:\n%s", out)
	}
	out, _ = exec.Command("nft", "list", "ruleset").Output()
	if regexp.MustCompile(`cnp-[0-9a-f]{6}`).MatchString(strings.ToLower(string(out))) {
		t.Errorf("lab rules in the root namespace:\n%s", out)
	}
}

// TestCheckPathRefusesSecondaryNetwork: --network NAMESPACE/NAME names a Multus attachment, which
// only a cluster has; the local platform refuses it on every path instead of measuring the
// default path under the network's name.
func TestCheckPathRefusesSecondaryNetwork(t *testing.T) {
	p := New(Options{}, nil)
	for _, path := range []api.Path{api.PathLoopback, api.PathPodPodCrossNode, api.PathHostHost} {
		c := plan.Case{Profile: api.TCPRR, Path: path, Driver: "native", Params: api.Params{Network: "multus/br-net"}}
		if err := p.CheckPath(c); err == nil || !strings.Contains(err.Error(), "network multus/br-net: secondary networks (Multus) exist only on the kube platform") {
			t.Errorf("%s: %v", path, err)
		}
	}
}

func TestCheckLabPath(t *testing.T) {
	p := New(Options{}, nil)
	c := plan.Case{Profile: api.TCPRR, Path: api.PathPodPodCrossNode, Driver: "iperf3", Params: api.Params{IPFamily: "ipv6"}}
	err := p.CheckPath(c)
	if lab.CheckPrivileges() != nil {
		if err == nil || !strings.Contains(err.Error(), "only the loopback path") {
			t.Fatalf("unprivileged: %v", err)
		}
		return
	}
	if err != nil {
		t.Fatalf("ipv6 on the lab: %v", err)
	}
	c.Path = api.PathPodClusterIP // the lab's Services have an IPv6 cluster IP too
	if err := p.CheckPath(c); err != nil {
		t.Fatalf("ipv6 on pod-clusterip: %v", err)
	}
	// loopback is 127.0.0.1 only: IPv6 there is refused, naming where it is measured
	c.Path = api.PathLoopback
	if err := p.CheckPath(c); err == nil || !strings.Contains(err.Error(), "IPv6 is measured on the lab's paths") {
		t.Fatalf("ipv6 on loopback: %v", err)
	}
	c.Path, c.Params.IPFamily = api.PathPodPodCrossNode, ""
	if err := p.CheckPath(c); err != nil {
		t.Fatal(err)
	}
	c.Topology = &api.Topology{Flavour: "geneve"}
	if err := p.CheckPath(c); err == nil {
		t.Fatal("unknown flavour accepted")
	}
}

// A path the local platform does not run is refused with the paths it does run: the lab's
// too when it can run here.
func TestCheckPathNamesTheAvailablePaths(t *testing.T) {
	p := New(Options{}, nil)
	err := p.CheckPath(plan.Case{Profile: api.TCPRR, Path: api.PathPodNodePort, Driver: "iperf3"})
	want := "; available:\n  loopback, external-service"
	if lab.CheckPrivileges() == nil {
		want = "; available:\n  loopback, " + plan.Join(lab.Paths) + ", external-service"
	}
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("pod-nodeport on the local platform: %v, want %s", err, want)
	}
	t.Log(err)
}
