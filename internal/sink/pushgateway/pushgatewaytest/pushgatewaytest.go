// Package pushgatewaytest starts Debian's real prometheus-pushgateway for tests and scrapes
// it. Only tests import it.
package pushgatewaytest

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/testdaemon"
	"github.com/cnperf/cnperf/internal/testport"
)

// Start runs prometheus-pushgateway on a free loopback port, in memory only, and returns its
// URL; it is stopped at cleanup. Without the binary the test is skipped, or fails when
// CNPERF_REQUIRE_PROMETHEUS is set.
func Start(t testing.TB) string {
	t.Helper()
	return StartOn(t, "127.0.0.1")
}

// StartOn is Start on a free port of one of this host's addresses (e.g. the one the e2e
// cluster's pods reach the host on).
func StartOn(t testing.TB, host string) string {
	t.Helper()
	bin := need(t, "prometheus-pushgateway")
	// a port nothing takes before the daemon binds it (testport.Free: one from listen(":0"),
	// released, could be another test's by then)
	addr := net.JoinHostPort(host, strconv.Itoa(testport.Free(t)))
	logs, _ := testdaemon.Start(t, exec.Command(bin, "--web.listen-address="+addr, "--persistence.file="), 10*time.Second)
	u := "http://" + addr
	waitReady(t, "the pushgateway", u, 30*time.Second, logs)
	return u
}

// need returns the path of Debian's program bin (of the package of the same name); without
// it the test is skipped, or fails when CNPERF_REQUIRE_PROMETHEUS is set.
func need(t testing.TB, bin string) string {
	t.Helper()
	path, err := exec.LookPath(bin)
	if err != nil {
		msg := bin + " is not installed (Debian package " + bin + "; .ci/install-deps.sh installs it)"
		if os.Getenv("CNPERF_REQUIRE_PROMETHEUS") != "" {
			t.Fatal(msg + " (CNPERF_REQUIRE_PROMETHEUS is set)")
		}
		t.Skip(msg)
	}
	return path
}

// waitReady waits until u/-/ready answers 200 (Prometheus' and the Pushgateway's readiness
// endpoint); after timeout the test fails with the daemon's logs.
func waitReady(t testing.TB, name, u string, timeout time.Duration, logs *bytes.Buffer) {
	t.Helper()
	for deadline := time.Now().Add(timeout); ; {
		resp, err := http.Get(u + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s at %s did not get ready:\n%s", name, u, logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Scrape returns the Pushgateway's /metrics.
func Scrape(t testing.TB, u string) string {
	t.Helper()
	resp, err := http.Get(u + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("scrape %s/metrics: %v %s", u, err, resp.Status)
	}
	return string(b)
}
