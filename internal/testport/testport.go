// Package testport gives tests a TCP port on loopback that nothing listens on now (tests and
// other programs share the machine: fixed ports may be taken). Only tests import it.
package testport

import (
	"sync"
	"testing"

	"github.com/cnperf/cnperf/internal/hostport"
)

// Free returns a port that was free (TCP and UDP, every address) when asked, outside the
// kernel's ephemeral range (hostport.Block), so that it stays free until the test's server
// binds it. A port the kernel chose for listen(":0") and released was in that range: under
// load it became the source port of another test's connection before the server bound it
// (TestClientJSON's --data-port, which its agent binds only when the client's test begins).
// A port is given once per test binary: two calls in a row (a server's two ports) never
// return the same one.
func Free(t testing.TB) int {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	for {
		port, err := hostport.Block(1)
		if err != nil {
			t.Fatal(err)
		}
		if !given[port] {
			given[port] = true
			return port
		}
	}
}

var (
	mu    sync.Mutex
	given = map[int]bool{}
)
