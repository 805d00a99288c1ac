// Package hostinfo describes the machine cnperf runs on.
package hostinfo

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/nodehw"
)

// Get describes this host. Missing pieces are left empty, never guessed.
func Get() *api.HostInfo {
	h := &api.HostInfo{Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), GoVersion: runtime.Version()}
	h.Hostname, _ = os.Hostname()
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		h.Kernel = unix.ByteSliceToString(u.Release[:])
	}
	h.OS = osRelease("/etc/os-release")
	h.CPUModel = cpuModel("/proc/cpuinfo")
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) == nil {
		h.MemoryBytes = int64(si.Totalram) * int64(si.Unit)
	}
	return h
}

func osRelease(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return runtime.GOOS
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "PRETTY_NAME="); ok {
			if s, err := strconv.Unquote(v); err == nil {
				return s
			}
			return v
		}
	}
	return runtime.GOOS
}

// cpuModel is the CPU model /proc/cpuinfo names (nodehw.ParseCPUInfo, as for the nodes).
func cpuModel(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	model, _ := nodehw.ParseCPUInfo(f)
	return model
}
