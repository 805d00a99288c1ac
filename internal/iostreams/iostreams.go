// Package iostreams carries a command's standard streams so nothing writes to os.Stdout directly.
package iostreams

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// Streams are a command's input, data output (stdout) and progress/log output (stderr).
type Streams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// System returns the process's own streams.
func System() Streams { return Streams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr} }

// IsTerminal reports whether w is a terminal (for live progress lines).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
