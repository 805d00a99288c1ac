package importcmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/iostreams"
	"github.com/cnperf/cnperf/internal/runfile"
	"github.com/cnperf/cnperf/internal/runner"
)

// Fixtures: real iperf3/qperf/sockperf/netperf/uperf captures.
const drivers = "../../driver"

func fx(parts ...string) string { return filepath.Join(append([]string{drivers}, parts...)...) }

// own is a capture of import's own (testdata/tools/capture.sh import).
func own(name string) string { return filepath.Join("testdata", "captured", name) }

func execute(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	c := NewCommand(iostreams.Streams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut})
	c.SetArgs(args)
	c.SetOut(&errOut)
	c.SetErr(&errOut)
	c.SilenceUsage = true
	c.SilenceErrors = true
	err := c.Execute()
	return out.String(), errOut.String(), err
}

func decode(t *testing.T, s string) api.Run {
	t.Helper()
	var runs []api.Run
	if err := json.Unmarshal([]byte(s), &runs); err != nil {
		var r api.Run
		if err2 := json.Unmarshal([]byte(s), &r); err2 != nil {
			t.Fatalf("output is not a run: %v\n%s", err, s)
		}
		return r
	}
	if len(runs) != 1 {
		t.Fatalf("%d runs", len(runs))
	}
	return runs[0]
}

func TestImportIperf3GroupsRunsOfOneTest(t *testing.T) {
	a, a2 := own("iperf3_tcp_stream_1.stdout"), own("iperf3_tcp_stream_2.stdout")
	b := fx("iperf3", "testdata", "captured", "udp_stream.stdout")
	out, _, err := execute(t, "", "--driver", "iperf3", "--path", "pod-pod-cross-node", "--label", "cni=calico", a, a2, b)
	if err != nil {
		t.Fatal(err)
	}
	run := decode(t, out)
	if !run.Imported || run.Platform != "imported" || run.UUID == "" || run.Kind != api.KindRun || run.Labels["cni"] != "calico" {
		t.Errorf("run header: %+v", run)
	}
	if len(run.Results) != 2 {
		t.Fatalf("%d results", len(run.Results))
	}
	r := run.Results[0]
	if r.Profile != api.TCPStream || r.Driver != "iperf3" || r.Path != api.PathPodPodCrossNode || len(r.Samples) != 2 || r.Params.Samples != 2 ||
		r.Samples[1].Index != 1 {
		t.Errorf("result 0: %+v", r)
	}
	// The summary is computed like a run's: two samples, in file order.
	want := (*r.Samples[0].ThroughputBitsPerSecond + *r.Samples[1].ThroughputBitsPerSecond) / 2
	if r.Summary.ThroughputBitsPerSecond == nil || r.Summary.ThroughputBitsPerSecond.N != 2 ||
		math.Abs(r.Summary.ThroughputBitsPerSecond.Mean-want) > 1e-6*want || r.Summary.ThroughputBitsPerSecond.CoV == 0 {
		t.Errorf("summary %+v", r.Summary.ThroughputBitsPerSecond)
	}
	if run.Results[1].Profile != api.UDPStream || run.Results[1].Summary.LossPercent == nil {
		t.Errorf("result 1: %+v", run.Results[1])
	}
	if r.Samples[0].Raw == "" && len(mustRead(t, a)) <= runner.MaxRawBytes {
		t.Error("raw output not kept")
	}
}

