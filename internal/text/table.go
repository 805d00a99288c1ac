// Package text lays out aligned plain-text and Markdown tables.
package text

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/cnperf/cnperf/internal/safetext"
)

// Widths of the tables for people. A default view fits the width of the output (FitWidth):
// DefaultWidth when it is unknown, never more than DefaultWidth (prose and columns read best
// there; the wide views have no limit) and never less than MinWidth.
const (
	DefaultWidth = 120
	MinWidth     = 60
)

// FitWidth is the width a default view fits when the output is columns wide (0: unknown).
func FitWidth(columns int) int {
	switch {
	case columns <= 0 || columns > DefaultWidth:
		return DefaultWidth
	case columns < MinWidth:
		return MinWidth
	}
	return columns
}

// Table is a grid of cells with a header row.
type Table struct {
	Header []string
	// Right marks right-aligned (numeric) columns by index.
	Right map[int]bool
	Rows  [][]string
	// Hide marks columns left out of the output by index.
	Hide map[int]bool
	// Titles are lines printed as they are (after indent) before the row of their index, e.g.
	// a group's name above its rows: they take no part in the columns' widths. Write only.
	Titles map[int]string
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
	for _, l := range t.lines(indent) {
		if _, err := fmt.Fprintln(w, l); err != nil {
			return err
		}
	}
	return nil
}

// lines are the lines Write prints: the header, then the rows.
func (t *Table) lines(indent string) []string {
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
	out := make([]string, 0, len(t.Rows)+len(t.Titles)+1)
	out = append(out, line(t.Header))
	for i, r := range t.Rows {
		if title, ok := t.Titles[i]; ok {
			out = append(out, strings.TrimRight(indent+safetext.Terminal(title), " "))
		}
		out = append(out, line(r))
	}
	return out
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

// LineWidth is the width of the widest line Write prints with indent.
func (t *Table) LineWidth(indent string) int {
	max := 0
	for _, l := range t.lines(indent) {
		if n := Width(l); n > max {
			max = n
		}
	}
	return max
}

// Fit hides the columns of drop, in that order, until every line Write prints with indent
// is at most width columns wide or drop is exhausted, and returns the headers of the
// columns it hid (a column already hidden is skipped). The table may stay wider than width
// when the columns that are not in drop do not fit.
func (t *Table) Fit(width int, indent string, drop []int) []string {
	if t.Hide == nil {
		t.Hide = map[int]bool{}
	}
	var hid []string
	for _, i := range drop {
		if t.LineWidth(indent) <= width {
			break
		}
		if t.Hide[i] {
			continue
		}
		t.Hide[i] = true
		hid = append(hid, t.Header[i])
	}
	return hid
}

// Logf writes one progress line to w: prefix and the message, wrapped to DefaultWidth with a
// two-space hanging indent (node lists and an API server's answers can be long).
func Logf(w io.Writer, prefix, format string, a ...any) {
	fmt.Fprintln(w, strings.Join(Wrap(fmt.Sprintf(format, a...), DefaultWidth, prefix, "  "), "\n"))
}

// OneLine is s on one line (every run of white space one space), cut to at most maxColumns
// columns with "…" where it was cut: a tool's whole usage text in an error stays readable.
func OneLine(s string, maxColumns int) string {
	s = Folded(s)
	if Width(s) > maxColumns {
		rs := []rune(s)
		s = string(rs[:maxColumns-1]) + "…"
	}
	return s
}

// Wrap breaks s into lines of at most width columns at spaces: the first line starts with
// first, the others with rest (a hanging indent). A word longer than a line is not broken.
func Wrap(s string, width int, first, rest string) []string {
	fields := strings.Fields(s)
	words := make([]chunk, len(fields))
	for i, w := range fields {
		words[i] = chunk{space: " ", word: w}
	}
	lines := fill(words, width, first, rest)
	lines[len(lines)-1] = strings.TrimRight(lines[len(lines)-1], " ")
	return lines
}

// fill lays words on lines of at most width columns, greedily (each word on the line if it
// fits there with the white space before it, else it starts the next): the first line starts
// with first, the others with rest, and a word wider than a line gets one of its own. Wrap and
// WrapLines share it.
func fill(words []chunk, width int, first, rest string) []string {
	var lines []string
	line := first
	for i, c := range words {
		switch {
		case i == 0:
			line += c.word
		case Width(line)+Width(c.space)+Width(c.word) > width:
			lines = append(lines, line)
			line = rest + c.word
		default:
			line += c.space + c.word
		}
	}
	return append(lines, line)
}

// WrapLines breaks every line of s wider than width columns at spaces into lines of at most
// width columns, each continuation starting with its line's own leading white space and then
// hang (a hanging indent). A line already within width is kept byte for byte, and so are the
// spaces between words that stay together. A word is never broken, nor a quoted value
// ("…", `…`, '…') that fits on a line, so a path, URL or value stays whole (and searchable); a
// word or quoted value wider than a line gets a line of its own, except a comma-separated
// list (not a URL), which breaks after its commas.
func WrapLines(s string, width int, hang string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if Width(l) > width {
			lines[i] = wrapLine(l, width, hang)
		}
	}
	return strings.Join(lines, "\n")
}

