package safetext

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
)

func TestTerminal(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "14.83 Gbit/s ± 2 µs", "14.83 Gbit/s ± 2 µs"},
		{"tab and newline kept", "a\tb\nc", "a\tb\nc"},
		{"SGR colour", "\x1b[31mred\x1b[0m", "red"},
		{"clear screen and cursor", "\x1b[2J\x1b[1;1Hx\x1b[?25l", "x"},
		{"OSC title, BEL", "a\x1b]0;pwned\x07b", "ab"},
		{"OSC hyperlink, ST", "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"},
		{"DCS", "a\x1bPq#0;2;0;0;0\x1b\\b", "ab"},
		{"two-character escapes", "a\x1b7b\x1bcc\x1b(Bd", "abcd"},
		{"8-bit CSI", "a\u009b31mb", "ab"},
		{"8-bit OSC", "a\u009d0;t\u009cb", "ab"},
		{"C0 and DEL", "a\x00\x01\x07\x08\x7fb\rc", "abc"},
		{"bidi override", "abc\u202edcba\u202c", "abcdcba"},
		{"invalid UTF-8", "a\xffb\xc3", "a\uFFFDb\uFFFD"},
		{"unterminated OSC ends at newline", "a\x1b]0;title\nvisible", "a\nvisible"},
		{"cnperf's clear-line is not kept in strings", "\r\x1b[Kx", "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Terminal(tt.in); got != tt.want {
				t.Errorf("Terminal(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestWriterSplitWrites: every split of the input between two writes gives the same output,
// and the progress line's clear-line sequence passes.
func TestWriterSplitWrites(t *testing.T) {
	in := "ok µ\x1b[31mred\x1b[0m \x1b]0;t\x07end\u009b1m é\xff\n"
	want := Terminal(in)
	for i := 0; i <= len(in); i++ {
		var b bytes.Buffer
		w := NewWriter(&b, false)
		_, _ = w.Write([]byte(in[:i]))
		_, _ = w.Write([]byte(in[i:]))
		if b.String() != want {
			t.Errorf("split at %d: %q, want %q", i, b.String(), want)
		}
	}
	var b bytes.Buffer
	w := NewWriter(&b, true)
	_, _ = w.Write([]byte("\r\x1b[Kcase 1/2  sample 1/3"))
	_, _ = w.Write([]byte("\r\x1b[K  sample 1 failed: \x1b[2Jiperf3: error\n"))
	if got, want := b.String(), "\r\x1b[Kcase 1/2  sample 1/3\r\x1b[K  sample 1 failed: iperf3: error\n"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

func TestXML(t *testing.T) {
	in := []byte("<a><![CDATA[note \x01\x1b[31m \xff ok é]]></a>")
	out := XML(in)
	if bytes.Contains(out, []byte{0x01}) || bytes.Contains(out, []byte{0x1b}) || bytes.Contains(out, []byte{0xff}) {
		t.Errorf("%q", out)
	}
	if !strings.Contains(string(out), "ok é") {
		t.Errorf("valid text changed: %q", out)
	}
	var v struct {
		Text string `xml:",chardata"`
	}
	if err := xml.Unmarshal(out, &v); err != nil {
		t.Errorf("not well-formed after XML: %v", err)
	}
	if err := xml.Unmarshal(in, &v); err == nil {
		t.Errorf("the input was well-formed already: the test means nothing")
	}
	clean := []byte("<a>plain\ttext\r\n</a>")
	if got := XML(clean); &got[0] != &clean[0] {
		t.Errorf("clean input was copied")
	}
}
