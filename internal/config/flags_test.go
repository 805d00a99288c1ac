package config

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/plan"
)

func TestFromFlagsDefaults(t *testing.T) {
	p, err := FromFlags(FlagValues{})
	if err != nil {
		t.Fatal(err)
	}
	want := &api.Plan{APIVersion: api.APIVersion, Kind: api.KindPlan,
		Tests: []api.TestGroup{{Profiles: plan.DefaultProfiles}}}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("plan %+v, want %+v", p, want)
	}
	cases, err := plan.Expand(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cases {
		got = append(got, string(c.Profile))
	}
	if want := []string{"TCP_STREAM", "TCP_MAERTS", "UDP_STREAM", "TCP_RR", "TCP_CRR"}; !reflect.DeepEqual(got, want) {
		t.Errorf("default suite %q, want %q", got, want)
	}
}

func TestFromFlagsAll(t *testing.T) {
	p, err := FromFlags(FlagValues{
		Profile: "tcp_stream, TCP_RR", Driver: "Native,iperf3", Path: "loopback", Duration: "2s", Warmup: "1",
		Samples: "5", MessageSize: "1024,64k", ResponseSize: "1", Parallel: "1,4", Burst: "0,8", Rate: "1G",
		Timeout: "1m", IPFamily: "IPv6", Options: []string{"zerocopy=true", "a=b=c"},
	})
	if err != nil {
		t.Fatal(err)
	}
	five, one := 5, 1
	want := api.TestGroup{
		Profiles: []api.Profile{api.TCPStream, api.TCPRR}, Drivers: []string{"native", "iperf3"},
		Paths: []api.Path{api.PathLoopback}, Duration: "2s", Warmup: "1", Samples: &five,
		MessageSizes: []int{1024, 65536}, ResponseSize: &one, Parallel: []int{1, 4}, Burst: []int{0, 8},
		Rate: "1G", Timeout: "1m", IPFamily: "ipv6", Options: map[string]string{"zerocopy": "true", "a": "b=c"},
	}
	if !reflect.DeepEqual(p.Tests[0], want) {
		t.Errorf("group\n%+v\nwant\n%+v", p.Tests[0], want)
	}
}

