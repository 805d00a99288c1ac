package runfile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/report/reporttest"
)

// encode writes runs with enc, for the readers to read back.
func encode(t *testing.T, enc func(io.Writer, []*api.Run) error, runs ...*api.Run) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := enc(&b, runs); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// sameJSON reports where the JSON forms of got and want first differ.
func sameJSON(t *testing.T, got, want any) {
	t.Helper()
	g, w := mustJSON(t, got), mustJSON(t, want)
	if g == w {
		return
	}
	i := 0
	for i < len(g) && i < len(w) && g[i] == w[i] {
		i++
	}
	lo := max(0, i-80)
	t.Errorf("JSON differs at byte %d:\n got …%.160s\nwant …%.160s", i, g[lo:], w[lo:])
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// writeRun writes run to a new results file the way the runner does; end=false leaves it
// without an end record.
func writeRun(t *testing.T, path string, run *api.Run, end bool) {
	t.Helper()
	w, err := Create(path, run)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range run.Results {
		if err := w.AppendResult(r); err != nil {
			t.Fatal(err)
		}
	}
	if end {
		if err := w.Close(*run); err != nil {
			t.Fatal(err)
		}
	} else {
		w.f.Close() // as if the process died: no end record
	}
}

func TestResultsFileRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.jsonl")
	run := reporttest.Run()
	run.Notes = []string{"finished normally"}
	// As the runner does: the cluster is described after the file was created.
	cluster := run.Cluster
	run.Cluster = nil
	w, err := Create(path, run)
	if err != nil {
		t.Fatal(err)
	}
	run.Cluster = cluster
	if err := w.UpdateRun(*run); err != nil {
		t.Fatal(err)
	}
	for _, r := range run.Results {
		if err := w.AppendResult(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(*run); err != nil {
		t.Fatal(err)
	}
	bad := *run
	bad.UUID = "other"
	if err := w.UpdateRun(bad); err == nil {
		t.Error("update after close accepted")
	}

	runs, warnings, err := ReadWarnings(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 0 {
		t.Errorf("warnings: %v", warnings)
	}
	if len(runs) != 1 {
		t.Fatalf("%d runs", len(runs))
	}
	sameJSON(t, runs[0], run)
	// One line per record: run, update, 7 results, end.
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 10 || !strings.HasPrefix(lines[0], `{"type":"run","run":{`) ||
		!strings.HasPrefix(lines[1], `{"type":"update","uuid":"6f1c2b9e-0d6a-4e1f-9a53-3c2d7b8e4a10","run":{`) ||
		!strings.HasPrefix(lines[2], `{"type":"result","uuid":"6f1c2b9e-0d6a-4e1f-9a53-3c2d7b8e4a10","result":{`) ||
		!strings.HasPrefix(lines[9], `{"type":"end","uuid":"6f1c2b9e-0d6a-4e1f-9a53-3c2d7b8e4a10","endTime":"2025-03-14T09:31:53Z","interrupted":false,"timing":{`) {
		t.Errorf("unexpected layout:\n%s", data)
	}
	if !strings.Contains(lines[0], `"results":[]`) {
		t.Errorf("run line carries results: %.200s", lines[0])
	}
}

func TestResultsFileInterruptedAndTruncated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.jsonl")
	run := reporttest.Run()
	run.EndTime = time.Time{} // as the runner writes the header: not ended yet
	run.Results = run.Results[:3]
	writeRun(t, path, run, false)
	// A writer killed mid-line leaves a partial last line.
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if _, err := f.WriteString(`{"type":"result","uuid":"6f1c2b9e-0d6a-4e1f-9a53-3c2d7b8e4a10","result":{"profile":"TCP_`); err != nil {
		t.Fatal(err)
	}
	f.Close()

	runs, warnings, err := ReadWarnings(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || len(runs[0].Results) != 3 {
		t.Fatalf("want 1 run with the 3 finished cases, got %d runs", len(runs))
	}
	r := runs[0]
	if !r.Interrupted {
		t.Error("run without end record not marked interrupted")
	}
	if !r.EndTime.Equal(run.Results[2].EndTime) {
		t.Errorf("end time = %v, want the last case's end", r.EndTime)
	}
	if len(warnings) != 2 || !strings.Contains(warnings[0], "line 5: truncated last line skipped") ||
		!strings.Contains(warnings[1], "no end record") {
		t.Errorf("warnings = %q", warnings)
	}
	if len(r.Notes) != 2 {
		t.Errorf("notes = %q", r.Notes)
	}
	// Read folds the warnings into the notes and returns no error.
	if runs, err := Read(path); err != nil || len(runs[0].Notes) != 2 {
		t.Errorf("Read: %v", err)
	}

	// Appending a second run cuts the partial line first; both runs read back.
	second := reporttest.Run()
	second.UUID = "0b5e7a4c-93d1-4c4e-8f0e-5d2a1c9b7e33"
	second.Results = second.Results[3:5]
	writeRun(t, path, second, true)
	runs, warnings, err = ReadWarnings(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || len(runs[0].Results) != 3 || len(runs[1].Results) != 2 || runs[1].Interrupted {
		t.Fatalf("got %d runs", len(runs))
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "run 6f1c2b9e-0d6a-4e1f-9a53-3c2d7b8e4a10 has no end record") {
		t.Errorf("warnings = %q", warnings)
	}
}

func TestReadRunsErrors(t *testing.T) {
	run := reporttest.Run()
	header := mustJSON(t, runRecord{Type: RecordRun, Run: &api.Run{APIVersion: api.APIVersion, Kind: api.KindRun, UUID: "u1", Results: []api.Result{}}})
	res := mustJSON(t, resultRecord{Type: RecordResult, UUID: "u1", Result: &run.Results[0]})
	end := mustJSON(t, endRecord{Type: RecordEnd, UUID: "u1"})
	update := mustJSON(t, updateRecord{Type: RecordUpdate, UUID: "u1", Run: &api.Run{APIVersion: api.APIVersion, Kind: api.KindRun, UUID: "u1"}})
	bad := run.Results[0]
	bad.Params.DurationSeconds = -1
	tests := []struct {
		name, data, want string
	}{
		{"corrupt middle line", header + "\n{\"type\":\"result\",\"uuid\":\"u1\",\"res\n" + res + "\n", "f.jsonl:2: corrupt line"},
		{"corrupt last line with newline", header + "\n" + res + "\n{\"type\":\n", "f.jsonl:3: corrupt line"},
		{"unknown record", header + "\n{\"type\":\"sample\"}\n", `f.jsonl:2: unknown record type "sample"`},
		{"foreign uuid", header + "\n" + strings.Replace(res, `"u1"`, `"u2"`, 1) + "\n", `f.jsonl:2: result for run "u2" inside run u1`},
		{"result first", res + "\n", "f.jsonl:1: result before any run record"},
		{"wrong apiVersion", strings.Replace(header, api.APIVersion, "cnperf.dev/v2", 1) + "\n", `f.jsonl:1: apiVersion "cnperf.dev/v2" is not supported`},
		{"run record without run", header + "\n{\"type\":\"run\"}\n", `f.jsonl:2: run record without "run"`},
		{"run without uuid", strings.Replace(header, `"u1"`, `""`, 1) + "\n", "f.jsonl:1: run without uuid"},
		{"run twice", header + "\n" + header + "\n", "f.jsonl:2: run u1 appears twice"},
		{"result after end", header + "\n" + end + "\n" + res + "\n", "f.jsonl:3: result after the end of run u1"},
		{"result record without result", header + "\n{\"type\":\"result\",\"uuid\":\"u1\"}\n", `f.jsonl:2: result record without "result"`},
		{"result out of bounds", header + "\n" + mustJSON(t, resultRecord{Type: RecordResult, UUID: "u1", Result: &bad}) + "\n", "f.jsonl:2: params"},
		{"end of another run", header + "\n" + strings.Replace(end, `"u1"`, `"u2"`, 1) + "\n", `f.jsonl:2: end of run "u2" which is not the current run`},
		{"second end", header + "\n" + end + "\n" + end + "\n", "f.jsonl:3: second end record for run u1"},
		{"update after end", header + "\n" + end + "\n" + update + "\n", `f.jsonl:3: update of run "u1" which is not the current, unfinished run`},
		{"update without the run", header + "\n{\"type\":\"update\",\"uuid\":\"u1\"}\n", "f.jsonl:2: update record without the run u1"},
		{"update of another kind", header + "\n" + strings.Replace(update, `"Run"`, `"Plan"`, 1) + "\n", `f.jsonl:2: kind "Plan" is not Run`},
		{"empty", "\n  \n", "f.jsonl: empty file"},
		{"not ours", "hello\n", "not a cnperf results file"},
		{"plain json truncated", "{\n  \"apiVersion\": \"cnperf.dev/v1alpha1\",\n  \"kind\": \"Run\",\n  \"results\": [\n", "f.jsonl:5: unexpected EOF"},
		{"plain json wrong type", "{\n  \"apiVersion\": \"cnperf.dev/v1alpha1\",\n  \"kind\": \"Run\",\n  \"results\": 3\n}\n", "f.jsonl:4: json: cannot unmarshal number"},
		{"plain json not a run", `{"apiVersion":"cnperf.dev/v1alpha1","kind":"Plan"}`, `f.jsonl:1: kind "Plan" is not Run`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ReadRuns(strings.NewReader(tc.data), "f.jsonl")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestReadRunsPlainJSON(t *testing.T) {
	run := reporttest.Run()
	one := encode(t, WriteJSON, run)
	run2 := reporttest.Run()
	run2.UUID = "second"
	for name, data := range map[string][]byte{
		"one":          one,
		"array":        encode(t, WriteJSON, run, run2),
		"concatenated": append(append([]byte{}, one...), encode(t, WriteJSON, run2)...),
	} {
		runs, warnings, err := ReadRuns(bytes.NewReader(data), name)
		if err != nil || len(warnings) != 0 {
			t.Fatalf("%s: %v %v", name, err, warnings)
		}
		sameJSON(t, runs[0], run)
		if name != "one" && (len(runs) != 2 || runs[1].UUID != "second") {
			t.Errorf("%s: %d runs", name, len(runs))
		}
	}
	// CSV is read too (summaries only).
	runs, _, err := ReadRuns(bytes.NewReader(encode(t, WriteCSV, run)), "run.csv")
	if err != nil || len(runs) != 1 || len(runs[0].Results) != 7 {
		t.Errorf("csv: %v", err)
	}
}

func TestCreateResultsFileRefusesForeignFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(path, []byte("my precious notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Create(path, reporttest.Run()); err == nil || !strings.Contains(err.Error(), "not a cnperf results file") {
		t.Errorf("err = %v", err)
	}
	data, _ := os.ReadFile(path)
	if string(data) != "my precious notes\n" {
		t.Errorf("foreign file modified: %q", data)
	}
	if _, err := Create(filepath.Join(t.TempDir(), "x"), &api.Run{}); err == nil {
		t.Error("run without uuid accepted")
	}
}

func TestResultsWriterAfterClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.jsonl")
	run := reporttest.Run()
	w, err := Create(path, run)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(*run); err != nil {
		t.Fatal(err)
	}
	if err := w.AppendResult(run.Results[0]); err == nil {
		t.Error("append after close accepted")
	}
	if err := w.Close(*run); err == nil {
		t.Error("second close accepted")
	}
}

// TestResultsFileSurvivesKill runs a real writer in a child process, kills it with SIGKILL
// after two cases were appended, and reads the file back.
func TestResultsFileSurvivesKill(t *testing.T) {
	if path := os.Getenv("CNPERF_TEST_RESULTS_CHILD"); path != "" {
		run := reporttest.Run()
		w, err := Create(path, run)
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(3)
		}
		if err := w.AppendResult(run.Results[0]); err != nil {
			t.Fatal(err)
		}
		if err := w.AppendResult(run.Results[1]); err != nil {
			t.Fatal(err)
		}
		fmt.Println("ready")
		time.Sleep(time.Minute) // killed here
		os.Exit(0)
	}
	path := filepath.Join(t.TempDir(), "killed.jsonl")
	cmd := exec.Command(os.Args[0], "-test.run=^TestResultsFileSurvivesKill$")
	cmd.Env = append(os.Environ(), "CNPERF_TEST_RESULTS_CHILD="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	_ = cmd.Process.Kill() // the child's own PID
	_ = cmd.Wait()
	if strings.TrimSpace(line) != "ready" {
		t.Fatalf("child said %q", line)
	}
	runs, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || len(runs[0].Results) != 2 || !runs[0].Interrupted {
		t.Errorf("after kill: %d runs, %d results", len(runs), len(runs[0].Results))
	}
}

// TestBudgetSharedByFiles (issue 28, finding 4): what one command reads is bounded over all its
// files and formats (JSON Lines, a JSON document, CSV), so a report never holds more than the
// budget's worth of runs; each file alone fits.
func TestBudgetSharedByFiles(t *testing.T) {
	dir := t.TempDir()
	run := reporttest.Run()
	jsonl := filepath.Join(dir, "run.jsonl")
	writeRun(t, jsonl, run, true)
	doc := filepath.Join(dir, "run.json")
	if err := os.WriteFile(doc, encode(t, WriteJSON, run), 0o644); err != nil {
		t.Fatal(err)
	}
	csvFile := filepath.Join(dir, "run.csv")
	if err := os.WriteFile(csvFile, encode(t, WriteCSV, run), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{jsonl, doc, csvFile} {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		size := st.Size()
		// The budget of the file's size plus the reader's look-ahead reads it whole...
		if _, _, err := ReadPathWithin(f, nil, NewBudget(size+64<<10)); err != nil {
			t.Errorf("%s alone: %v", f, err)
		}
		// ...and a second file against the same budget is refused, naming the limit.
		b := NewBudget(size * 3 / 2)
		if _, _, err := ReadPathWithin(f, nil, b); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		_, _, err = ReadPathWithin(f, nil, b)
		limit := fmt.Sprintf("more than %.4g MiB of runs read in one command", float64(size*3/2)/(1<<20))
		if err == nil || !strings.Contains(err.Error(), limit) || !strings.HasPrefix(err.Error(), f) {
			t.Errorf("%s twice within 1.5 times its size: %v", f, err)
		}
	}
}

// TestWriteJSONStreamsTheSameBytes: the streaming JSON writer prints exactly what
// json.Encoder with a two-space indent prints, for one run, several, none, and runs without
// results.
func TestWriteJSONStreamsTheSameBytes(t *testing.T) {
	full := reporttest.Run()
	empty := reporttest.Run()
	empty.Results = []api.Result{}
	for _, runs := range [][]*api.Run{{full}, {full, empty, full}, {}, {empty}} {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetIndent("", "  ")
		var v any = runs
		if len(runs) == 1 {
			v = runs[0]
		}
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		got := encode(t, WriteJSON, runs...)
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%d runs: streamed JSON differs:\n%s\nwant:\n%s", len(runs), got, want.Bytes())
		}
	}
}
