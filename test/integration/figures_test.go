package integration

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/runfile"
	"github.com/cnperf/cnperf/internal/text"
)

// TestAbsurdFiguresRefused (issue 28, finding 7): huge finite numbers (≥ ~1e154) in a results
// file or a tool's output turned the statistics into NaN/Inf; the table printed "NaN bit/s …
// ok" and -o json failed with "unsupported value: NaN". Now report, compare and import refuse
// a figure beyond physical sense with its place (file:line, field) and exit 2.
func TestAbsurdFiguresRefused(t *testing.T) {
	bin := buildCnperf(t)
	dir := t.TempDir()

	// A results file whose samples say 1e300 bit/s, without a summary (a writer that left it
	// out, or an edited file): the reader summarises the samples itself.
	path := filepath.Join(dir, "huge.jsonl")
	run := &api.Run{APIVersion: api.APIVersion, Kind: api.KindRun, UUID: "huge-0000-uuid", Platform: "local"}
	w, err := runfile.Create(path, run)
	if err != nil {
		t.Fatal(err)
	}
	var ss []api.Sample
	for i, v := range []float64{1e300, 2e300, 3e300} {
		v := v
		ss = append(ss, api.Sample{Index: i + 1, ThroughputBitsPerSecond: &v})
	}
	if err := w.AppendResult(api.Result{Profile: api.TCPStream, Driver: "native", Path: api.PathLoopback,
		Params: api.Params{DurationSeconds: 10, Samples: 3, MessageSizeBytes: 1024, Parallel: 1}, Samples: ss}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(*run); err != nil {
		t.Fatal(err)
	}
	base := writeGateRun(t, dir, "base", "done", gateCases[0])
	want := path + ":2: samples[0].throughputBitsPerSecond is 1e+300: beyond physical sense (more than 10 Tbit/s)"
	for _, args := range [][]string{
		{"report", path},
		{"report", "-o", "json", path},
		{"compare", "--fail-on-regression", "5", base, path},
	} {
		out, errOut, code := runBinary(t, bin, args...)
		if code != 2 || !text.ContainsFolded(errOut, want) || strings.Contains(out, "NaN") {
			t.Errorf("%v: exit %d, want 2 and %q\nstdout:\n%s\nstderr:\n%s", args, code, want, out, errOut)
		}
	}

	// A real iperf3 -J capture whose receiver rate is edited to 1e300 (derived input).
	data, err := os.ReadFile("../../internal/driver/iperf3/testdata/captured/tcp_stream.stdout")
	if err != nil {
		t.Fatal(err)
	}
	edited := filepath.Join(dir, "iperf3-huge.json")
	if err := os.WriteFile(edited, bytes.ReplaceAll(data, []byte("8472799261.4128075"), []byte("1e300")), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runBinary(t, bin, "import", "--driver", "iperf3", "-o", "table", edited)
	if code != 2 || !text.ContainsFolded(errOut, "iperf3-huge.json: sample.throughputBitsPerSecond is 1e+300: beyond physical sense") {
		t.Errorf("import: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}
