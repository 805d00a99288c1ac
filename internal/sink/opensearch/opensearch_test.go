package opensearch

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/stats"
)

const secret = "s3cret-Pa55"

func fp(v float64) *float64 { return &v }

func testRun() *api.Run {
	t0 := time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC)
	mk := func(p api.Profile, d string, path api.Path, ss []api.Sample) api.Result {
		r := api.Result{Profile: p, Driver: d, Path: path, Params: api.Params{DurationSeconds: 10, Samples: len(ss), MessageSizeBytes: 1024, Parallel: 1},
			StartTime: t0, EndTime: t0.Add(30 * time.Second), Samples: ss}
		r.Summary = stats.Summarize(ss)
		return r
	}
	return &api.Run{APIVersion: api.APIVersion, Kind: api.KindRun, UUID: "7d2f0c1a-5b7e-4f4b-9a5e-1f2e3d4c5b6a", StartTime: t0,
		EndTime: t0.Add(time.Minute), CnperfVersion: "v0.1.0-test", Platform: "kube", Labels: map[string]string{"ci": "nightly"},
		Cluster: &api.ClusterDetails{CNI: "calico", KubernetesVersion: "v1.31.2",
			Nodes: []api.NodeInfo{{Name: "w1", Labels: map[string]string{"kubernetes.io/hostname": "w1", "kubernetes.io": "x"}}}},
		Results: []api.Result{
			mk(api.TCPStream, "iperf3", api.PathPodPodCrossNode, []api.Sample{
				{Index: 1, StartTime: t0, EndTime: t0.Add(10 * time.Second), ThroughputBitsPerSecond: fp(9.4e9), Raw: `{"end":{}}`},
				{Index: 2, StartTime: t0, EndTime: t0.Add(10 * time.Second), ThroughputBitsPerSecond: fp(9.38e9)}}),
			mk(api.TCPRR, "netperf", api.PathPodPodSameNode, []api.Sample{
				{Index: 1, TransactionsPerSecond: fp(20000.5), Latency: &api.Latency{P99: fp(71.5), Method: "tool"}}}),
			mk(api.TCPStream, "native", api.PathHostHost, []api.Sample{{Index: 1, Error: "connection refused"}}),
		},
	}
}

func TestDocuments(t *testing.T) {
	docs := Documents(testRun())
	if len(docs) != 3 || docs[0].ID != "7d2f0c1a-5b7e-4f4b-9a5e-1f2e3d4c5b6a-0001" {
		t.Fatalf("docs = %+v", docs)
	}
	d := docs[0].Source
	if d.Metric != "throughputBitsPerSecond" || *d.Value != 9.39e9 || d.Unit != "bit/s" || d.Failed || d.Cluster.CNI != "calico" {
		t.Errorf("doc 1 = %+v", d)
	}
	if d := docs[2].Source; !d.Failed || d.Value != nil || d.Error != "connection refused" {
		t.Errorf("failed doc = %+v", d)
	}
	if p := docs[1].Source.LatencyP99Microseconds; p == nil || *p != 71.5 {
		t.Errorf("p99 = %v", p)
	}
}

func TestNewRejectsAndRedacts(t *testing.T) {
	for _, tc := range []struct{ url, index, want string }{
		{"", "", "no URL"},
		{"ftp://u:" + secret + "@host", "", "scheme must be http or https"},
		{"http://u:" + secret + "@host:bad port/", "", "invalid URL"},
		{"http://host:9200", "Bad Index", "invalid index name"},
	} {
		_, err := New(Config{URL: tc.url, Index: tc.index})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%q): %v, want %q", tc.url, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("password in error: %v", err)
		}
	}
	c, err := New(Config{URL: "https://admin:" + secret + "@search.example:9200/prefix/?x=1"})
	if err != nil {
		t.Fatal(err)
	}
	if c.URL() != "https://search.example:9200/prefix" || c.user != "admin" || c.pass != secret || c.Index() != DefaultIndex {
		t.Errorf("client = %s %s", c.URL(), c.user)
	}
	t.Setenv(EnvUsername, "envuser")
	t.Setenv(EnvPassword, "envpw")
	c, _ = New(Config{URL: "https://h:9200"})
	if c.user != "envuser" || c.pass != "envpw" {
		t.Errorf("env credentials not used: %q", c.user)
	}
	c, _ = New(Config{URL: "https://u:p@h:9200", Username: "flaguser", Password: "flagpw"})
	if c.user != "flaguser" || c.pass != "flagpw" {
		t.Errorf("config credentials do not override the URL's: %q", c.user)
	}
	// credentials over plain http only when allowed
	_, err = New(Config{URL: "http://h:9200"})
	if err == nil || !strings.Contains(err.Error(), "refusing to send credentials over plain http") || strings.Contains(err.Error(), "envpw") {
		t.Errorf("plain http with credentials: %v", err)
	}
	if _, err := New(Config{URL: "http://h:9200", AllowPlainHTTP: true}); err != nil {
		t.Errorf("plain http, allowed: %v", err)
	}
	t.Setenv(EnvUsername, "")
	t.Setenv(EnvPassword, "")
	if _, err := New(Config{URL: "http://h:9200"}); err != nil {
		t.Errorf("plain http without credentials: %v", err)
	}
}

