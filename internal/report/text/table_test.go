package text

import (
	"bytes"
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
