package reportcmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/iostreams"
	"github.com/cnperf/cnperf/internal/report"
)

func tp(v float64) *float64 { return &v }

func testRun(uuid string) *api.Run {
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	return &api.Run{APIVersion: api.APIVersion, Kind: api.KindRun, UUID: uuid, StartTime: t0, Platform: "local",
		Results: []api.Result{{Profile: api.TCPStream, Driver: "native", Path: api.PathLoopback,
			Params:  api.Params{DurationSeconds: 2, Samples: 1, MessageSizeBytes: 131072, Parallel: 1},
			Samples: []api.Sample{{Index: 1, ThroughputBitsPerSecond: tp(3e10)}},
			Summary: api.Summary{SamplesTotal: 1, ThroughputBitsPerSecond: &api.Stat{N: 1, Mean: 3e10, Median: 3e10,
				Min: 3e10, Max: 3e10, CI95Low: 3e10, CI95High: 3e10}}}}}
}

func execute(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	c := NewCommand(iostreams.Streams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut})
	c.SetArgs(args)
	c.SetOut(&errOut)
	c.SetErr(&errOut)
	err := c.Execute()
	return out.String(), errOut.String(), err
}

func TestReportRendersResultsFileAndJSON(t *testing.T) {
	dir := t.TempDir()
	// An interrupted results file (no end record) and a plain JSON run.
	jl := filepath.Join(dir, "interrupted.jsonl")
	w, err := report.CreateResultsFile(jl, testRun("run-a"))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.AppendResult(testRun("run-a").Results[0]); err != nil {
		t.Fatal(err)
	}
	js := filepath.Join(dir, "run.json")
	b, _ := json.Marshal(testRun("run-b"))
	os.WriteFile(js, b, 0o644)

	out, errOut, err := execute(t, "", jl, js)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "Run run-a") || !strings.Contains(out, "INTERRUPTED after 1 cases") ||
		!strings.Contains(out, "Run run-b") || strings.Count(out, "30.00 Gbit/s") != 2 {
		t.Errorf("table:\n%s", out)
	}
	if !strings.Contains(errOut, "warning: "+jl+": run run-a has no end record") {
		t.Errorf("stderr: %q", errOut)
	}

	// Standard input, another format.
	out, _, err = execute(t, string(b), "-o", "k8s-netperf-csv", "-")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "Driver,Profile,") || !strings.Contains(out, "native,TCP_STREAM,true,false,false,2,1,1,131072,30000,30000,30000.000000,Mb/s,,usec") {
		t.Errorf("k8s-netperf-csv:\n%s", out)
	}
}

func TestReportBadInputIsUsageError(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte(`{"type":"run","run":{"apiVersion":"cnperf.dev/v1alpha1","kind":"Run","uuid":"x"}}`+"\n{oops\n"+`{"type":"end","uuid":"x"}`+"\n"), 0o644)
	for name, args := range map[string][]string{
		"corrupt file":   {bad},
		"missing file":   {filepath.Join(dir, "nope.jsonl")},
		"unknown format": {"-o", "yaml", bad},
	} {
		_, _, err := execute(t, "", args...)
		var u *exit.UsageError
		if !errors.As(err, &u) {
			t.Errorf("%s: err = %v, want a usage error", name, err)
		}
		if name == "corrupt file" && !strings.Contains(err.Error(), "bad.jsonl:2: corrupt line") {
			t.Errorf("corrupt: %v", err)
		}
	}
}

// TestReportIndexesIntoOpenSearch checks the flag wiring only, against a stand-in server;
// the sink itself is tested against a real OpenSearch in internal/sink/opensearch.
func TestReportIndexesIntoOpenSearch(t *testing.T) {
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.Method+" "+r.URL.Path)
		switch r.URL.Path {
		case "/":
			w.Write([]byte(`{"version":{"number":"2.18.0","distribution":"opensearch"}}`))
		case "/_bulk":
			w.Write([]byte(`{"errors":false,"items":[{"index":{"_id":"x","status":201}}]}`))
		default:
			w.Write([]byte(`{"acknowledged":true}`))
		}
	}))
	defer srv.Close()
	js := filepath.Join(t.TempDir(), "run.json")
	b, _ := json.Marshal(testRun("run-c"))
	os.WriteFile(js, b, 0o644)
	u := strings.Replace(srv.URL, "http://", "http://elastic:hunter2@", 1)
	_, errOut, err := execute(t, "", "--opensearch", u, "--index", "perf", js)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut, "run run-c: indexed 1 of 1 results into perf at http://127.0.0.1:") || strings.Contains(errOut, "hunter2") {
		t.Errorf("stderr: %q", errOut)
	}
	if strings.Join(paths, ",") != "GET /,PUT /_index_template/perf-template,POST /_bulk" {
		t.Errorf("requests: %v", paths)
	}
	_, _, err = execute(t, "", "--opensearch", u, "--index", "Bad Name", js)
	var u2 *exit.UsageError
	if !errors.As(err, &u2) {
		t.Errorf("bad index: %v", err)
	}
}
