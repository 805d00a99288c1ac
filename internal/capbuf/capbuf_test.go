package capbuf

import "testing"

func TestBuffer(t *testing.T) {
	for _, tc := range []struct {
		name      string
		max       int
		writes    []string
		want      string
		truncated bool
	}{
		{"fits", 10, []string{"abc", "def"}, "abcdef", false},
		{"exactly full", 6, []string{"abc", "def"}, "abcdef", false},
		{"cut in a write", 4, []string{"abc", "def"}, "abcd", true},
		{"full before a write", 3, []string{"abc", "d"}, "abc", true},
		{"empty write when full", 3, []string{"abc", ""}, "abc", false},
		{"zero max", 0, []string{"a"}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &Buffer{Max: tc.max}
			for _, w := range tc.writes {
				if n, err := b.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
			}
			if got := string(b.Bytes()); got != tc.want {
				t.Errorf("kept %q, want %q", got, tc.want)
			}
			if b.Truncated() != tc.truncated {
				t.Errorf("truncated %v, want %v", b.Truncated(), tc.truncated)
			}
		})
	}
}
