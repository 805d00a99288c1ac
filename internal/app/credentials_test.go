package app_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/agenttoken"
)

// A real local `cnperf run` with the agent token and OpenSearch credentials given through the
// environment, shipping to a server that echoes the request (its Authorization header and
// URL) in its error: neither the token nor the password, its URL-escaped or Basic form
// appears on stdout, stderr, in the error, in the results file or on the agent's command line
// (what ps shows).
func TestRunCredentialsNeverShown(t *testing.T) {
	const pw = "s3cr3t-Pa55:word"
	token := strings.Repeat("7f", 32)
	secrets := []string{token, pw, "s3cr3t-Pa55%3Aword", base64.StdEncoding.EncodeToString([]byte("elastic:" + pw))}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, fmt.Sprintf(`{"error":"denied %s %s; Authorization: %s; password was %s"}`, r.Method, r.URL, r.Header.Get("Authorization"), pw), http.StatusBadRequest)
	}))
	defer srv.Close()
	t.Setenv(agenttoken.Env, token)
	t.Setenv("CNPERF_OPENSEARCH_USERNAME", "elastic")
	t.Setenv("CNPERF_OPENSEARCH_PASSWORD", pw)
	results := filepath.Join(t.TempDir(), "run.jsonl")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	done := make(chan result, 1)
	go func() {
		done <- run(t, ctx, "run", "--platform", "local", "-o", "json", "--no-progress", "--driver", "native", "--profile", "TCP_RR",
			"--duration", "2s", "--samples", "1", "--results", results, "--opensearch", srv.URL, "--allow-plain-http-credentials")
	}()
	var cmdlines []string
	var r result
	for r.stdout == "" && r.err == nil {
		select {
		case r = <-done:
		case <-time.After(50 * time.Millisecond):
			if a, err := findAgent(); err == nil && a != nil {
				cmdlines = append(cmdlines, strings.Join(a.argv, " "))
			}
		}
	}
	if len(cmdlines) == 0 {
		t.Fatal("the agent was never seen")
	}
	if r.err == nil || !strings.Contains(r.err.Error()+r.stderr, "400") {
		t.Errorf("err = %v: want the OpenSearch server's refusal reported\n%s", r.err, r.stderr)
	}
	file, err := os.ReadFile(results)
	if err != nil || !strings.Contains(string(file), `"results"`) && !strings.Contains(string(file), `"profile"`) {
		t.Fatalf("results file: %v\n%s", err, file)
	}
	all := map[string]string{"stdout": r.stdout, "stderr": r.stderr, "results file": string(file), "agent command line": strings.Join(cmdlines, "\n")}
	if r.err != nil {
		all["error"] = r.err.Error()
	}
	for where, text := range all {
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("%q is in the %s:\n%s", s, where, text)
			}
		}
	}
	t.Logf("error: %v\nstderr:\n%s", r.err, r.stderr)
}
