package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cnperf/cnperf/internal/plan"
)

// FuzzLoadBytes feeds arbitrary bytes to the loader. It must never panic, must return either a
// plan that expands or a *FileErrors naming the file, and must stay fast on hostile input.
// Seeds: every file in testdata plus small fragments of each format.
func FuzzLoadBytes(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.y*ml"))
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		head + "tests:\n  - profiles: [TCP_RR]\n",
		head + "defaults: &d {duration: 1s}\ntests:\n  - <<: *d\n    profiles: [UDP_STREAM]\n    messageSizes: [70000]\n",
		"tests:\n- A:\n  profile: TCP_RR\n  burst: 3\n",
		"A: {profile: tcp_crr, duration: 1}\n",
		"- testKind: iperf\n  Perf: {external: true, TestPort: 1, ExternalIPOrFQDN: x}\n",
		"- {testkind: ttfr, ttfrconfig: {rate: 1.5}}\n",
		"a: &a [*a]\n", "[", "{", "- - -", "? a\n: b\n", "!!binary AAAA", "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkLoad(t, data, "") })
}

// FuzzK8sNetperf and FuzzTigerBench reach the peers' readers with any input (detection
// skipped), seeded with the peers' real files (testdata: k8s-netperf's netperf.yml v1/v2 and
// suites, tiger-bench's testconfig files).
func FuzzK8sNetperf(f *testing.F) {
	seedFiles(f, "k8s-netperf-*.yml")
	f.Fuzz(func(t *testing.T, data []byte, v2 bool) {
		format := FormatK8sNetperfV1
		if v2 {
			format = FormatK8sNetperfV2
		}
		checkLoad(t, data, format)
	})
}

func FuzzTigerBench(f *testing.F) {
	seedFiles(f, "tiger-bench-*.yaml")
	f.Fuzz(func(t *testing.T, data []byte, _ bool) { checkLoad(t, data, FormatTigerBench) })
}

func seedFiles(f *testing.F, pattern string) {
	files, _ := filepath.Glob(filepath.Join("testdata", pattern))
	if len(files) == 0 {
		f.Fatalf("no seed files %s", pattern)
	}
	for i, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, i%2 == 0)
	}
}

// checkLoad is the contract of the loader on any input.
func checkLoad(t *testing.T, data []byte, format string) {
	{
		l, err := loadBytes("fuzz.yaml", data, format)
		if err != nil {
			var fe *FileErrors
			if !errors.As(err, &fe) || len(fe.Errors) == 0 {
				t.Fatalf("error %v (%T) is not a non-empty *FileErrors", err, err)
			}
			for _, e := range fe.Errors {
				if e.File != "fuzz.yaml" || e.Line < 0 || e.Message == "" {
					t.Fatalf("bad error item %+v", e)
				}
			}
			return
		}
		if l.Plan == nil {
			t.Fatal("nil plan without an error")
		}
		// Load validated the values: expansion without driver checks must succeed.
		cases, err := l.Expand(plan.Options{}, nil)
		if err != nil {
			t.Fatalf("Load accepted a plan that does not expand: %v", err)
		}
		for _, c := range cases {
			p := c.Params
			if p.DurationSeconds <= 0 || p.Samples < 1 || p.Parallel < 1 || p.Burst < 0 ||
				p.MessageSizeBytes < 1 || p.MessageSizeBytes > plan.MaxMessageSizeBytes {
				t.Fatalf("case with invalid params: %+v", c)
			}
		}
	}
}
