// Package all registers every driver; import it for its side effects.
package all

import (
	_ "github.com/cnperf/cnperf/internal/driver/iperf2"   // iperf 2 bounce-back (TCP_RR)
	_ "github.com/cnperf/cnperf/internal/driver/iperf3"   // iperf3
	_ "github.com/cnperf/cnperf/internal/driver/native"   // built-in generator
	_ "github.com/cnperf/cnperf/internal/driver/netperf"  // netperf 2.7 omni
	_ "github.com/cnperf/cnperf/internal/driver/qperf"    // qperf
	_ "github.com/cnperf/cnperf/internal/driver/sockperf" // sockperf
	_ "github.com/cnperf/cnperf/internal/driver/uperf"    // uperf (XML profiles)
)
