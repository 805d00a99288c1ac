package loadgen

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/loadgen/control"
	"github.com/cnperf/cnperf/internal/stats/hdr"
)

// TestBuildSample checks how both sides' counters become a sample, the branches a real run
// on loopback rarely takes among them: a window without traffic, datagrams out of order,
// lost transactions, RST closes, zero-copy and offload notes.
func TestBuildSample(t *testing.T) {
	const sec = int64(time.Second)
	tests := []struct {
		name     string
		profile  string
		crrClose string
		client   []ClientFlow
		server   []control.FlowCounters
		zc       zeroCopyStats
		offload  []string
		err      string   // the error, or
		bps      float64  // the throughput,
		tps      float64  // the transaction rate,
		retrans  float64  // the retransmits,
		notes    []string // the notes (all of them)
	}{
		{name: "stream without data", profile: "TCP_STREAM", client: []ClientFlow{{WindowBytesTx: 100}},
			server: []control.FlowCounters{{}}, err: "the server received no data in the measured window (client sent 100 bytes)"},
		{name: "maerts without data", profile: "TCP_MAERTS", client: []ClientFlow{{}},
			server: []control.FlowCounters{{WindowBytesTx: 7}}, err: "the client received no data in the measured window (server sent 7 bytes)"},
		{name: "stream of two flows", profile: "TCP_STREAM", client: []ClientFlow{{WindowBytesTx: 1000, Retransmits: 1}, {WindowBytesTx: 1000, Retransmits: 2}},
			server: []control.FlowCounters{{WindowBytesRx: 1000}, {WindowBytesRx: 500}}, offload: []string{"tso"},
			zc:  zeroCopyStats{sends: 4, completions: 4, copied: 4, fellBack: true},
			bps: 12000, retrans: 3,
			notes: []string{"throughput is what the receiver (server) read in its window", "offload: tso",
				"zero-copy: 4 sends, 4 completed, 4 of them copied by the kernel",
				"zero-copy: the kernel copied every zero-copy send on this path, so the client switched to plain sends (MSG_ZEROCOPY pays off only on devices that can send from user pages)",
				"server note"}},
		{name: "udp without datagrams", profile: "UDP_STREAM", client: []ClientFlow{{LastSeq: 5}},
			server: []control.FlowCounters{{}}, err: "no datagram arrived in the measured window (client sent 5)"},
		{name: "udp out of order", profile: "UDP_STREAM", client: []ClientFlow{{LastSeq: 10}},
			server: []control.FlowCounters{{PacketsRx: 8, Lost: 2, OutOfOrder: 3, JitterNs: 4000}, {}},
			bps:    8 * 100 * 8,
			notes: []string{"loss and jitter as iperf3 computes them (sequence gaps minus late arrivals, RFC 1889 jitter), " +
				"plus datagrams lost after the last one received; throughput counts UDP payload", "3 datagrams arrived out of order", "server note"}},
		{name: "rr without transactions", profile: "UDP_RR", client: []ClientFlow{{}}, server: []control.FlowCounters{{}},
			err: "no transaction completed in the measured window"},
		{name: "udp rr lost transactions", profile: "UDP_RR", client: []ClientFlow{{WindowTransactions: 50, LostTransactions: 3}},
			server: []control.FlowCounters{{}}, tps: 50,
			notes: []string{"3 transactions lost (no response within 200ms) and restarted", "server note"}},
		{name: "tcp rr retransmits", profile: "TCP_RR", client: []ClientFlow{{WindowTransactions: 20, Retransmits: 1}},
			server: []control.FlowCounters{{WindowRetransmits: 2}}, tps: 20, retrans: 3, notes: []string{"server note"}},
		{name: "crr rst", profile: "TCP_CRR", crrClose: control.CloseRST, client: []ClientFlow{{WindowTransactions: 9}},
			server: []control.FlowCounters{{}}, tps: 9, notes: []string{"close: RST (SO_LINGER 0), no TIME_WAIT", "server note"}},
		{name: "crr graceful", profile: "TCP_CRR", client: []ClientFlow{{WindowTransactions: 9}},
			server: []control.FlowCounters{{}}, tps: 9,
			notes: []string{"close: graceful (the server closes first with FIN and keeps TIME_WAIT, like netperf)", "server note"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := &Report{
				Setup:       control.Setup{Profile: tt.profile, MessageBytes: 100, CRRClose: tt.crrClose},
				Server:      &control.ServerResult{WindowNs: sec, Flows: tt.server, Notes: []string{"server note"}},
				ClientFlows: tt.client, WindowNs: sec, Offload: tt.offload,
			}
			s, err := buildSample(rep, time.Unix(0, 0), time.Unix(1, 0), hdr.New(), true, tt.zc)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.bps > 0 && (s.ThroughputBitsPerSecond == nil || *s.ThroughputBitsPerSecond != tt.bps) {
				t.Errorf("throughput %v, want %v", s.ThroughputBitsPerSecond, tt.bps)
			}
			if tt.tps > 0 && (s.TransactionsPerSecond == nil || *s.TransactionsPerSecond != tt.tps) {
				t.Errorf("transactions %v, want %v", s.TransactionsPerSecond, tt.tps)
			}
			if tt.retrans > 0 && (s.Retransmits == nil || *s.Retransmits != tt.retrans) {
				t.Errorf("retransmits %v, want %v", s.Retransmits, tt.retrans)
			}
			if tt.profile == "UDP_STREAM" {
				if *s.PacketsSent != 10 || *s.PacketsReceived != 8 || *s.PacketsLost != 2 || *s.LossPercent != 20 || *s.JitterMicroseconds != 4 || *s.PacketsPerSecond != 8 {
					t.Errorf("udp %v %v %v %v %v %v", *s.PacketsSent, *s.PacketsReceived, *s.PacketsLost, *s.LossPercent, *s.JitterMicroseconds, *s.PacketsPerSecond)
				}
			}
			if !reflect.DeepEqual(s.Notes, tt.notes) {
				t.Errorf("notes:\n%s\nwant:\n%s", strings.Join(s.Notes, "\n"), strings.Join(tt.notes, "\n"))
			}
		})
	}
}
