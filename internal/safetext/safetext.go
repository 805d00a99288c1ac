// Package safetext makes text from outside cnperf (tool output, error messages, notes, names
// read from results files) safe to show: on a terminal without its control sequences, and in
// XML and HTML without the characters XML 1.0 forbids.
package safetext

import (
	"bytes"
	"io"
	"unicode/utf8"
)

// Terminal returns s without terminal control sequences (ANSI/ECMA-48 CSI, OSC, DCS and other
// escape sequences, in their 7-bit and 8-bit forms), without other control characters but
// tab and newline, and without bidirectional overrides; invalid UTF-8 becomes U+FFFD.
func Terminal(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\t' && c != '\n' || c >= 0x7f {
			var f filter
			return string(f.clean(nil, []byte(s), true))
		}
	}
	return s // the common case: printable ASCII
}

// Writer is an io.Writer that removes what Terminal removes from everything written through
// it, keeping state across writes (an escape sequence or a UTF-8 character split between two
// writes).
type Writer struct {
	w io.Writer
	f filter
}

// NewWriter filters w. With keepClearLine it lets through one sequence cnperf writes itself
// on stderr: "\r\x1b[K" (return to the line start and clear it), which the live progress line
// uses; it must come in one write.
func NewWriter(w io.Writer, keepClearLine bool) *Writer {
	return &Writer{w: w, f: filter{keepClearLine: keepClearLine}}
}

// Unwrap returns the filtered writer (iostreams.IsTerminal looks through it).
func (w *Writer) Unwrap() io.Writer { return w.w }

// Write implements io.Writer; it reports len(p) written when the filtered bytes were.
func (w *Writer) Write(p []byte) (int, error) {
	out := w.f.clean(nil, p, false)
	if len(out) == 0 {
		return len(p), nil
	}
	if _, err := w.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

const clearLine = "\r\x1b[K"

type state int

const (
	text   state = iota
	escape       // after ESC
	csi          // a control sequence: parameters until a final byte
	str          // OSC, DCS, SOS, PM, APC: until BEL or ST
	strEsc       // ESC inside a string: ST is ESC '\'
	nf           // ESC and intermediate bytes, until a final byte
)

// filter is the state machine behind Terminal and Writer.
type filter struct {
	st            state
	pending       []byte // an incomplete UTF-8 character at the end of the last write
	keepClearLine bool
}

func (f *filter) clean(out, p []byte, final bool) []byte {
	if len(f.pending) > 0 {
		p = append(f.pending, p...)
		f.pending = nil
	}
	for i := 0; i < len(p); {
		if f.keepClearLine && f.st == text && bytes.HasPrefix(p[i:], []byte(clearLine)) {
			out = append(out, clearLine...)
			i += len(clearLine)
			continue
		}
		r, size := utf8.DecodeRune(p[i:])
		if r == utf8.RuneError && size <= 1 && !final && !utf8.FullRune(p[i:]) {
			f.pending = append([]byte(nil), p[i:]...)
			break
		}
		i += size
		out = f.rune(out, r, size)
	}
	return out
}

// rune handles one character (U+FFFD with size 1 for an invalid byte).
func (f *filter) rune(out []byte, r rune, size int) []byte {
	if r == '\n' {
		// A newline ends any sequence, so a broken one cannot swallow the rest of the output.
		f.st = text
		return append(out, '\n')
	}
	switch f.st {
	case escape:
		switch {
		case r == '[':
			f.st = csi
		case r == ']' || r == 'P' || r == 'X' || r == '^' || r == '_':
			f.st = str
		case r >= 0x20 && r <= 0x2f:
			f.st = nf
		default:
			f.st = text // a two-character sequence (ESC 7, ESC c, ...)
		}
		return out
	case csi:
		if r >= 0x40 && r <= 0x7e || r < 0x20 || r > 0x7e {
			f.st = text
		}
		return out
	case nf:
		if r < 0x20 || r > 0x2f {
			f.st = text
		}
		return out
	case str:
		switch r {
		case 0x07, 0x9c:
			f.st = text
		case 0x1b:
			f.st = strEsc
		}
		return out
	case strEsc:
		if r == '\\' {
			f.st = text
		} else {
			f.st = str
		}
		return out
	}
	switch {
	case r == 0x1b:
		f.st = escape
	case r == 0x9b:
		f.st = csi
	case r == 0x90 || r == 0x98 || r == 0x9d || r == 0x9e || r == 0x9f:
		f.st = str
	case r == '\t':
		out = append(out, '\t')
	case r < 0x20 || r >= 0x7f && r < 0xa0:
		// other C0 and C1 controls, DEL: dropped
	case r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069:
		// bidirectional embeddings, overrides and isolates: they reorder what is shown
	case r == utf8.RuneError && size == 1:
		out = append(out, "\uFFFD"...)
	default:
		out = utf8.AppendRune(out, r)
	}
	return out
}

// XML returns b with every character XML 1.0 forbids (control characters but tab, newline
// and carriage return; U+FFFE, U+FFFF; invalid UTF-8) replaced by U+FFFD. Applied to a whole
// document it makes CDATA sections and comments well-formed, which encoding/xml does not
// check.
func XML(b []byte) []byte {
	ok := true
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if !xmlChar(r, size) {
			ok = false
			break
		}
		i += size
	}
	if ok {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if xmlChar(r, size) {
			out = append(out, b[i:i+size]...)
		} else {
			out = append(out, "\uFFFD"...)
		}
		i += size
	}
	return out
}

func xmlChar(r rune, size int) bool {
	switch {
	case r == utf8.RuneError && size == 1:
		return false
	case r == '\t' || r == '\n' || r == '\r':
		return true
	case r < 0x20:
		return false
	case r == 0xfffe || r == 0xffff:
		return false
	}
	return true
}
