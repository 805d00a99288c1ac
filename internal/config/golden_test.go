package config

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver/all"
	"github.com/cnperf/cnperf/internal/golden"
	"github.com/cnperf/cnperf/internal/plan"
)

// renderCases is the golden form of an expansion: one case per line, every parameter.
func renderCases(l *Loaded, cases []plan.Case) string {
	var b strings.Builder
	fmt.Fprintf(&b, "format: %s\n", l.Format)
	for _, w := range l.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	for _, c := range cases {
		p := c.Params
		fmt.Fprintf(&b, "%d name=%q group=%q %s path=%q driver=%s duration=%gs warmup=%gs samples=%d size=%d",
			c.Index, c.Name, c.Group, c.Profile, c.Path, c.Driver, p.DurationSeconds, p.WarmupSeconds, p.Samples, p.MessageSizeBytes)
		if p.ResponseSizeBytes != 0 {
			fmt.Fprintf(&b, " response=%d", p.ResponseSizeBytes)
		}
		fmt.Fprintf(&b, " parallel=%d burst=%d", p.Parallel, p.Burst)
		if p.RateBitsPerSecond != 0 {
			fmt.Fprintf(&b, " rate=%g", p.RateBitsPerSecond)
		}
		if p.TimeoutSeconds != 0 {
			fmt.Fprintf(&b, " timeout=%gs", p.TimeoutSeconds)
		}
		if p.HostNetwork {
			b.WriteString(" hostNetwork")
		}
		if p.Service {
			b.WriteString(" service")
		}
		if p.IPFamily != "" {
			fmt.Fprintf(&b, " ipFamily=%s", p.IPFamily)
		}
		for _, k := range slices.Sorted(maps.Keys(p.Options)) {
			fmt.Fprintf(&b, " option.%s=%q", k, p.Options[k])
		}
		b.WriteString("\n")
	}
	return b.String()
}

func TestGoldenExpansions(t *testing.T) {
	tests := []struct {
		file string
		opts plan.Options
	}{
		{"plan.yaml", plan.Options{}},
		{"k8s-netperf-v1.yml", plan.Options{}},
		{"k8s-netperf-v2.yml", plan.Options{}},
		// As on a cluster: the platform decides the path, k8s-netperf's default driver.
		{"k8s-netperf-v1-suite.yml", plan.Options{DefaultPaths: []api.Path{""}, DefaultDrivers: []string{"netperf"}}},
		{"k8s-netperf-v2-suite.yml", plan.Options{DefaultDrivers: []string{"netperf", "iperf3"}}},
		// As internal/tigerbench expands them: the drivers' own default sizes (qperf's 64 KiB
		// for tcp_bw: tiger-bench runs qperf without -m).
		{"tiger-bench-testconfig.yaml", plan.Options{DriverMessageSize: all.DefaultMessageSize}},
		{"tiger-bench-iperf.yaml", plan.Options{DriverMessageSize: all.DefaultMessageSize}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			l, err := Load(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			// The driver checks are the drivers' business; expansion order and defaults are ours.
			cases, err := l.Expand(tt.opts, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := renderCases(l, cases)
			golden.Check(t, filepath.Join("testdata", "golden", strings.TrimSuffix(tt.file, filepath.Ext(tt.file))+".cases"), []byte(got))
		})
	}
}
