package lab

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

// These tests build real namespaces and pass real traffic (iperf3) through them. They need
// root (CI runs as root) and skip otherwise.

func needRoot(t *testing.T) {
	t.Helper()
	if err := CheckPrivileges(); err != nil {
		t.Skipf("integration test: %v", err)
	}
	for _, tool := range []string{"ip", "nft", "iperf3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("integration test needs %s", tool)
		}
	}
}

func needTool(t *testing.T, tool string) {
	t.Helper()
	if _, err := exec.LookPath(tool); err != nil {
		t.Skipf("needs %s", tool)
	}
}

func randomRunID(t *testing.T) string {
	t.Helper()
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// newTestLab returns a lab that is closed, and checked to have left nothing, when the test ends.
func newTestLab(t *testing.T, o Options) *Lab {
	t.Helper()
	needRoot(t)
	l, err := New(randomRunID(t), o, false, testLog{t})
	if err != nil {
		t.Fatal(err)
	}
	fwd, err := os.ReadFile("/proc/sys/net/ipv4/ip_forward")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := l.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
		assertNoLeftovers(t, l.Tag())
		if now, _ := os.ReadFile("/proc/sys/net/ipv4/ip_forward"); string(now) != string(fwd) {
			t.Errorf("the root namespace's ip_forward changed from %q to %q", fwd, now)
		}
	})
	return l
}

type testLog struct{ t *testing.T }

func (w testLog) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// assertNoLeftovers checks the host the way a user would: `ip netns list`, `ip link` and
// `nft list ruleset` show nothing of the run (and nothing of the lab at all in the root
// namespace, where it never creates anything).
func assertNoLeftovers(t *testing.T, tag string) {
	t.Helper()
	ctx := context.Background()
	out, err := run(ctx, nil, "ip", "netns", "list")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), Prefix+tag) {
		t.Errorf("ip netns list still shows the run's namespaces:\n%s", out)
	}
	names, err := listNetNS()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if TagOf(n) == tag {
			t.Errorf("%s/%s is left", NetNSDir, n)
		}
	}
	out, err = run(ctx, nil, "ip", "link")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		// "8: cnpa1b2c3eth0@if2: <…" — names this package gives (other tools' "cnp…" names differ).
		if _, rest, ok := strings.Cut(line, ": "); ok && strayLinkRE.MatchString(rest) {
			t.Errorf("ip link shows a lab interface in the root namespace: %s", line)
		}
	}
	out, err = run(ctx, nil, "nft", "list", "ruleset")
	if err != nil {
		t.Fatal(err)
	}
	if labRuleRE.MatchString(strings.ToLower(string(out))) {
		t.Errorf("nft list ruleset shows lab rules in the root namespace:\n%s", out)
	}
}

// iperf3Servers are the namespaces with a test's iperf3 server, so each gets one.
var iperf3Servers = map[string]bool{}

