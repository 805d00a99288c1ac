// Package capbuf is a goroutine-safe byte buffer that keeps at most a fixed number of bytes,
// so that a runaway command's output cannot exhaust memory.
package capbuf

import (
	"bytes"
	"sync"
)

// Buffer keeps the first Max bytes written to it and remembers that it dropped the rest.
// Writes never fail: what does not fit is discarded.
type Buffer struct {
	Max int

	mu        sync.Mutex
	buf       bytes.Buffer
	truncated bool
}

// Write keeps what fits and reports the whole of p as written.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	room := b.Max - b.buf.Len()
	if len(p) > room {
		if room > 0 {
			b.buf.Write(p[:room])
		}
		b.truncated = true
		return len(p), nil
	}
	return b.buf.Write(p)
}

// Bytes is a copy of what was kept.
func (b *Buffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]byte(nil), b.buf.Bytes()...)
}

// Truncated reports whether some output was dropped.
func (b *Buffer) Truncated() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.truncated
}