func TestFromFlagsErrors(t *testing.T) {
	_, err := FromFlags(FlagValues{
		Profile: "TCP_STREAM,TCP_STRAEM", Path: "pod-pod", Duration: "abc", Warmup: "x", Samples: "three",
		MessageSize: "1024,,2", Parallel: "1.5", Rate: "fast", Options: []string{"novalue"},
	})
	want := []string{
		`--profile: unknown profile "TCP_STRAEM" (did you mean "TCP_STREAM"?) (known: TCP_STREAM, TCP_SENDFILE, TCP_MAERTS, UDP_STREAM, TCP_RR, UDP_RR, TCP_CRR, TCP_STREAM_LAT)`,
		`--path: unknown path "pod-pod" (known: loopback, host-host, pod-pod-same-node, pod-pod-cross-node, pod-pod-cross-zone, pod-host, host-pod, pod-clusterip, pod-hairpin, pod-nodeport, external-service)`,
		`--duration: "abc" is not a duration (use e.g. 10s, 1m30s, or a number of seconds)`,
		`--warmup: "x" is not a duration (use e.g. 10s, 1m30s, or a number of seconds)`,
		`--samples: "three" is not an integer`,
		`--message-size: empty element in "1024,,2"`,
		`--parallel: "1.5" is not an integer`,
		`--rate: "fast" is not a rate (use e.g. 10k, 500M, 1G: bits per second)`,
		`--option: "novalue" is not key=value`,
	}
	if err == nil {
		t.Fatal("no error")
	}
	var fe *FlagErrors
	if !errors.As(err, &fe) {
		t.Fatalf("%T, want *FlagErrors", err)
	}
	if got := strings.Split(err.Error(), "\n"); !reflect.DeepEqual(got, want) {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestFromFlagsConfidence(t *testing.T) {
	tests := []struct {
		name       string
		fv         FlagValues
		minN, maxN *int
		target     *api.ConfidenceTarget
		exclude    *bool
		err        string
	}{
		{"fixed samples", FlagValues{Samples: "5"}, ptr(5), nil, nil, nil, ""},
		{"min and max", FlagValues{Samples: "3,30", Confidence: "95,5"}, ptr(3), ptr(30), &api.ConfidenceTarget{Level: 95, HalfWidthPercent: 5}, nil, ""},
		{"percent signs", FlagValues{Confidence: "99%,2.5%"}, nil, nil, &api.ConfidenceTarget{Level: 99, HalfWidthPercent: 2.5}, nil, ""},
		{"exclude outliers", FlagValues{Exclude: true}, nil, nil, nil, ptr(true), ""},
		{"three numbers", FlagValues{Samples: "3,30,40"}, nil, nil, nil, nil, `--samples: "3,30,40": want N or MIN,MAX (e.g. 3,30)`},
		{"bad max", FlagValues{Samples: "3,many"}, nil, nil, nil, nil, `--samples: "many" is not an integer`},
		{"one number", FlagValues{Confidence: "95"}, nil, nil, nil, nil,
			`--confidence: "95": want LEVEL,HALFWIDTH in percent, e.g. 95,5 (a 95% interval within ±5% of the mean)`},
		{"not a number", FlagValues{Confidence: "high,5"}, nil, nil, nil, nil,
			`--confidence: "high" is not a number (want LEVEL,HALFWIDTH in percent, e.g. 95,5)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fv.Profile = "TCP_RR"
			p, err := FromFlags(tc.fv)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("error %v, want %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			g := p.Tests[0]
			if !reflect.DeepEqual(g.Samples, tc.minN) || !reflect.DeepEqual(g.MaxSamples, tc.maxN) ||
				!reflect.DeepEqual(g.Confidence, tc.target) || !reflect.DeepEqual(g.ExcludeOutliers, tc.exclude) {
				t.Errorf("samples %v max %v confidence %v exclude %v", g.Samples, g.MaxSamples, g.Confidence, g.ExcludeOutliers)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// ParseSampling takes --samples and --confidence exactly as `cnperf run` does: for each pair
// of values it gives the samples, maximum and target of the case FromFlags and plan.Expand
// make, or the same error naming the flag.
func TestParseSamplingIsRunsSampling(t *testing.T) {
	for _, fv := range []FlagValues{
		{}, {Samples: "5"}, {Confidence: "95,5"}, {Samples: "4,12", Confidence: "90,2.5"}, {Samples: "40", Confidence: "99%,5%"},
		{Samples: "3,30"}, {Samples: "0"}, {Samples: "1001"}, {Samples: "x"}, {Samples: " "}, {Samples: "10,5", Confidence: "95,5"},
		{Samples: "3,1001", Confidence: "95,5"}, {Confidence: "95"}, {Confidence: "100,5"}, {Confidence: "95,0"}, {Confidence: "x,5"},
	} {
		got, err := ParseSampling(fv.Samples, fv.Confidence, plan.DefaultSamples)
		fv.Profile = "TCP_STREAM"
		var want Sampling
		p, wantErr := FromFlags(fv)
		if wantErr == nil {
			var cases []plan.Case
			if cases, wantErr = plan.Expand(p, nil); wantErr != nil {
				wantErr = AnnotateFlagErrors(wantErr)
			} else {
				c := cases[0].Params
				want = Sampling{Samples: c.Samples, MaxSamples: c.MaxSamples, Confidence: c.Confidence}
			}
		}
		if fmt.Sprint(err) != fmt.Sprint(wantErr) || !reflect.DeepEqual(got, want) {
			t.Errorf("--samples %q --confidence %q: %+v, %v; run takes it as %+v, %v", fv.Samples, fv.Confidence, got, err, want, wantErr)
		}
		var fe *FlagErrors
		if err != nil && (!errors.As(err, &fe) || fe.Errors[0].Flag == "") {
			t.Errorf("--samples %q --confidence %q: error %v names no flag", fv.Samples, fv.Confidence, err)
		}
	}
	if s, err := ParseSampling("", "", 1); err != nil || s != (Sampling{Samples: 1}) {
		t.Errorf("no flags, default 1: %+v, %v", s, err)
	}
}

func TestAnnotateFlagErrors(t *testing.T) {
	p, err := FromFlags(FlagValues{Profile: "TCP_STREAM,TCP_RR", Driver: "streams", Parallel: "2", Duration: "-1s", Samples: "0"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = plan.Expand(p, check)
	err = AnnotateFlagErrors(err)
	want := []string{
		`--parallel: driver "streams" cannot run parallel flows (parallel 2)`,
		`--duration: duration must be positive, got -1s`,
		`--samples: samples must be at least 1, got 0`,
		`--profile: driver "streams" cannot run profile TCP_RR`,
	}
	if err == nil {
		t.Fatal("no error")
	}
	got := strings.Split(err.Error(), "\n")
	slices.Sort(got)
	slices.Sort(want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A default driver that is unknown has no flag to name.
	p, _ = FromFlags(FlagValues{Profile: "TCP_RR"})
	_, err = plan.Expand(p, check)
	if got := AnnotateFlagErrors(err).Error(); got != `unknown driver "native"` {
		t.Errorf("got %q", got)
	}
	if other := errors.New("x"); AnnotateFlagErrors(other) != other {
		t.Error("other errors must pass through")
	}
}

func TestApplyOverrides(t *testing.T) {
	l, err := LoadBytes("plan.yaml", []byte(head+"defaults:\n  samples: 2\ntests:\n  - name: a\n    profiles: [TCP_STREAM]\n    duration: 30s\n    options: {x: \"1\"}\n  - name: b\n    profiles: [TCP_RR]\n    parallel: [2]\n"))
	if err != nil {
		t.Fatal(err)
	}
	given := map[string]bool{FlagDuration: true, FlagDriver: true, FlagOption: true}
	err = ApplyOverrides(l.Plan, FlagValues{Duration: "2s", Driver: "all", Parallel: "9", Options: []string{"y=2"}},
		func(name string) bool { return given[name] })
	if err != nil {
		t.Fatal(err)
	}
	cases, err := l.Expand(plan.Options{}, check)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if c.Params.DurationSeconds != 2 || c.Driver != "all" || c.Params.Samples != 2 || c.Params.Options["y"] != "2" {
			t.Errorf("case %s: duration %g driver %s samples %d options %v", c.Name, c.Params.DurationSeconds, c.Driver, c.Params.Samples, c.Params.Options)
		}
	}
	if cases[0].Params.Options["x"] != "1" {
		t.Errorf("override dropped the plan's own option: %v", cases[0].Params.Options)
	}
	if cases[1].Params.Parallel != 2 {
		t.Errorf("--parallel was not given but changed the plan: %d", cases[1].Params.Parallel)
	}

	err = ApplyOverrides(l.Plan, FlagValues{Duration: "soon", Samples: ""}, func(string) bool { return true })
	want := `--duration: "soon" is not a duration (use e.g. 10s, 1m30s, or a number of seconds)` + "\n" +
		`--samples: empty element in ""` + "\n" + `--profile: empty element in ""` + "\n" + `--driver: empty element in ""` + "\n" + `--path: empty element in ""`
	if err == nil {
		t.Fatal("no error")
	}
	for _, line := range strings.Split(want, "\n") {
		if !strings.Contains(err.Error(), line) {
			t.Errorf("error %q lacks %q", err, line)
		}
	}
}