// iperf3Server runs `iperf3 -s` in ns until the test ends and waits until it listens.
func iperf3Server(t *testing.T, ns NetNS) {
	t.Helper()
	if iperf3Servers[ns.Name] {
		return
	}
	iperf3Servers[ns.Name] = true
	t.Cleanup(func() { delete(iperf3Servers, ns.Name) })
	cmd := exec.Command("iperf3", "-s", "--forceflush")
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := ns.Start(cmd); err != nil {
		t.Fatalf("start iperf3 server in %s: %v", ns, err)
	}
	t.Cleanup(func() {
		// Only the process this test started, by its pid.
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = pw.Close()
	})
	ready := make(chan struct{})
	var lines []string
	go func() {
		sc := bufio.NewScanner(pr)
		closed := false
		for sc.Scan() {
			if !closed {
				lines = append(lines, sc.Text())
				if strings.Contains(sc.Text(), "Server listening") {
					close(ready)
					closed = true
				}
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(5 * time.Second):
		_ = pw.Close()
		t.Fatalf("iperf3 server in %s did not start listening: %q", ns, lines)
	}
}

// iperf3Bytes sends a fixed number of bytes from ns to target and returns what the server
// received, as iperf3 reports it.
func iperf3Bytes(t *testing.T, ns NetNS, target string, udp bool) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	argv := []string{"iperf3", "-c", target, "-n", "8M", "-J"}
	if udp {
		argv = []string{"iperf3", "-c", target, "-u", "-b", "200M", "-l", "1200", "-n", "2M", "-J"}
	}
	var out []byte
	// iperf3's server answers "the server is busy running a test" for a moment after the
	// previous test ended (it is still tearing that one down): try again shortly.
	for attempt := 0; ; attempt++ {
		var err error
		out, err = ns.Run(ctx, nil, argv...)
		if attempt < 20 && bytes.Contains(out, []byte("server is busy")) {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		break
	}
	var res struct {
		End struct {
			SumReceived struct {
				Bytes int64 `json:"bytes"`
			} `json:"sum_received"`
			Sum struct {
				Bytes       int64   `json:"bytes"`
				LostPercent float64 `json:"lost_percent"`
			} `json:"sum"`
		} `json:"end"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("parse iperf3 output: %v\n%s", err, out)
	}
	if res.Error != "" {
		t.Fatalf("iperf3 %s: %s", strings.Join(argv, " "), res.Error)
	}
	if udp {
		return int64(float64(res.End.Sum.Bytes) * (1 - res.End.Sum.LostPercent/100))
	}
	return res.End.SumReceived.Bytes
}

// rxBytes reads an interface's received-bytes counter inside a namespace.
func rxBytes(t *testing.T, ns NetNS, dev string) int64 {
	t.Helper()
	out, err := run(context.Background(), nil, "ip", "-n", ns.Name, "-j", "-s", "link", "show", dev)
	if err != nil {
		t.Fatal(err)
	}
	var links []struct {
		Stats64 struct {
			RX struct {
				Bytes int64 `json:"bytes"`
			} `json:"rx"`
		} `json:"stats64"`
	}
	if err := json.Unmarshal(out, &links); err != nil || len(links) != 1 {
		t.Fatalf("parse ip -s link of %s in %s: %v\n%s", dev, ns, err, out)
	}
	return links[0].Stats64.RX.Bytes
}

// labRuleRE matches the table and chain names the lab gives its rules.
var labRuleRE = regexp.MustCompile(`cnp-[0-9a-f]{6}`)

var counterRE = regexp.MustCompile(`counter packets (\d+)`)

func testOptions() Options {
	o := DefaultOptions()
	return o
}

// pathTraffic passes TCP (and UDP) traffic on path and checks that the server received it
// through the interface the path says: the server's own interface counts at least the bytes
// iperf3 reports, and (for a cross-node overlay) the overlay device too.
func pathTraffic(t *testing.T, l *Lab, path api.Path, topo api.Topology, udp bool) (*Cluster, Endpoints) {
	t.Helper()
	ctx := context.Background()
	spec, err := l.Options().SpecFor(path, &topo)
	if err != nil {
		t.Fatal(err)
	}
	c, err := l.Cluster(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	e, err := c.Endpoints(string(path))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range e.Servers {
		iperf3Server(t, s)
	}
	dev := c.link("eth0")
	before := make([]int64, len(e.Servers))
	for i, s := range e.Servers {
		before[i] = rxBytes(t, s, dev)
	}
	got := iperf3Bytes(t, e.Client, e.Target.String(), false)
	// iperf3 -n counts what the sender wrote; the receiver stops counting when the sender
	// says it is done, with megabytes possibly still in socket buffers: ask for 1 MiB.
	if got < 1<<20 {
		t.Fatalf("%s: server received %d bytes, want at least %d", path, got, 1<<20)
	}
	if udp {
		if ub := iperf3Bytes(t, e.Client, e.Target.String(), true); ub <= 0 {
			t.Fatalf("%s: UDP: server received %d bytes", path, ub)
		}
	}
	var delta int64
	for i, s := range e.Servers {
		delta += rxBytes(t, s, dev) - before[i]
	}
	if delta < got {
		t.Errorf("%s: the server side's %s received %d bytes, less than the %d iperf3 moved: traffic did not take the lab path", path, dev, delta, got)
	}
	return c, e
}

func TestIntegrationRoutedPaths(t *testing.T) {
	needTool(t, "conntrack")
	l := newTestLab(t, testOptions())
	o := l.Options()
	for _, p := range []api.Path{api.PathHostHost, api.PathPodPodSameNode, api.PathPodPodCrossNode, api.PathPodHost, api.PathHostPod} {
		t.Run(string(p), func(t *testing.T) {
			topo := o.Topologies(p)[0]
			pathTraffic(t, l, p, topo, p == api.PathPodPodCrossNode)
		})
	}
	if n := len(l.Clusters()); n != 2 {
		t.Errorf("the routed paths should share one cluster and pod-host have its own (masquerade), built %d", n)
	}
	// pod-host was SNAT'ed to node1's address by conntrack in node1.
	for _, c := range l.Clusters() {
		if !c.Spec.Masquerade {
			continue
		}
		out, err := c.NS(RoleNode1).Run(context.Background(), nil, "conntrack", "-L", "-s", c.addrs.podIP(1, 1).String(), "-d", c.addrs.nodeIP(2).String())
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(out), "dst="+c.addrs.nodeIP(1).String()) {
			t.Errorf("no masquerade entry (reply to node1's address) in node1's conntrack:\n%s", out)
		}
	}
	// Forwarding is on in the nodes and nowhere else.
	c := l.Clusters()[0]
	if v, err := c.NS(RoleNode1).ReadSysctl("net.ipv4.ip_forward"); err != nil || v != "1" {
		t.Errorf("node1 ip_forward = %q, %v; want 1", v, err)
	}
	if v, err := c.NS(podRole(1, 1)).ReadSysctl("net.ipv4.ip_forward"); err != nil || v != "0" {
		t.Errorf("pod ip_forward = %q, %v; want 0", v, err)
	}
}

func TestIntegrationVXLAN(t *testing.T) {
	o := testOptions()
	o.Overlays = []string{OverlayVXLAN}
	l := newTestLab(t, o)
	topo := o.Topologies(api.PathPodPodCrossNode)[0]
	if topo.Flavour != OverlayVXLAN || topo.MTUBytes != 1450 {
		t.Fatalf("topology %+v, want vxlan with MTU 1450", topo)
	}
	c, err := l.Cluster(context.Background(), mustSpec(t, o, api.PathPodPodCrossNode, topo))
	if err != nil {
		t.Fatal(err)
	}
	vx := c.link("vx1")
	before := rxBytes(t, c.NS(RoleNode2), vx)
	pathTraffic(t, l, api.PathPodPodCrossNode, topo, true)
	if d := rxBytes(t, c.NS(RoleNode2), vx) - before; d < 1<<20 {
		t.Errorf("node2's VXLAN device received %d bytes; the cross-node traffic did not go through the overlay", d)
	}
	// host-pod over the overlay too.
	pathTraffic(t, l, api.PathHostPod, o.Topologies(api.PathHostPod)[0], false)
	pathTraffic(t, l, api.PathPodHost, o.Topologies(api.PathPodHost)[0], false)
}

func mustSpec(t *testing.T, o Options, p api.Path, topo api.Topology) Spec {
	t.Helper()
	s, err := o.SpecFor(p, &topo)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestIntegrationVethUnderlay(t *testing.T) {
	o := testOptions()
	o.Underlay = UnderlayVeth
	o.MTUBytes = 9000
	l := newTestLab(t, o)
	c, _ := pathTraffic(t, l, api.PathHostHost, o.Topologies(api.PathHostHost)[0], false)
	for _, ns := range c.Namespaces {
		if strings.HasSuffix(ns.Name, "-"+RoleFabric) {
			t.Errorf("a veth underlay has no fabric namespace, found %s", ns)
		}
	}
	out, err := run(context.Background(), nil, "ip", "-n", c.NS(RoleNode1).Name, "link", "show", c.link("eth0"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "mtu 9000") {
		t.Errorf("underlay MTU not 9000:\n%s", out)
	}
}

func TestIntegrationClusterIP(t *testing.T) {
	needTool(t, "conntrack")
	for _, proxy := range []string{ProxyNftables, ProxyIptables} {
		t.Run(proxy, func(t *testing.T) {
			if proxy == ProxyIptables {
				if _, err := exec.LookPath("iptables-nft-restore"); err != nil {
					t.Skip("no iptables-nft-restore")
				}
			}
			o := testOptions()
			o.ServiceProxies = []string{proxy}
			o.ServiceBackends = 2
			l := newTestLab(t, o)
			topo := o.Topologies(api.PathPodClusterIP)[0]
			c, e := pathTraffic(t, l, api.PathPodClusterIP, topo, false)
			if e.Target != c.addrs.serviceIP() || len(e.Servers) != 2 {
				t.Fatalf("endpoints %+v: want the service IP and 2 backends", e)
			}
			// The connection went through conntrack's DNAT: node1 has an entry for the service
			// IP whose reply comes from a backend pod.
			out, err := c.NS(RoleNode1).Run(context.Background(), nil, "conntrack", "-L", "-d", e.Target.String())
			if err != nil {
				t.Fatal(err)
			}
			backend := false
			for p := 1; p <= 2; p++ {
				if strings.Contains(string(out), "src="+c.addrs.podIP(2, p).String()) {
					backend = true
				}
			}
			if !backend {
				t.Errorf("no conntrack DNAT entry to a backend in node1:\n%s", out)
			}
		})
	}
}

func TestIntegrationPolicy(t *testing.T) {
	for _, style := range []string{PolicyChains, PolicySets, PolicyChainsCT} {
		t.Run(style, func(t *testing.T) {
			o := testOptions()
			o.PolicyRules = []int{1000}
			o.PolicyStyles = []string{style}
			l := newTestLab(t, o)
			for _, p := range []api.Path{api.PathPodPodSameNode, api.PathPodPodCrossNode} {
				topo := o.Topologies(p)[0]
				if topo.PolicyRules != 1000 || topo.PolicyStyle != style {
					t.Fatalf("%s topology %+v", p, topo)
				}
				c, e := pathTraffic(t, l, p, topo, false)
				// The ruleset really holds the rules, and the server's node passed the
				// packets through them to the final allow rule.
				node := c.NS(RoleNode2)
				if p == api.PathPodPodSameNode {
					node = c.NS(RoleNode1)
				}
				out, err := node.Run(context.Background(), nil, "nft", "list", "table", "inet", Prefix+c.tag+"-policy")
				if err != nil {
					t.Fatal(err)
				}
				rules := strings.Count(string(out), "tcp dport") + strings.Count(string(out), " . tcp . ")
				if rules < 1000 {
					t.Errorf("%s: %d policy rules/elements in node, want 1000", p, rules)
				}
				ms := counterRE.FindAllStringSubmatch(string(out), -1)
				if ms == nil {
					t.Fatalf("no counter on the allow rule:\n%.2000s", out)
				}
				n := 0
				for _, m := range ms {
					v, _ := strconv.Atoi(m[1])
					n += v
				}
				if n == 0 {
					t.Errorf("%s: no packet reached the allow rule behind the %d rules (to %s)", p, 1000, e.Target)
				}
			}
		})
	}
}

func TestIntegrationHostCollision(t *testing.T) {
	needRoot(t)
	// The host's own loopback range collides with itself.
	o := testOptions()
	o.CIDR = "127.0.0.0/8"
	l, err := New(randomRunID(t), o, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = l.Check(context.Background())
	if err == nil || !strings.Contains(err.Error(), "collides with the host") {
		t.Fatalf("Check with the loopback range: %v; want a collision error", err)
	}
}

// TestIntegrationKilledRunCleanup starts a child process that builds a lab and a server in
// it, kills it with SIGKILL, and checks that `lab cleanup` leaves nothing behind — and that
// it leaves a live run alone.
func TestIntegrationKilledRunCleanup(t *testing.T) {
	needRoot(t)
	runID := randomRunID(t)
	tag, _ := RunTag(runID)
	child := exec.Command(os.Args[0], "-test.run=^TestHelperLabOwner$", "-test.v")
	child.Env = append(os.Environ(), "CNPERF_LAB_HELPER_RUN="+runID)
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	t.Cleanup(func() {
		if !killed {
			_ = child.Process.Kill()
		}
		_ = child.Wait()
		_, _ = Cleanup(context.Background(), CleanupOptions{Tag: tag, Force: true})
		assertNoLeftovers(t, tag)
	})
	var serverPid int
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "READY "); ok {
			serverPid, _ = strconv.Atoi(v)
			break
		}
	}
	if serverPid == 0 {
		t.Fatal("helper did not build its lab")
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	ctx := context.Background()

	runs, err := List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var mine *RunInfo
	for i := range runs {
		if runs[i].Tag == tag {
			mine = &runs[i]
		}
	}
	if mine == nil || !mine.Alive || mine.OwnerPID != child.Process.Pid || mine.RunID != runID {
		t.Fatalf("lab list: %+v; want the helper's run, alive, owned by pid %d", mine, child.Process.Pid)
	}
	rep, err := Cleanup(ctx, CleanupOptions{Tag: tag})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Removed) != 0 || len(rep.Skipped) != 1 {
		t.Fatalf("cleanup of a live run: %+v; want it skipped", rep)
	}

	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed = true
	_ = child.Wait()
	// The server the helper started in the lab dies with it (parent-death signal).
	waitGone([]int{serverPid}, 5*time.Second)
	if syscall.Kill(serverPid, 0) == nil {
		t.Errorf("server pid %d survived its owner's SIGKILL", serverPid)
	}
	rep, err = Cleanup(ctx, CleanupOptions{Tag: tag})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Removed) != len(mine.Namespaces) {
		t.Errorf("cleanup removed %v, want %v", rep.Removed, mine.Namespaces)
	}
	assertNoLeftovers(t, tag)
}

// TestHelperLabOwner is the child of TestIntegrationKilledRunCleanup, not a test of its own.
func TestHelperLabOwner(t *testing.T) {
	runID := os.Getenv("CNPERF_LAB_HELPER_RUN")
	if runID == "" {
		t.Skip("helper process only")
	}
	o := testOptions()
	o.Overlays = []string{OverlayVXLAN}
	l, err := New(runID, o, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	topo := o.Topologies(api.PathPodPodCrossNode)[0]
	c, err := l.Cluster(context.Background(), mustSpec(t, o, api.PathPodPodCrossNode, topo))
	if err != nil {
		t.Fatal(err)
	}
	srv := exec.Command("sleep", "60")
	if err := c.NS(podRole(2, 1)).Start(srv); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("READY %d\n", srv.Process.Pid)
	time.Sleep(60 * time.Second) // killed long before
}

// TestIntegrationInterruptedBuild cancels builds at different moments: whatever the moment,
// the build either completes or fails, and after Close nothing is left.
func TestIntegrationInterruptedBuild(t *testing.T) {
	for _, after := range []time.Duration{0, 20 * time.Millisecond, 40 * time.Millisecond, 80 * time.Millisecond, 160 * time.Millisecond} {
		t.Run(after.String(), func(t *testing.T) {
			o := testOptions()
			o.PolicyRules = []int{1000}
			o.PolicyStyles = []string{PolicyChains}
			l := newTestLab(t, o)
			ctx, cancel := context.WithCancel(context.Background())
			if after == 0 {
				cancel()
			} else {
				time.AfterFunc(after, cancel)
			}
			defer cancel()
			topo := o.Topologies(api.PathPodPodCrossNode)[0]
			_, err := l.Cluster(ctx, mustSpec(t, o, api.PathPodPodCrossNode, topo))
			if after == 0 && err == nil {
				t.Fatal("a build with a cancelled context succeeded")
			}
			t.Logf("build cancelled after %s: %v", after, err)
		})
	}
}

// TestIntegrationUnprivileged runs a child without CAP_NET_ADMIN and CAP_SYS_ADMIN (dropped
// from its bounding set by setpriv) and checks the lab refuses with the reason.
func TestIntegrationUnprivileged(t *testing.T) {
	needRoot(t)
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("needs setpriv (util-linux)")
	}
	cmd := exec.Command("setpriv", "--bounding-set=-net_admin,-sys_admin", os.Args[0], "-test.run=^TestHelperUnprivileged$", "-test.v")
	cmd.Env = append(os.Environ(), "CNPERF_LAB_HELPER_UNPRIV=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(string(out), "REFUSED: not privileged enough for the network-namespace lab: this process lacks CAP_NET_ADMIN and CAP_SYS_ADMIN") ||
		!strings.Contains(string(out), "only the loopback path can run") {
		t.Errorf("unprivileged child:\n%s", out)
	}
}

// TestHelperUnprivileged is the child of TestIntegrationUnprivileged.
func TestHelperUnprivileged(t *testing.T) {
	if os.Getenv("CNPERF_LAB_HELPER_UNPRIV") == "" {
		t.Skip("helper process only")
	}
	l, err := New(randomRunID(t), testOptions(), false, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = l.Check(context.Background())
	if err == nil {
		t.Fatal("Check passed without privileges")
	}
	fmt.Printf("REFUSED: %v\n", err)
}

// TestIntegrationDropFragNeeded: a cluster whose pod MTU is above the path's and whose nodes
// drop ICMP fragmentation-needed (a broken path MTU, --lab-drop-frag-needed) has the drop
// rule in both nodes, and the pod MTU on the pods' interfaces.
func TestIntegrationDropFragNeeded(t *testing.T) {
	o := testOptions()
	o.MTUBytes, o.PodMTUBytes, o.DropFragNeeded = 1400, 1500, true
	l := newTestLab(t, o)
	spec, err := l.Options().SpecFor(api.PathPodPodCrossNode, &o.Topologies(api.PathPodPodCrossNode)[0])
	if err != nil {
		t.Fatal(err)
	}
	c, err := l.Cluster(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, role := range []string{RoleNode1, RoleNode2} {
		out, err := c.NS(role).Run(context.Background(), nil, "nft", "list", "ruleset")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(out), "frag-needed") || !strings.Contains(string(out), "drop") {
			t.Errorf("%s has no rule that drops fragmentation-needed:\n%s", role, out)
		}
	}
	out, err := run(context.Background(), nil, "ip", "-n", c.NS(podRole(1, 1)).Name, "link", "show", c.link("eth0"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "mtu 1500") {
		t.Errorf("pod MTU not 1500:\n%s", out)
	}
}
