package reportcmd

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/exit"
	"github.com/cnperf/cnperf/internal/iostreams"
	"github.com/cnperf/cnperf/internal/runfile"
	"github.com/cnperf/cnperf/internal/text"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

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
	w, err := runfile.Create(jl, testRun("run-a"))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.AppendResult(testRun("run-a").Results[0]); err != nil {
		t.Fatal(err)
	}
	js := filepath.Join(dir, "run.json")
	b, _ := json.Marshal(testRun("run-b"))
	if err := os.WriteFile(js, b, 0o644); err != nil {
		t.Fatal(err)
	}

	out, errOut, err := execute(t, "", jl, js)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "Run run-a") || !strings.Contains(out, "INTERRUPTED after 1 cases") ||
		!strings.Contains(out, "Run run-b") || strings.Count(out, "30.00 Gbit/s") != 2 {
		t.Errorf("table:\n%s", out)
	}
	if !text.ContainsFolded(errOut, "warning: "+jl+": run run-a has no end record") {
		t.Errorf("stderr: %q", errOut)
	}

	// Standard input, another format.
	out, _, err = execute(t, string(b), "-o", "k8s-netperf-csv", "-")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "Driver,Profile,") || !strings.Contains(out, "native,TCP_STREAM,true,false,false,false,false,,,,,,2,1,1,131072,0,0,0,30000.000000,Mb/s,,usec") {
		t.Errorf("k8s-netperf-csv:\n%s", out)
	}
}

