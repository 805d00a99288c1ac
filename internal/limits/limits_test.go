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
			MinUDPMessageSizeBytes: 24, MaxUDPMessageSizeBytes: 65507, MaxDuration: 24 * time.Hour, MaxWarmup: time.Hour}},
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
