package ttfr

import (
	"os"
	"strings"
	"time"
)

// ClockReport is `cnperf agent probe --clock`'s JSON line: this node's wall clock and its
// kernel's boot id (two pods on one kernel share one clock).
type ClockReport struct {
	Now    time.Time `json:"now"`
	BootID string    `json:"bootID,omitempty"`
}

// ReadClock reads the wall clock, then the boot id.
func ReadClock() ClockReport {
	r := ClockReport{Now: time.Now()}
	r.BootID = BootID()
	return r
}

// BootID is the running kernel's boot id ("" where /proc does not say).
func BootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
