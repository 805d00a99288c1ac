package nodehw

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

// TestParseCPUInfo reads this machine's /proc/cpuinfo and checks it against what lscpu-free
// counting says: as many processors as the kernel lists, and the model the first entry names.
func TestParseCPUInfo(t *testing.T) {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Skip(err)
	}
	model, n := ParseCPUInfo(strings.NewReader(string(b)))
	if n != strings.Count(string(b), "\nprocessor")+boolInt(strings.HasPrefix(string(b), "processor")) || n == 0 {
		t.Errorf("%d processors", n)
	}
	if runtime.GOARCH == "amd64" && model == "" {
		t.Error("no model name on amd64")
	}
	t.Logf("%q x%d", model, n)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestReadUplinkInNetns: a veth pair in a network namespace of the test's own, with an MTU and
// offloads set by the real ethtool; Read, run inside it for the address on one end, must name
// that end, its driver (veth), MTU and every offload as `ethtool -k` shows them. Needs root,
// ip and ethtool.
func TestReadUplinkInNetns(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (network namespaces)")
	}
	for _, tool := range []string{"ip", "ethtool"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	ns := fmt.Sprintf("nodehw-%d", os.Getpid())
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("ip", "netns", "add", ns)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	in := func(args ...string) string { return run(append([]string{"ip", "netns", "exec", ns}, args...)...) }
	in("ip", "link", "add", "up0", "mtu", "1450", "type", "veth", "peer", "name", "up1", "mtu", "1450")
	in("ip", "addr", "add", "192.0.2.10/24", "dev", "up0")
	in("ip", "link", "set", "up0", "up")
	in("ip", "link", "set", "up1", "up")
	in("ethtool", "-K", "up0", "gro", "off", "tso", "off", "tx-checksumming", "off")

	runtime.LockOSThread() // the thread enters the namespace and never returns to the pool
	orig, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(orig)
	nsfd, err := unix.Open("/run/netns/"+ns, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(nsfd)
	if err := unix.Setns(nsfd, unix.CLONE_NEWNET); err != nil {
		t.Fatal(err)
	}
	hw := Read("192.0.2.10")
	if err := unix.Setns(orig, unix.CLONE_NEWNET); err != nil {
		t.Fatal(err)
	}
	runtime.UnlockOSThread()
	t.Logf("%+v", hw)

	if hw.Uplink != "up0" || hw.Driver != "veth" || hw.MTUBytes != 1450 || hw.Source != Source || hw.Kernel == "" || hw.CPUCount == 0 {
		t.Errorf("got %+v, want uplink up0, driver veth, MTU 1450", hw)
	}
	// The thread entered the namespace but /sys is still the one mounted in the test's own, which
	// has no up0: the speed is not read, and the note says why (a host-network agent pod's /sys
	// is its node's).
	if hw.SpeedBitsPerSecond != 0 || hw.SpeedUnknown != api.SpeedNotRead || !strings.Contains(hw.Note, "uplink up0: link speed: open /sys/class/net/up0/speed") {
		t.Errorf("speed %d, %q, note %q; want not read, with the cause in the note", hw.SpeedBitsPerSecond, hw.SpeedUnknown, hw.Note)
	}
	// ethtool -k prints "generic-receive-offload: off" and so on
	features := in("ethtool", "-k", "up0")
	names := map[string]string{"gro": "generic-receive-offload", "gso": "generic-segmentation-offload",
		"tso": "tcp-segmentation-offload", "rx-checksum": "rx-checksumming", "tx-checksum": "tx-checksumming"}
	for short, long := range names {
		want := strings.Contains(features, "\n"+long+": on")
		if got, ok := hw.Offloads[short]; !ok || got != want {
			t.Errorf("%s: got %v (read %v), ethtool says on=%v", short, got, ok, want)
		}
	}
	if hw.Offloads["gro"] || hw.Offloads["tso"] || hw.Offloads["tx-checksum"] || !hw.Offloads["gso"] {
		t.Errorf("offloads %v, want gro, tso, tx-checksum off and gso on as set", hw.Offloads)
	}
}

// TestLinkSpeed: a speed the kernel reports, one it has none for (-1, and lo's real EINVAL)
// and one cnperf cannot read (no such file, garbage) are three different answers.
func TestLinkSpeed(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name, path string
		mbps       int64
		err        string
	}{
		{"25G NIC", file("nic", "25000\n"), 25000, ""},
		{"-1: none", file("veth", "-1\n"), 0, ""},
		{"lo: EINVAL", "/sys/class/net/lo/speed", 0, ""},
		{"no such interface", filepath.Join(dir, "gone"), 0, "link speed: open " + filepath.Join(dir, "gone") + ": no such file or directory"},
		{"garbage", file("bad", "fast\n"), 0, `says "fast", not a number of Mb/s`},
	} {
		mbps, err := LinkSpeed(tc.path)
		if mbps != tc.mbps || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: %d, %v; want %d, %q", tc.name, mbps, err, tc.mbps, tc.err)
		}
	}
}
