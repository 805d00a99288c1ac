package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/app"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/iostreams"
	"github.com/cnperf/cnperf/internal/selfexec"
	"github.com/cnperf/cnperf/internal/testport"
	"github.com/cnperf/cnperf/internal/text"
)

// The local platform starts "cnperf agent ..." by re-executing this test binary.
func TestMain(m *testing.M) {
	selfexec.MaybeRun()
	os.Exit(m.Run())
}

type result struct {
	stdout, stderr string
	err            error
}

func run(t *testing.T, ctx context.Context, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	err := app.Run(ctx, iostreams.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errb}, args)
	return result{out.String(), errb.String(), err}
}

func decodeRun(t *testing.T, s string) *api.Run {
	t.Helper()
	var r api.Run
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		t.Fatalf("stdout is not a JSON run: %v\n%s", err, s)
	}
	return &r
}

func TestRunJSONStreamSummary(t *testing.T) {
	r := run(t, context.Background(), "run", "--platform", "local", "-o", "json", "--no-progress",
		"--profile", "TCP_STREAM", "--duration", "1s", "--samples", "3")
	if r.err != nil {
		t.Fatalf("run failed: %v\nstderr:\n%s", r.err, r.stderr)
	}
	got := decodeRun(t, r.stdout)
	if len(got.Results) != 1 {
		t.Fatalf("want 1 result, got %d", len(got.Results))
	}
	s := got.Results[0].Summary.ThroughputBitsPerSecond
	if s == nil {
		t.Fatalf("no throughput summary: %+v", got.Results[0].Summary)
	}
	if s.N != 3 || s.Mean <= 0 || s.CI95Low > s.Mean || s.Mean > s.CI95High {
		t.Fatalf("throughput summary: %+v", s)
	}
	if got.UUID == "" || got.CnperfVersion == "" || got.Host == nil || got.Platform != "local" {
		t.Fatalf("run metadata missing: %+v", got)
	}
}

func TestPlanErrorsExit2BeforeRunning(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, plan, want string
	}{
		{"unknown field", "apiVersion: cnperf.dev/v1alpha1\nkind: Plan\ntests:\n  - name: a\n    profiles: [TCP_STREAM]\n    speed: 3\n", "plan.yaml:6"},
		{"made-up profile", "apiVersion: cnperf.dev/v1alpha1\nkind: Plan\ntests:\n  - name: a\n    drivers: [native]\n    profiles: [TCP_STREAM, TCP_WARP]\n", "plan.yaml:6"},
		{"bad duration", "apiVersion: cnperf.dev/v1alpha1\nkind: Plan\ntests:\n  - name: a\n    profiles: [TCP_RR]\n    duration: soon\n", "plan.yaml:6"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "plan.yaml")
			if err := os.WriteFile(path, []byte(tc.plan), 0o644); err != nil {
				t.Fatal(err)
			}
			r := run(t, context.Background(), "run", "--platform", "local", "-c", path, "--no-progress")
			if code := exit.Code(r.err); code != exit.BadInput {
				t.Fatalf("exit code %d, want 2; err=%v", code, r.err)
			}
			if !strings.Contains(r.err.Error(), tc.want) {
				t.Fatalf("error does not name %s: %v", tc.want, r.err)
			}
			if text.ContainsFolded(r.stderr, "started native server") || r.stdout != "" {
				t.Fatalf("something ran: stdout=%q stderr=%q", r.stdout, r.stderr)
			}
		})
	}
}

func TestBadFlagExit2(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--no-such-flag"},
		{"run", "--platform", "local", "--duration", "abc", "--profile", "TCP_RR"},
		{"run", "--platform", "mars"},
		{"nosuchcommand"},
	} {
		r := run(t, context.Background(), args...)
		if code := exit.Code(r.err); code != exit.BadInput {
			t.Errorf("%v: exit code %d, want 2 (err %v)", args, code, r.err)
		}
	}
}

func TestNoServerIsAFailedSampleNotAZero(t *testing.T) {
	port := testport.Free(t)
	r := run(t, context.Background(), "run", "--platform", "local", "-o", "json", "--no-progress",
		"--path", "external-service", "--external", "127.0.0.1:"+strconv.Itoa(port),
		"--profile", "TCP_STREAM", "--duration", "1s", "--samples", "2")
	if code := exit.Code(r.err); code != exit.Failed {
		t.Fatalf("exit code %d, want 1; err=%v\n%s", code, r.err, r.stderr)
	}
	got := decodeRun(t, r.stdout)
	if len(got.Results) != 1 {
		t.Fatalf("want 1 result, got %d", len(got.Results))
	}
	res := got.Results[0]
	if res.Summary.SamplesFailed != 2 || res.Summary.ThroughputBitsPerSecond != nil {
		t.Fatalf("summary should have 2 failed samples and no throughput: %+v", res.Summary)
	}
	for _, s := range res.Samples {
		if s.Error == "" || s.ThroughputBitsPerSecond != nil {
			t.Fatalf("sample should carry an error and no figures: %+v", s)
		}
		if !strings.Contains(strings.ToLower(s.Error), "refused") {
			t.Errorf("sample error does not give the cause: %q", s.Error)
		}
	}
}

