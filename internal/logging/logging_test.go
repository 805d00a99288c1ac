package logging

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/text"
)

func TestLevels(t *testing.T) {
	emit := func(l *slog.Logger) {
		l.Debug("case", "name", "TCP_RR loopback", "samples", 3)
		l.Info("using the local platform")
		l.Warn("prometheus: no data")
		l.Error("index into OpenSearch failed")
		l.Log(t.Context(), Always, "cnperf: clean-up did not finish; x")
	}
	for _, tc := range []struct {
		name  string
		level slog.Level
		want  string
	}{
		{"default", Default, "using the local platform\nwarning: prometheus: no data\nerror: index into OpenSearch failed\ncnperf: clean-up did not finish; x\n"},
		{"-q", Quiet, "error: index into OpenSearch failed\ncnperf: clean-up did not finish; x\n"},
		{"-v", Verbose, "debug: case name=\"TCP_RR loopback\" samples=3\nusing the local platform\nwarning: prometheus: no data\nerror: index into OpenSearch failed\ncnperf: clean-up did not finish; x\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			lv := new(slog.LevelVar)
			lv.Set(tc.level)
			emit(New(&b, lv, nil))
			if b.String() != tc.want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), tc.want)
			}
		})
	}
}

func TestWithAttrsAndGroups(t *testing.T) {
	var b bytes.Buffer
	New(&b, Verbose, nil).With("run", "3f0c").WithGroup("kube").Debug("pod ready", "name", "server-0")
	if want := "debug: pod ready run=3f0c kube.name=server-0\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

func TestWriter(t *testing.T) {
	var b bytes.Buffer
	w := Writer(New(&b, Default, nil), slog.LevelInfo)
	fmt.Fprint(w, "started native server (pid 1)\nwarning: a")
	if b.String() != "started native server (pid 1)\n" {
		t.Errorf("a partial line was written: %q", b.String())
	}
	fmt.Fprint(w, "ddress\n")
	if want := "started native server (pid 1)\nwarning: address\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
	b.Reset()
	fmt.Fprint(Writer(New(&b, Quiet, nil), slog.LevelInfo), "progress\nwarning: w\nerror: tiger-bench test 2 failed\n")
	if want := "error: tiger-bench test 2 failed\n"; b.String() != want {
		t.Errorf("-q printed %q", b.String())
	}
	fmt.Fprintln(Writer(nil, slog.LevelInfo), "nowhere") // a nil logger writes nothing
}

// TestWidthWraps: a logger given a width wraps each record wider than it (the "clean-up did
// not finish" line a failed clean-up says, as measure.closeUnit builds it with the kube
// platform's Leftovers, 240 columns; a warning with attributes) at spaces, continuations
// indented two spaces, the words and the quoted value unchanged; without a width (nil, 0: an
// agent's stderr, which cnperf reads back) a record stays on one line.
func TestWidthWraps(t *testing.T) {
	left := "cnperf: clean-up did not finish; may be left in the cluster: namespace cnperf-3f0c2a1b (created by run " +
		"3f0c2a1b-9d1e-4c55-8a0e-7b2f1c9d4e60) with its pods and Services; remove them with: cnperf cleanup --run-id 3f0c2a1b-9d1e-4c55-8a0e-7b2f1c9d4e60"
	emit := func(l *slog.Logger) {
		l.Log(t.Context(), Always, left)
		l.Warn("prometheus: the query for the case's node resources returned no data; the case keeps no node figures",
			"query", `rate(node_cpu_seconds_total{mode!="idle"}[30s])`)
		l.Info("short line")
	}
	var one bytes.Buffer
	emit(New(&one, Default, nil))
	for _, tc := range []struct {
		name  string
		width *Width
		max   int // widest line; 0: the records as New without a width writes them
	}{{"nil", nil, 0}, {"0", NewWidth(0), 0}, {"120", NewWidth(120), 120}, {"80", NewWidth(80), 80}, {"60", NewWidth(60), 60}} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			emit(New(&b, Default, tc.width))
			got := b.String()
			if tc.max == 0 {
				if got != one.String() {
					t.Errorf("got\n%s\nwant\n%s", got, one.String())
				}
				return
			}
			lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
			if len(lines) <= 3 || !strings.HasSuffix(got, "\n") {
				t.Fatalf("not wrapped:\n%s", got)
			}
			for _, l := range lines {
				if text.Width(l) > tc.max {
					t.Errorf("%d columns, more than %d: %q", text.Width(l), tc.max, l)
				}
				if !strings.HasPrefix(l, "  ") && !strings.HasPrefix(l, "cnperf: ") && !strings.HasPrefix(l, "warning: ") && l != "short line" {
					t.Errorf("a continuation without its indent: %q", l)
				}
			}
			if text.Folded(got) != text.Folded(one.String()) {
				t.Errorf("the words changed:\n%s\nwant\n%s", got, one.String())
			}
			if !strings.Contains(got, `"rate(node_cpu_seconds_total{mode!=\"idle\"}[30s])"`) {
				t.Errorf("the quoted query was broken:\n%s", got)
			}
		})
	}
}
