//go:build e2e

// A lossy, slow link: packet loss and delay on the client node's eth0 (inside its network
// namespace), removed afterwards even when the test fails. With `tc qdisc … netem` when the
// kernel has sch_netem; the CI machine's kernel has not (CONFIG_NET_SCH_NETEM is not set), so
// there the same faults are made with netfilter in the node's namespace: loss with an
// iptables `statistic` DROP rule, delay with an NFQUEUE rule whose packets this test holds
// for the delay before accepting them (nfqDelayer below).
package e2e

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sys/unix"

	"github.com/cnperf/cnperf/internal/runfile"
)

// nsRun runs argv in the network namespace file netns.
func nsRun(netns string, argv ...string) (string, error) {
	out, err := exec.Command("nsenter", append([]string{"--net=" + netns}, argv...)...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s: %v: %s", strings.Join(argv, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// Netlink constants of nfnetlink_queue (linux/netfilter/nfnetlink_queue.h).
const (
	nfnlSubsysQueue  = 3
	nfqnlMsgPacket   = 0
	nfqnlMsgVerdict  = 1
	nfqnlMsgConfig   = 2
	nfqaPacketHdr    = 1
	nfqaVerdictHdr   = 2
	nfqaCfgCmd       = 1
	nfqaCfgParams    = 2
	nfqnlCfgCmdBind  = 1
	nfqnlCopyMeta    = 1
	nfAccept         = 1
	nfqueueNum       = 4242
	nlmsgHdrLen      = 16
	nfgenmsgLen      = 4
	nlattrHdrLen     = 4
	nfqMaxInflight   = 65536
	nfqRecvBufBytes  = 8 << 20
	nfqRecvReadBytes = 1 << 16
)

// nfqDelayer holds every packet of one NFQUEUE queue for a fixed delay, in order, then
// accepts it.
type nfqDelayer struct {
	fd    int
	delay time.Duration
	q     chan nfqPacket
	wg    sync.WaitGroup
	once  sync.Once
	seq   uint32
	mu    sync.Mutex // serialises sends
	stop  atomic.Bool
}

type nfqPacket struct {
	id  uint32
	due time.Time
}

// socketIn opens a netlink socket in the network namespace file netns (the socket stays in
// that namespace; the calling thread goes back to its own).
func socketIn(netns string) (int, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	self, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		return -1, err
	}
	defer self.Close()
	target, err := os.Open(netns)
	if err != nil {
		return -1, err
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		return -1, fmt.Errorf("setns %s: %w", netns, err)
	}
	fd, serr := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_NETFILTER)
	if err := unix.Setns(int(self.Fd()), unix.CLONE_NEWNET); err != nil {
		panic("cannot return to the test's network namespace: " + err.Error()) // the thread must not be reused
	}
	if serr != nil {
		return -1, fmt.Errorf("netlink socket: %w", serr)
	}
	return fd, nil
}

func startNFQDelayer(netns string, delay time.Duration) (*nfqDelayer, error) {
	fd, err := socketIn(netns)
	if err != nil {
		return nil, err
	}
	d := &nfqDelayer{fd: fd, delay: delay, q: make(chan nfqPacket, nfqMaxInflight)}
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, nfqRecvBufBytes)
	// a blocked recvfrom is not woken by close: receive looks at stop every 200 ms
	tv := unix.NsecToTimeval((200 * time.Millisecond).Nanoseconds())
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		unix.Close(fd)
		return nil, err
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("bind netlink: %w", err)
	}
	cmd := []byte{nfqnlCfgCmdBind, 0, 0, 0} // command, pad, pf (AF_UNSPEC)
	params := []byte{0, 0, 0, 0, nfqnlCopyMeta}
	if err := d.request(nfqnlMsgConfig, attr(nfqaCfgCmd, cmd[:4]), true); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("bind queue %d: %w", nfqueueNum, err)
	}
	if err := d.request(nfqnlMsgConfig, attr(nfqaCfgParams, params), true); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("queue %d copy mode: %w", nfqueueNum, err)
	}
	d.wg.Add(2)
	go d.receive()
	go d.release()
	return d, nil
}

func attr(typ uint16, payload []byte) []byte {
	l := nlattrHdrLen + len(payload)
	b := make([]byte, (l+3)&^3)
	binary.NativeEndian.PutUint16(b[0:], uint16(l))
	binary.NativeEndian.PutUint16(b[2:], typ)
	copy(b[nlattrHdrLen:], payload)
	return b
}

