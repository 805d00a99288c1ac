package plan_test

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/plan"
)

// capsDriver is a driver with capabilities only. The real drivers live in packages that are
// built separately; here the real check (driver.List.Check) runs against a list of these
// stand-ins so the tests exercise the production check without depending on a driver's
// implementation.
type capsDriver struct {
	name string
	caps driver.Capabilities
}

func (d capsDriver) Name() string                      { return d.name }
func (d capsDriver) Capabilities() driver.Capabilities { return d.caps }
func (d capsDriver) KnownOptions() []string            { return []string{"a", "b"} }
func (d capsDriver) Job(plan.Case) (driver.Job, error) { return capsJob{d.name}, nil }

type capsJob struct{ name string }

func (j capsJob) Servers() []driver.Server { return nil }
func (j capsJob) Parse([]driver.Output) (api.Sample, error) {
	return api.Sample{}, errors.New("not a real driver")
}

// Client builds a command for every case: the check builds one against a dummy target, and
// these stand-ins have no limits beyond their capabilities.
func (j capsJob) Client(driver.Target, bool) ([]driver.Command, error) {
	return []driver.Command{{Argv: []string{j.name}}}, nil
}

var testDrivers = driver.List{
	capsDriver{"test-all", driver.Capabilities{
		Profiles: api.Profiles, Parallel: true, Burst: true, MessageSize: true, ResponseSize: true, Rate: true}},
	capsDriver{"test-stream", driver.Capabilities{
		Profiles: []api.Profile{api.TCPStream, api.UDPStream}, Parallel: true, MessageSize: true, Rate: true}},
	capsDriver{"test-single", driver.Capabilities{
		Profiles: []api.Profile{api.TCPStream, api.TCPRR}, MessageSize: true}},
}

func ptr[T any](v T) *T { return &v }

