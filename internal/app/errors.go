package app

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/cnperf/cnperf/internal/iostreams"
	"github.com/cnperf/cnperf/internal/text"
)

// WriteError prints err, the error the command line args ended with, on w (stderr) as cnperf's
// last line(s): "cnperf: " and the message, each of its lines wrapped at spaces to the width
// people's output fits (text.FitWidth of iostreams.Columns: $COLUMNS or the terminal's width,
// at most 120 columns), continuations indented two spaces (text.WrapLines: no word, path, URL
// or quoted value is broken). The agent's commands (cnperf agent …) print it on one line, as
// it is: cnperf reads their stderr back from the agents it starts (a sample's error keeps
// its last lines, toolkit.Tail; the kube platform looks for phrases such as "connection
// refused" in it). It is the one place the final error is printed (cmd/cnperf, selfexec).
func WriteError(w io.Writer, err error, args []string) {
	width := text.FitWidth(iostreams.Columns(w))
	if command(args) == "agent" {
		width = math.MaxInt
	}
	fmt.Fprintln(w, text.WrapLines("cnperf: "+err.Error(), width, "  "))
}

// command is the first of args that is not a flag (the global flags -v[=N] and -q come
// before it, if anywhere): the command's name.
func command(args []string) string {
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return ""
}