func mustRead(t *testing.T, p string) []byte {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestImportWritesAResultsFileReportCanRead(t *testing.T) {
	dir := t.TempDir()
	res := filepath.Join(dir, "imported.jsonl")
	_, _, err := execute(t, "", "--driver", "sockperf", "--results", res, "-o", "table",
		fx("sockperf", "testdata", "captured", "pp_tcp_m64_fullrtt.stdout"))
	if err != nil {
		t.Fatal(err)
	}
	runs, err := runfile.Read(res)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || !runs[0].Imported || len(runs[0].Results) != 1 || runs[0].Results[0].Summary.LatencyMicroseconds == nil {
		t.Errorf("read back: %+v", runs)
	}
}

func TestImportNetperfNeedsTheProfileWithoutBanner(t *testing.T) {
	// Mizar's -o CSV has its banner: the profile is known.
	out, _, err := execute(t, "", "--driver", "netperf", fx("netperf", "testdata", "captured", "mizar_csv.stdout"))
	if err != nil {
		t.Fatal(err)
	}
	if r := decode(t, out).Results[0]; r.Profile != api.TCPRR || r.Summary.TransactionsPerSecond.Mean != 126655.994 {
		t.Errorf("%+v", r)
	}
	// Keyval without banner, PROTOCOL or DIRECTION, from stdin: --profile is needed.
	kv := "THROUGHPUT=10479.12\nTHROUGHPUT_UNITS=Trans/s\nTRANSACTION_RATE=10479.123\nMEAN_LATENCY=95.30\nELAPSED_TIME=10.00\n"
	_, _, err = execute(t, kv, "--driver", "netperf", "-")
	var ue *exit.UsageError
	if err == nil || !errors.As(err, &ue) || !strings.Contains(err.Error(), "give the profile") {
		t.Errorf("no profile: %v", err)
	}
	out, _, err = execute(t, kv, "--driver", "netperf", "--profile", "udp_rr", "-")
	if err != nil {
		t.Fatal(err)
	}
	if r := decode(t, out).Results[0]; r.Profile != api.UDPRR || !strings.Contains(strings.Join(r.Samples[0].Notes, ";"), "imported from (stdin)") {
		t.Errorf("%+v", r)
	}
}

func TestImportFailures(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--driver", "iperf3", fx("iperf3", "testdata", "captured", "refused.stdout")}, "unable to connect to server: Connection refused"},
		{[]string{"--driver", "qperf", fx("qperf", "testdata", "captured", "garbage.stdout")}, "no qperf test report found"},
		{[]string{"--driver", "iperf3", "/nonexistent/file.json"}, "no such file"},
		{[]string{"--driver", "frobperf", "x"}, "unknown driver"},
		{[]string{"--driver", "iperf3", "--profile", "TCP_RR", fx("iperf3", "testdata", "captured", "tcp_stream.stdout")}, "not TCP_RR"},
		{[]string{"--driver", "iperf3", "--profile", "TCP_NOPE", "x"}, "unknown profile"},
		{[]string{"--driver", "iperf3", "--path", "moon", "x"}, "unknown path"},
		{[]string{"--driver", "iperf3", "--path", "lopback", "x"}, `did you mean "loopback"?`},
		{[]string{"--driver", "iperf3", "-o", "xml", "x"}, `output format "xml", allowed formats are:`},
	}
	for _, tt := range tests {
		_, _, err := execute(t, "", tt.args...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: %v, want %q", tt.args, err, tt.want)
			continue
		}
		if exit.Code(err) != exit.BadInput {
			t.Errorf("%v: exit code %d, want 2", tt.args, exit.Code(err))
		}
	}
	if _, _, err := execute(t, "", fx("iperf3", "testdata", "captured", "tcp_stream.stdout")); err == nil || !strings.Contains(err.Error(), "driver") {
		t.Errorf("missing --driver: %v", err)
	}
}

func TestImportEveryDriver(t *testing.T) {
	for drv, file := range map[string]string{
		"iperf3":   fx("iperf3", "testdata", "captured", "tcp_maerts.stdout"),
		"qperf":    fx("qperf", "testdata", "captured", "udp_lat_m64.stdout"),
		"sockperf": fx("sockperf", "testdata", "captured", "tp_udp_m1400.stdout"),
		"netperf":  fx("netperf", "testdata", "captured", "classic_tcp_rr_cpu.stdout"),
		"uperf":    fx("uperf", "testdata", "captured", "default_tcp_rr_nprocs.stdout"),
	} {
		out, _, err := execute(t, "", "--driver", drv, file)
		if err != nil {
			t.Errorf("%s: %v", drv, err)
			continue
		}
		run := decode(t, out)
		if len(run.Results) != 1 || run.Results[0].Summary.SamplesTotal != 1 || run.Results[0].Summary.SamplesFailed != 0 {
			t.Errorf("%s: %+v", drv, run.Results)
		}
	}
}

