package native

import (
	"testing"

	"github.com/cnperf/cnperf/internal/driver/toolkit/fixture"
)

// FuzzParse fuzzes Parse with the real captures as seeds (see fixture.Fuzz).
func FuzzParse(f *testing.F) { fixture.Fuzz(f, Driver{}, "testdata/captured", "testdata") }