func TestExpandOrderAndDefaults(t *testing.T) {
	p := &api.Plan{
		APIVersion: api.APIVersion, Kind: api.KindPlan,
		Defaults: &api.TestGroup{Duration: "2s", Drivers: []string{"test-all"}, Options: map[string]string{"a": "1"}},
		Tests: []api.TestGroup{
			{Name: "streams", Profiles: []api.Profile{"UDP_STREAM", "tcp_stream"}, MessageSizes: []int{1024, 64},
				Parallel: []int{2, 1}, Options: map[string]string{"b": "2"}},
			{Profiles: []api.Profile{api.TCPRR}, Burst: []int{0, 8}, Samples: ptr(5), Warmup: "1", Timeout: "1m",
				ResponseSize: ptr(200), Rate: "1.5M"},
		},
	}
	cases, err := plan.Expand(p, testDrivers.Check)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cases {
		got = append(got, fmt.Sprintf("%d %s/%s %s %s %s size=%d resp=%d par=%d burst=%d dur=%g warm=%g n=%d to=%g rate=%g opt=%v",
			c.Index, c.Group, c.Name, c.Profile, c.Path, c.Driver, c.Params.MessageSizeBytes, c.Params.ResponseSizeBytes,
			c.Params.Parallel, c.Params.Burst, c.Params.DurationSeconds, c.Params.WarmupSeconds, c.Params.Samples,
			c.Params.TimeoutSeconds, c.Params.RateBitsPerSecond, c.Params.Options))
	}
	want := []string{
		"0 streams/streams UDP_STREAM loopback test-all size=1024 resp=0 par=2 burst=0 dur=2 warm=0 n=3 to=0 rate=0 opt=map[a:1 b:2]",
		"1 streams/streams UDP_STREAM loopback test-all size=1024 resp=0 par=1 burst=0 dur=2 warm=0 n=3 to=0 rate=0 opt=map[a:1 b:2]",
		"2 streams/streams UDP_STREAM loopback test-all size=64 resp=0 par=2 burst=0 dur=2 warm=0 n=3 to=0 rate=0 opt=map[a:1 b:2]",
		"3 streams/streams UDP_STREAM loopback test-all size=64 resp=0 par=1 burst=0 dur=2 warm=0 n=3 to=0 rate=0 opt=map[a:1 b:2]",
		"4 streams/streams TCP_STREAM loopback test-all size=1024 resp=0 par=2 burst=0 dur=2 warm=0 n=3 to=0 rate=0 opt=map[a:1 b:2]",
		"5 streams/streams TCP_STREAM loopback test-all size=1024 resp=0 par=1 burst=0 dur=2 warm=0 n=3 to=0 rate=0 opt=map[a:1 b:2]",
		"6 streams/streams TCP_STREAM loopback test-all size=64 resp=0 par=2 burst=0 dur=2 warm=0 n=3 to=0 rate=0 opt=map[a:1 b:2]",
		"7 streams/streams TCP_STREAM loopback test-all size=64 resp=0 par=1 burst=0 dur=2 warm=0 n=3 to=0 rate=0 opt=map[a:1 b:2]",
		"8 /TCP_RR TCP_RR loopback test-all size=1 resp=200 par=1 burst=0 dur=2 warm=1 n=5 to=60 rate=1.5e+06 opt=map[a:1]",
		"9 /TCP_RR TCP_RR loopback test-all size=1 resp=200 par=1 burst=8 dur=2 warm=1 n=5 to=60 rate=1.5e+06 opt=map[a:1]",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("cases:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Options maps are per case: changing one must not change another.
	cases[0].Params.Options["a"] = "changed"
	if cases[1].Params.Options["a"] != "1" {
		t.Error("cases share their options map")
	}
}

func TestExpandBuiltinDefaults(t *testing.T) {
	p := &api.Plan{Tests: []api.TestGroup{{Profiles: []api.Profile{
		api.TCPStream, api.TCPMaerts, api.TCPSendfile, api.UDPStream, api.TCPRR, api.UDPRR, api.TCPCRR}}}}
	// nil check: the built-in driver name "native" is not registered here.
	cases, err := plan.Expand(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantSize := map[api.Profile]int{api.TCPStream: 131072, api.TCPMaerts: 131072, api.TCPSendfile: 131072,
		api.UDPStream: 1400, api.TCPRR: 1, api.UDPRR: 1, api.TCPCRR: 1}
	for _, c := range cases {
		if c.Params.MessageSizeBytes != wantSize[c.Profile] {
			t.Errorf("%s: message size %d, want %d", c.Profile, c.Params.MessageSizeBytes, wantSize[c.Profile])
		}
		want := api.Params{DurationSeconds: 10, Samples: 3, MessageSizeBytes: wantSize[c.Profile], Parallel: 1}
		if !reflect.DeepEqual(c.Params, want) {
			t.Errorf("%s: params %+v, want %+v", c.Profile, c.Params, want)
		}
		if c.Path != api.PathLoopback || c.Driver != "native" || c.Name != string(c.Profile) || c.Group != "" {
			t.Errorf("%s: path %q driver %q name %q group %q", c.Profile, c.Path, c.Driver, c.Name, c.Group)
		}
	}
}

func TestExpandOptions(t *testing.T) {
	p := &api.Plan{Tests: []api.TestGroup{
		{Name: "a", Profiles: []api.Profile{api.TCPStream}},
		{Name: "b", Profiles: []api.Profile{api.TCPStream}, Paths: []api.Path{api.PathHostHost}, Drivers: []string{"test-stream"}},
	}}
	cases, err := plan.ExpandWith(p, plan.Options{DefaultPaths: []api.Path{""}, DefaultDrivers: []string{"test-single", "test-stream"}}, testDrivers.Check)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cases {
		got = append(got, c.Name+" "+string(c.Path)+" "+c.Driver)
	}
	want := []string{"a  test-single", "a  test-stream", "b host-host test-stream"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestExpandAllowShortSamples: the caller's option lets a sample last less than 100 ms.
func TestExpandAllowShortSamples(t *testing.T) {
	p := plan1(api.TestGroup{Profiles: []api.Profile{api.TCPRR}, Duration: "10ms"})
	if _, err := plan.ExpandWith(p, plan.Options{}, testDrivers.Check); err == nil {
		t.Fatal("a 10ms sample was accepted without AllowShortSamples")
	}
	cases, err := plan.ExpandWith(p, plan.Options{AllowShortSamples: true}, testDrivers.Check)
	if err != nil || len(cases) != 1 || cases[0].Params.DurationSeconds != 0.01 {
		t.Fatalf("with AllowShortSamples: %v %+v", err, cases)
	}
}

func TestExpandConfidence(t *testing.T) {
	target := &api.ConfidenceTarget{Level: 95, HalfWidthPercent: 5}
	tests := []struct {
		name                 string
		defaults, group      api.TestGroup
		minN, maxN           int
		confidence, excluded bool
	}{
		{"off by default", api.TestGroup{}, api.TestGroup{}, 3, 0, false, false},
		{"target with default bounds", api.TestGroup{}, api.TestGroup{Confidence: target}, 3, 30, true, false},
		{"samples is the least", api.TestGroup{}, api.TestGroup{Confidence: target, Samples: ptr(5)}, 5, 30, true, false},
		{"samples above the default most", api.TestGroup{}, api.TestGroup{Confidence: target, Samples: ptr(40)}, 40, 40, true, false},
		{"from defaults", api.TestGroup{Confidence: target, MaxSamples: ptr(12), ExcludeOutliers: ptr(true)}, api.TestGroup{}, 3, 12, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := tc.group
			g.Profiles, g.Drivers = []api.Profile{api.TCPRR}, []string{"test-all"}
			d := tc.defaults
			cases, err := plan.Expand(&api.Plan{Defaults: &d, Tests: []api.TestGroup{g}}, testDrivers.Check)
			if err != nil {
				t.Fatal(err)
			}
			p := cases[0].Params
			if p.Samples != tc.minN || p.MaxSamples != tc.maxN || (p.Confidence != nil) != tc.confidence || p.ExcludeOutliers != tc.excluded {
				t.Errorf("params samples %d max %d confidence %v exclude %v; want %d %d %v %v",
					p.Samples, p.MaxSamples, p.Confidence, p.ExcludeOutliers, tc.minN, tc.maxN, tc.confidence, tc.excluded)
			}
			if p.Confidence != nil && *p.Confidence != *target {
				t.Errorf("confidence %+v", *p.Confidence)
			}
		})
	}
}

func TestExpandErrors(t *testing.T) {
	tests := []struct {
		name string
		plan *api.Plan
		want []string
	}{
		{"nil plan", nil, []string{"empty plan"}},
		{"no tests", &api.Plan{}, []string{"tests: the plan has no tests"}},
		{"bad apiVersion and kind", &api.Plan{APIVersion: "cnperf.dev/v9", Kind: "Run", Tests: []api.TestGroup{{Profiles: []api.Profile{api.TCPRR}, Drivers: []string{"test-all"}}}},
			[]string{`apiVersion: unsupported apiVersion "cnperf.dev/v9" (want "cnperf.dev/v1alpha1")`, `kind: unsupported kind "Run" (want "Plan")`}},
		{"unknown profile", plan1(api.TestGroup{Profiles: []api.Profile{"TCP_STRAEM", "FOO"}}),
			[]string{
				`tests[0].profiles[0]: unknown profile "TCP_STRAEM" (did you mean "TCP_STREAM"?) (known: TCP_STREAM, TCP_SENDFILE, TCP_MAERTS, UDP_STREAM, TCP_RR, UDP_RR, TCP_CRR, TCP_STREAM_LAT)`,
				`tests[0].profiles[1]: unknown profile "FOO" (known: TCP_STREAM, TCP_SENDFILE, TCP_MAERTS, UDP_STREAM, TCP_RR, UDP_RR, TCP_CRR, TCP_STREAM_LAT)`}},
		{"no profiles", plan1(api.TestGroup{Name: "x"}),
			[]string{"tests[0].profiles: no profiles: list at least one here or in defaults (known: TCP_STREAM, TCP_SENDFILE, TCP_MAERTS, UDP_STREAM, TCP_RR, UDP_RR, TCP_CRR, TCP_STREAM_LAT)"}},
		{"unknown path", plan1(api.TestGroup{Profiles: []api.Profile{api.TCPRR}, Paths: []api.Path{"pod-pod"}}),
			[]string{`tests[0].paths[0]: unknown path "pod-pod" (known: loopback, host-host, pod-pod-same-node, pod-pod-cross-node, pod-pod-cross-zone, pod-host, host-pod, pod-clusterip, pod-hairpin, pod-nodeport, external-service)`}},
		{"unknown driver", plan1(api.TestGroup{Profiles: []api.Profile{api.TCPRR}, Drivers: []string{"netpref"}}),
			[]string{`tests[0].drivers[0]: unknown driver "netpref" (known: test-all, test-single, test-stream)`}},
		{"driver cannot run profile", plan1(api.TestGroup{Profiles: []api.Profile{api.TCPStream, api.TCPRR}, Drivers: []string{"test-stream"}}),
			[]string{`tests[0].profiles[1]: driver "test-stream" cannot run profile TCP_RR (drivers that can: test-all, test-single)`}},
		{"driver cannot run parallel", plan1(api.TestGroup{Profiles: []api.Profile{api.TCPStream}, Drivers: []string{"test-single"}, Parallel: []int{1, 4}}),
			[]string{`tests[0].parallel[1]: driver "test-single" cannot run parallel flows (parallel 4)`}},
		{"driver cannot burst", plan1(api.TestGroup{Profiles: []api.Profile{api.TCPRR}, Drivers: []string{"test-single"}, Burst: []int{2}}),
			[]string{`tests[0].burst[0]: driver "test-single" cannot keep several transactions in flight (burst 2)`}},
		{"driver cannot rate", plan1(api.TestGroup{Profiles: []api.Profile{api.TCPRR}, Drivers: []string{"test-single"}, Rate: "1G"}),
			[]string{`tests[0].rate: driver "test-single" cannot limit the send rate`}},
		{"driver cannot response size", plan1(api.TestGroup{Profiles: []api.Profile{api.TCPRR}, Drivers: []string{"test-single"}, ResponseSize: ptr(10)}),
			[]string{`tests[0].responseSize: driver "test-single" cannot set a response size different from the request size`}},
		{"platform cannot make the path", plan1(api.TestGroup{Profiles: []api.Profile{api.TCPRR}, Paths: []api.Path{api.PathLoopback, api.PathPodNodePort}}),
			[]string{`tests[0].paths[1]: path pod-nodeport is not available here`}},
		{"durations", plan1(api.TestGroup{Profiles: []api.Profile{api.TCPRR}, Duration: "abc", Warmup: "-1s", Timeout: "0"}),
			[]string{
				`tests[0].duration: "abc" is not a duration (use e.g. 10s, 1m30s, or a number of seconds)`,
				`tests[0].warmup: warm-up must not be negative, got -1s`,
				`tests[0].timeout: timeout must be positive, got 0`}},
		{"zero and negative duration", &api.Plan{Tests: []api.TestGroup{
			{Profiles: []api.Profile{api.TCPRR}, Duration: "0s", Drivers: []string{"test-all"}},
			{Profiles: []api.Profile{api.TCPRR}, Duration: "-5", Drivers: []string{"test-all"}}}},
			[]string{`tests[0].duration: duration must be positive, got 0s`, `tests[1].duration: duration must be positive, got -5`}},
		{"empty driver and option names", plan1(api.TestGroup{Profiles: []api.Profile{api.TCPRR}, Drivers: []string{"test-all", " "},
			Options: map[string]string{" ": "x"}}),
			[]string{`tests[0].drivers[1]: empty driver name`, `tests[0].options: empty option name`}},
		{"durations too long", plan1(api.TestGroup{Profiles: []api.Profile{api.TCPRR}, Duration: "999999999h", Warmup: "2h", Timeout: "1e300"}),
			[]string{
				`tests[0].duration: duration 999999999h is too long (at most 24h0m0s)`,
				`tests[0].warmup: warm-up 2h is too long (at most 1h0m0s)`,
				`tests[0].timeout: timeout 1e300 is too long (at most 26h0m0s)`}},
		// The native agent's and the tools' own limits (internal/limits), per case.
		{"native agent limits", plan1(api.TestGroup{Profiles: []api.Profile{api.TCPRR, api.UDPStream}, Drivers: []string{"native"},
			Parallel: []int{300}, Burst: []int{4096}, MessageSizes: []int{10}}),
			[]string{
				`tests[0].parallel[0]: parallel 300 is more than the native driver runs (at most 256 flows)`,
				`tests[0].messageSizes[0]: message size 10 is less than the native driver accepts for UDP_STREAM (at least 24 bytes)`}},
		{"iperf3 limits", plan1(api.TestGroup{Profiles: []api.Profile{api.TCPStream}, Drivers: []string{"iperf3"},
			Parallel: []int{129}, MessageSizes: []int{2 << 20}, Warmup: "11m"}),
			[]string{
				`tests[0].parallel[0]: parallel 129 is more than the iperf3 driver runs (at most 128 flows)`,
				`tests[0].messageSizes[0]: message size 2097152 is more than the iperf3 driver accepts for TCP_STREAM (at most 1048576 bytes)`,
				`tests[0].warmup: warm-up 11m0s is too long for the iperf3 driver (at most 10m0s)`}},
		{"unknown option key", &api.Plan{
			Defaults: &api.TestGroup{Options: map[string]string{"bb": "1"}},
			Tests: []api.TestGroup{{Profiles: []api.Profile{api.TCPRR}, Drivers: []string{"test-all"}, Options: map[string]string{"a": "1", "test-all.c": "2"}},
				{Profiles: []api.Profile{api.TCPRR}, Drivers: []string{"test-all"}}}},
			[]string{
				`tests[0].options: unknown option "bb" (did you mean "b"?) (known: a, b)`,
				`defaults.options: unknown option "bb" (did you mean "b"?) (known: a, b)`}},
		{"timeout too short", plan1(api.TestGroup{Profiles: []api.Profile{api.TCPRR}, Duration: "10s", Warmup: "2s", Timeout: "12s"}),
			[]string{`tests[0].timeout: timeout 12s must be longer than duration + warm-up (12s)`}},
		{"samples", plan1(api.TestGroup{Profiles: []api.Profile{api.TCPRR}, Samples: ptr(0)}),
			[]string{`tests[0].samples: samples must be at least 1, got 0`}},
		// Finding 8 of issue 28: a 1 ns sample and an unbounded sample count were accepted.
		{"sample too short", plan1(api.TestGroup{Profiles: []api.Profile{api.TCPRR}, Duration: "99ms"}),
			[]string{`tests[0].duration: 99ms is shorter than the 100ms a sample must last (--allow-short-samples allows it)`}},
		{"too many samples", plan1(api.TestGroup{Profiles: []api.Profile{api.TCPRR}, Samples: ptr(1001)}),
			[]string{`tests[0].samples: samples 1001 is larger than the limit of 1000`}},
		{"maxSamples without confidence", plan1(api.TestGroup{Profiles: []api.Profile{api.TCPRR}, MaxSamples: ptr(30)}),
			[]string{`tests[0].maxSamples: maxSamples applies only with a confidence target (confidence: {level: 95, halfWidthPercent: 5})`}},
		{"maxSamples below samples", plan1(api.TestGroup{Profiles: []api.Profile{api.TCPRR}, Samples: ptr(5), MaxSamples: ptr(4),
			Confidence: &api.ConfidenceTarget{Level: 95, HalfWidthPercent: 5}}),
			[]string{`tests[0].maxSamples: maxSamples 4 is smaller than samples 5 (the least a case takes)`}},
		{"maxSamples out of range", plan1(api.TestGroup{Profiles: []api.Profile{api.TCPRR}, MaxSamples: ptr(5000),
			Confidence: &api.ConfidenceTarget{Level: 95, HalfWidthPercent: 5}}),
			[]string{`tests[0].maxSamples: maxSamples 5000 is larger than the limit of 1000`}},
		{"confidence out of range", plan1(api.TestGroup{Profiles: []api.Profile{api.TCPRR}, Confidence: &api.ConfidenceTarget{Level: 100, HalfWidthPercent: 0}}),
			[]string{
				`tests[0].confidence.level: confidence level must be a percentage from 50 to below 100 (e.g. 95), got 100`,
				`tests[0].confidence.halfWidthPercent: halfWidthPercent must be above 0 and at most 100 (e.g. 5 for ±5%), got 0`}},
		{"message sizes", plan1(api.TestGroup{Profiles: []api.Profile{api.TCPStream}, MessageSizes: []int{0, 1 << 27, 512, 512}}),
			[]string{
				`tests[0].messageSizes[0]: message size must be at least 1 bytes, got 0`,
				`tests[0].messageSizes[1]: message size 134217728 is larger than the limit of 16777216 bytes`,
				`tests[0].messageSizes[3]: duplicate message size 512 (also messageSizes[2])`}},
		{"udp payload", plan1(api.TestGroup{Profiles: []api.Profile{api.UDPStream, api.TCPStream}, MessageSizes: []int{65508}}),
			[]string{`tests[0].messageSizes[0]: message size 65508 is larger than the largest UDP payload (65507 bytes over IPv4) for UDP_STREAM`}},
		{"udp payload ipv6 ok", plan1(api.TestGroup{Profiles: []api.Profile{api.UDPStream}, MessageSizes: []int{65508}, IPFamily: "IPv6"}), nil},
		{"parallel and burst", plan1(api.TestGroup{Profiles: []api.Profile{api.TCPRR}, Parallel: []int{0, 2000}, Burst: []int{-1, 5000}}),
			[]string{
				`tests[0].parallel[0]: parallel must be at least 1, got 0`,
				`tests[0].parallel[1]: parallel 2000 is larger than the limit of 1024`,
				`tests[0].burst[0]: burst must not be negative, got -1`,
				`tests[0].burst[1]: burst 5000 is larger than the limit of 4096`}},
		{"burst without rr", plan1(api.TestGroup{Profiles: []api.Profile{api.TCPStream}, Burst: []int{4}, ResponseSize: ptr(5)}),
			[]string{
				`tests[0].burst: burst applies only to request/response profiles (TCP_RR, UDP_RR, TCP_CRR) and this group has none`,
				`tests[0].responseSize: responseSize applies only to request/response profiles (TCP_RR, UDP_RR, TCP_CRR) and TCP_STREAM_LAT (its small messages' size), and this group has none`}},
		{"ipFamily and rate", plan1(api.TestGroup{Profiles: []api.Profile{api.TCPRR}, IPFamily: "ipv5", Rate: "fast"}),
			[]string{
				`tests[0].rate: "fast" is not a rate (use e.g. 10k, 500M, 1G: bits per second)`,
				`tests[0].ipFamily: unknown ipFamily "ipv5" (known: ipv4, ipv6, dual)`}},
		{"duplicate names and values", &api.Plan{Tests: []api.TestGroup{
			{Name: "a", Profiles: []api.Profile{api.TCPRR, "tcp_rr"}, Paths: []api.Path{"loopback", "LOOPBACK"}, Drivers: []string{"test-all", "test-all"}},
			{Name: "a", Profiles: []api.Profile{api.TCPRR}, Drivers: []string{"test-all"}}}},
			[]string{
				`tests[0].profiles[1]: duplicate profile TCP_RR (also profiles[0])`,
				`tests[0].paths[1]: duplicate path loopback (also paths[0])`,
				`tests[0].drivers[1]: duplicate driver test-all (also drivers[0])`,
				`tests[1].name: duplicate group name "a" (also tests[0])`}},
		{"defaults errors reported once at defaults", &api.Plan{
			Defaults: &api.TestGroup{Name: "d", Duration: "x", Drivers: []string{"test-stream"}},
			Tests:    []api.TestGroup{{Profiles: []api.Profile{api.TCPRR}}, {Profiles: []api.Profile{api.TCPRR}}}},
			[]string{
				`defaults.name: defaults cannot have a name`,
				`defaults.duration: "x" is not a duration (use e.g. 10s, 1m30s, or a number of seconds)`,
				`tests[0].profiles[0]: driver "test-stream" cannot run profile TCP_RR (drivers that can: test-all, test-single)`,
				`tests[1].profiles[0]: driver "test-stream" cannot run profile TCP_RR (drivers that can: test-all, test-single)`}},
		{"too many cases", plan1(api.TestGroup{Profiles: api.Profiles, MessageSizes: seq(1, 100), Parallel: seq(1, 20)}),
			[]string{`tests[0]: the plan expands to more than 10000 cases`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cases, err := plan.Expand(tt.plan, checkWithPaths)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			var fe *plan.FieldErrors
			if !errors.As(err, &fe) {
				t.Fatalf("error %v (%T), want *plan.FieldErrors", err, err)
			}
			if cases != nil {
				t.Errorf("got %d cases with an error", len(cases))
			}
			var got []string
			for _, e := range fe.Errors {
				got = append(got, e.String())
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// checkWithPaths is testDrivers.Check plus a platform that cannot make NodePort paths (as the
// runner composes them).
func checkWithPaths(c plan.Case) error {
	if err := testDrivers.Check(c); err != nil {
		return err
	}
	if c.Path == api.PathPodNodePort {
		return fmt.Errorf("path %s is not available here", c.Path)
	}
	return nil
}

func plan1(g api.TestGroup) *api.Plan {
	if g.Drivers == nil {
		g.Drivers = []string{"test-all"}
	}
	return &api.Plan{APIVersion: api.APIVersion, Kind: api.KindPlan, Tests: []api.TestGroup{g}}
}

func seq(from, to int) []int {
	var out []int
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

func TestExpandDriverWarmup(t *testing.T) {
	opts := plan.Options{DriverWarmup: func(d string) (float64, bool) { return 0.2, d == "test-all" }}
	tests := []struct {
		name           string
		defaults, g    api.TestGroup
		driver         string
		want           float64
		withoutOptions float64
	}{
		{"driver default", api.TestGroup{}, api.TestGroup{}, "test-all", 0.2, 0},
		{"driver without one", api.TestGroup{}, api.TestGroup{}, "test-stream", 0, 0},
		{"group sets 0", api.TestGroup{}, api.TestGroup{Warmup: "0s"}, "test-all", 0, 0},
		{"defaults set 1s", api.TestGroup{Warmup: "1s"}, api.TestGroup{}, "test-all", 1, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := tc.g
			g.Profiles, g.Drivers = []api.Profile{api.TCPStream}, []string{tc.driver}
			d := tc.defaults
			p := &api.Plan{Defaults: &d, Tests: []api.TestGroup{g}}
			cases, err := plan.ExpandWith(p, opts, testDrivers.Check)
			if err != nil {
				t.Fatal(err)
			}
			if got := cases[0].Params.WarmupSeconds; got != tc.want {
				t.Errorf("warm-up %v, want %v", got, tc.want)
			}
			cases, _ = plan.Expand(p, testDrivers.Check)
			if got := cases[0].Params.WarmupSeconds; got != tc.withoutOptions {
				t.Errorf("without the option: warm-up %v, want %v", got, tc.withoutOptions)
			}
		})
	}
}

// TestExpandIPFamilyDual: ipFamily dual measures every case on both families, IPv4 then IPv6
// next to each other; the other settings give one case each, with their family as given.
func TestExpandIPFamilyDual(t *testing.T) {
	tests := []struct {
		family string
		want   []string
	}{
		{"", []string{"pod-pod-cross-node ", "host-host "}},
		{"ipv6", []string{"pod-pod-cross-node ipv6", "host-host ipv6"}},
		{"DUAL", []string{"pod-pod-cross-node ipv4", "pod-pod-cross-node ipv6", "host-host ipv4", "host-host ipv6"}},
	}
	for _, tt := range tests {
		cases, err := plan.Expand(plan1(api.TestGroup{Profiles: []api.Profile{api.TCPStream}, IPFamily: tt.family,
			Paths: []api.Path{api.PathPodPodCrossNode, api.PathHostHost}}), testDrivers.Check)
		if err != nil {
			t.Fatalf("%q: %v", tt.family, err)
		}
		var got []string
		for i, c := range cases {
			if c.Index != i {
				t.Errorf("%q: case %d has index %d", tt.family, i, c.Index)
			}
			got = append(got, string(c.Path)+" "+c.Params.IPFamily)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("ipFamily %q: cases %q, want %q", tt.family, got, tt.want)
		}
	}
}

// TestExpandGroupFields checks the fields a group takes from itself, from the defaults or from
// the options: hostNetwork, service, a timeout of the defaults, a driver's own message size.
func TestExpandGroupFields(t *testing.T) {
	opts := plan.Options{DriverMessageSize: func(d string, p api.Profile) (int, bool) { return 4096, d == "test-all" && p == api.TCPStream }}
	tests := []struct {
		name        string
		defaults, g api.TestGroup
		want        api.Params
	}{
		{"group's own", api.TestGroup{}, api.TestGroup{HostNetwork: ptr(true), Service: ptr(true), Timeout: "1m"},
			api.Params{HostNetwork: true, Service: true, TimeoutSeconds: 60, MessageSizeBytes: 4096}},
		{"defaults'", api.TestGroup{HostNetwork: ptr(true), Timeout: "2m", MessageSizes: []int{100}}, api.TestGroup{Service: ptr(false)},
			api.Params{HostNetwork: true, TimeoutSeconds: 120, MessageSizeBytes: 100}},
		{"group over defaults", api.TestGroup{Timeout: "2m", HostNetwork: ptr(true)}, api.TestGroup{Timeout: "90s", HostNetwork: ptr(false)},
			api.Params{TimeoutSeconds: 90, MessageSizeBytes: 4096}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := tc.g
			g.Profiles, g.Drivers = []api.Profile{api.TCPStream}, []string{"test-all"}
			d := tc.defaults
			cases, err := plan.ExpandWith(&api.Plan{Defaults: &d, Tests: []api.TestGroup{g}}, opts, testDrivers.Check)
			if err != nil {
				t.Fatal(err)
			}
			p := cases[0].Params
			got := api.Params{HostNetwork: p.HostNetwork, Service: p.Service, TimeoutSeconds: p.TimeoutSeconds, MessageSizeBytes: p.MessageSizeBytes}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
