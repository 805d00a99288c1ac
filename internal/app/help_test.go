package app_test

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/app"
	"github.com/cnperf/cnperf/internal/iostreams"
)

// TestHelpFitsAndHasExamples walks the command tree: every command's help fits HelpWidth
// columns and every runnable command shows examples (issue 28: run --help had lines of 287
// columns and no Examples).
func TestHelpFitsAndHasExamples(t *testing.T) {
	root := app.NewRootCommand(iostreams.Streams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			return
		}
		var b bytes.Buffer
		c.SetOut(&b)
		if err := c.Help(); err != nil {
			t.Fatal(err)
		}
		for i, l := range strings.Split(b.String(), "\n") {
			if n := len([]rune(l)); n > app.HelpWidth {
				t.Errorf("%s --help line %d is %d columns (at most %d):\n%s", c.CommandPath(), i+1, n, app.HelpWidth, l)
			}
		}
		if c.Runnable() && !c.HasExample() {
			t.Errorf("%s has no Example", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
