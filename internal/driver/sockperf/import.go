package sockperf

import (
	"fmt"
	"math"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
)

var _ driver.Importer = Driver{}

// ImportFormats implements driver.Importer.
func (Driver) ImportFormats() string {
	return `a client's output (ping-pong, under-load, throughput), or its --full-log file
(it names no protocol: give --profile)`
}

// Import implements driver.Importer for one saved sockperf client output or --full-log file.
// The protocol comes from the "# TCP"/"# UDP" line sockperf prints on stdout; a --full-log file
// has none, so it needs the profile (ImportAs, import --profile). Ping-pong and under-load both
// become RR cases (under-load is recorded as option mode=under-load when the server answered
// far fewer messages than were sent).
func (d Driver) Import(name string, data []byte) ([]driver.ImportedCase, error) {
	return d.ImportAs(name, data, "")
}

// ImportAs is Import with the profile given (TCP_RR or UDP_RR for ping-pong and under-load,
// TCP_STREAM or UDP_STREAM for throughput); it must agree with what the output says.
func (Driver) ImportAs(name string, data []byte, profile api.Profile) ([]driver.ImportedCase, error) {
	r, err := ParseOutput(data, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	kind := "ping-pong or under-load run: TCP_RR or UDP_RR"
	if r.Throughput {
		kind = "throughput run: TCP_STREAM or UDP_STREAM"
	}
	proto := r.Protocol
	if profile != "" {
		ok := profile.IsRR() && profile != api.TCPCRR
		if r.Throughput {
			ok = profile == api.TCPStream || profile == api.UDPStream
		}
		given := "TCP"
		if profile.IsUDP() {
			given = "UDP"
		}
		if !ok || (proto != "" && proto != given) {
			return nil, fmt.Errorf("%s: --profile %s does not fit this sockperf output (a %s %s)", name, profile, proto, kind)
		}
		proto = given
	}
	if proto == "" {
		return nil, fmt.Errorf("%s: the sockperf output does not say whether it ran TCP or UDP (no \"# TCP\"/\"# UDP\" line; "+
			"a --full-log file has none): give it with --profile (a %s)", name, kind)
	}
	udp := proto != "TCP"
	p := api.Params{Samples: 1, Parallel: 1, MessageSizeBytes: r.MessageSize}
	var prof api.Profile
	mode := ModePingPong
	switch {
	case r.Throughput:
		mode = ModeThroughput
		prof = api.TCPStream
		if udp {
			prof = api.UDPStream
		}
		p.DurationSeconds = math.Round(r.TotalSeconds)
	default:
		prof = api.TCPRR
		if udp {
			prof = api.UDPRR
		}
		p.DurationSeconds = math.Round(r.TotalRunSeconds) // the -t asked for; the sample keeps the measured window
		if r.Received > 0 && r.Sent > 2*r.Received {
			mode = ModeUnderLoad
			p.Options = map[string]string{OptMode: ModeUnderLoad}
		}
		if !r.FullRTT {
			if p.Options == nil {
				p.Options = map[string]string{}
			}
			p.Options[OptFullRTT] = "false"
		}
	}
	s, err := r.ToSample(p.MessageSizeBytes, mode)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return []driver.ImportedCase{{Profile: prof, Params: p, Sample: s}}, nil
}