// request sends one nfqueue message for our queue; with ack it waits for the kernel's answer.
func (d *nfqDelayer) request(msgType uint16, attrs []byte, ack bool) error {
	d.mu.Lock()
	d.seq++
	seq := d.seq
	b := make([]byte, nlmsgHdrLen+nfgenmsgLen+len(attrs))
	binary.NativeEndian.PutUint32(b[0:], uint32(len(b)))
	binary.NativeEndian.PutUint16(b[4:], nfnlSubsysQueue<<8|msgType)
	flags := uint16(unix.NLM_F_REQUEST)
	if ack {
		flags |= unix.NLM_F_ACK
	}
	binary.NativeEndian.PutUint16(b[6:], flags)
	binary.NativeEndian.PutUint32(b[8:], seq)
	b[16] = unix.AF_UNSPEC
	b[17] = 0 // NFNETLINK_V0
	binary.BigEndian.PutUint16(b[18:], nfqueueNum)
	copy(b[20:], attrs)
	err := unix.Sendto(d.fd, b, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK})
	d.mu.Unlock()
	if err != nil || !ack {
		return err
	}
	buf := make([]byte, 4096)
	n, _, err := unix.Recvfrom(d.fd, buf, 0)
	if err != nil {
		return err
	}
	if n < nlmsgHdrLen+4 || binary.NativeEndian.Uint16(buf[4:]) != unix.NLMSG_ERROR {
		return errors.New("no netlink acknowledgement")
	}
	if e := int32(binary.NativeEndian.Uint32(buf[16:])); e != 0 {
		return unix.Errno(-e)
	}
	return nil
}

// receive reads queued packets and hands their ids to release with their due time.
func (d *nfqDelayer) receive() {
	defer d.wg.Done()
	defer close(d.q)
	buf := make([]byte, nfqRecvReadBytes)
	for !d.stop.Load() {
		n, _, err := unix.Recvfrom(d.fd, buf, 0)
		if err != nil {
			if errors.Is(err, unix.ENOBUFS) || errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) {
				continue
			}
			return
		}
		now := time.Now()
		for b := buf[:n]; len(b) >= nlmsgHdrLen; {
			l := int(binary.NativeEndian.Uint32(b[0:]))
			if l < nlmsgHdrLen || l > len(b) {
				break
			}
			if binary.NativeEndian.Uint16(b[4:]) == nfnlSubsysQueue<<8|nfqnlMsgPacket {
				if id, ok := packetID(b[nlmsgHdrLen+nfgenmsgLen : l]); ok {
					d.q <- nfqPacket{id: id, due: now.Add(d.delay)}
				}
			}
			b = b[(l+3)&^3:]
		}
	}
}

func packetID(attrs []byte) (uint32, bool) {
	for len(attrs) >= nlattrHdrLen {
		l := int(binary.NativeEndian.Uint16(attrs[0:]))
		typ := binary.NativeEndian.Uint16(attrs[2:]) & 0x3fff
		if l < nlattrHdrLen || l > len(attrs) {
			return 0, false
		}
		if typ == nfqaPacketHdr && l >= nlattrHdrLen+4 {
			return binary.BigEndian.Uint32(attrs[nlattrHdrLen:]), true
		}
		attrs = attrs[(l+3)&^3:]
	}
	return 0, false
}

// release accepts each packet when its delay has passed, in arrival order.
func (d *nfqDelayer) release() {
	defer d.wg.Done()
	v := make([]byte, 8)
	for p := range d.q {
		if !d.stop.Load() {
			time.Sleep(time.Until(p.due))
		}
		binary.BigEndian.PutUint32(v[0:], nfAccept)
		binary.BigEndian.PutUint32(v[4:], p.id)
		_ = d.request(nfqnlMsgVerdict, attr(nfqaVerdictHdr, v), false)
	}
}

// Close stops the delayer: the packets it holds are accepted at once, and the queue goes
// with the socket (call it after the NFQUEUE rule is removed: --queue-bypass lets packets
// pass while no one listens).
func (d *nfqDelayer) Close() {
	d.once.Do(func() {
		d.stop.Store(true)
		d.wg.Wait()
		unix.Close(d.fd)
	})
}

