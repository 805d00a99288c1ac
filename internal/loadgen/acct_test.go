package loadgen

import (
	"math"
	"testing"

	"github.com/cnperf/cnperf/internal/loadgen/control"
)

// TestUDPAcctLikeIperf3 replays sequences through the accounting and checks the counts that
// iperf3's iperf_udp_recv would produce.
func TestUDPAcctLikeIperf3(t *testing.T) {
	tests := []struct {
		name                   string
		seqs                   []uint64
		lastSent               uint64
		lost, ooo, highest, rx int64
	}{
		{"in order", []uint64{1, 2, 3, 4}, 4, 0, 0, 4, 4},
		{"gap", []uint64{1, 2, 5, 6}, 6, 2, 0, 6, 4},
		{"late arrival takes a loss back", []uint64{1, 3, 2, 4}, 4, 0, 1, 4, 4},
		{"first packets lost", []uint64{3, 4}, 4, 2, 0, 4, 2},
		{"trailing loss", []uint64{1, 2}, 5, 3, 0, 5, 2},
		{"reorder without loss counted", []uint64{2, 1}, 2, 0, 1, 2, 2},
		{"duplicate is out of order", []uint64{1, 2, 2, 3}, 3, 0, 1, 3, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var a udpAcct
			for i, s := range tt.seqs {
				a.add(s, 100, int64(i)*1000, int64(i)*1000+500)
			}
			a.finish(tt.lastSent)
			if a.lost != tt.lost || a.outOfOrder != tt.ooo || int64(a.highest) != tt.highest || a.packets != tt.rx {
				t.Fatalf("lost %d ooo %d highest %d rx %d; want %d %d %d %d", a.lost, a.outOfOrder, a.highest, a.packets,
					tt.lost, tt.ooo, tt.highest, tt.rx)
			}
		})
	}
}

// TestUDPJitterRFC1889 checks the jitter estimator against a hand computation: the first packet
// only sets the previous transit time; then J += (|D| - J)/16.
func TestUDPJitterRFC1889(t *testing.T) {
	var a udpAcct
	transits := []int64{1000, 1100, 1050, 1050, 2000}
	for i, tr := range transits {
		sent := int64(i) * 1e6
		a.add(uint64(i+1), 64, sent, sent+tr)
	}
	want := 0.0
	for i := 1; i < len(transits); i++ {
		d := math.Abs(float64(transits[i] - transits[i-1]))
		want += (d - want) / 16
	}
	if math.Abs(a.jitterNs-want) > 1e-9 {
		t.Fatalf("jitter %v, want %v", a.jitterNs, want)
	}
	// constant transit time with a clock offset: no jitter at all
	var b udpAcct
	for i := 0; i < 10; i++ {
		b.add(uint64(i+1), 64, int64(i)*1000, int64(i)*1000+123456789)
	}
	if b.jitterNs != 0 {
		t.Fatalf("jitter %v with constant transit", b.jitterNs)
	}
}

func TestParseProcStat(t *testing.T) {
	busy, total, err := parseProcStat([]byte("cpu  100 5 50 1000 20 3 2 1 0 0\ncpu0 50 2 25 500 10 1 1 0 0 0\nintr 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	if busy != 100+5+50+3+2+1 || total != busy+1000+20 {
		t.Fatalf("busy %v total %v", busy, total)
	}
	for _, bad := range []string{"", "intr 5\n", "cpu 1 2 x 4 5\n"} {
		if _, _, err := parseProcStat([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestCPUUsageServiceDemand(t *testing.T) {
	c := &control.CPU{WindowNs: 2e9, UserNs: 1e9, SystemNs: 5e8, HostBusy: 100, HostTotal: 400, NumCPU: 2}
	u := cpuUsage(c, 1000, 0)
	if *u.ProcessPercent != 75 || *u.UserPercent != 50 || *u.SystemPercent != 25 || *u.HostPercent != 25 {
		t.Fatalf("%+v", u)
	}
	// netperf: 25% of 2 CPUs over 2 s = 1e6 µs of CPU, over 1000 KB = 1000 µs/KB
	if got := *u.ServiceDemandMicrosecondsPerKB; math.Abs(got-1000) > 1e-9 {
		t.Fatalf("service demand %v µs/KB, want 1000", got)
	}
	if u.ServiceDemandMicrosecondsPerTransaction != nil {
		t.Fatal("per-transaction demand without transactions")
	}
	c.HostMissing = true
	if u := cpuUsage(c, 1000, 10); u.HostPercent != nil || u.ServiceDemandMicrosecondsPerKB != nil {
		t.Fatal("host figures without /proc/stat")
	}
}
