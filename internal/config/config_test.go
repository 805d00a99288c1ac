package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/plan"
)

const head = "apiVersion: cnperf.dev/v1alpha1\nkind: Plan\n"

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name string
		file string // name given to LoadBytes
		data string
		want []string
	}{
		{"unknown field with suggestion", "plan.yaml", head + "tests:\n  - name: a\n    profile: TCP_STREAM\n",
			[]string{`plan.yaml:5: tests[0].profile: unknown field "profile" (did you mean "profiles"?)`}},
		{"unknown field without suggestion", "plan.yaml", head + "tests:\n  - profiles: [TCP_RR]\n    colour: blue\n",
			[]string{`plan.yaml:5: tests[0].colour: unknown field "colour" (known: name, profiles, paths, drivers, messageSizes, responseSize, parallel, burst, duration, warmup, samples, maxSamples, confidence, excludeOutliers, timeout, rate, hostNetwork, service, ipFamily, network, options)`}},
		{"unknown top-level field", "plan.yaml", head + "test:\n  - profiles: [TCP_RR]\n",
			[]string{`plan.yaml:3: test: unknown field "test" (did you mean "tests"?)`}},
		{"wrong type integer", "plan.yaml", head + "tests:\n  - profiles: [TCP_RR]\n    samples: three\n",
			[]string{`plan.yaml:5: tests[0].samples: expected an integer, got "three"`}},
		{"wrong type list", "plan.yaml", head + "tests:\n  - profiles: TCP_STREAM\n",
			[]string{`plan.yaml:4: tests[0].profiles: expected a list, got "TCP_STREAM" (write [TCP_STREAM])`}},
		{"wrong type bool and mapping", "plan.yaml", head + "tests:\n  - profiles: [TCP_RR]\n    hostNetwork: maybe\n    duration: {s: 1}\n",
			[]string{
				`plan.yaml:5: tests[0].hostNetwork: expected true or false, got "maybe"`,
				`plan.yaml:6: tests[0].duration: expected a string, got a mapping`}},
		{"wrong type list elements", "plan.yaml", head + "tests:\n  - profiles: [TCP_RR]\n    messageSizes: [1024, 64k]\n    parallel:\n      - 1\n      - 2.5\n",
			[]string{
				`plan.yaml:5: tests[0].messageSizes[1]: expected an integer, got "64k"`,
				`plan.yaml:8: tests[0].parallel[1]: expected an integer, got "2.5"`}},
		{"bad duration", "plan.yaml", head + "tests:\n  - profiles: [TCP_RR]\n    duration: 10 seconds\n",
			[]string{`plan.yaml:5: tests[0].duration: "10 seconds" is not a duration (use e.g. 10s, 1m30s, or a number of seconds)`}},
		{"zero duration and samples in defaults", "plan.yaml", head + "defaults:\n  duration: 0s\n  samples: 0\ntests:\n  - profiles: [TCP_RR]\n",
			[]string{
				`plan.yaml:4: defaults.duration: duration must be positive, got 0s`,
				`plan.yaml:5: defaults.samples: samples must be at least 1, got 0`}},
		{"unknown profile", "plan.yaml", head + "tests:\n  - name: x\n    drivers: [native]\n    profiles: [TCP_STREAM, TCP_FOO]\n",
			[]string{`plan.yaml:6: tests[0].profiles[1]: unknown profile "TCP_FOO" (known: TCP_STREAM, TCP_SENDFILE, TCP_MAERTS, UDP_STREAM, TCP_RR, UDP_RR, TCP_CRR, TCP_STREAM_LAT)`}},
		{"unknown path and ipFamily", "plan.yaml", head + "tests:\n  - profiles: [TCP_RR]\n    paths:\n      - loopbak\n    ipFamily: ipv5\n",
			[]string{
				`plan.yaml:6: tests[0].paths[0]: unknown path "loopbak" (did you mean "loopback"?) (known: loopback, host-host, pod-pod-same-node, pod-pod-cross-node, pod-pod-cross-zone, pod-host, host-pod, pod-clusterip, pod-hairpin, pod-nodeport, external-service)`,
				`plan.yaml:7: tests[0].ipFamily: unknown ipFamily "ipv5" (known: ipv4, ipv6, dual)`}},
		{"message size, parallel, burst ranges", "plan.yaml", head + "tests:\n  - profiles: [TCP_RR]\n    messageSizes: [0]\n    parallel: [0]\n    burst: [-1]\n",
			[]string{
				`plan.yaml:5: tests[0].messageSizes[0]: message size must be at least 1 bytes, got 0`,
				`plan.yaml:6: tests[0].parallel[0]: parallel must be at least 1, got 0`,
				`plan.yaml:7: tests[0].burst[0]: burst must not be negative, got -1`}},
		// the vm block's types and names; its values are checked where the flags' are (the kube platform)
		{"vm block", "plan.yaml", head + "vm:\n  endpoints: both\n  sockets: two\n  memroy: 1Gi\n  startTimeout: 5\ntests:\n  - profiles: [TCP_RR]\n",
			[]string{
				`plan.yaml:5: vm.sockets: expected an integer, got "two"`,
				`plan.yaml:6: vm.memroy: unknown field "memroy" (did you mean "memory"?)`}},
		{"vm not a mapping", "plan.yaml", head + "vm: both\ntests:\n  - profiles: [TCP_RR]\n",
			[]string{`plan.yaml:3: vm: expected a mapping of fields, got "both"`}},
		{"duplicate group names", "plan.yaml", head + "tests:\n  - name: a\n    profiles: [TCP_RR]\n  - name: a\n    profiles: [TCP_RR]\n",
			[]string{`plan.yaml:6: tests[1].name: duplicate group name "a" (also tests[0])`}},
		{"duplicate key", "plan.yaml", head + "tests:\n  - profiles: [TCP_RR]\n    samples: 1\n    samples: 2\n",
			[]string{`plan.yaml:6: tests[0].samples: duplicate field "samples" (already set at line 5)`}},
		{"no tests", "plan.yaml", head + "tests: []\n",
			[]string{`plan.yaml:3: tests: the plan has no tests`}},
		{"no profiles", "plan.yaml", head + "tests:\n  - name: empty\n",
			[]string{`plan.yaml:4: tests[0].profiles: no profiles: list at least one here or in defaults (known: TCP_STREAM, TCP_SENDFILE, TCP_MAERTS, UDP_STREAM, TCP_RR, UDP_RR, TCP_CRR, TCP_STREAM_LAT)`}},
		{"missing apiVersion", "plan.yaml", "kind: Plan\ntests:\n  - profiles: [TCP_RR]\n",
			[]string{`plan.yaml:1: apiVersion: missing apiVersion (want "cnperf.dev/v1alpha1")`}},
		{"wrong apiVersion and kind", "plan.yaml", "apiVersion: cnperf.dev/v2\nkind: Run\ntests:\n  - profiles: [TCP_RR]\n",
			[]string{
				`plan.yaml:1: apiVersion: unsupported apiVersion "cnperf.dev/v2" (want "cnperf.dev/v1alpha1")`,
				`plan.yaml:2: kind: unsupported kind "Run" (want "Plan")`}},
		{"cnperf plan without apiVersion", "plan.yaml", "tests:\n  - name: a\n    profiles: [TCP_RR]\n",
			[]string{`plan.yaml:3: this looks like a cnperf plan but has no apiVersion and kind: add apiVersion: cnperf.dev/v1alpha1 and kind: Plan at the top`}},
		{"syntax error", "plan.yaml", head + "tests:\n  - profiles: [TCP_RR\n",
			// yaml.v3 reports the line where the unclosed context began.
			[]string{`plan.yaml:3: YAML syntax error: did not find expected ',' or ']'`}},
		{"two documents", "plan.yaml", head + "tests:\n  - profiles: [TCP_RR]\n---\nfoo: 1\n",
			[]string{`plan.yaml:6: YAML syntax error: a second YAML document (---); a plan file holds one`}},
		{"empty file", "plan.yaml", "# nothing\n", []string{`plan.yaml: file is empty: expected a plan`}},
		{"scalar document", "plan.yaml", "hello\n",
			[]string{`plan.yaml:1: got "hello": expected a cnperf plan (apiVersion: cnperf.dev/v1alpha1, kind: Plan), a k8s-netperf netperf.yml (v1: a mapping of test names; v2: tests: [...]) or a tiger-bench testconfig.yaml (a list of tests with testKind)`}},
		{"all problems at once", "plan.yaml", head + "tests:\n  - profile: [TCP_RR]\n    samples: x\n  - profiles: TCP_RR\n",
			[]string{
				`plan.yaml:4: tests[0].profile: unknown field "profile" (did you mean "profiles"?)`,
				`plan.yaml:5: tests[0].samples: expected an integer, got "x"`,
				`plan.yaml:6: tests[1].profiles: expected a list, got "TCP_RR" (write [TCP_RR])`}},
		{"alias bomb", "plan.yaml", head + "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n" +
			"c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n" +
			"e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n",
			[]string{`plan.yaml:3: a: unknown field "a" (known: apiVersion, kind, metadata, vm, defaults, tests)`,
				`plan.yaml:4: b: unknown field "b" (known: apiVersion, kind, metadata, vm, defaults, tests)`,
				`plan.yaml:5: c: unknown field "c" (known: apiVersion, kind, metadata, vm, defaults, tests)`,
				`plan.yaml:6: d: unknown field "d" (known: apiVersion, kind, metadata, vm, defaults, tests)`,
				`plan.yaml:7: e: unknown field "e" (known: apiVersion, kind, metadata, vm, defaults, tests)`,
				`plan.yaml:8: f: unknown field "f" (known: apiVersion, kind, metadata, vm, defaults, tests)`}},
		{"alias bomb in a list field", "plan.yaml", head + "defaults:\n  drivers: &a [" + strings.Repeat("x, ", 40) + "x]\n" +
			"  paths: &b [" + strings.Repeat("*a, ", 40) + "*a]\n  burst: &c [" + strings.Repeat("*b, ", 40) + "*b]\n" +
			"  parallel: &d [" + strings.Repeat("*c, ", 40) + "*c]\n  profiles: [" + strings.Repeat("*d, ", 40) + "*d]\ntests: []\n",
			nil}, // checked below: stops after a bounded number of problems

		// k8s-netperf: what its pkg/config.validConfig and yaml.v3 refuse (see peers_test.go
		// for the real files).
		{"k8s-netperf v1 missing fields", "netperf.yml", "TCPStream:\n   profile: TCP_STREAM\n   profle: x\n   duration: 0\n",
			[]string{
				`netperf.yml:1: TCPStream.samples: missing samples: k8s-netperf has no default and refuses the file (samples must be > 0)`,
				`netperf.yml:1: TCPStream.messagesize: missing messagesize: k8s-netperf has no default and refuses the file (messagesize must be > 0)`,
				`netperf.yml:1: TCPStream.parallelism: missing parallelism: k8s-netperf has no default and refuses the file (parallelism must be > 0)`,
				`netperf.yml:4: TCPStream.duration: duration must be > 0, got 0 (k8s-netperf refuses it too)`}},
		{"k8s-netperf v1 bad values", "netperf.yml", "TCPStream:\n   profile: TCP_STREAM\n   duration: 0\n   samples: 0\n   messagesize: 1\n   parallelism: 1\n" +
			"RR:\n   profile: TC_RR\n   parallelism: 0\n   duration: 1\n   samples: 1\n   messagesize: 1\n",
			[]string{
				`netperf.yml:3: TCPStream.duration: duration must be > 0, got 0 (k8s-netperf refuses it too)`,
				`netperf.yml:4: TCPStream.samples: samples must be > 0, got 0 (k8s-netperf refuses it too)`,
				`netperf.yml:8: RR.profile: unknown netperf profile "TC_RR" (did you mean "TCP_RR"?): k8s-netperf accepts TCP_STREAM, UDP_STREAM, TCP_RR, UDP_RR, TCP_CRR, TCP_STREAM_LAT, UDP_CRR, SCTP_STREAM, SCTP_RR, SCTP_CRR`,
				`netperf.yml:9: RR.parallelism: parallelism must be > 0, got 0 (k8s-netperf refuses it too)`}},
		{"k8s-netperf v1 wrong type", "netperf.yml", "TCPStream:\n   profile: TCP_STREAM\n   service: sometimes\n   messagesize: big\n   duration: 10s\n   samples: 1\n   parallelism: 1\n",
			[]string{
				`netperf.yml:3: TCPStream.service: expected true or false, got "sometimes"`,
				`netperf.yml:4: TCPStream.messagesize: expected an integer, got "big"`,
				`netperf.yml:5: TCPStream.duration: expected an integer, got "10s"`}},
		{"k8s-netperf v2 nested fields", "netperf.yml", "tests:\n  - A:\n      profile: TCP_RR\n",
			[]string{`netperf.yml:2: tests[0].A: k8s-netperf reads a test's fields beside its name, not under it (write "- A:" and then its fields at the same indentation); as written the test has no profile`}},
		{"k8s-netperf v2 other top-level key not a list", "netperf.yml", "tests:\n  - A:\n    profile: TCP_RR\n    duration: 1\n    samples: 1\n    messagesize: 1\n    parallelism: 1\nextra: 3\n",
			[]string{`netperf.yml:8: extra: expected a list of tests, got "3"`}},
		{"k8s-netperf v1 entry not a mapping", "netperf.yml", "A:\n  profile: TCP_RR\nB: 3\n",
			[]string{`netperf.yml:3: B: a top-level mapping is read as a k8s-netperf netperf.yml (v1), whose entries are tests (a name and its fields), but this entry is "3"; expected a cnperf plan (apiVersion: cnperf.dev/v1alpha1, kind: Plan), a k8s-netperf netperf.yml (v1: a mapping of test names; v2: tests: [...]) or a tiger-bench testconfig.yaml (a list of tests with testKind)`}},
		{"k8s-netperf v1 duplicate names", "netperf.yml", "A:\n  profile: TCP_RR\n  duration: 1\n  samples: 1\n  messagesize: 1\n  parallelism: 1\nA:\n  profile: TCP_CRR\n",
			[]string{`netperf.yml:7: A: duplicate test name "A" (already at line 1)`}},

		// tiger-bench
		{"tiger-bench unknown key and kind", "testconfig.yaml", "- testKind: thruput-latncy\n  numPod: 3\n",
			[]string{
				// numPod: tiger-bench ignores an unknown key; a warning here.
				`testconfig.yaml:1: [0].testKind: unknown testKind "thruput-latncy" (known: none, dnsperf, iperf, thruput-latency, ttfr)`}},
		{"tiger-bench wrong types", "testconfig.yaml", "- testKind: iperf\n  numPods: many\n  Perf:\n    direct: 1\n  TTFRConfig:\n    Rate: fast\n",
			[]string{
				`testconfig.yaml:2: [0].numPods: expected an integer, got "many"`,
				`testconfig.yaml:4: [0].Perf.direct: expected true or false, got "1"`,
				`testconfig.yaml:6: [0].TTFRConfig.Rate: expected a number, got "fast"`}},
		{"tiger-bench external without address", "testconfig.yaml", "- testKind: thruput-latency\n  perf:\n    external: true\n    ControlPort: 620000\n    TestPort: 32001\n",
			[]string{
				`testconfig.yaml:2: [0].perf.ExternalIPOrFQDN: ExternalIPOrFQDN is required for an external thruput-latency test`,
				`testconfig.yaml:2: [0].perf.ControlPort: ControlPort must be between 1 and 65535 for an external thruput-latency test, got 620000`}},
		{"tiger-bench bad encap and duplicate key in another case", "testconfig.yaml", "- testKind: iperf\n  encap: gre\n  Encap: none\n",
			[]string{
				`testconfig.yaml:2: [0].encap: unknown encap "gre" (known: none, vxlan, ipip, or empty to leave the cluster as it is)`,
				`testconfig.yaml:3: [0].Encap: duplicate field "Encap" (already set at line 2)`}},
		{"tiger-bench entry without testKind", "testconfig.yaml", "- testKind: iperf\n- duration: 5\n",
			[]string{`testconfig.yaml:2: [1]: a top-level list is read as a tiger-bench testconfig.yaml, but this entry has no testKind (dnsperf, iperf, thruput-latency or ttfr)`}},
		{"tiger-bench negative", "testconfig.yaml", "- testKind: iperf\n  numPods: -1\n  duration: -5\n",
			[]string{
				`testconfig.yaml:2: [0].numPods: numPods must not be negative, got -1`,
				`testconfig.yaml:3: [0].duration: duration must not be negative, got -5`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := LoadBytes(tt.file, []byte(tt.data))
			if err == nil {
				t.Fatalf("no error; plan %+v", l.Plan)
			}
			var fe *FileErrors
			if !errors.As(err, &fe) {
				t.Fatalf("error %v (%T), want *FileErrors", err, err)
			}
			if tt.want == nil {
				if n := len(fe.Errors); n > 101 || !strings.HasSuffix(err.Error(), "too many problems; stopped here") {
					t.Errorf("%d problems ending %q, want at most 101 ending with the stop", n, fe.Errors[n-1])
				}
				return
			}
			got := strings.Split(err.Error(), "\n")
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			for _, e := range fe.Errors {
				if e.File != tt.file {
					t.Errorf("error %q names file %q", e, e.File)
				}
			}
		})
	}
}

func TestLoadFileNameInErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(path, []byte(head+"tests:\n  - profiles: [TCP_RR]\n    duraton: 5s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	want := path + `:5: tests[0].duraton: unknown field "duraton" (did you mean "duration"?)`
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.yaml")); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v, want a not-exist error", err)
	}
}

// check stands in for internal/driver/all.Check (the drivers are other packages): a driver that runs
// streams only and cannot run parallel flows.
func check(c plan.Case) error {
	switch c.Driver {
	case "streams":
		if !c.Profile.IsStream() {
			return fmt.Errorf("driver %q cannot run profile %s", c.Driver, c.Profile)
		}
		if c.Params.Parallel > 1 {
			return fmt.Errorf("driver %q cannot run parallel flows (parallel %d)", c.Driver, c.Params.Parallel)
		}
		return nil
	case "all":
		return nil
	}
	return fmt.Errorf("unknown driver %q", c.Driver)
}

func TestExpandAnnotatesDriverErrors(t *testing.T) {
	tests := []struct {
		name string
		file string
		data string
		opts plan.Options
		want []string
	}{
		{"cnperf", "plan.yaml", head + "defaults:\n  drivers: [streams]\ntests:\n  - name: a\n    profiles: [TCP_STREAM, TCP_RR]\n    parallel: [1, 2]\n  - profiles: [UDP_STREAM]\n    drivers: [all, nope]\n",
			plan.Options{},
			[]string{
				`plan.yaml:7: tests[0].profiles[1]: driver "streams" cannot run profile TCP_RR`,
				`plan.yaml:8: tests[0].parallel[1]: driver "streams" cannot run parallel flows (parallel 2)`,
				`plan.yaml:10: tests[1].drivers[1]: unknown driver "nope"`}},
		{"k8s-netperf v2 with a default driver", "netperf.yml", "tests:\n  - TCPStream:\n    profile: TCP_STREAM\n    parallelism: 2\n    duration: 1\n    samples: 1\n    messagesize: 1\n" +
			"  - RR:\n    profile: TCP_RR\n    parallelism: 1\n    duration: 1\n    samples: 1\n    messagesize: 1\n",
			plan.Options{DefaultDrivers: []string{"streams"}},
			[]string{
				// TCP_RR is skipped with a warning, as k8s-netperf skips a test its driver does
				// not support.
				`netperf.yml:4: tests[0].parallelism: driver "streams" cannot run parallel flows (parallel 2)`}},
		{"tiger-bench", "testconfig.yaml", "- testKind: iperf\n  duration: 5\n  iterations: 1\n",
			plan.Options{},
			[]string{`testconfig.yaml:1: [0].testKind: unknown driver "iperf3"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := LoadBytes(tt.file, []byte(tt.data))
			if err != nil {
				t.Fatal(err)
			}
			_, err = l.Expand(tt.opts, check)
			if err == nil {
				t.Fatal("no error")
			}
			var pe *plan.FieldErrors
			if !errors.As(err, &pe) {
				t.Errorf("%T does not unwrap to *plan.FieldErrors", err)
			}
			got := strings.Split(err.Error(), "\n")
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestLocate(t *testing.T) {
	l, err := Load(filepath.Join("testdata", "plan.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"tests[1].burst[1]":       "testdata/plan.yaml:23",
		"tests[1].drivers[0]":     "testdata/plan.yaml:21", // not in the file: its group
		"defaults.duration":       "testdata/plan.yaml:9",
		"metadata.labels.cluster": "testdata/plan.yaml:7",
		"":                        "testdata/plan.yaml",
		"nowhere":                 "testdata/plan.yaml",
	} {
		if got := l.Locate(path); got != want {
			t.Errorf("Locate(%q) = %q, want %q", path, got, want)
		}
	}
}

func TestLoadKeepsPlanAndNames(t *testing.T) {
	l, err := Load(filepath.Join("testdata", "plan.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if l.Format != FormatCnperf || l.Plan.Metadata.Name != "baseline" || l.Plan.Metadata.Labels["cluster"] != "lab" {
		t.Errorf("format %q metadata %+v", l.Format, l.Plan.Metadata)
	}
	if len(l.Warnings) != 0 {
		t.Errorf("warnings: %q", l.Warnings)
	}

	v1, err := Load(filepath.Join("testdata", "k8s-netperf-v1-suite.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, g := range v1.Plan.Tests {
		names = append(names, g.Name)
	}
	if want := []string{"UDPStream", "TCPStream8k", "CRRService", "RR"}; !reflect.DeepEqual(names, want) {
		t.Errorf("v1 test order %q, want file order %q", names, want)
	}
	if g := v1.Plan.Tests[2]; g.Service == nil || !*g.Service || len(g.Paths) != 0 {
		t.Errorf("service test: service %v paths %v (want service true and no path: the platform decides)", g.Service, g.Paths)
	}
}

func TestTigerBenchKeepsTests(t *testing.T) {
	l, err := Load(filepath.Join("testdata", "tiger-bench-testconfig.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(l.TigerBench) != 3 {
		t.Fatalf("%d tests, want 3", len(l.TigerBench))
	}
	ttfr := l.TigerBench[2]
	if ttfr.TestKind != "ttfr" || ttfr.TTFRConfig == nil || ttfr.TTFRConfig.Rate != 2.5 || ttfr.TTFRConfig.TestPodsPerNode != 53 ||
		ttfr.TestNamespace != "testns2" || ttfr.NumPolicies != 100 || ttfr.Line != 26 || !ttfr.IterationsSet {
		t.Errorf("ttfr test: %+v %+v", ttfr, ttfr.TTFRConfig)
	}
	first := l.TigerBench[0]
	want := TigerBenchPerfConfig{Direct: true, Service: true, External: true, ControlPort: 32000, TestPort: 32221,
		ExternalIPOrFQDN: "a6c519e4e9d5a46d795e0d41bf82e93f-1429478103.us-west-2.elb.amazonaws.com"}
	if first.Perf == nil || *first.Perf != want || !first.LeaveStandingConfig || first.TestNamespace != "testns" {
		t.Errorf("first test: %+v perf %+v", first, first.Perf)
	}
	second := l.TigerBench[1]
	if second.Perf == nil || *second.Perf != (TigerBenchPerfConfig{Direct: true, Service: true, ControlPort: 32000, TestPort: 32001}) {
		t.Errorf("default Perf %+v", second.Perf)
	}

	l, err = Load(filepath.Join("testdata", "tiger-bench-iperf.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dns := l.TigerBench[3]
	if dns.DNSPerf == nil || dns.DNSPerf.NumDomains != 2 || dns.DNSPerf.Mode != "Inline" || !dns.DNSPerf.TestDNSPolicy ||
		dns.DNSPerf.TargetURL != "http://www.example.com" || dns.Dataplane != "iptables" {
		t.Errorf("dnsperf test: %+v %+v", dns, dns.DNSPerf)
	}
	if l.TigerBench[0].IterationsSet != true || l.TigerBench[1].IterationsSet {
		t.Errorf("IterationsSet: %v %v", l.TigerBench[0].IterationsSet, l.TigerBench[1].IterationsSet)
	}
	if l.TigerBench[1].Duration != 60 {
		t.Errorf("tiger-bench default duration %d, want 60", l.TigerBench[1].Duration)
	}
}

func TestTigerBenchUnknownDNSKeyIsWarning(t *testing.T) {
	l, err := LoadBytes("tc.yaml", []byte("- testKind: iperf\n- testKind: dnsperf\n  DNSPerf:\n    mode: Inline\n    futureKnob: 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := `tc.yaml:5: [1].DNSPerf.futureKnob: unknown field "futureKnob" (known: NumDomains, Mode, RunStress, TestDNSPolicy, TargetURL, TargetDomain, NumTargetPods, TargetType); tiger-bench ignores it, and so does cnperf`
	found := false
	for _, w := range l.Warnings {
		found = found || w == want
	}
	if !found {
		t.Errorf("warnings %q lack %q", l.Warnings, want)
	}
}

func TestMergeKeysAndAnchors(t *testing.T) {
	data := head + "x-common: &common\n  duration: 2s\n  samples: 1\n" // x-common is not a field
	if _, err := LoadBytes("p.yaml", []byte(data+"tests:\n  - profiles: [TCP_RR]\n")); err == nil {
		t.Fatal("an unknown top-level key was accepted")
	}
	data = head + "defaults: &d\n  duration: 2s\n  samples: 1\ntests:\n  - <<: *d\n    name: a\n    samples: 4\n    profiles: [TCP_RR]\n"
	l, err := LoadBytes("p.yaml", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	g := l.Plan.Tests[0]
	if g.Duration != "2s" || g.Samples == nil || *g.Samples != 4 || g.Name != "a" {
		t.Errorf("merged group %+v", g)
	}
	if got := l.Locate("tests[0].samples"); got != "p.yaml:9" {
		t.Errorf("Locate(samples) = %s, want the explicit key's line 9", got)
	}
	if got := l.Locate("tests[0].duration"); got != "p.yaml:4" {
		t.Errorf("Locate(duration) = %s, want the merged key's line 4", got)
	}
}

func TestLoadedExpandDefaultsFromOptions(t *testing.T) {
	l, err := Load(filepath.Join("testdata", "k8s-netperf-v2.yml"))
	if err != nil {
		t.Fatal(err)
	}
	cases, err := l.Expand(plan.Options{DefaultPaths: []api.Path{""}, DefaultDrivers: []string{"all"}}, check)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 1 || cases[0].Path != "" || cases[0].Driver != "all" || cases[0].Name != "TCPStream" {
		t.Errorf("cases %+v", cases)
	}
}

// A merge-key "billion laughs": every level merges the one below ten times. Merged keys are
// deduplicated and each mapping's entries are computed once, so this decodes in linear time.
func TestMergeKeyBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString(head + "a: &a {k0: 1, k1: 1, k2: 1}\n")
	prev := "a"
	for _, name := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		fmt.Fprintf(&b, "%s: &%s {<<: [%s]}\n", name, name, strings.TrimSuffix(strings.Repeat("*"+prev+", ", 10), ", "))
		prev = name
	}
	b.WriteString("tests:\n  - <<: [" + strings.TrimSuffix(strings.Repeat("*i, ", 10), ", ") + "]\n    profiles: [TCP_RR]\n")
	_, err := LoadBytes("m.yaml", []byte(b.String()))
	var fe *FileErrors
	if !errors.As(err, &fe) {
		t.Fatalf("error %v", err)
	}
	// 9 unknown top-level keys (a..i) and the 3 merged keys in tests[0], each once.
	n := 0
	for _, e := range fe.Errors {
		if strings.HasPrefix(e.Field, "tests[0].k") {
			n++
		}
	}
	if len(fe.Errors) != 12 || n != 3 {
		t.Errorf("%d errors:\n%v", len(fe.Errors), err)
	}
}

// TestSchedule: the file's format picks how it runs, here and nowhere else.
func TestSchedule(t *testing.T) {
	for _, tc := range []struct {
		file string
		want Schedule
	}{
		{"plan.yaml", ScheduleCases},
		{"k8s-netperf-v1.yml", ScheduleCases},
		{"k8s-netperf-v2.yml", ScheduleCases},
		{"tiger-bench-testconfig.yaml", ScheduleTigerBench},
		{"tiger-bench-iperf.yaml", ScheduleTigerBench},
	} {
		l, err := Load(filepath.Join("testdata", tc.file))
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if got := l.Schedule(); got != tc.want || got.NeedsCluster() != (tc.want == ScheduleTigerBench) {
			t.Errorf("%s: schedule %d (needs a cluster: %t), want %d", tc.file, got, got.NeedsCluster(), tc.want)
		}
	}
	var flags *Loaded // a plan from flags
	if flags.Schedule() != ScheduleCases {
		t.Error("a plan from flags does not run its cases")
	}
}

// k8s-netperf's --bridge (or --macvlan) on its own netperf.yml: the tests that dial the server
// pod go on the secondary network, CRRService (service: True) through its ClusterIP on the
// cluster's own network, as k8s-netperf runs them (executeWorkload takes the ClusterIP first),
// instead of the whole file being refused.
func TestK8sNetperfNetworkSparesServiceTests(t *testing.T) {
	l, err := Load(filepath.Join("testdata", "peers", "k8s-netperf", "netperf.yml@ac9aa31e55b7.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := ApplyOverrides(l.Plan, FlagValues{Network: "multus-e2e/e2e-bridge"}, func(n string) bool { return n == FlagNetwork }); err != nil {
		t.Fatal(err)
	}
	cases, err := l.Expand(plan.Options{DefaultPaths: []api.Path{""}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	services := 0
	for _, c := range cases {
		want := "multus-e2e/e2e-bridge"
		if c.Params.Service || c.Params.HostNetwork {
			want = ""
			services++
		}
		if c.Params.Network != want {
			t.Errorf("%s (service %v): network %q, want %q", c.Name, c.Params.Service, c.Params.Network, want)
		}
	}
	if services == 0 || len(cases) < 2 {
		t.Fatalf("%d cases, %d through a Service: the file has both kinds", len(cases), services)
	}
}
