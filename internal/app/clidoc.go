package app

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/iostreams"
)

// CLIDocHeader opens docs/cli.md, before CLIReference.
const CLIDocHeader = `# Every command and flag

<!-- Generated from the command tree: go test ./internal/app -run TestCLIDoc -update. Do not edit. -->

Every command takes the global flags ` + "`-v`/`--verbose`" + ` and ` + "`-q`/`--quiet`" + `: by default stderr
shows progress, notes and warnings (` + "`warning: …`" + `); ` + "`-q`" + ` shows only errors (no progress, notes
or warnings; stdout is unchanged); ` + "`-v`" + ` (= ` + "`-v=1`" + `, kubectl's ` + "`-v=N`" + `) adds debug lines
(` + "`debug: case name=… profile=…`" + `). Data always goes to stdout, whatever the level. Output formats
(` + "`-o`" + `), ` + "`--dry-run[=client]`" + ` and shell completion (` + "`cnperf completion bash`" + `) follow kubectl.
An error ends stderr as ` + "`cnperf: `" + ` and the message. It, and every other line stderr shows
(progress, notes, warnings, what Ctrl-C stops and what may be left), is wrapped at spaces to
120 columns (or ` + "`$COLUMNS`" + `/the terminal's width when narrower) with a two-space indent; no word,
path, URL or quoted value is broken (` + "`cnperf agent …`" + `, whose stderr cnperf reads back, prints
its lines as they are).
Exit codes: [README.md](../README.md#exit-codes).

`

// CLIDoc is docs/cli.md: CLIDocHeader and CLIReference.
func CLIDoc() string { return CLIDocHeader + CLIReference() }

// CLIReference renders every command's usage (its flags included) as Markdown, in command
// tree order. docs/cli.md holds it (CLIDoc); a test keeps the two identical.
func CLIReference() string {
	root := NewRootCommand(iostreams.Streams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard})
	root.DisableAutoGenTag = true
	var b bytes.Buffer
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			return
		}
		if c.Runnable() {
			fmt.Fprintf(&b, "#### `%s`\n\n%s\n\n```\n%s```\n\n", c.CommandPath(), c.Short, c.UsageString())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return b.String()
}
