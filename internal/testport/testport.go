// Package testport gives tests a TCP port on loopback that nothing listens on now (tests and
// other programs share the machine: fixed ports may be taken). Only tests import it.
package testport

import (
	"net"
	"testing"
)

// Free returns a port on 127.0.0.1 that was free when asked: it listens on port 0, reads the
// port the kernel chose and closes the listener.
func Free(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