func TestReportBadInputIsUsageError(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte(`{"type":"run","run":{"apiVersion":"cnperf.dev/v1alpha1","kind":"Run","uuid":"x"}}`+"\n{oops\n"+`{"type":"end","uuid":"x"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
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
			_, _ = w.Write([]byte(`{"version":{"number":"2.18.0","distribution":"opensearch"}}`))
		case "/_bulk":
			_, _ = w.Write([]byte(`{"errors":false,"items":[{"index":{"_id":"x","status":201}}]}`))
		default:
			_, _ = w.Write([]byte(`{"acknowledged":true}`))
		}
	}))
	defer srv.Close()
	js := filepath.Join(t.TempDir(), "run.json")
	b, _ := json.Marshal(testRun("run-c"))
	if err := os.WriteFile(js, b, 0o644); err != nil {
		t.Fatal(err)
	}
	u := strings.Replace(srv.URL, "http://", "http://elastic:hunter2@", 1)
	_, errOut, err := execute(t, "", "--opensearch", u, "--allow-plain-http-credentials", "--index", "perf", js)
	if err != nil {
		t.Fatal(err)
	}
	if !text.ContainsFolded(errOut, "run run-c: indexed 1 of 1 results into perf at http://127.0.0.1:") || text.ContainsFolded(errOut, "hunter2") {
		t.Errorf("stderr: %q", errOut)
	}
	if strings.Join(paths, ",") != "GET /,PUT /_index_template/perf-template,POST /_bulk" {
		t.Errorf("requests: %v", paths)
	}
	_, _, err = execute(t, "", "--opensearch", u, "--allow-plain-http-credentials", "--index", "Bad Name", js)
	var u2 *exit.UsageError
	if !errors.As(err, &u2) {
		t.Errorf("bad index: %v", err)
	}
}

// echoServer answers every request with an error that echoes the request back — its
// Authorization header, URL and a password-looking field — as misconfigured proxies and some
// servers do. It stands in for such a server: a real OpenSearch or Prometheus does not echo
// credentials on demand.
func echoServer(t *testing.T, extra string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		echo := fmt.Sprintf("denied %s %s; Authorization: %s; %s", r.Method, r.URL.String(), r.Header.Get("Authorization"), extra)
		if strings.HasPrefix(r.URL.Path, "/api/") {
			w.WriteHeader(http.StatusUnauthorized)
			_ = json.NewEncoder(w).Encode(map[string]string{"status": "error", "errorType": "unauthorized", "error": echo})
			return
		}
		http.Error(w, `{"error":"`+echo+`"}`, http.StatusBadRequest)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// No credential — the password, its base64 Basic form, a bearer token — appears in anything
// cnperf prints, whichever way it was given, even when the server echoes the request.
func TestCredentialsNeverPrinted(t *testing.T) {
	const pw, token = "s3cr3t-Pa55:word", "tok-0123456789abcdef"
	basic := base64.StdEncoding.EncodeToString([]byte("elastic:" + pw))
	secrets := []string{pw, basic, token, base64.StdEncoding.EncodeToString([]byte(token)), "s3cr3t-Pa55%3Aword"}
	dir := t.TempDir()
	pwFile, tokFile := filepath.Join(dir, "pw"), filepath.Join(dir, "token")
	if err := os.WriteFile(pwFile, []byte(pw+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tokFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := testRun("run-s")
	t0 := run.StartTime
	run.Results[0].Samples[0].StartTime, run.Results[0].Samples[0].EndTime = t0, t0.Add(2*time.Second)
	js := filepath.Join(dir, "run.json")
	b, _ := json.Marshal(run)
	if err := os.WriteFile(js, b, 0o644); err != nil {
		t.Fatal(err)
	}

	osSrv := echoServer(t, "password was "+pw)
	promSrv := echoServer(t, "token was "+token)
	inURL := strings.Replace(osSrv.URL, "http://", "http://elastic:"+url.QueryEscape(pw)+"@", 1)
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		wantErr string // in the error
		wantLog string // on stderr
	}{
		{"password in the URL", nil, []string{"--opensearch", inURL, "--allow-plain-http-credentials"}, "HTTP 400", "which every local user can read in the process list (ps)"},
		{"password from a file", nil, []string{"--opensearch", osSrv.URL, "--opensearch-username", "elastic", "--opensearch-password-file", pwFile, "--allow-plain-http-credentials"}, "HTTP 400", ""},
		{"password from the environment", map[string]string{"CNPERF_OPENSEARCH_USERNAME": "elastic", "CNPERF_OPENSEARCH_PASSWORD": pw},
			[]string{"--opensearch", osSrv.URL, "--allow-plain-http-credentials"}, "HTTP 400", ""},
		{"plain http without the flag", nil, []string{"--opensearch", inURL}, "refusing to send credentials over plain http", ""},
		{"bearer token from a file", nil, []string{"--prometheus", promSrv.URL, "--prometheus-token-file", tokFile, "--allow-plain-http-credentials"}, "unauthorized", ""},
		{"bearer token from the environment", map[string]string{"CNPERF_PROMETHEUS_TOKEN": token}, []string{"--prometheus", promSrv.URL, "--allow-plain-http-credentials"}, "unauthorized", ""},
		{"token over plain http without the flag", nil, []string{"--prometheus", promSrv.URL, "--prometheus-token-file", tokFile}, "refusing to send credentials over plain http", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"CNPERF_OPENSEARCH_USERNAME", "CNPERF_OPENSEARCH_PASSWORD", "CNPERF_PROMETHEUS_TOKEN"} {
				t.Setenv(k, tc.env[k])
			}
			out, errOut, err := execute(t, "", append(tc.args, js)...)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want one containing %q\nstderr: %s", err, tc.wantErr, errOut)
			}
			if !text.ContainsFolded(errOut, tc.wantLog) {
				t.Errorf("stderr lacks %q: %s", tc.wantLog, errOut)
			}
			all := out + errOut + err.Error()
			for _, sec := range secrets {
				if strings.Contains(all, sec) {
					t.Errorf("%q printed:\nstdout: %s\nstderr: %s\nerror: %v", sec, out, errOut, err)
				}
			}
			t.Logf("error: %v", err)
		})
	}
}

// realMesh is a real 3-node e2e mesh (cnperf mesh -o json, pod and host networks).
var realMesh = filepath.Join("..", "..", "report", "testdata", "real-mesh-run.json")

func goldenFile(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (go test -update to accept):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// meshResultsFile saves the real mesh as cnperf mesh --results does: header, one line per
// result, the mesh section recorded at the end.
func meshResultsFile(t *testing.T) string {
	t.Helper()
	runs, err := runfile.Read(realMesh)
	if err != nil || len(runs) != 1 || runs[0].Mesh == nil {
		t.Fatalf("%s: %d runs, %v", realMesh, len(runs), err)
	}
	run := runs[0]
	path := filepath.Join(t.TempDir(), "mesh.jsonl")
	head := *run
	head.Results, head.Mesh = nil, nil
	w, err := runfile.Create(path, &head)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range run.Results {
		if err := w.AppendResult(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.UpdateRun(*run); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(*run); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReportMeshGolden(t *testing.T) {
	resultsFile := meshResultsFile(t)
	for _, tc := range []struct{ format, golden string }{
		{"table", "real-mesh.table"},
		{"mesh-csv", "real-mesh.csv"},
		{"mesh-cells-csv", "real-mesh.cells.csv"},
	} {
		t.Run(tc.format, func(t *testing.T) {
			out, errOut, err := execute(t, "", "-o", tc.format, realMesh)
			if err != nil || errOut != "" {
				t.Fatalf("err %v, stderr %q", err, errOut)
			}
			goldenFile(t, tc.golden, out)
			// The results file cnperf mesh --results writes renders the same.
			out2, errOut, err := execute(t, "", "-o", tc.format, resultsFile)
			if err != nil || errOut != "" {
				t.Fatalf("results file: err %v, stderr %q", err, errOut)
			}
			if out2 != out {
				t.Errorf("the results file renders differently from the JSON:\n%s", out2)
			}
		})
	}
}

func TestReportMeshFormatsNeedOneMeshRun(t *testing.T) {
	js := filepath.Join(t.TempDir(), "run.json")
	b, _ := json.Marshal(testRun("plain"))
	if err := os.WriteFile(js, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"not a mesh", []string{"-o", "mesh-csv", js}, "run plain is not a mesh run"},
		{"two meshes", []string{"-o", "mesh-cells-csv", realMesh, realMesh}, "renders one mesh run (its rows name no run), got 2 runs"},
	} {
		_, _, err := execute(t, "", tc.args...)
		var u *exit.UsageError
		if !errors.As(err, &u) || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: err = %v, want a usage error with %q", tc.name, err, tc.wantErr)
		}
	}
	// A plain run's table is unchanged: its case rows, no matrix.
	out, _, err := execute(t, "", js)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "30.00 Gbit/s") || strings.Contains(out, "rows = client") {
		t.Errorf("plain run table:\n%s", out)
	}
}
