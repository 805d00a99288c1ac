package loadgen

type profileKind int

const (
	kindStream profileKind = iota // TCP_STREAM, TCP_SENDFILE
	kindMaerts
	kindUDPStream
	kindTCPRR
	kindUDPRR
	kindCRR
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
	default:
		return kindCRR
	}
}