func TestInterruptKeepsFinishedCases(t *testing.T) {
	results := filepath.Join(t.TempDir(), "run.jsonl")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan result, 1)
	go func() {
		done <- run(t, ctx, "run", "--platform", "local", "-o", "json", "--no-progress", "--results", results,
			"--profile", "TCP_STREAM,TCP_RR,UDP_STREAM", "--duration", "1s", "--samples", "2")
	}()
	// Interrupt once the first case is in the results file.
	deadline := time.Now().Add(60 * time.Second)
	for {
		b, _ := os.ReadFile(results)
		if bytes.Count(b, []byte(`"type":"result"`)) >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no case finished within 60s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	r := <-done
	if code := exit.Code(r.err); code != exit.Failed {
		t.Fatalf("exit code %d, want 1; err=%v", code, r.err)
	}
	rep := run(t, context.Background(), "report", "-o", "json", results)
	if rep.err != nil {
		t.Fatalf("report of the interrupted run failed: %v\n%s", rep.err, rep.stderr)
	}
	got := decodeRun(t, rep.stdout)
	if len(got.Results) < 1 || len(got.Results) > 3 {
		t.Fatalf("want the finished cases, got %d", len(got.Results))
	}
	if got.Results[0].Profile != api.TCPStream || got.Results[0].Summary.ThroughputBitsPerSecond == nil {
		t.Fatalf("first finished case lost: %+v", got.Results[0])
	}
	tab := run(t, context.Background(), "report", results)
	if tab.err != nil || !strings.Contains(tab.stdout, "TCP_STREAM") {
		t.Fatalf("table report: %v\n%s", tab.err, tab.stdout)
	}
}

func TestNetperfV2ExampleRunsLocally(t *testing.T) {
	// The v2 example of k8s-netperf's README (seed 000), durations shortened by flag.
	cfg := `tests :
  - TCPStream:
    parallelism: 1
    profile: "TCP_STREAM"
    duration: 3
    samples: 1
    messagesize: 1024
    burst: 1
    service: false
  - TCPRRSvc:
    parallelism: 1
    profile: "TCP_RR"
    duration: 3
    samples: 1
    messagesize: 1024
    service: true
`
	path := filepath.Join(t.TempDir(), "netperf.yml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, context.Background(), "run", "--platform", "local", "-c", path, "-o", "json", "--no-progress", "--duration", "1s")
	if r.err != nil {
		t.Fatalf("run failed: %v\n%s", r.err, r.stderr)
	}
	got := decodeRun(t, r.stdout)
	if len(got.Results) != 2 || got.Results[0].Name != "TCPStream" || got.Results[1].Name != "TCPRRSvc" {
		t.Fatalf("want TCPStream then TCPRRSvc, got %+v", got.Results)
	}
	if !text.ContainsFolded(r.stderr, `"service"`) || !text.ContainsFolded(r.stderr, "not applicable") {
		t.Fatalf("stderr should say service is not applicable:\n%s", r.stderr)
	}
}

// TestDryRun: --dry-run prints the cases of a plan in any format and runs nothing; no
// cluster is needed even for the kube platform (it gets no client).
func TestDryRun(t *testing.T) {
	k8s := filepath.Join("..", "config", "testdata", "k8s-netperf-v2-suite.yml")
	tb := filepath.Join("..", "config", "testdata", "tiger-bench-testconfig.yaml")
	tests := []struct {
		name     string
		args     []string
		code     int
		stdout   []string // substrings, in order
		stderr   string
		jsonCase int // with -o json: the number of cases, -1 otherwise
	}{
		{"default suite", []string{"--platform", "local"}, 0,
			[]string{"platform: local", "1  default  TCP_STREAM  native  loopback  131072", "200ms   3-8 until ±5% at 95%", "5 cases, at least 16s of measurement"}, "", -1},
		{"k8s-netperf on kube without a cluster", []string{"--platform", "kube", "-c", k8s}, 0,
			[]string{"platform: kube", "UDPStreamService  UDP_STREAM  netperf  pod-pod-cross-node", "RR                TCP_RR      netperf  pod-pod-cross-node  1      1    4"},
			"tests[3].profile: skipped, as k8s-netperf skips a test its driver does not support:\n" +
				`  driver "netperf" cannot run profile TCP_STREAM_LAT`, -1},
		{"k8s-netperf json", []string{"--platform", "local", "-c", k8s, "-o", "json"}, 0, nil, "", 3},
		{"tiger-bench", []string{"-c", tb}, 0, []string{"platform: kube", "thruput-latency-1", "qperf"}, "", -1},
		{"limit", []string{"--platform", "local", "--parallel", "300"}, exit.BadInput, nil, "", -1},
		{"unknown option", []string{"--platform", "local", "--option", "zerocpy=1"}, exit.BadInput, nil, "", -1},
		{"format", []string{"--platform", "local", "-o", "csv"}, exit.BadInput, nil, "", -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, context.Background(), append([]string{"run", "--dry-run"}, tt.args...)...)
			if code := exit.Code(r.err); code != tt.code {
				t.Fatalf("exit code %d, want %d; err=%v\nstderr:\n%s", code, tt.code, r.err, r.stderr)
			}
			if text.ContainsFolded(r.stderr, "started") {
				t.Errorf("something started: %s", r.stderr)
			}
			rest := r.stdout
			for _, want := range tt.stdout {
				i := strings.Index(rest, want)
				if i < 0 {
					t.Fatalf("stdout lacks %q (in order):\n%s", want, r.stdout)
				}
				rest = rest[i+len(want):]
			}
			if !text.ContainsFolded(r.stderr, tt.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.stderr, r.stderr)
			}
			if tt.jsonCase >= 0 {
				var cases []map[string]any
				if err := json.Unmarshal([]byte(r.stdout), &cases); err != nil || len(cases) != tt.jsonCase {
					t.Fatalf("want a JSON array of %d cases, got %d (%v):\n%s", tt.jsonCase, len(cases), err, r.stdout)
				}
				if cases[0]["profile"] != "UDP_STREAM" || cases[0]["driver"] != "netperf" || cases[0]["platform"] != "local" {
					t.Errorf("first case %v", cases[0])
				}
			}
		})
	}
}

