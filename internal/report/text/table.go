// Package text lays out aligned plain-text and Markdown tables.
package text

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/cnperf/cnperf/internal/safetext"
)

// Table is a grid of cells with a header row.
type Table struct {
	Header []string
	// Right marks right-aligned (numeric) columns by index.
	Right map[int]bool
	Rows  [][]string
	// Hide marks columns left out of the output by index.
	Hide map[int]bool
}

// Width is the display width of s: one column per rune (cnperf prints µ, ±, Δ, − and ASCII).
func Width(s string) int { return utf8.RuneCountInString(s) }

func pad(s string, w int, right bool) string {
	n := w - Width(s)
	if n <= 0 {
		return s
	}
	if right {
		return strings.Repeat(" ", n) + s
	}
	return s + strings.Repeat(" ", n)
}

func (t *Table) visible() []int {
	var cols []int
	for i := range t.Header {
		if !t.Hide[i] {
			cols = append(cols, i)
		}
	}
	return cols
}

func cell(row []string, i int) string {
	if i < len(row) {
		return safetext.Terminal(strings.ReplaceAll(row[i], "\n", " "))
	}
	return ""
}

// Write prints the table with two spaces between columns, each line prefixed by indent.
// Trailing spaces are trimmed.
func (t *Table) Write(w io.Writer, indent string) error {
	cols := t.visible()
	widths := make(map[int]int, len(cols))
	for _, i := range cols {
		widths[i] = Width(t.Header[i])
		for _, r := range t.Rows {
			if n := Width(cell(r, i)); n > widths[i] {
				widths[i] = n
			}
		}
	}
	line := func(r []string) string {
		parts := make([]string, 0, len(cols))
		for _, i := range cols {
			parts = append(parts, pad(cell(r, i), widths[i], t.Right[i]))
		}
		return strings.TrimRight(indent+strings.Join(parts, "  "), " ")
	}
	if _, err := fmt.Fprintln(w, line(t.Header)); err != nil {
		return err
	}
	for _, r := range t.Rows {
		if _, err := fmt.Fprintln(w, line(r)); err != nil {
			return err
		}
	}
	return nil
}

// WriteMarkdown prints the table as a GitHub-flavoured Markdown table.
func (t *Table) WriteMarkdown(w io.Writer) error {
	cols := t.visible()
	esc := func(s string) string { return strings.ReplaceAll(cell([]string{s}, 0), "|", `\|`) }
	row := func(r []string) string {
		parts := make([]string, 0, len(cols))
		for _, i := range cols {
			parts = append(parts, esc(cell(r, i)))
		}
		return "| " + strings.Join(parts, " | ") + " |"
	}
	if _, err := fmt.Fprintln(w, row(t.Header)); err != nil {
		return err
	}
	seps := make([]string, 0, len(cols))
	for _, i := range cols {
		if t.Right[i] {
			seps = append(seps, "---:")
		} else {
			seps = append(seps, "---")
		}
	}
	if _, err := fmt.Fprintln(w, "| "+strings.Join(seps, " | ")+" |"); err != nil {
		return err
	}
	for _, r := range t.Rows {
		if _, err := fmt.Fprintln(w, row(r)); err != nil {
			return err
		}
	}
	return nil
}
