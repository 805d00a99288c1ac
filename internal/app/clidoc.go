package app

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/iostreams"
)

// CLIReference renders every command's usage (its flags included) as Markdown, in command
// tree order. The README embeds it between markers; a test keeps the two identical.
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
