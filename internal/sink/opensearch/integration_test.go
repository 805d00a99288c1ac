package opensearch

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/figure"
	"github.com/cnperf/cnperf/internal/testdaemon"
	"github.com/cnperf/cnperf/internal/testport"
)

// OpenSearch version of the Maven artifact org.opensearch.distribution.integ-test-zip:opensearch.
const openSearchVersion = "2.18.0"

// skipOrFail skips, or fails when CNPERF_REQUIRE_OPENSEARCH is set (so CI cannot pass by skipping).
func skipOrFail(t *testing.T, format string, a ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, a...)
	if os.Getenv("CNPERF_REQUIRE_OPENSEARCH") != "" {
		t.Fatal(msg + " (CNPERF_REQUIRE_OPENSEARCH is set)")
	}
	t.Skip(msg + "; set CNPERF_REQUIRE_OPENSEARCH=1 to make this a failure")
}

// openSearchZip returns the distribution zip, fetched once with Maven into a cache directory.
func openSearchZip(t *testing.T) string {
	t.Helper()
	cache := os.Getenv("CNPERF_TEST_CACHE")
	if cache == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			skipOrFail(t, "no cache directory: %v", err)
		}
		cache = filepath.Join(dir, "cnperf-test")
	}
	zip := filepath.Join(cache, "opensearch-"+openSearchVersion+".zip")
	if _, err := os.Stat(zip); err == nil {
		return zip
	}
	mvn, err := exec.LookPath("mvn")
	if err != nil {
		skipOrFail(t, "mvn not installed, cannot fetch OpenSearch from Maven Central")
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, mvn, "-q", "-B", "dependency:copy",
		"-Dartifact=org.opensearch.distribution.integ-test-zip:opensearch:"+openSearchVersion+":zip",
		"-DoutputDirectory="+cache).CombinedOutput()
	if err != nil {
		skipOrFail(t, "fetching OpenSearch with Maven failed: %v\n%s", err, out)
	}
	return zip
}

// startOpenSearch unpacks and starts a single-node OpenSearch on loopback and returns its
// URL. It runs as uid/gid 65534 when the test runs as root (OpenSearch refuses root), in its
// own process group, which cleanup kills.
func startOpenSearch(t *testing.T) string {
	t.Helper()
	if u := os.Getenv("CNPERF_OPENSEARCH_URL"); u != "" {
		return u
	}
	java, err := exec.LookPath("java")
	if err != nil {
		skipOrFail(t, "java not installed")
	}
	zip := openSearchZip(t)
	// Not t.TempDir(): its parent is private to root, and OpenSearch may run as another user.
	dir, err := os.MkdirTemp("", "cnperf-opensearch-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if out, err := exec.Command("unzip", "-q", zip, "-d", dir).CombinedOutput(); err != nil {
		t.Fatalf("unzip: %v\n%s", err, out)
	}
	home := filepath.Join(dir, "opensearch-"+openSearchVersion)
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	httpPort, transportPort := testport.Free(t), testport.Free(t)
	cmd := exec.Command(filepath.Join(home, "bin", "opensearch"),
		"-Ediscovery.type=single-node", "-Enetwork.host=127.0.0.1",
		fmt.Sprintf("-Ehttp.port=%d", httpPort), fmt.Sprintf("-Etransport.port=%d", transportPort),
		"-Epath.data="+data, "-Epath.logs="+data, "-Ecluster.routing.allocation.disk.threshold_enabled=false")
	javaHome, _ := filepath.EvalSymlinks(java)
	cmd.Env = append(os.Environ(), "OPENSEARCH_JAVA_OPTS=-Xms384m -Xmx384m",
		"JAVA_HOME="+filepath.Dir(filepath.Dir(javaHome)))
	if os.Geteuid() == 0 {
		if out, err := exec.Command("chown", "-R", "65534:65534", dir).CombinedOutput(); err != nil {
			t.Fatalf("chown: %v\n%s", err, out)
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	logs, done := testdaemon.Start(t, cmd, 20*time.Second)
	url := fmt.Sprintf("http://127.0.0.1:%d", httpPort)
	deadline := time.Now().Add(4 * time.Minute)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			t.Fatalf("OpenSearch exited:\n%s", logs.String())
		case <-time.After(time.Second):
		}
		resp, err := http.Get(url + "/_cluster/health?wait_for_status=yellow&timeout=1s")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return url
			}
		}
	}
	t.Fatalf("OpenSearch did not start in 4 minutes:\n%s", logs.String())
	return ""
}