// injectLinkFaults makes node's dev drop lossPct % of what it sends to pods and delay it by
// delay; t.Cleanup removes both, whatever happens.
// match selects the packets: the inner ones (to pods, TCP for the delay), or for Cilium's
// tunnel the outer ones (VXLAN over UDP 8472, see tunnelMatch).
func injectLinkFaults(t *testing.T, netns, dev string, match []string, lossPct int, delay time.Duration) (how string) {
	t.Helper()
	node := filepath.Base(netns)
	netem := []string{"tc", "qdisc", "add", "dev", dev, "root", "netem",
		"delay", fmt.Sprintf("%dms", delay.Milliseconds()), "loss", fmt.Sprintf("%d%%", lossPct), "limit", "100000"}
	if _, err := nsRun(netns, netem...); err == nil {
		t.Cleanup(func() {
			if _, err := nsRun(netns, "tc", "qdisc", "del", "dev", dev, "root"); err != nil {
				t.Errorf("remove netem from %s: %v", node, err)
			}
		})
		return strings.Join(netem, " ")
	} else if !strings.Contains(err.Error(), "qdisc kind is unknown") {
		t.Fatalf("netem on %s: %v", node, err)
	}
	t.Logf("no netem in this kernel: netfilter in the node's namespace instead")
	// Only traffic to other nodes' pods, so the node's kubelet and API traffic keep working.
	queueMatch := match
	if match == nil {
		match, queueMatch = []string{"-d", "10.244.0.0/16"}, []string{"-d", "10.244.0.0/16", "-p", "tcp"}
	}
	drop := append(append([]string{"-t", "mangle", "POSTROUTING", "-o", dev}, match...),
		"-m", "comment", "--comment", "cnperf-e2e fault test",
		"-m", "statistic", "--mode", "random", "--probability", fmt.Sprintf("%.2f", float64(lossPct)/100), "-j", "DROP")
	queue := append(append([]string{"-t", "mangle", "POSTROUTING", "-o", dev}, queueMatch...),
		"-m", "comment", "--comment", "cnperf-e2e fault test",
		"-j", "NFQUEUE", "--queue-num", fmt.Sprint(nfqueueNum), "--queue-bypass")
	rule := func(op string, spec []string) []string {
		return append([]string{"iptables", "-w", spec[0], spec[1], op, spec[2]}, spec[3:]...)
	}
	d, err := startNFQDelayer(netns, delay)
	if err != nil {
		t.Fatalf("NFQUEUE delayer in %s: %v", netns, err)
	}
	t.Cleanup(d.Close)
	for _, spec := range [][]string{drop, queue} {
		if _, err := nsRun(netns, rule("-A", spec)...); err != nil {
			t.Fatalf("%v", err)
		}
		t.Cleanup(func() {
			if _, err := nsRun(netns, rule("-D", spec)...); err != nil {
				t.Errorf("remove the rule from %s: %v", node, err)
			}
		})
	}
	what := "to pods (TCP delayed)"
	if match != nil {
		what = strings.Join(match, " ")
	}
	return fmt.Sprintf("iptables statistic DROP %d %% + NFQUEUE delay %s on %s %s, %s", lossPct, delay, node, dev, what)
}

