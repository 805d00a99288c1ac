package iperf3

import (
	"testing"

	"github.com/cnperf/cnperf/internal/driver/toolkit/fixture"
)

// FuzzParse fuzzes Parse and Import with the real captures as seeds (see fixture.Fuzz).
func FuzzParse(f *testing.F) { fixture.Fuzz(f, Driver{}, "testdata/captured") }
