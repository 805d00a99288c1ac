package limits

import (
	"testing"
	"time"
)

func TestFor(t *testing.T) {
	tests := []struct {
		driver string
		want   Driver
	}{
		{"native", Driver{MaxParallelFlows: 256, MaxBurst: 4096, MinMessageSizeBytes: 1, MaxMessageSizeBytes: 16 << 20,
			MinUDPMessageSizeBytes: 24, MaxUDPMessageSizeBytes: 65507, UDPMinStreamOnly: true, MaxDuration: 24 * time.Hour, MaxWarmup: time.Hour}},
		{"iperf3", Driver{MaxParallelFlows: 128, MaxBurst: 4096, MinMessageSizeBytes: 1, MaxMessageSizeBytes: 1 << 20,
			MinUDPMessageSizeBytes: 16, MaxUDPMessageSizeBytes: 65507, MaxDuration: 24 * time.Hour, MaxWarmup: 10 * time.Minute}},
		{"sockperf", Driver{MaxParallelFlows: 1024, MaxBurst: 4096, MinMessageSizeBytes: 14, MaxMessageSizeBytes: 65507,
			MinUDPMessageSizeBytes: 14, MaxUDPMessageSizeBytes: 65507, MaxDuration: 24 * time.Hour, MaxWarmup: time.Hour}},
		{"netperf", Generic},
		{"no-such-driver", Generic},
	}
	for _, tt := range tests {
		if got := For(tt.driver); got != tt.want {
			t.Errorf("For(%q) = %+v, want %+v", tt.driver, got, tt.want)
		}
	}
}

// TestNoDriverAboveGeneric: Generic is the most any driver accepts, so the plan's first
// field checks never refuse what a driver's row allows.
func TestNoDriverAboveGeneric(t *testing.T) {
	for _, name := range Drivers() {
		d := For(name)
		if d.MaxParallelFlows > Generic.MaxParallelFlows || d.MaxBurst > Generic.MaxBurst ||
			d.MaxMessageSizeBytes > Generic.MaxMessageSizeBytes || d.MaxUDPMessageSizeBytes > Generic.MaxUDPMessageSizeBytes ||
			d.MaxDuration > Generic.MaxDuration || d.MaxWarmup > Generic.MaxWarmup {
			t.Errorf("%s allows more than Generic: %+v", name, d)
		}
	}
}

// TestMinUDPMessageSize: the native agent's 24-byte stream header bounds UDP_STREAM only; a
// tool's own UDP minimum bounds both UDP profiles.
func TestMinUDPMessageSize(t *testing.T) {
	for _, tt := range []struct {
		driver string
		udpRR  bool
		want   int
	}{{"native", false, 24}, {"native", true, 1}, {"iperf3", false, 16}, {"iperf3", true, 16}, {"sockperf", true, 14}, {"netperf", true, 1}} {
		if got := For(tt.driver).MinUDPMessageSize(tt.udpRR); got != tt.want {
			t.Errorf("%s UDP_RR %v: %d, want %d", tt.driver, tt.udpRR, got, tt.want)
		}
	}
}