// TestFaultLossyLink: 5 % loss and 20 ms delay on the client node's eth0. TCP_RR must show
// the delay in its latency (its median rises by about 20 ms) and retransmits; UDP_STREAM must
// show the loss; never a zero or a missing figure.
func TestFaultLossyLink(t *testing.T) {
	cl := kpClusterFromEnv(t)
	bin := kpBuildCnperf(t)
	if cl.nodes() < 2 {
		t.Skip("needs 2 nodes")
	}
	const (
		lossPct = 5
		delay   = 20 * time.Millisecond
		server  = "node1"
		client  = "node2"
	)
	t0 := time.Now()
	// the device pod traffic leaves the client node by, as its route to the server node's pods
	// (10.244.1.0/24, or with Calico a /26 block of it) says: eth0 (routed, Flannel host-gw) or
	// the VXLAN device (the harness's vxcnp, flannel.1, vxlan.calico)
	routes, err := nsRun("/run/netns/cnpe2e-"+client, "ip", "-o", "route", "show")
	if err != nil {
		t.Fatal(err)
	}
	dev := ""
	for _, l := range strings.Split(routes, "\n") {
		f := strings.Fields(l)
		if len(f) == 0 || !strings.HasPrefix(f[0], "10.244.1.") || dev != "" {
			continue
		}
		for i := 0; i+1 < len(f); i++ {
			if f[i] == "dev" {
				dev = f[i+1]
			}
		}
	}
	if dev == "" {
		t.Fatalf("no route to the server node's pods (10.244.1.*) on the client node:\n%s", routes)
	}
	// Cilium's tunnel: the route names cilium_host, but its eBPF program encapsulates pod traffic
	// and hands it to cilium_vxlan without the host's netfilter seeing the inner packets; the
	// outer ones (UDP 8472) leave by eth0 (seen on make e2e CNI=cilium: nothing matched before)
	var match []string
	if dev == "cilium_host" && os.Getenv("CNPERF_E2E_CNI_MODE") != "native" {
		dev, match = "eth0", []string{"-p", "udp", "--dport", "8472"}
	}
	how := injectLinkFaults(t, "/run/netns/cnpe2e-"+client, dev, match, lossPct, delay)
	t.Logf("faults: %s", how)
	runID := uuid.NewString()
	ns := kpNamespace("cnperf-e2e-lossy")
	results := filepath.Join(t.TempDir(), "run.jsonl")
	log, err := faultCnperf(t, bin, 4*time.Minute, func(string) {},
		"run", "--platform", "kube", "--kubeconfig", cl.kubeconfig, "-n", ns, "--uuid", runID,
		"--server-node", server, "--client-node", client,
		"--driver", "native", "--profile", "TCP_RR,UDP_STREAM", "--path", "pod-pod-cross-node",
		"--message-size", "1200", "--rate", "20M",
		"--duration", "3s", "--samples", "2", "--timeout", "30s", "--results", results, "-o", "json")
	checkNoKlog(t, log)
	if err != nil {
		t.Errorf("cnperf: %v", err)
	}
	runs, _, rerr := runfile.ReadWarnings(results)
	if rerr != nil {
		t.Fatal(rerr)
	}
	r := runs[0]
	seen := map[string]bool{}
	for i := range r.Results {
		res := &r.Results[i]
		checkFailedSamples(t, res)
		if res.Error != "" {
			t.Errorf("%s failed: %s", res.Profile, res.Error)
			continue
		}
		switch res.Profile {
		case "TCP_RR":
			seen["rr"] = true
			retrans := 0.0
			for _, s := range res.Samples {
				if s.Latency == nil || s.Latency.P50 == nil || s.Retransmits == nil {
					t.Fatalf("TCP_RR sample %d has no latency or no retransmit count: %+v", s.Index, s)
				}
				p50 := time.Duration(*s.Latency.P50 * float64(time.Microsecond))
				t.Logf("TCP_RR sample %d: %.0f tx/s, p50 %s, mean %.0f µs, retransmits %.0f", s.Index,
					*s.TransactionsPerSecond, p50, *s.Latency.Mean, *s.Retransmits)
				if p50 < delay || p50 > delay+15*time.Millisecond {
					t.Errorf("TCP_RR sample %d: median latency %s, want about the %s delay", s.Index, p50, delay)
				}
				retrans += *s.Retransmits
			}
			if retrans == 0 {
				t.Errorf("TCP_RR with %d %% loss counted no retransmit", lossPct)
			}
		case "UDP_STREAM":
			seen["udp"] = true
			for _, s := range res.Samples {
				if s.LossPercent == nil {
					t.Fatalf("UDP_STREAM sample %d has no loss figure", s.Index)
				}
				t.Logf("UDP_STREAM sample %d: %.1f Mbit/s, loss %.2f %% (%d of %d datagrams)", s.Index,
					*s.ThroughputBitsPerSecond/1e6, *s.LossPercent, deref(s.PacketsLost), deref(s.PacketsSent))
				if *s.LossPercent < lossPct*0.6 || *s.LossPercent > lossPct*3 {
					t.Errorf("UDP_STREAM sample %d: loss %.2f %%, want about the %d %% injected", s.Index, *s.LossPercent, lossPct)
				}
			}
		}
	}
	if !seen["rr"] || !seen["udp"] {
		t.Errorf("cases seen: %v, want TCP_RR and UDP_STREAM", seen)
	}
	if left := kpLeftovers(t.Context(), t, cl.cs, runID); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
	t.Logf("total: %.1fs", time.Since(t0).Seconds())
}

func deref(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}
