package app

import (
	"fmt"
	"io"

	"github.com/cnperf/cnperf/internal/iostreams"
	"github.com/cnperf/cnperf/internal/text"
)

// WriteError prints err on w (stderr) as cnperf's last line(s): "cnperf: " and the message, each
// of its lines wrapped at spaces to the width people's output fits (text.FitWidth of
// iostreams.Columns: $COLUMNS or the terminal's width, at most 120 columns), continuations
// indented two spaces (text.WrapLines: no word, path, URL or quoted value is broken). It is
// the one place the final error is printed (cmd/cnperf and internal/selfexec).
func WriteError(w io.Writer, err error) {
	fmt.Fprintln(w, text.WrapLines("cnperf: "+err.Error(), text.FitWidth(iostreams.Columns(w)), "  "))
}
