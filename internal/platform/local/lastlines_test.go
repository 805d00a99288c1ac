package local

import (
	"strings"
	"testing"
)

func TestLastLines(t *testing.T) {
	usage := "sockperf: '-i' Invalid address: ::\n" + strings.Repeat("help line\n", 20) + "last\n"
	for _, tc := range []struct {
		name, out string
		n         int
		want      string
	}{
		{"empty", "", 3, "(no output)"},
		{"short", "a\nb\n", 3, "a | b"},
		{"exactly n", "a\nb\nc\n", 3, "a | b | c"},
		// The reason a tool gives first is kept before its usage's last lines.
		{"reason first", usage, 3, "sockperf: '-i' Invalid address: :: | … | help line | last"},
	} {
		if got := lastLines([]byte(tc.out), tc.n); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}
