package app_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/app"
	"github.com/cnperf/cnperf/internal/text"
)

// TestWriteErrorWraps: the error cnperf ends with is wrapped to 120 columns, or to $COLUMNS
// when that is narrower (never below text.MinWidth), with its words, the quoted format and
// every format in the list whole; a real error of 244 columns on one line (an unknown -o).
func TestWriteErrorWraps(t *testing.T) {
	err := run(t, context.Background(), "report", "-o", "jsn", "-").err
	if err == nil || len(err.Error()) <= text.DefaultWidth {
		t.Fatalf("want an error wider than %d columns, got %v", text.DefaultWidth, err)
	}
	for _, tc := range []struct {
		columns string
		width   int
	}{{"", 120}, {"200", 120}, {"80", 80}, {"20", text.MinWidth}} {
		t.Run("COLUMNS="+tc.columns, func(t *testing.T) {
			t.Setenv("COLUMNS", tc.columns)
			var b bytes.Buffer
			app.WriteError(&b, err, []string{"report", "-o", "jsn", "-"})
			got := b.String()
			lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
			if len(lines) < 2 || !strings.HasPrefix(got, "cnperf: ") || !strings.HasSuffix(got, "\n") {
				t.Fatalf("not wrapped after cnperf: \n%s", got)
			}
			for _, l := range lines {
				if text.Width(l) > tc.width {
					t.Errorf("%d columns, more than %d: %q", text.Width(l), tc.width, l)
				}
			}
			// only white space was added (the list of formats breaks after its commas)
			if strings.Join(strings.Fields(got), "") != strings.Join(strings.Fields("cnperf: "+err.Error()), "") {
				t.Errorf("the words changed:\n%s", got)
			}
			for _, w := range []string{`"jsn"`, "k8s-netperf-loss-csv,", "mesh-cells-csv", `"json"?)`} {
				if !strings.Contains(got, w) {
					t.Errorf("%s was broken:\n%s", w, got)
				}
			}
		})
	}
}

// TestWriteErrorAgentOneLine: an agent command's error stays on one line, whatever its width:
// cnperf reads an agent's stderr back (a sample's error keeps its last lines; the kube
// platform looks for "connection refused" in it), and a wrap would cut such a phrase apart.
func TestWriteErrorAgentOneLine(t *testing.T) {
	err := errors.New("connect to the server at 10.244.1.5:7100 (its control connection, run 0b5c3e2a-1f0d-4c6b-9a51-0d7e3f2a9c11): " +
		"dial tcp 10.244.1.5:7100: connect: connection refused")
	for _, args := range [][]string{{"agent", "client", "--json"}, {"-v=2", "agent", "serve"}} {
		var b bytes.Buffer
		app.WriteError(&b, err, args)
		if want := "cnperf: " + err.Error() + "\n"; b.String() != want {
			t.Errorf("%v: %q, want %q", args, b.String(), want)
		}
	}
	var b bytes.Buffer
	app.WriteError(&b, err, []string{"run", "--profile", "TCP_RR"})
	if strings.Count(b.String(), "\n") != 2 {
		t.Errorf("run: not wrapped:\n%s", b.String())
	}
}
