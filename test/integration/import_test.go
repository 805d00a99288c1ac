package integration

import (
	"encoding/json"
	"strings"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/text"
)

// TestImportEdgesBinary (issue 28, finding 10) on the real binary, with real captures
// (testdata/tools/capture.sh import): the same file imported 3 times became one case
// "3/3, CoV 0.0 %" (exit 0); an iperf3 "unable to connect" document failed the whole import;
// netperf's "Elapsed 0.00" was accepted (exit 0).
func TestImportEdgesBinary(t *testing.T) {
	bin := buildCnperf(t)
	dir := "../../internal/cli/importcmd/testdata/captured/"
	a, a2, refused := dir+"iperf3_tcp_stream_1.stdout", dir+"iperf3_tcp_stream_2.stdout", dir+"iperf3_refused.stdout"

	_, errOut, code := runBinary(t, bin, "import", "--driver", "iperf3", a, a, a)
	if code != 2 || !text.ContainsFolded(errOut, "has the same content as") {
		t.Errorf("the same file 3 times: exit %d\n%s", code, errOut)
	}
	_, errOut, code = runBinary(t, bin, "import", "--driver", "netperf", dir+"netperf_tcp_stream_elapsed0.stdout")
	if code != 2 || !text.ContainsFolded(errOut, "netperf: elapsed time 0 s: the test measured nothing") {
		t.Errorf("netperf Elapsed 0.00: exit %d\n%s", code, errOut)
	}
	out, errOut, code := runBinary(t, bin, "import", "--driver", "iperf3", a, refused, a2)
	var run api.Run
	if code != 0 || json.Unmarshal([]byte(out), &run) != nil || len(run.Results) != 1 {
		t.Fatalf("a refused run among its test's runs: exit %d\n%s\n%s", code, out, errOut)
	}
	r := run.Results[0]
	if r.Summary.SamplesTotal != 3 || r.Summary.SamplesFailed != 1 || r.Samples[2].Error != "iperf3: unable to connect to server: Connection refused" {
		t.Errorf("summary %+v, samples %+v", r.Summary, r.Samples)
	}
	out, _, code = runBinary(t, bin, "import", "--driver", "iperf3", "-o", "table", a, refused, a2)
	if code != 0 || !strings.Contains(out, "PARTIAL: 1 of 3 samples failed: iperf3: unable to connect to server: Connection refused") {
		t.Errorf("table: exit %d\n%s", code, out)
	}
}
