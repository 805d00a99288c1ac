// Package limits is cnperf's one table of limits: what a plan may ask for, and what each
// driver (and the built-in agent behind the native driver) accepts. The plan's validation
// (internal/plan), the native agent's control protocol (internal/loadgen/control) and the
// agent's command line read these values, so a plan that validates never fails its samples
// because one side allows more than the other.
//
// Units are in the names: Bytes, Flows, a time.Duration. A zero field in Driver means "no
// limit of the driver's own": the plan-wide limit applies.
//
// Sources of the external tools' limits (their code, not guesses):
//
//	iperf3   src/iperf.h: MAX_STREAMS 128, MAX_BLOCKSIZE 1 MiB, MIN_UDP_BLOCKSIZE 16,
//	         MAX_UDP_BLOCKSIZE 65507, MAX_TIME 86400 s, MAX_OMIT_TIME 600 s
//	uperf    src/uperf.h (1.0.8): MAXSLAVES 1024 threads per group
//	sockperf src/defs.h: MIN_PAYLOAD_SIZE 14, MAX_PAYLOAD_SIZE 65507
//	netperf, qperf, iperf2: no limit below the plan's
package limits

import (
	"cmp"
	"sort"
	"time"
)

// Plan-wide limits: no case may exceed them, whatever its driver.
const (
	// MaxCases is the most cases one plan may expand to.
	MaxCases = 10000
	// MaxSamples is the most samples a case may take: samples, and maxSamples with a
	// confidence target.
	MaxSamples = 1000
	// MaxParallelFlows, MaxBurst and MaxMessageSizeBytes are the most any driver accepts;
	// each case is then held to its own driver's row (For).
	MaxParallelFlows    = 1024 // uperf's threads per group
	MaxBurst            = NativeMaxBurst
	MaxMessageSizeBytes = NativeMaxMessageSizeBytes
	// MaxDuration is the longest measured time of one sample.
	MaxDuration = 24 * time.Hour
	// MinDuration is the shortest measured time of one sample unless the caller allows shorter
	// ones (plan.Options.AllowShortSamples, `cnperf run --allow-short-samples`): below it the
	// connection set-up, timer resolution and scheduling are most of what a sample measures.
	MinDuration = 100 * time.Millisecond
	// MaxWarmup is the longest warm-up before a case's samples.
	MaxWarmup = time.Hour
	// MaxTimeout is the longest per-sample timeout a plan may set.
	MaxTimeout = MaxDuration + MaxWarmup + time.Hour
	// MaxUDPPayloadIPv4Bytes and MaxUDPPayloadIPv6Bytes are the largest UDP payloads one
	// datagram can carry (65535 minus the IP and UDP headers; IPv6 without jumbograms).
	MaxUDPPayloadIPv4Bytes = 65507
	MaxUDPPayloadIPv6Bytes = 65527
)

// The native driver's agent (cnperf agent serve / client; internal/loadgen). The control
// protocol refuses a setup outside these, so the plan refuses it first.
const (
	NativeMaxParallelFlows     = 256
	NativeMaxBurst             = 4096
	NativeMaxMessageSizeBytes  = 16 << 20 // TCP profiles; UDP ones are capped by the datagram
	NativeMaxUDPMessageBytes   = MaxUDPPayloadIPv4Bytes
	NativeMinUDPStreamBytes    = 24 // the agent's UDP_STREAM header: flow, phase, sequence, time
	NativeMaxDuration          = MaxDuration
	NativeMaxWarmup            = MaxWarmup
	NativeMaxSocketBufferBytes = 1 << 30
	NativeMaxCPU               = 4095 // highest CPU number the agent pins a thread to
)

// sockperf's payload bounds (src/defs.h MIN_PAYLOAD_SIZE, MAX_PAYLOAD_SIZE); the sockperf
// driver builds its commands with them.
const (
	SockperfMinMessageSizeBytes = 14
	SockperfMaxMessageSizeBytes = 65507
)

