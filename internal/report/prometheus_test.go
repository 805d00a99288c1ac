package report

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/report/reporttest"
)

// promCaptures are real results files of this machine's lab and the metrics they give
// (testdata/prometheus-NAME.golden).
var promCaptures = []struct{ name, file string }{
	{"lab", "real-lab-run.jsonl"},            // one run: streams and RR, four drivers, topologies
	{"labelled", "real-labelled-runs.jsonl"}, // three runs with --label, an interrupted case
}

func TestPrometheusGolden(t *testing.T) {
	for _, c := range promCaptures {
		t.Run(c.name, func(t *testing.T) {
			reporttest.Golden(t, "prometheus-"+c.name+".golden", encode(t, "prometheus", readTestRuns(t, c.file)...))
		})
	}
}

// TestPrometheusPromtool runs Debian's promtool (package prometheus) on the metrics of the
// real captures and of the fixture: the exposition format parses and the names pass its lint
// (base units, HELP, no reserved suffixes).
func TestPrometheusPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool is not installed (Debian package prometheus; .ci/install-deps.sh installs it)")
	}
	inputs := map[string][]*api.Run{"fixture": {reporttest.Run()}}
	for _, c := range promCaptures {
		inputs[c.name] = readTestRuns(t, c.file)
	}
	for name, runs := range inputs {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(promtool, "check", "metrics")
			cmd.Stdin = bytes.NewReader(encode(t, "prometheus", runs...))
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("promtool check metrics: %v\n%s", err, out)
			}
		})
	}
}

// TestPrometheusFailedCaseHasNoFigure: a failed case is cnperf_case_failed 1 and no figure
// of it is written, so nothing reads as a 0 measurement, even when its summary kept the
// figures of the samples before it was cut (the interrupted case of the real labelled runs);
// a case with some failed samples keeps its figures and counts its failures.
func TestPrometheusFailedCaseHasNoFigure(t *testing.T) {
	runs := append([]*api.Run{reporttest.Run()}, readTestRuns(t, "real-labelled-runs.jsonl")...)
	for _, run := range runs {
		t.Run(run.UUID, func(t *testing.T) { checkFailedCases(t, run) })
	}
}

// checkFailedCases checks the cases of one run (its cases differ in profile, driver or path).
func checkFailedCases(t *testing.T, run *api.Run) {
	out := string(encode(t, "prometheus", run))
	for i := range run.Results {
		r := &run.Results[i]
		sel := `profile="` + string(r.Profile) + `",driver="` + r.Driver + `",path="` + string(r.Path) + `",`
		var failedLine, failedSamplesLine string
		var figures []string
		for _, l := range strings.Split(out, "\n") {
			if !strings.Contains(l, sel) || !strings.Contains(l, `message_size_bytes="`) {
				continue
			}
			switch {
			case strings.HasPrefix(l, "cnperf_case_failed{"):
				failedLine = l
			case strings.HasPrefix(l, "cnperf_case_failed_samples{"):
				failedSamplesLine = l
			case strings.HasPrefix(l, "cnperf_case_"):
			default:
				figures = append(figures, l)
			}
		}
		if want := "} " + strconv.Itoa(r.Summary.SamplesFailed); !strings.HasSuffix(failedSamplesLine, want) {
			t.Errorf("case %d: cnperf_case_failed_samples line %q, want %s", i, failedSamplesLine, want)
		}
		if CaseFailed(r) {
			if !strings.HasSuffix(failedLine, "} 1") {
				t.Errorf("case %d (%s): cnperf_case_failed line %q, want 1", i, r.Error, failedLine)
			}
			if len(figures) > 0 {
				t.Errorf("case %d failed (%s) but has figures:\n%s", i, FailureCause(r), strings.Join(figures, "\n"))
			}
			continue
		}
		if !strings.HasSuffix(failedLine, "} 0") {
			t.Errorf("case %d: cnperf_case_failed line %q, want 0", i, failedLine)
		}
		if len(figures) == 0 {
			t.Errorf("case %d succeeded but has no figure", i)
		}
	}
}

