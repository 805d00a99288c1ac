package platform

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/driver"
)

func TestParseExternal(t *testing.T) {
	for _, tc := range []struct {
		in      string
		host    string
		ports   []int
		wantErr string
	}{
		{in: "10.0.0.9", host: "10.0.0.9"},
		{in: "10.0.0.9:5201", host: "10.0.0.9", ports: []int{5201}},
		{in: "svc.example.com:12865, 12866", host: "svc.example.com", ports: []int{12865, 12866}},
		{in: "2001:db8::9", host: "2001:db8::9"},
		{in: "[2001:db8::9]:7100,7101", host: "2001:db8::9", ports: []int{7100, 7101}},
		// The local platform kept the brackets here (and then dialled "[2001:db8::9]"); the
		// kube platform stripped them. One rule now: stripped.
		{in: "[2001:db8::9]", host: "2001:db8::9"},
		{in: ":5201", wantErr: "no host"},
		{in: "[]:5201", wantErr: "no host"},
		{in: "10.0.0.9:0", wantErr: `"0" is not a port`},
		{in: "10.0.0.9:80,http", wantErr: `"http" is not a port`},
		{in: "10.0.0.9:65536", wantErr: `"65536" is not a port`},
	} {
		host, ports, err := ParseExternal(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "--external") {
				t.Errorf("ParseExternal(%q) error = %v, want one naming --external and %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || host != tc.host || !slices.Equal(ports, tc.ports) {
			t.Errorf("ParseExternal(%q) = %q, %v, %v; want %q, %v", tc.in, host, ports, err, tc.host, tc.ports)
		}
	}
}

func TestExternalPorts(t *testing.T) {
	servers := []driver.Server{{Name: "a", Ports: []driver.Port{{Port: 10}, {Port: 11}}}, {Name: "b", Ports: []driver.Port{{Port: 20}}}}
	for _, tc := range []struct {
		ports []int
		want  map[int]int
	}{
		{nil, nil},
		{[]int{9000}, map[int]int{10: 9000}},
		{[]int{9000, 9001, 9002}, map[int]int{10: 9000, 11: 9001, 20: 9002}},
		{[]int{9000, 9001, 9002, 9003}, map[int]int{10: 9000, 11: 9001, 20: 9002}}, // more ports than servers have
	} {
		if got := ExternalPorts(servers, tc.ports); !maps.Equal(got, tc.want) || (got == nil) != (tc.want == nil) {
			t.Errorf("ExternalPorts(%v) = %v, want %v", tc.ports, got, tc.want)
		}
	}
}
