// Package iostreams carries a command's standard streams so nothing writes to os.Stdout directly.
package iostreams

import (
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"

	"github.com/cnperf/cnperf/internal/logging"
	"github.com/cnperf/cnperf/internal/safetext"
	"github.com/cnperf/cnperf/internal/text"

	"golang.org/x/sys/unix"
)

// Streams are a command's input, data output (stdout) and progress/log output (stderr).
type Streams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// Log is the command's log on ErrOut at the level of -v/-q (internal/logging); nil means
	// a logger on ErrOut at the default level (Logger).
	Log *slog.Logger
}

// LogWriter returns a writer whose every line is an info record of Logger (a line that starts
// "warning: " a warning): for library code that prints its progress lines to an io.Writer.
func (s Streams) LogWriter() io.Writer { return logging.Writer(s.Logger(), slog.LevelInfo) }

// Logger returns s.Log, or a logger on ErrOut at the default level, its lines wrapped to
// MessageWidth, when it is nil.
func (s Streams) Logger() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	if s.ErrOut == nil {
		return logging.Discard()
	}
	return logging.New(s.ErrOut, logging.Default, logging.NewWidth(MessageWidth(s.ErrOut)))
}

// System returns the process's own streams.
func System() Streams { return Streams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr} }

// Safe returns s with terminal control sequences filtered out of everything written to
// stderr (progress, warnings, errors: they carry tool output), and out of stdout when stdout
// is a terminal (a file or a pipe gets the data byte for byte). See safetext.
func Safe(s Streams) Streams {
	if IsTerminal(s.Out) {
		s.Out = safetext.NewWriter(s.Out, false)
	}
	s.ErrOut = safetext.NewWriter(s.ErrOut, true)
	return s
}

// IsTerminal reports whether w is a terminal (for live progress lines).
func IsTerminal(w io.Writer) bool {
	f := file(w)
	if f == nil {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// file is the *os.File under w's wrappers, or nil.
func file(w io.Writer) *os.File {
	for {
		u, ok := w.(interface{ Unwrap() io.Writer })
		if !ok {
			break
		}
		w = u.Unwrap()
	}
	f, _ := w.(*os.File)
	return f
}

// MessageWidth is the width the lines a person reads on w (stderr: warnings, notes, the final
// error, the interrupt messages) are wrapped to (text.WrapLines, by Wrap or a logger given
// it): text.FitWidth of Columns, so 120 columns, or $COLUMNS or the terminal's width when
// narrower (never below text.MinWidth).
func MessageWidth(w io.Writer) int { return text.FitWidth(Columns(w)) }

// Wrap is s as a person reads it on w: every line wider than MessageWidth(w) wrapped at spaces,
// continuations indented two spaces (text.WrapLines: no word, path, URL or quoted value is
// broken).
func Wrap(w io.Writer, s string) string { return text.WrapLines(s, MessageWidth(w), "  ") }

// Columns is the width tables written to w should fit: $COLUMNS when it is a positive
// number (an explicit request, honoured for pipes and files too), else the terminal's width
// when w is a terminal, else 0 (unknown: the encoders' default).
func Columns(w io.Writer) int {
	if n, err := strconv.Atoi(strings.TrimSpace(os.Getenv("COLUMNS"))); err == nil && n > 0 {
		return n
	}
	f := file(w)
	if f == nil {
		return 0
	}
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil || ws.Col == 0 {
		return 0
	}
	return int(ws.Col)
}
