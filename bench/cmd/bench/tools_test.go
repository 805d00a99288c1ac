package main

import (
	"math"
	"os"
	"strings"
	"testing"
)

// The bench reads sockperf's rate from its measured window, not from [Total Run], whose
// message count includes the warm-up: in this capture 60074 messages in 2.001 s (30.0 k/s)
// against 44547 in the 1.550 s window (28.7 k/s).
func TestParseSockperf(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile("../../../internal/driver/sockperf/testdata/captured/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	tests := []struct {
		name, out  string
		want       float64
		wantDetail string
		wantErr    string
	}{
		{name: "tcp ping-pong", out: read("pp_tcp_m64_fullrtt.stdout"), want: 44547 / 1.550, wantDetail: "p50 16.500µs"},
		{name: "udp ping-pong", out: read("pp_udp_m64_halfrtt.stdout"), want: 28860 / 1.548, wantDetail: "p50 9.237µs"},
		{name: "no window", out: "sockperf: [Total Run] RunTime=2.001 sec; Warm up time=400 msec; SentMessages=60075; ReceivedMessages=60074\n", wantErr: "sockperf output is not a client report"},
		{name: "empty", out: "", wantErr: "sockperf output is not a client report"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := parseSockperf(tt.out)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(f.value-tt.want) > 0.01 {
				t.Errorf("rate = %.2f, want %.2f", f.value, tt.want)
			}
			if f.detail != tt.wantDetail {
				t.Errorf("detail = %q", f.detail)
			}
		})
	}
}

func TestPairedRange(t *testing.T) {
	m := func(rep int, v float64) measured { return measured{fig: figure{value: v}, rep: rep} }
	tests := []struct {
		name string
		a, b []measured
		want string
	}{
		{"pairs", []measured{m(0, 10), m(1, 12), m(2, 9)}, []measured{m(0, 10), m(1, 10), m(2, 10)}, "0.90–1.20"},
		{"a failed rep 1, b failed rep 2", []measured{m(0, 10), m(2, 11), m(3, 8)}, []measured{m(0, 10), m(1, 10), m(3, 10)}, "0.80–1.00"},
		{"one pair only", []measured{m(0, 10)}, []measured{m(0, 10), m(1, 10)}, "—"},
		{"peer zero", []measured{m(0, 10), m(1, 10)}, []measured{m(0, 0), m(1, 10)}, "—"},
	}
	for _, tt := range tests {
		if got := pairedRange(tt.a, tt.b); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
