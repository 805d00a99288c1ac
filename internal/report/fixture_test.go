package report

import "github.com/cnperf/cnperf/internal/report/reporttest"

// The shared fixture (internal/report/reporttest), by the names these tests use.
var (
	fp         = reporttest.F
	t0         = reporttest.T0
	sample     = reporttest.Sample
	failed     = reporttest.Failed
	hist       = reporttest.Hist
	result     = reporttest.Result
	fixtureRun = reporttest.Run
)
