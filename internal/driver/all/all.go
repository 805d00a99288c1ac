// Package all is the list of cnperf's drivers: adding a driver is one line here. Lookups by
// name, the plan's driver checks and every help text or error that names the drivers read it.
package all

import (
	"strings"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/driver/iperf2"
	"github.com/cnperf/cnperf/internal/driver/iperf3"
	"github.com/cnperf/cnperf/internal/driver/native"
	"github.com/cnperf/cnperf/internal/driver/netperf"
	"github.com/cnperf/cnperf/internal/driver/qperf"
	"github.com/cnperf/cnperf/internal/driver/sockperf"
	"github.com/cnperf/cnperf/internal/driver/uperf"
	"github.com/cnperf/cnperf/internal/plan"
)

// List returns every driver.
func List() driver.List {
	return driver.List{
		native.Driver{},   // built-in generator (cnperf agent)
		netperf.Driver{},  // netperf 2.7 omni
		iperf3.Driver{},   // iperf3
		uperf.Driver{},    // uperf (XML profiles)
		qperf.Driver{},    // qperf
		sockperf.Driver{}, // sockperf
		iperf2.Driver{},   // iperf 2 bounce-back (TCP_RR)
	}
}

// Get returns the driver named name.
func Get(name string) (driver.Driver, error) { return List().Get(name) }

// Names lists the drivers' names, sorted.
func Names() []string { return List().Names() }

// Joined is the drivers' names, sorted, joined with ", " (help texts).
func Joined() string { return strings.Join(Names(), ", ") }

// Check reports whether the case's driver can run it (driver.List.Check); the plan validator
// calls it for every case.
func Check(c plan.Case) error { return List().Check(c) }

// DefaultMessageSize returns the named driver's own default message size for p, if it has one.
func DefaultMessageSize(name string, p api.Profile) (int, bool) {
	return List().DefaultMessageSize(name, p)
}

// DefaultWarmup returns the named driver's own default warm-up in seconds, if it has one.
func DefaultWarmup(name string) (float64, bool) { return List().DefaultWarmup(name) }

// Importers lists the names of the drivers that can import a tool's saved output, sorted.
func Importers() []string {
	var out []string
	for _, n := range Names() {
		d, _ := Get(n)
		if _, ok := d.(driver.Importer); ok {
			out = append(out, n)
		}
	}
	return out
}

// Guest lists the drivers whose tools the cnperf guest carries (a VM endpoint's guest:
// test/e2e/harness/kubevirt.sh build copies GuestTools into it, and its agent's exec port runs
// them and nothing else but cnperf). uperf is not among them: its client runs through `sh -c`
// (it writes its XML profile first), and the exec port runs no shell.
func Guest() driver.List { return driver.List{native.Driver{}, netperf.Driver{}, iperf3.Driver{}} }

// GuestTools lists, by driver, the tools of the drivers of Guest (driver.Tools).
func GuestTools() map[string][]string {
	out := map[string][]string{}
	for _, d := range Guest() {
		out[d.Name()] = driver.Tools(d)
	}
	return out
}

// GuestExecTools is every tool of GuestTools, sorted: what the guest's exec port runs besides
// cnperf.
func GuestExecTools() []string { return driver.DistinctTools(GuestTools()) }
