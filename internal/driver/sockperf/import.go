package sockperf

import (
	"fmt"
	"math"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
)

var _ driver.Importer = Driver{}

// Import implements driver.Importer for one saved sockperf client output. The protocol comes
// from the "# TCP"/"# UDP" line (UDP when absent: sockperf's default); ping-pong and
// under-load both become RR cases (under-load is recorded as option mode=under-load when the
// server answered far fewer messages than were sent).
func (Driver) Import(name string, data []byte) ([]driver.ImportedCase, error) {
	r, err := ParseOutput(data, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	udp := r.Protocol != "TCP"
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
