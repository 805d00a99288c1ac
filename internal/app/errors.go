package app

import (
	"fmt"
	"io"
	"strings"

	"github.com/cnperf/cnperf/internal/iostreams"
)

// WriteError prints err, the error the command line args ended with, on w (stderr) as cnperf's
// last line(s): "cnperf: " and the message, each of its lines wrapped at spaces to the width
// people's output fits (iostreams.Wrap: $COLUMNS or the terminal's width, at most 120
// columns), continuations indented two spaces (text.WrapLines: no word, path, URL or quoted
// value is broken). The agent's commands (cnperf agent …) print it on one line, as
// it is: cnperf reads their stderr back from the agents it starts (a sample's error keeps
// its last lines, toolkit.Tail; the kube platform looks for phrases such as "connection
// refused" in it). It is the one place the final error is printed (cmd/cnperf, selfexec).
func WriteError(w io.Writer, err error, args []string) {
	msg := "cnperf: " + err.Error()
	if !isAgent(args) {
		msg = iostreams.Wrap(w, msg)
	}
	fmt.Fprintln(w, msg)
}

// isAgent reports whether args run an agent's command (cnperf agent …), whose stderr cnperf
// reads back: neither its final error nor its log is wrapped.
func isAgent(args []string) bool { return command(args) == "agent" }

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