// Driver is one driver's limits. Zero means none of the driver's own (the plan-wide limit
// applies); the message-size fields apply to TCP profiles unless named UDP.
type Driver struct {
	MaxParallelFlows       int
	MaxBurst               int
	MinMessageSizeBytes    int
	MaxMessageSizeBytes    int
	MinUDPMessageSizeBytes int
	MaxUDPMessageSizeBytes int
	// UDPMinStreamOnly is true when MinUDPMessageSizeBytes holds for UDP_STREAM only (the
	// native agent's stream header); UDP_RR then takes the plan-wide minimum.
	UDPMinStreamOnly bool
	MaxDuration      time.Duration
	MaxWarmup        time.Duration
}

// Generic is the limits a plan's fields are checked against before any driver is known: the
// most any driver accepts. Each case is then checked against its own driver (For).
var Generic = Driver{
	MaxParallelFlows:       MaxParallelFlows,
	MaxBurst:               MaxBurst,
	MinMessageSizeBytes:    1,
	MaxMessageSizeBytes:    MaxMessageSizeBytes,
	MinUDPMessageSizeBytes: 1,
	MaxUDPMessageSizeBytes: MaxUDPPayloadIPv6Bytes,
	MaxDuration:            MaxDuration,
	MaxWarmup:              MaxWarmup,
}

var drivers = map[string]Driver{
	"native": {
		MaxParallelFlows:       NativeMaxParallelFlows,
		MaxBurst:               NativeMaxBurst,
		MaxMessageSizeBytes:    NativeMaxMessageSizeBytes,
		MinUDPMessageSizeBytes: NativeMinUDPStreamBytes,
		MaxUDPMessageSizeBytes: NativeMaxUDPMessageBytes,
		UDPMinStreamOnly:       true,
		MaxDuration:            NativeMaxDuration,
		MaxWarmup:              NativeMaxWarmup,
	},
	"iperf3": {
		MaxParallelFlows:       128,
		MaxMessageSizeBytes:    1 << 20,
		MinUDPMessageSizeBytes: 16,
		MaxUDPMessageSizeBytes: 65507,
		MaxDuration:            86400 * time.Second,
		MaxWarmup:              600 * time.Second,
	},
	"uperf": {
		MaxParallelFlows: 1024,
	},
	"sockperf": {
		MinMessageSizeBytes:    SockperfMinMessageSizeBytes,
		MaxMessageSizeBytes:    SockperfMaxMessageSizeBytes,
		MinUDPMessageSizeBytes: SockperfMinMessageSizeBytes,
		MaxUDPMessageSizeBytes: SockperfMaxMessageSizeBytes,
	},
}

// MinUDPMessageSize is the smallest UDP message (or response) of profile udpRR (true:
// UDP_RR, false: UDP_STREAM) that the limits allow.
func (d Driver) MinUDPMessageSize(udpRR bool) int {
	if udpRR && d.UDPMinStreamOnly {
		return Generic.MinUDPMessageSizeBytes
	}
	return d.MinUDPMessageSizeBytes
}

// For returns the limits of the named driver, with every zero field filled from Generic. An
// unknown name gets Generic.
func For(driver string) Driver {
	d := drivers[driver]
	g := Generic
	d.MaxParallelFlows = cmp.Or(d.MaxParallelFlows, g.MaxParallelFlows)
	d.MaxBurst = cmp.Or(d.MaxBurst, g.MaxBurst)
	d.MinMessageSizeBytes = cmp.Or(d.MinMessageSizeBytes, g.MinMessageSizeBytes)
	d.MaxMessageSizeBytes = cmp.Or(d.MaxMessageSizeBytes, g.MaxMessageSizeBytes)
	d.MinUDPMessageSizeBytes = cmp.Or(d.MinUDPMessageSizeBytes, g.MinUDPMessageSizeBytes)
	d.MaxUDPMessageSizeBytes = cmp.Or(d.MaxUDPMessageSizeBytes, g.MaxUDPMessageSizeBytes)
	d.MaxDuration = cmp.Or(d.MaxDuration, g.MaxDuration)
	d.MaxWarmup = cmp.Or(d.MaxWarmup, g.MaxWarmup)
	return d
}

// Drivers lists the drivers with limits of their own, sorted.
func Drivers() []string {
	out := make([]string, 0, len(drivers))
	for n := range drivers {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
