package text

import (
	"bytes"
	"strings"
	"testing"
)

func TestTableAlignsRunesAndHides(t *testing.T) {
	tb := &Table{Header: []string{"A", "VALUE", "HIDDEN", "Δ"}, Right: map[int]bool{1: true},
		Hide: map[int]bool{2: true},
		Rows: [][]string{{"µs", "1.5 ± 0.2", "x", "−3%"}, {"long name", "10", "y", ""}}}
	var b bytes.Buffer
	if err := tb.Write(&b, "  "); err != nil {
		t.Fatal(err)
	}
	want := "  A              VALUE  Δ\n" +
		"  µs         1.5 ± 0.2  −3%\n" +
		"  long name         10\n"
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	if err := tb.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	wantMD := "| A | VALUE | Δ |\n| --- | ---: | --- |\n| µs | 1.5 ± 0.2 | −3% |\n| long name | 10 |  |\n"
	if b.String() != wantMD {
		t.Errorf("markdown:\n%s\nwant:\n%s", b.String(), wantMD)
	}
}

func TestFitHidesInOrderUntilItFits(t *testing.T) {
	mk := func() *Table {
		return &Table{Header: []string{"ID", "NAME", "COV", "NOTE"},
			Rows: [][]string{{"1", "TCP_STREAM", "0.9%", "a long remark"}, {"2", "µ±", "12.0%", "-"}}}
	}
	for _, tc := range []struct {
		width   int
		drop    []int
		hidden  string
		fitting bool
	}{
		{width: 100, drop: []int{3, 2}, hidden: "", fitting: true},
		{width: 30, drop: []int{3, 2}, hidden: "NOTE", fitting: true},
		{width: 18, drop: []int{3, 2}, hidden: "NOTE,COV", fitting: true},
		{width: 10, drop: []int{3, 2}, hidden: "NOTE,COV", fitting: false}, // ID and NAME are not in drop
	} {
		tb := mk()
		hid := tb.Fit(tc.width, "  ", tc.drop)
		if got := strings.Join(hid, ","); got != tc.hidden {
			t.Errorf("width %d: hid %q, want %q", tc.width, got, tc.hidden)
		}
		var b bytes.Buffer
		if err := tb.Write(&b, "  "); err != nil {
			t.Fatal(err)
		}
		widest := 0
		for _, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
			widest = max(widest, Width(l))
		}
		if widest != tb.LineWidth("  ") || (widest <= tc.width) != tc.fitting {
			t.Errorf("width %d: widest line %d, LineWidth %d, fitting %v:\n%s", tc.width, widest, tb.LineWidth("  "), tc.fitting, b.String())
		}
	}
}

func TestWrap(t *testing.T) {
	for _, tc := range []struct {
		s     string
		width int
		want  []string
	}{
		{"one two three", 20, []string{"  one two three"}},
		{"one two three four", 12, []string{"  one two", "    three", "    four"}},
		{"averyveryverylongword x", 8, []string{"  averyveryverylongword", "    x"}},
		{"µs ± µs ± µs", 9, []string{"  µs ± µs", "    ± µs"}},
		{"", 10, []string{""}},
	} {
		if got := Wrap(tc.s, tc.width, "  ", "    "); strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("Wrap(%q, %d) = %q, want %q", tc.s, tc.width, got, tc.want)
		}
	}
}

// TestLogf: a progress line starts with its prefix and is wrapped to DefaultWidth with a
// hanging indent.
func TestLogf(t *testing.T) {
	var b strings.Builder
	Logf(&b, "kube: ", "%s", strings.Repeat("word ", 40))
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "kube: word") || !strings.HasPrefix(lines[1], "  word") {
		t.Fatalf("%q", b.String())
	}
	for _, l := range lines {
		if Width(l) > DefaultWidth {
			t.Errorf("%d columns: %q", Width(l), l)
		}
	}
}