// wrapLine is WrapLines for one line.
func wrapLine(l string, width int, hang string) string {
	body := strings.TrimLeft(l, " \t")
	indent := l[:len(l)-len(body)]
	rest := indent + hang
	return strings.Join(fill(chunks(body, width-Width(rest)), width, indent, rest), "\n")
}

// chunk is a word and the white space before it.
type chunk struct{ space, word string }

// chunks splits s at runs of white space outside quoted values no wider than max columns.
func chunks(s string, max int) []chunk {
	quoted := quotedSpans(s, max)
	var out []chunk
	i := 0
	for i < len(s) {
		j := i
		for j < len(s) && isSpace(s[j]) {
			j++
		}
		k := j
		for k < len(s) && (!isSpace(s[k]) || quoted[k]) {
			k++
		}
		out = append(out, chunk{space: s[i:j], word: s[j:k]})
		// a comma-separated list (kubectl's "allowed formats are: a,b,c") wider than a line
		// breaks after its commas, every item whole; a URL does not
		if w := s[j:k]; Width(w) > max && strings.Contains(w, ",") && !strings.Contains(w, "://") {
			out = out[:len(out)-1]
			for n, item := range strings.SplitAfter(w, ",") {
				if n == 0 {
					out = append(out, chunk{space: s[i:j], word: item})
				} else if item != "" {
					out = append(out, chunk{word: item})
				}
			}
		}
		i = k
	}
	return out
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' }

// quotedSpans marks the bytes of s inside quoted values no wider than max columns: "…" (a
// backslash escapes the next byte, as %q writes it), `…`, and '…' where the opening quote starts
// a word and the closing one ends one (an apostrophe inside a word, as in "isn't", is neither).
// A quote that is not closed on the line quotes nothing.
func quotedSpans(s string, max int) map[int]bool {
	in := map[int]bool{}
	for i := 0; i < len(s); i++ {
		q := s[i]
		if q != '"' && q != '`' && (q != '\'' || (i > 0 && !isSpace(s[i-1]) && !strings.ContainsRune("([{=:,", rune(s[i-1])))) {
			continue
		}
		end := -1
		for j := i + 1; j < len(s) && end < 0; j++ {
			switch {
			case q == '"' && s[j] == '\\':
				j++
			case s[j] != q:
			case q != '\'' || j+1 == len(s) || isSpace(s[j+1]) || strings.ContainsRune(".,;:!?)]}", rune(s[j+1])):
				end = j
			}
		}
		if end < 0 {
			continue
		}
		if Width(s[i:end+1]) <= max {
			for k := i; k <= end; k++ {
				in[k] = true
			}
		}
		i = end
	}
	return in
}

// Folded is s with every run of white space (newlines and a wrapped line's indent too) one
// space and none at either end: what a message says, however it was wrapped.
func Folded(s string) string { return strings.Join(strings.Fields(s), " ") }

// ContainsFolded reports whether s holds phrase, white space folded in both (Folded): for
// tests that look for a phrase in stderr, where an error may be wrapped (WrapLines) inside it.
func ContainsFolded(s, phrase string) bool { return strings.Contains(Folded(s), Folded(phrase)) }
