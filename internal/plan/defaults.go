package plan

import (
	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/limits"
)

// Built-in defaults. A group field that is not set inherits the plan's `defaults:` field, then
// these values:
//
//	field         default                      note
//	------------  ---------------------------  ------------------------------------------------
//	duration      10s                          measured time of one sample
//	warmup        0s                           no warm-up sample; a driver may have its own
//	                                           (Options.DriverWarmup: native 0.2s)
//	samples       3                            measured samples per case (the least, with confidence)
//	maxSamples    30                           the most, with confidence; an error without it
//	confidence    none                         {level, halfWidthPercent}: sample until the CI
//	                                           of the headline figure is within ±halfWidth %
//	excludeOutliers false                      leave samples outside median ± 3·MAD out
//	parallel      [1]                          one flow
//	burst         [0]                          one transaction in flight (RR profiles only)
//	paths         [loopback]                   or the platform's choice (Options.DefaultPaths)
//	drivers       [native]                     or the caller's choice (Options.DefaultDrivers)
//	messageSizes  per profile:                 bytes written per send / request size
//	                TCP_STREAM, TCP_MAERTS,
//	                TCP_SENDFILE: 131072       128 KiB, iperf3's default TCP block
//	                UDP_STREAM:   1400         fits a 1500-byte MTU without IP fragmentation
//	                TCP_RR, UDP_RR, TCP_CRR: 1 netperf's default request and response size
//	responseSize  = message size               RR profiles only
//	rate          unlimited
//	timeout       duration + warmup + 30s      per sample (see Case.SampleTimeout)
//	hostNetwork   false
//	service       false
//	ipFamily      ""                           the platform's default (IPv4 where available)
//	profiles      none: a group must list at least one (FromFlags uses DefaultProfiles)
const (
	DefaultDurationSeconds = 10
	DefaultWarmupSeconds   = 0
	DefaultSamples         = 3
	DefaultMaxSamples      = 30
	DefaultParallel        = 1
	DefaultBurst           = 0
	DefaultPath            = api.PathLoopback
	DefaultDriver          = "native"

	DefaultStreamMessageSizeBytes    = 128 * 1024
	DefaultUDPStreamMessageSizeBytes = 1400
	DefaultRRMessageSizeBytes        = 1
)

// Limits enforced by validation: the plan-wide row of internal/limits (each case is then held
// to its driver's row, limits.For).
const (
	MaxMessageSizeBytes = limits.MaxMessageSizeBytes
	MaxParallel         = limits.MaxParallelFlows
	MaxBurst            = limits.MaxBurst
	MaxCases            = limits.MaxCases
	MaxSamples          = limits.MaxSamples
	// MaxUDPPayloadIPv4 and MaxUDPPayloadIPv6 are the largest UDP payloads a datagram can carry
	// (65535 minus the IP and UDP headers; IPv6 without jumbograms).
	MaxUDPPayloadIPv4 = limits.MaxUDPPayloadIPv4Bytes
	MaxUDPPayloadIPv6 = limits.MaxUDPPayloadIPv6Bytes
)

// DefaultProfiles is the default suite: the five main profiles, in the order they run.
var DefaultProfiles = []api.Profile{api.TCPStream, api.TCPMaerts, api.UDPStream, api.TCPRR, api.TCPCRR}

// DefaultMessageSize is the built-in message size for a profile, in bytes.
func DefaultMessageSize(p api.Profile) int {
	switch {
	case p == api.UDPStream:
		return DefaultUDPStreamMessageSizeBytes
	case p.IsStream():
		return DefaultStreamMessageSizeBytes
	default:
		return DefaultRRMessageSizeBytes
	}
}

// IPFamilies are the accepted ipFamily values ("" means the platform's default). "dual"
// measures every case on both families: it expands into an IPv4 and an IPv6 case.
var IPFamilies = []string{"ipv4", "ipv6", IPFamilyDual}

// IPFamilyDual is the ipFamily that asks for every case on IPv4 and on IPv6.
const IPFamilyDual = "dual"

// CaseFamilies are the families the cases of one ipFamily setting are measured on: "dual"
// gives IPv4 then IPv6, anything else itself (the platform's default when "").
func CaseFamilies(family string) []string {
	if family == IPFamilyDual {
		return []string{"ipv4", "ipv6"}
	}
	return []string{family}
}
