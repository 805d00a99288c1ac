// Package logging is cnperf's log for people: levelled records (log/slog) written to stderr as
// the plain lines cnperf has always printed. Info is a line as it is ("using the local
// platform"), a warning starts "warning: ", an error "error: " and a debug line "debug: ";
// attributes follow as key=value. The level comes from the commands' -v (debug too) and -q
// (errors only); the default shows info and warnings.
//
// A logger given a width (New) wraps each record wider than it at spaces, continuations
// indented two spaces, as cnperf's final error is (text.WrapLines: a path, URL or quoted value
// stays whole): a person reads these lines on a terminal of 120 columns or $COLUMNS.
//
// Library packages take a *slog.Logger (nil is allowed where documented: OrDiscard) or, where
// they print progress lines to an io.Writer, get one from Writer.
package logging

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cnperf/cnperf/internal/text"
)

// Levels of the -v and -q flags.
const (
	// Quiet shows errors only (-q).
	Quiet = slog.LevelError
	// Default shows info, warnings and errors.
	Default = slog.LevelInfo
	// Verbose adds debug lines (-v).
	Verbose = slog.LevelDebug
	// Always is above every level: a line shown even with -q and printed as it is (what a
	// failed clean-up left behind).
	Always = slog.LevelError + 4
)

// New returns a logger writing plain lines to w at level (a *slog.LevelVar lets the level be
// set after the logger is handed out, as the root command does once its flags are parsed),
// each record wrapped to width columns (nil or 0: every record on one line, as it is).
func New(w io.Writer, level slog.Leveler, width *Width) *slog.Logger {
	if level == nil {
		level = Default
	}
	return slog.New(&handler{out: &output{w: w}, level: level, width: width})
}

// Width is the width a logger wraps its records to, which may be set after the logger is
// handed out, as a *slog.LevelVar is for the level (the root command knows only once its
// arguments are parsed whether the command is an agent's, whose stderr cnperf reads back and
// which must not be wrapped). The zero value is 0: no wrapping. It is safe for concurrent use.
type Width struct{ n atomic.Int64 }

// NewWidth returns a Width of n columns.
func NewWidth(n int) *Width {
	w := new(Width)
	w.Set(n)
	return w
}

// Set sets the width to n columns (0: no wrapping).
func (w *Width) Set(n int) { w.n.Store(int64(n)) }

// Columns is the width in columns; 0 for a nil Width.
func (w *Width) Columns() int {
	if w == nil {
		return 0
	}
	return int(w.n.Load())
}

// Discard returns a logger that writes nothing.
func Discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// OrDiscard returns l, or a logger that writes nothing when l is nil.
func OrDiscard(l *slog.Logger) *slog.Logger {
	if l == nil {
		return Discard()
	}
	return l
}

// Writer returns an io.Writer whose every line becomes one record of l at level, or a warning
// or an error when it starts "warning: " or "error: " (for code that prints its lines to a
// writer); nil l writes nothing.
func Writer(l *slog.Logger, level slog.Level) io.Writer {
	return &lineWriter{l: OrDiscard(l), level: level}
}

type output struct {
	mu sync.Mutex
	w  io.Writer
}

type handler struct {
	out    *output
	level  slog.Leveler
	width  *Width
	attrs  []slog.Attr
	groups []string
}

func (h *handler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level.Level() }

func (h *handler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	switch {
	case r.Level >= Always:
	case r.Level >= slog.LevelError:
		b.WriteString("error: ")
	case r.Level >= slog.LevelWarn:
		b.WriteString("warning: ")
	case r.Level < slog.LevelInfo:
		b.WriteString("debug: ")
	}
	b.WriteString(r.Message)
	for _, a := range h.attrs {
		writeAttr(&b, a)
	}
	r.Attrs(func(a slog.Attr) bool {
		writeAttr(&b, qualify(h.groups, a))
		return true
	})
	line := b.String()
	if n := h.width.Columns(); n > 0 {
		line = text.WrapLines(line, n, "  ")
	}
	h.out.mu.Lock()
	defer h.out.mu.Unlock()
	_, err := io.WriteString(h.out.w, line+"\n")
	return err
}

func (h *handler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append([]slog.Attr(nil), h.attrs...)
	for _, a := range as {
		c.attrs = append(c.attrs, qualify(h.groups, a))
	}
	return &c
}

// qualify prefixes a's key with the open groups ("kube.name").
func qualify(groups []string, a slog.Attr) slog.Attr {
	if len(groups) > 0 && a.Key != "" {
		a.Key = strings.Join(groups, ".") + "." + a.Key
	}
	return a
}

// writeAttr writes " key=value"; an empty attribute is skipped, as slog's handlers do.
func writeAttr(b *strings.Builder, a slog.Attr) {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	b.WriteString(" " + a.Key + "=" + quote(a.Value.String()))
}

func (h *handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.groups = append(append([]string(nil), h.groups...), name)
	return &c
}

// quote quotes a value that has spaces, quotes or an equals sign, as slog's text handler does.
func quote(s string) string {
	if s == "" || strings.ContainsAny(s, " \t\n\"=") {
		return strconv.Quote(s)
	}
	return s
}

// lineWriter turns whole lines into records; a partial line waits for its newline.
type lineWriter struct {
	mu    sync.Mutex
	l     *slog.Logger
	level slog.Level
	buf   []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		line := string(w.buf[:i])
		w.buf = w.buf[i+1:]
		level, msg := w.level, line
		// A line that says it is a warning or an error is one.
		if rest, ok := strings.CutPrefix(line, "warning: "); ok {
			level, msg = slog.LevelWarn, rest
		} else if rest, ok := strings.CutPrefix(line, "error: "); ok {
			level, msg = slog.LevelError, rest
		}
		w.l.Log(context.Background(), level, msg)
	}
	return len(p), nil
}
