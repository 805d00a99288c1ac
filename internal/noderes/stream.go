package noderes

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

// StreamScript prints a snapshot of the node every interval, in BundleScript's format with
// an "@@end" line after each, until its output is closed. It needs a POSIX shell, cat,
// grep and a sleep that takes fractions of a second (busybox, coreutils).
func StreamScript(interval time.Duration) string {
	secs := strconv.FormatFloat(interval.Seconds(), 'f', -1, 64)
	return `while :; do echo @@uptime; cat /proc/uptime; echo @@stat; grep '^cpu' /proc/stat; ` +
		`echo @@meminfo; grep -E '^(MemTotal|MemAvailable|MemFree|Buffers|Cached):' /proc/meminfo; ` +
		`echo @@end || exit 0; sleep ` + secs + `; done`
}

// Timed is a snapshot and when it arrived.
type Timed struct {
	At   time.Time
	Snap Snapshot
}

// Series is the snapshots a StreamScript sent, timed on arrival: a window between any two
// moments of the stream can be measured afterwards, from the snapshots closest to its edges.
// It is safe for concurrent use.
type Series struct {
	Node string

	mu     sync.Mutex
	snaps  []Timed
	closed bool
	err    error
	wake   chan struct{}
}

// NewSeries returns an empty series for node.
func NewSeries(node string) *Series { return &Series{Node: node, wake: make(chan struct{})} }

// Add records a snapshot.
func (s *Series) Add(t Timed) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.snaps = append(s.snaps, t)
	close(s.wake)
	s.wake = make(chan struct{})
}

// Close marks the end of the stream, with the error that ended it (nil: a normal end).
func (s *Series) Close(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.closed, s.err = true, err
	close(s.wake)
	s.wake = make(chan struct{})
}

// Len is the number of snapshots so far.
func (s *Series) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.snaps)
}

// WaitFor waits until the series holds a snapshot that arrived at or after t, the stream
// ended, or ctx ends.
func (s *Series) WaitFor(ctx context.Context, t time.Time) error {
	for {
		s.mu.Lock()
		n := len(s.snaps)
		ok := n > 0 && !s.snaps[n-1].At.Before(t)
		closed, err, wake := s.closed, s.err, s.wake
		s.mu.Unlock()
		if ok {
			return nil
		}
		if closed {
			if err != nil {
				return fmt.Errorf("node resources of %s: the /proc stream ended: %w", s.Node, err)
			}
			return fmt.Errorf("node resources of %s: the /proc stream ended before %s", s.Node, t.Format(time.RFC3339Nano))
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return fmt.Errorf("node resources of %s: no /proc snapshot after the window's end: %w", s.Node, context.Cause(ctx))
		}
	}
}

// Window measures the node between start and end: from the last snapshot that arrived at or
// before start to the first that arrived at or after end. A snapshot is read before it
// arrives, so the window opens at or before start; it closes when the closing snapshot was
// read, its delivery delay (the rest of its /proc reads, the stream, the reader's wake-up)
// before it arrived, which on a loaded node can be before end: the window is then shorter
// than asked by up to that delay. WindowSeconds says how long it really was.
func (s *Series) Window(start, end time.Time) (api.NodeResources, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.snaps) < 2 {
		return api.NodeResources{}, fmt.Errorf("node resources of %s: %d /proc snapshot(s), need 2", s.Node, len(s.snaps))
	}
	a, b := -1, -1
	for i, t := range s.snaps {
		if !t.At.After(start) {
			a = i
		}
		if b < 0 && !t.At.Before(end) {
			b = i
		}
	}
	if a < 0 {
		return api.NodeResources{}, fmt.Errorf("node resources of %s: the first /proc snapshot came %s after the window began",
			s.Node, s.snaps[0].At.Sub(start).Round(time.Millisecond))
	}
	if b < 0 {
		return api.NodeResources{}, fmt.Errorf("node resources of %s: no /proc snapshot after the window's end", s.Node)
	}
	if b == a {
		b = a + 1
		if b >= len(s.snaps) {
			return api.NodeResources{}, fmt.Errorf("node resources of %s: one snapshot spans the whole window", s.Node)
		}
	}
	r, err := Delta(s.snaps[a].Snap, s.snaps[b].Snap)
	if err != nil {
		return r, err
	}
	r.Node = s.Node
	return r, nil
}

// ReadStream reads StreamScript's output from r until it ends, adding every snapshot to s
// timed by now() when its "@@end" line arrived, and closes s with the error that ended it.
func ReadStream(r io.Reader, s *Series, now func() time.Time) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 4<<20)
	var cur strings.Builder
	var err error
	for sc.Scan() {
		line := sc.Text()
		if line != "@@end" {
			cur.WriteString(line)
			cur.WriteByte('\n')
			continue
		}
		at := now()
		snap, perr := ParseBundle([]byte(cur.String()))
		cur.Reset()
		if perr != nil {
			err = perr
			break
		}
		s.Add(Timed{At: at, Snap: snap})
	}
	if err == nil {
		err = sc.Err()
	}
	s.Close(err)
	return err
}