// TestVerboseQuiet: -q leaves only errors on stderr (no progress, no lines of the platform),
// the default shows them, -v adds debug lines; -v and -q together are bad usage.
func TestVerboseQuiet(t *testing.T) {
	args := []string{"run", "--platform", "local", "--path", "loopback", "--driver", "native", "--profile", "TCP_RR",
		"--duration", "1s", "--warmup", "0s", "--samples", "1", "-o", "json"}
	def := run(t, context.Background(), args...)
	if def.err != nil || !text.ContainsFolded(def.stderr, "started native server") || text.ContainsFolded(def.stderr, "debug:") {
		t.Errorf("default: err %v, stderr:\n%s", def.err, def.stderr)
	}
	q := run(t, context.Background(), append([]string{"-q"}, args...)...)
	if q.err != nil || q.stderr != "" {
		t.Errorf("-q: err %v, stderr:\n%s", q.err, q.stderr)
	}
	if decodeRun(t, q.stdout).Results[0].Summary.TransactionsPerSecond == nil {
		t.Errorf("-q: no figures in the run:\n%s", q.stdout)
	}
	v := run(t, context.Background(), append(args, "--dry-run", "--verbose")...)
	if v.err != nil || !text.ContainsFolded(v.stderr, `debug: case name=`) {
		t.Errorf("-v: err %v, stderr:\n%s", v.err, v.stderr)
	}
	if r := run(t, context.Background(), "-v", "-q", "version"); exit.Code(r.err) != exit.BadInput {
		t.Errorf("-v -q: err %v, want bad usage", r.err)
	}
}

// TestOutputErrorsOneWording: every command that takes -o refuses an unknown format with the
// one usage error of internal/report.UnknownFormat (kubectl's words), before anything runs;
// run, import and report once said "unknown output format", the dry-runs "--dry-run prints",
// version "want json or yaml".
func TestOutputErrorsOneWording(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	saved := "../changepoint/testdata/real-loopback.json"
	const registry = "table,wide,json,yaml,csv,k8s-netperf-csv,k8s-netperf-loss-csv,prometheus,perfdash,html,junit,tiger-bench"
	for _, tc := range []struct {
		args        []string
		value, rest string // the -o value; what follows "allowed formats"
	}{
		{[]string{"run", "--platform", "local"}, "bogus", " are: " + registry},
		{[]string{"run", "--platform", "local", "--dry-run"}, "csv", " with --dry-run are: table,wide,json,yaml"},
		{[]string{"import", "--driver", "iperf3", saved}, "bogus", " are: " + registry},
		{[]string{"report", saved}, "jsn", " are: " + registry + `,mesh-csv,mesh-cells-csv (did you mean "json"?)`},
		{[]string{"compare", saved, saved}, "bogus", " are: table,wide,markdown,json"},
		{[]string{"trend", saved, saved, saved}, "bogus", " are: table,json,yaml,html"},
		{[]string{"mesh"}, "bogus", " are: table,csv,cells,json,yaml"},
		{[]string{"mesh", "--dry-run"}, "csv", " with --dry-run are: table,json,yaml"},
		{[]string{"programming"}, "bogus", " are: table,json,yaml"},
		{[]string{"version"}, "yml", ` are: json,yaml (did you mean "yaml"?)`},
		{[]string{"lab", "list"}, "bogus", " are: table,json,yaml"},
		{[]string{"load", "status"}, "bogus", " are: text,json"},
	} {
		r := run(t, context.Background(), append(tc.args, "-o", tc.value)...)
		want := `unable to match a printer suitable for the output format "` + tc.value + `", allowed formats` + tc.rest
		if code := exit.Code(r.err); code != exit.BadInput || r.err.Error() != want {
			t.Errorf("%v -o %s: exit %d, err %v\nwant exit 2 and %s", tc.args, tc.value, code, r.err, want)
		}
		if r.stdout != "" {
			t.Errorf("%v -o %s printed %q", tc.args, tc.value, r.stdout)
		}
	}
}
