package local

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// portLockFile is the lock that cnperf processes on this host take while they place and start
// their loopback servers.
var portLockFile = filepath.Join(os.TempDir(), "cnperf-local-ports.lock")

// lockHostPorts serialises, between the cnperf processes of this host, the time from checking
// that a server's default ports are free (placeServers) to the server listening on them
// (startServer's waitReady). Without it two local runs at once (or two packages of
// `go test ./...`) both found 7100 free, both started an agent on it, and the later one's
// failed: "listen tcp 127.0.0.1:7100: bind: address already in use". With it the second run
// finds the port taken and moves its server (driver.PortMover).
//
// The lock is advisory (flock) and released by unlock or when the process ends, whatever
// way it ends. When the file cannot be opened (another user's file in a sticky /tmp), the
// run goes on without it, as before.
func lockHostPorts(ctx context.Context) (unlock func(), err error) {
	f, err := os.OpenFile(portLockFile, os.O_RDONLY|os.O_CREATE, 0o644)
	if err != nil {
		if f, err = os.Open(portLockFile); err != nil {
			return func() {}, nil
		}
	}
	fd := int(f.Fd())
	for {
		err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { _ = syscall.Flock(fd, syscall.LOCK_UN); _ = f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			_ = f.Close()
			return func() {}, nil // a file system without flock: as before
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}
