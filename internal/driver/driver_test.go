package driver_test

import (
	"slices"
	"testing"

	"github.com/cnperf/cnperf/internal/driver"
)

func TestDistinctTools(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   map[string][]string
		want []string
	}{
		{"none", nil, nil},
		{"a driver without tools", map[string][]string{"native": nil}, nil},
		{"shared tools once, sorted", map[string][]string{"netperf": {"netserver", "netperf"}, "iperf3": {"iperf3"}, "x": {"netperf"}},
			[]string{"iperf3", "netperf", "netserver"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := driver.DistinctTools(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("DistinctTools(%v) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