// The fake cluster below stands in for OpenSearch's failure modes (HTTP 429/503, partial
// bulk failures, TLS with a private CA) that a real single-node cluster cannot be made to
// produce on demand; the happy path is tested against a real OpenSearch in integration_test.go.
type fake struct {
	mu       sync.Mutex
	fails    int // answer 503 to this many requests first
	bulk429  int // answer item status 429 for the first document this many times
	requests []string
	auth     []string
}

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, r.Method+" "+r.URL.Path)
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	if f.fails > 0 {
		f.fails--
		http.Error(w, `{"error":"unavailable, password was `+secret+`, Authorization: `+r.Header.Get("Authorization")+`"}`, http.StatusServiceUnavailable)
		return
	}
	switch r.URL.Path {
	case "/_bulk":
		body, _ := io.ReadAll(r.Body)
		lines := strings.Split(strings.TrimSpace(string(body)), "\n")
		var items []any
		for i := 0; i < len(lines); i += 2 {
			var meta map[string]map[string]string
			if err := json.Unmarshal([]byte(lines[i]), &meta); err != nil {
				http.Error(w, "bad bulk meta line: "+err.Error(), http.StatusBadRequest) // the client's bug: the test fails on it
				return
			}
			id := meta["index"]["_id"]
			switch {
			case strings.HasSuffix(id, "-0001") && f.bulk429 > 0:
				f.bulk429--
				items = append(items, map[string]any{"index": map[string]any{"_id": id, "status": 429, "error": map[string]any{"type": "es_rejected_execution_exception", "reason": "queue full"}}})
			case strings.HasSuffix(id, "-0003"):
				items = append(items, map[string]any{"index": map[string]any{"_id": id, "status": 400, "error": map[string]any{"type": "mapper_parsing_exception", "reason": "failed to parse field [x]"}}})
			default:
				items = append(items, map[string]any{"index": map[string]any{"_id": id, "status": 201}})
			}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"errors": true, "items": items})
	default:
		_, _ = w.Write([]byte(`{"acknowledged":true}`))
	}
}

func TestRetriesPartialFailuresAndRedaction(t *testing.T) {
	f := &fake{fails: 2, bulk429: 1}
	srv := httptest.NewServer(f)
	defer srv.Close()
	var log bytes.Buffer
	u := strings.Replace(srv.URL, "http://", "http://admin:"+secret+"@", 1)
	c, err := New(Config{URL: u, Index: "cnperf-test", Backoff: time.Millisecond, Log: &log, AllowPlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.IndexRun(context.Background(), testRun())
	var pe *PartialError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want a PartialError", err)
	}
	if res.Indexed != 2 || len(res.Failed) != 1 || res.Failed[0].Status != 400 || !strings.Contains(res.Failed[0].Reason, "mapper_parsing_exception") {
		t.Errorf("result = %+v", res)
	}
	if !strings.Contains(err.Error(), "7d2f0c1a-5b7e-4f4b-9a5e-1f2e3d4c5b6a-0003: HTTP 400: mapper_parsing_exception") {
		t.Errorf("error does not name the document: %v", err)
	}
	// Two 503s on the template, then the template, a bulk with one 429 item, the retry.
	want := []string{"PUT /_index_template/cnperf-test-template", "PUT /_index_template/cnperf-test-template",
		"PUT /_index_template/cnperf-test-template", "POST /_bulk", "POST /_bulk"}
	if strings.Join(f.requests, ",") != strings.Join(want, ",") {
		t.Errorf("requests = %v", f.requests)
	}
	for _, a := range f.auth {
		if a != "Basic YWRtaW46czNjcmV0LVBhNTU=" { // admin:s3cret-Pa55
			t.Errorf("auth header = %q", a)
		}
	}
	if !strings.Contains(log.String(), "HTTP 503; retrying") || !strings.Contains(log.String(), "HTTP 429") {
		t.Errorf("log = %s", log.String())
	}
	if strings.Contains(log.String()+err.Error(), secret) {
		t.Error("password printed")
	}

	// Giving up: the error carries the scrubbed body, never the password.
	f.fails = 100
	c.maxRetries = 2
	_, err = c.IndexRun(context.Background(), testRun())
	var he *HTTPError
	if !errors.As(err, &he) || he.Status != 503 || strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "REDACTED") {
		t.Errorf("err = %v", err)
	}
	// the server echoed the Authorization header: its base64 form is scrubbed too
	if strings.Contains(log.String()+err.Error(), "YWRtaW46czNjcmV0LVBhNTU=") {
		t.Errorf("base64 credentials printed: %v\n%s", err, log.String())
	}
}

func TestTLSVerification(t *testing.T) {
	srv := httptest.NewTLSServer(&fake{})
	defer srv.Close()
	ctx := context.Background()
	c, _ := New(Config{URL: srv.URL, MaxRetries: 1, Backoff: time.Millisecond})
	if err := c.EnsureTemplate(ctx); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("unknown CA accepted: %v", err)
	}
	c, _ = New(Config{URL: srv.URL, InsecureSkipTLSVerify: true})
	if err := c.EnsureTemplate(ctx); err != nil {
		t.Errorf("insecure: %v", err)
	}
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := New(Config{URL: srv.URL, CAFile: ca})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.EnsureTemplate(ctx); err != nil {
		t.Errorf("with CA file: %v", err)
	}
	if _, err := New(Config{URL: srv.URL, CAFile: filepath.Join(t.TempDir(), "none.pem")}); err == nil {
		t.Error("missing CA file accepted")
	}
}