func TestIndexIntoRealOpenSearch(t *testing.T) {
	if testing.Short() {
		t.Skip("starts OpenSearch (~1 min); skipped with -short")
	}
	base := startOpenSearch(t)
	// The integration distribution has no security plugin, so the password is not checked,
	// but it travels in the header and must appear nowhere in what cnperf prints.
	u := strings.Replace(base, "://", "://admin:"+secret+"@", 1)
	var log bytes.Buffer
	c, err := New(Config{URL: u, Index: "cnperf-it", Log: &log, AllowPlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ver, err := c.Ping(ctx)
	if err != nil || !strings.HasPrefix(ver, "opensearch 2.") {
		t.Fatalf("ping: %q %v", ver, err)
	}
	run := testRun()
	res, err := c.IndexRun(ctx, run)
	if err != nil || res.Indexed != 3 {
		t.Fatalf("index: %+v %v", res, err)
	}
	docs, err := c.SearchRun(ctx, run.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 3 {
		t.Fatalf("searched back %d documents", len(docs))
	}
	for i, d := range docs {
		want := Documents(run)[i].Source
		if d.CaseIndex != i+1 || d.Profile != want.Profile || d.Driver != want.Driver || d.Failed != want.Failed ||
			len(d.Samples) != len(want.Samples) || !d.StartTime.Equal(want.StartTime) {
			t.Errorf("doc %d = %+v", i, d)
		}
	}
	if docs[0].Summary.ThroughputBitsPerSecond == nil || docs[0].Summary.ThroughputBitsPerSecond.Mean != 9.39e9 ||
		docs[0].Cluster.CNI != "calico" || docs[0].Samples[0].Raw != `{"end":{}}` {
		t.Errorf("doc 1 lost data: %+v", docs[0].Summary.ThroughputBitsPerSecond)
	}
	// Mappings from the template: numbers doubles (even when the first value was integral),
	// times dates, strings keywords.
	m, err := c.Mapping(ctx)
	if err != nil {
		t.Fatal(err)
	}
	props := m["cnperf-it"].(map[string]any)["mappings"].(map[string]any)["properties"].(map[string]any)
	typeOf := func(path ...string) string {
		cur := props
		for i, p := range path {
			f, ok := cur[p].(map[string]any)
			if !ok {
				return "<missing>"
			}
			if i == len(path)-1 {
				s, _ := f["type"].(string)
				return s
			}
			cur, _ = f["properties"].(map[string]any)
		}
		return ""
	}
	for _, tc := range []struct {
		path []string
		want string
	}{
		{[]string{"summary", "throughputBitsPerSecond", "mean"}, "double"},
		{[]string{"summary", "samplesTotal"}, "double"},
		{[]string{"summary", "transactionsPerSecond", "mean"}, "double"}, // 20000.5: fractional first
		{[]string{"params", "messageSizeBytes"}, "double"},
		{[]string{"startTime"}, "date"},
		{[]string{"samples", "startTime"}, "date"},
		{[]string{"driver"}, "keyword"},
		{[]string{"runId"}, "keyword"},
		{[]string{"labels", "ci"}, "keyword"},
		{[]string{"caseIndex"}, "integer"},
	} {
		if got := typeOf(tc.path...); got != tc.want {
			t.Errorf("%s mapped as %q, want %q", strings.Join(tc.path, "."), got, tc.want)
		}
	}
	// Indexing again overwrites (stable ids), it does not duplicate.
	if _, err := c.IndexRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	if docs, _ := c.SearchRun(ctx, run.UUID); len(docs) != 3 {
		t.Errorf("after re-indexing: %d documents", len(docs))
	}
	// cnperf trend --opensearch: the runs come back, in start-time order, with their results'
	// parameters, summaries and failure causes (the raw samples stay in the index).
	later := testRun()
	later.UUID, later.StartTime, later.Labels = "8e3a1d2b-0000-4000-8000-000000000002", later.StartTime.Add(24*time.Hour), map[string]string{"ci": "next"}
	if _, err := c.IndexRun(ctx, later); err != nil {
		t.Fatal(err)
	}
	if _, err := c.do(ctx, http.MethodPost, "/cnperf-it/_refresh", "", nil); err != nil {
		t.Fatal(err)
	}
	runs, err := c.ReadRuns(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].UUID != run.UUID || runs[1].UUID != later.UUID || !runs[1].StartTime.Equal(later.StartTime) ||
		runs[1].Labels["ci"] != "next" || runs[0].Cluster.CNI != "calico" {
		t.Fatalf("read back %d runs: %+v", len(runs), runs)
	}
	for i, r := range runs[0].Results {
		want := run.Results[i]
		if figure.CaseKey(&r) != figure.CaseKey(&want) || len(r.Samples) != 0 {
			t.Errorf("result %d: %s (%d samples), want %s without samples", i, figure.CaseKey(&r), len(r.Samples), figure.CaseKey(&want))
		}
	}
	if got := runs[0].Results[0].Summary.ThroughputBitsPerSecond; got == nil || got.Mean != 9.39e9 {
		t.Errorf("summary lost: %+v", got)
	}
	if r := runs[0].Results[2]; r.Error != "connection refused" || figure.FailureCause(&r) != "connection refused" {
		t.Errorf("failed result's cause: %q", r.Error)
	}
	// An error from the server names the URL without the password.
	bad, err := New(Config{URL: u, Index: "no-such-index", AllowPlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = bad.SearchRun(ctx, run.UUID)
	if err == nil || !strings.Contains(err.Error(), "HTTP 404") {
		t.Errorf("search of a missing index: %v", err)
	}
	if strings.Contains(fmt.Sprint(err)+log.String(), secret) {
		t.Error("password printed")
	}
}