// TestPrometheusLabels: run labels become label_<name> sanitised to Prometheus' rules, label
// values are escaped as the exposition format says, two labels that sanitise to one name are
// an error naming both, and two cases with the same labels get their case index.
func TestPrometheusLabels(t *testing.T) {
	for _, tt := range []struct {
		name    string
		labels  map[string]string
		dup     bool
		network string
		want    []string
		wantErr string
	}{
		{name: "sanitised names", labels: map[string]string{"app.kubernetes.io/name": "cnperf", "9lives": "x", "env": "lab"},
			want: []string{`label_9lives="x"`, `label_app_kubernetes_io_name="cnperf"`, `label_env="lab"`}},
		{name: "escaped values", labels: map[string]string{"note": "a \"quoted\" C:\\path\nnext"},
			want: []string{`label_note="a \"quoted\" C:\\path\nnext"`}},
		{name: "collision", labels: map[string]string{"a.b": "1", "a-b": "2"},
			wantErr: `labels "a-b" and "a.b" are both the Prometheus label label_a_b`},
		{name: "same case twice", dup: true,
			want: []string{`,case="1"} `, `,case="2"} `}},
		{name: "secondary network", network: "multus-e2e/e2e-macvlan",
			want: []string{`,burst="0",network="multus-e2e/e2e-macvlan"} `}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			run := reporttest.Run()
			run.Labels = tt.labels
			run.Results = run.Results[:1]
			if tt.dup {
				run.Results = append(run.Results, run.Results[0])
			}
			run.Results[0].Params.Network = tt.network
			var b bytes.Buffer
			err := Encode(&b, "prometheus", []*api.Run{run})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("output lacks %s:\n%s", w, b.String())
				}
			}
			if tt.network == "" && strings.Contains(b.String(), `,network="`) {
				t.Errorf("a network label for a case on the pod network:\n%s", b.String())
			}
			if !tt.dup && strings.Contains(b.String(), `case="`) {
				t.Errorf("a case label without a duplicate case:\n%s", b.String())
			}
		})
	}
}

// TestPrometheusUnits: figures are in base units: bytes (not bits), seconds (not
// microseconds), ratios (not percent), CPUs (not percent of one).
func TestPrometheusUnits(t *testing.T) {
	r := reporttest.Result(api.UDPStream, "iperf3", api.PathPodPodCrossNode, 1400, 1, []api.Sample{
		reporttest.Sample(0, func(s *api.Sample) {
			s.ThroughputBitsPerSecond = reporttest.F(8e9)
			s.LossPercent = reporttest.F(2.5)
			s.JitterMicroseconds = reporttest.F(40)
			s.CPU = reporttest.CPU(150, 50)
		}),
	})
	run := reporttest.Run()
	run.Results = []api.Result{r}
	out := string(encode(t, "prometheus", run))
	for _, tt := range []struct{ metric, value string }{
		{"cnperf_throughput_bytes_per_second{", "} 1e+09\n"},
		{"cnperf_loss_ratio{", "} 0.025\n"},
		{"cnperf_jitter_seconds{", "} 4e-05\n"},
		{"cnperf_process_cpu_seconds_per_second{", `role="client"} 1.5` + "\n"},
		{"cnperf_process_cpu_seconds_per_second{", `role="server"} 0.5` + "\n"},
	} {
		found := false
		for _, l := range strings.SplitAfter(out, "\n") {
			if strings.HasPrefix(l, tt.metric) && strings.HasSuffix(l, tt.value) {
				found = true
			}
		}
		if !found {
			t.Errorf("no %s...%q line in:\n%s", tt.metric, tt.value, out)
		}
	}
}

// TestPrometheusGoldenIsReal: the golden files come from the real captures (not edited by hand).
func TestPrometheusGoldenIsReal(t *testing.T) {
	for _, c := range promCaptures {
		b, err := os.ReadFile(filepath.Join("testdata", "prometheus-"+c.name+".golden"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte(readTestRuns(t, c.file)[0].UUID)) {
			t.Errorf("prometheus-%s.golden does not name the run of %s", c.name, c.file)
		}
	}
}

// TestPrometheusRules checks the shipped alert rules (deploy/prometheus) with promtool: they
// load, their unit tests (series as -o prometheus writes them, and series Prometheus stored
// from real pushed runs) pass, and every cnperf_ metric they use is one this encoder writes.
func TestPrometheusRules(t *testing.T) {
	dir := filepath.Join("..", "..", "deploy", "prometheus")
	rules, err := os.ReadFile(filepath.Join(dir, "cnperf-rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	written := map[string]bool{}
	for _, f := range promFamilies() {
		written[f.name] = true
	}
	used := regexp.MustCompile(`\bcnperf_[a-z_]+`).FindAllString(string(rules), -1)
	if len(used) == 0 {
		t.Fatal("the rules use no cnperf_ metric")
	}
	for _, m := range used {
		if !written[m] {
			t.Errorf("the rules use %s, which -o prometheus does not write", m)
		}
	}
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool is not installed (Debian package prometheus; .ci/install-deps.sh installs it)")
	}
	// cnperf-rules.recorded.test.yaml is on series Prometheus stored from real runs (test/integration's
	// TestRecordAlertSeries): a drop fires, the noise of ten runs does not.
	for _, args := range [][]string{{"check", "rules", "cnperf-rules.yaml"},
		{"test", "rules", "cnperf-rules.test.yaml", "cnperf-rules.recorded.test.yaml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