// TestImportEdges (issue 28, finding 10): the same output given twice is refused (it counted
// as a second sample: "3/3, CoV 0.0 %"); iperf3's own report of a failed run (unable to
// connect) is one failed sample with its cause instead of failing the whole import; netperf's
// "Elapsed 0.00" (-l -1) is refused with the reason. Real captures
// (testdata/tools/capture.sh import).
func TestImportEdges(t *testing.T) {
	a, a2, refused := own("iperf3_tcp_stream_1.stdout"), own("iperf3_tcp_stream_2.stdout"), own("iperf3_refused.stdout")
	copyOfA := filepath.Join(t.TempDir(), "copy.json")
	if err := os.WriteFile(copyOfA, mustRead(t, a), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"same file three times", []string{"--driver", "iperf3", a, a, a}, "has the same content as " + a},
		{"same content, two names", []string{"--driver", "iperf3", a, a2, copyOfA}, copyOfA + " has the same content as " + a},
		{"netperf elapsed 0.00", []string{"--driver", "netperf", own("netperf_tcp_stream_elapsed0.stdout")}, "elapsed time 0 s: the test measured nothing"},
		{"netperf RR elapsed 0.00", []string{"--driver", "netperf", own("netperf_tcp_rr_elapsed0.stdout")}, "elapsed time 0 s: the test measured nothing"},
		{"a failed run alone names no test", []string{"--driver", "iperf3", refused}, "give --profile"},
		{"a failed run among two tests", []string{"--driver", "iperf3", a, fx("iperf3", "testdata", "captured", "udp_stream.stdout"), refused},
			"the import has 2 tests it could belong to"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := execute(t, "", c.args...)
			if err == nil || !strings.Contains(err.Error(), c.want) || exit.Code(err) != exit.BadInput {
				t.Errorf("err %v (exit %d), want %q and exit 2", err, exit.Code(err), c.want)
			}
		})
	}

	// A refused run among the runs of its test: a failed sample with the cause, the others summarised.
	out, _, err := execute(t, "", "--driver", "iperf3", a, refused, a2)
	if err != nil {
		t.Fatal(err)
	}
	run := decode(t, out)
	if len(run.Results) != 1 {
		t.Fatalf("%d results", len(run.Results))
	}
	r := run.Results[0]
	if len(r.Samples) != 3 || r.Summary.SamplesTotal != 3 || r.Summary.SamplesFailed != 1 || r.Error != "" ||
		r.Summary.ThroughputBitsPerSecond == nil || r.Summary.ThroughputBitsPerSecond.N != 2 {
		t.Fatalf("result: %d samples, summary %+v, error %q", len(r.Samples), r.Summary, r.Error)
	}
	if s := r.Samples[2]; s.Error != "iperf3: unable to connect to server: Connection refused" || s.ThroughputBitsPerSecond != nil ||
		!strings.Contains(s.Raw, `"error"`) {
		t.Errorf("failed sample: %+v", s)
	}
	// Alone with --profile: a case whose every sample failed, with the cause.
	out, _, err = execute(t, "", "--driver", "iperf3", "--profile", "TCP_STREAM", refused)
	if err != nil {
		t.Fatal(err)
	}
	run = decode(t, out)
	if len(run.Results) != 1 || run.Results[0].Profile != api.TCPStream ||
		run.Results[0].Error != "all 1 samples failed; first: iperf3: unable to connect to server: Connection refused" {
		t.Errorf("results: %+v", run.Results)
	}
}
