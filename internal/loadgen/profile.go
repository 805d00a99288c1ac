package loadgen

import "github.com/cnperf/cnperf/internal/loadgen/control"

type profileKind int

const (
	kindStream profileKind = iota // TCP_STREAM, TCP_SENDFILE
	kindMaerts
	kindUDPStream
	kindTCPRR
	kindUDPRR
	kindCRR
	kindStreamLat // TCP_STREAM_LAT: stream flows and one small-message RR flow (the probe)
)

func kindOf(p string) profileKind {
	switch p {
	case "TCP_STREAM", "TCP_SENDFILE":
		return kindStream
	case "TCP_MAERTS":
		return kindMaerts
	case "UDP_STREAM":
		return kindUDPStream
	case "TCP_RR":
		return kindTCPRR
	case "UDP_RR":
		return kindUDPRR
	case "TCP_STREAM_LAT":
		return kindStreamLat
	default:
		return kindCRR
	}
}

// flowCount is how many data connections a test opens: its parallel flows, and for
// TCP_STREAM_LAT one more, the probe, after the stream flows.
func flowCount(st control.Setup) int {
	if kindOf(st.Profile) == kindStreamLat {
		return st.Parallel + 1
	}
	return st.Parallel
}

// isProbe reports whether flow i is TCP_STREAM_LAT's small-message RR flow: its
// transactions are timed while the other flows stream.
func isProbe(st control.Setup, i int) bool {
	return kindOf(st.Profile) == kindStreamLat && i == st.Parallel
}
