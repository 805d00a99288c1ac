// Package nodehw reads the hardware of the machine (or node) it runs on: the CPU model and
// count, the kernel, and the interface that holds a given address: its driver, link speed,
// MTU and offloads (GSO, GRO, TSO, checksums) through the ethtool ioctls. `cnperf agent
// node-hardware` prints it for the cluster details.
package nodehw

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

// Source is the NodeHardware.Source of what this package reads.
const Source = api.HardwareFromAgent

// Read describes this machine; address, when valid, picks the uplink (the interface that
// holds it). What cannot be read is said in Note.
func Read(address string) *api.NodeHardware {
	hw := &api.NodeHardware{Source: Source}
	var notes []string
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		hw.CPUModel, hw.CPUCount = ParseCPUInfo(f)
		f.Close()
	} else {
		notes = append(notes, err.Error())
	}
	var u unix.Utsname
	if err := unix.Uname(&u); err == nil {
		hw.Kernel = unix.ByteSliceToString(u.Release[:])
	} else {
		notes = append(notes, fmt.Sprintf("kernel: uname: %v", err))
	}
	if address != "" {
		if err := readUplink(hw, address); err != nil {
			notes = append(notes, err.Error())
		}
	}
	hw.Note = strings.Join(notes, "; ")
	return hw
}

// ParseCPUInfo reads /proc/cpuinfo: the first "model name" (x86; "cpu model" on MIPS, "Model"
// or "CPU part" left out on ARM, where the kernel names no model) and the number of
// "processor" entries.
func ParseCPUInfo(r io.Reader) (model string, count int) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "processor":
			count++
		case "model name", "cpu model", "Model":
			if model == "" {
				model = v
			}
		}
	}
	return model, count
}

// uplinkOf is the name of the interface that holds address.
func uplinkOf(address string) (string, error) {
	want, err := netip.ParseAddr(address)
	if err != nil {
		return "", fmt.Errorf("uplink: %q is not an IP address", address)
	}
	ifs, err := net.Interfaces()
	if err != nil {
		return "", fmt.Errorf("uplink: %w", err)
	}
	for _, ifc := range ifs {
		addrs, err := ifc.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if p, err := netip.ParsePrefix(a.String()); err == nil && p.Addr().Unmap() == want.Unmap() {
				return ifc.Name, nil
			}
		}
	}
	return "", fmt.Errorf("uplink: no interface holds %s here (not on the node's host network?)", address)
}

func readUplink(hw *api.NodeHardware, address string) error {
	name, err := uplinkOf(address)
	if err != nil {
		return err
	}
	hw.Uplink = name
	ifc, err := net.InterfaceByName(name)
	if err != nil {
		return fmt.Errorf("uplink %s: %w", name, err)
	}
	hw.MTUBytes = ifc.MTU
	var speedErr error
	switch mbps, err := LinkSpeed("/sys/class/net/" + name + "/speed"); {
	case err != nil:
		hw.SpeedUnknown = api.SpeedNotRead
		speedErr = fmt.Errorf("uplink %s: %w", name, err)
	case mbps > 0:
		hw.SpeedBitsPerSecond = mbps * 1_000_000
	default:
		hw.SpeedUnknown = api.SpeedNotReported
	}
	err = ethtoolUplink(hw, name)
	if speedErr != nil && err != nil {
		return fmt.Errorf("%v; %w", speedErr, err)
	}
	if speedErr != nil {
		return speedErr
	}
	return err
}

// LinkSpeed reads a link speed file of sysfs (/sys/class/net/X/speed): the speed in Mb/s, or
// 0 when the kernel has none for the link (the file says -1 or refuses the read with EINVAL:
// a veth of an older kernel, a link that is down, lo); an error when the file cannot be read
// otherwise (no such interface in this sysfs, which shows the network namespace it was
// mounted in) or says something else.
func LinkSpeed(path string) (mbps int64, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, unix.EINVAL) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("link speed: %w", err)
	}
	v := strings.TrimSpace(string(b))
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("link speed: %s says %q, not a number of Mb/s", path, v)
	}
	if n < 0 {
		return 0, nil
	}
	return n, nil
}

// ethtoolUplink reads the driver and offloads of the uplink name through the ethtool ioctls.
func ethtoolUplink(hw *api.NodeHardware, name string) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("uplink %s: ethtool socket: %w", name, err)
	}
	defer unix.Close(fd)
	var errs []error
	if d, err := unix.IoctlGetEthtoolDrvinfo(fd, name); err == nil {
		hw.Driver = unix.ByteSliceToString(d.Driver[:])
	} else {
		errs = append(errs, fmt.Errorf("driver: %w", err))
	}
	hw.Offloads = map[string]bool{}
	for _, o := range offloadCmds {
		on, err := ethtoolValue(fd, name, o.cmd)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", o.name, err))
			continue
		}
		hw.Offloads[o.name] = on
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("uplink %s: ethtool: %w", name, err)
	}
	return nil
}

// The legacy ethtool get commands (linux/ethtool.h): each answers one struct ethtool_value.
var offloadCmds = []struct {
	name string
	cmd  uint32
}{
	{"rx-checksum", 0x00000014}, // ETHTOOL_GRXCSUM
	{"tx-checksum", 0x00000016}, // ETHTOOL_GTXCSUM
	{"tso", 0x0000001e},         // ETHTOOL_GTSO
	{"gso", 0x00000023},         // ETHTOOL_GGSO
	{"gro", 0x0000002b},         // ETHTOOL_GGRO
}

// ethtoolVal is struct ethtool_value.
type ethtoolVal struct {
	cmd, data uint32
}

// ifreqData is struct ifreq with ifr_data: the name, then a pointer, padded to 40 bytes.
type ifreqData struct {
	name [unix.IFNAMSIZ]byte
	data unsafe.Pointer
	_    [16]byte
}

func ethtoolValue(fd int, name string, cmd uint32) (bool, error) {
	v := ethtoolVal{cmd: cmd}
	var ifr ifreqData
	copy(ifr.name[:unix.IFNAMSIZ-1], name)
	ifr.data = unsafe.Pointer(&v)
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr))); errno != 0 {
		return false, errno
	}
	return v.data != 0, nil
}
