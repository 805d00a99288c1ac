package config

import (
	"testing"

	"github.com/cnperf/cnperf/internal/plan"
)

// A testconfig.yaml of tests without cases (ttfr, dnsperf, iterations 0) loads: the tests are
// run by internal/tigerbench, and the plan expands to no cases.
func TestTigerBenchWithoutCases(t *testing.T) {
	l, err := LoadBytes("testconfig.yaml", []byte("- testKind: ttfr\n  TTFRConfig: {Rate: 2, TestPodsPerNode: 10}\n- testKind: iperf\n  iterations: 0\n  numPods: 100\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(l.TigerBench) != 2 || l.TigerBench[1].NumPods != 100 {
		t.Fatalf("tests %+v", l.TigerBench)
	}
	if len(l.Warnings) != 0 {
		t.Errorf("warnings %q: standing config and ttfr are acted on now", l.Warnings)
	}
	cases, err := l.Expand(plan.Options{}, nil)
	if err != nil || len(cases) != 0 {
		t.Errorf("expand: %d cases, %v", len(cases), err)
	}
}

func TestTigerBenchGroup(t *testing.T) {
	l, err := LoadBytes("testconfig.yaml", []byte("- testKind: ttfr\n- testKind: iperf\n  duration: 5\n  iterations: 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := l.Plan.Tests[0].Name, TigerBenchGroup(1, "iperf"); got != want || want != "iperf-2" {
		t.Errorf("group %q, want %q", got, want)
	}
}
