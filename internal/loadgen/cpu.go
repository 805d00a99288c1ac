package loadgen

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/cnperf/cnperf/internal/loadgen/control"
)

// cpuSnap is a point-in-time reading of this process's CPU time and the host's /proc/stat.
type cpuSnap struct {
	mono      int64
	userNs    int64
	sysNs     int64
	hostBusy  float64
	hostTotal float64
	hostErr   error
}

func takeCPU() cpuSnap {
	var s cpuSnap
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err == nil {
		s.userNs = ru.Utime.Nano()
		s.sysNs = ru.Stime.Nano()
	}
	s.hostBusy, s.hostTotal, s.hostErr = readProcStat("/proc/stat")
	s.mono = nanotime()
	return s
}

// readProcStat returns busy and total jiffies of the aggregate "cpu" line: busy is user, nice,
// system, irq, softirq and steal; total adds idle and iowait (guest time is already in user).
func readProcStat(path string) (busy, total float64, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, err
	}
	return parseProcStat(b)
}

func parseProcStat(b []byte) (busy, total float64, err error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) < 5 || string(f[0]) != "cpu" {
			continue
		}
		var v [8]float64
		for i := 1; i < len(f) && i <= 8; i++ {
			x, err := strconv.ParseUint(string(f[i]), 10, 64)
			if err != nil {
				return 0, 0, fmt.Errorf("/proc/stat: field %d %q: %w", i, f[i], err)
			}
			v[i-1] = float64(x)
		}
		// user nice system idle iowait irq softirq steal
		busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7]
		total = busy + v[3] + v[4]
		return busy, total, nil
	}
	return 0, 0, fmt.Errorf("/proc/stat: no aggregate cpu line")
}

// cpuDiff turns two snapshots into the CPU used over the window between them.
func cpuDiff(a, b cpuSnap) *control.CPU {
	c := &control.CPU{
		WindowNs: b.mono - a.mono,
		UserNs:   b.userNs - a.userNs,
		SystemNs: b.sysNs - a.sysNs,
		NumCPU:   runtime.NumCPU(),
	}
	if c.WindowNs <= 0 {
		c.WindowNs = 1
	}
	if c.UserNs < 0 {
		c.UserNs = 0
	}
	if c.SystemNs < 0 {
		c.SystemNs = 0
	}
	if a.hostErr != nil || b.hostErr != nil || b.hostTotal <= a.hostTotal {
		c.HostMissing = true
	} else {
		c.HostBusy = b.hostBusy - a.hostBusy
		c.HostTotal = b.hostTotal - a.hostTotal
		if c.HostBusy < 0 {
			c.HostBusy = 0
		}
		if c.HostBusy > c.HostTotal {
			c.HostBusy = c.HostTotal
		}
	}
	return c
}
