// Command testsum reads `go test -json` on stdin and prints what a person (or CI) needs from
// a long test run: the package lines as go test prints them (ok / FAIL / no test files), the
// whole output of every failed test, every skipped test with its reason (so a log shows
// which tool-dependent tests ran and which did not), and a closing line
// "N passed, N failed, N skipped". It exits 1 when any test or package failed.
//
// usage: go test -json ./... | go run ./test/testsum
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

type tally struct {
	passed, failed, skipped int
	failedPackages          int
	skips                   []string // "pkg Test: reason"
}

func main() {
	t, err := summarize(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsum:", err)
		os.Exit(2)
	}
	if t.failed > 0 || t.failedPackages > 0 {
		os.Exit(1)
	}
}

// summarize streams the events from r to w and returns the counts.
func summarize(r io.Reader, w io.Writer) (tally, error) {
	var t tally
	out := map[string]*strings.Builder{} // package+"\x00"+test → its output so far
	key := func(e event) string { return e.Package + "\x00" + e.Test }
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			// not an event (a build error relayed on stdout, say): show it as it is
			fmt.Fprintf(w, "%s\n", line)
			continue
		}
		if e.Test == "" {
			switch e.Action {
			case "output", "build-output":
				if e.Output != "PASS\n" { // -json runs tests verbosely; go test alone prints no PASS
					fmt.Fprint(w, e.Output) // ok / FAIL / "?   pkg [no test files]" / compiler errors
				}
			case "fail", "build-fail":
				t.failedPackages++
			}
			continue
		}
		switch e.Action {
		case "output":
			b := out[key(e)]
			if b == nil {
				b = &strings.Builder{}
				out[key(e)] = b
			}
			b.WriteString(e.Output)
		case "pass":
			t.passed++
			delete(out, key(e))
		case "fail":
			t.failed++
			if b := out[key(e)]; b != nil {
				fmt.Fprintf(w, "%s (%s):\n%s", e.Test, e.Package, b.String())
			}
			delete(out, key(e))
		case "skip":
			t.skipped++
			t.skips = append(t.skips, fmt.Sprintf("%s %s: %s", e.Package, e.Test, skipReason(out[key(e)])))
			delete(out, key(e))
		}
	}
	if err := sc.Err(); err != nil {
		return t, fmt.Errorf("reading go test -json: %w", err)
	}
	if len(t.skips) > 0 {
		sort.Strings(t.skips)
		fmt.Fprintf(w, "\nskipped (%d):\n", len(t.skips))
		for _, s := range t.skips {
			fmt.Fprintf(w, "  %s\n", s)
		}
	}
	fmt.Fprintf(w, "\n%d passed, %d failed, %d skipped\n", t.passed, t.failed, t.skipped)
	return t, nil
}

// skipReason is the message of t.Skip: the last line the test logged before "--- SKIP"
// (go test prints a test's log lines as they come, so the skip message is the last one).
func skipReason(b *strings.Builder) string {
	if b == nil {
		return "(no reason given)"
	}
	reason := ""
	for _, l := range strings.Split(b.String(), "\n") {
		trimmed := strings.TrimSpace(l)
		if trimmed == "" || strings.HasPrefix(trimmed, "=== ") {
			continue
		}
		if strings.HasPrefix(trimmed, "--- SKIP") {
			break
		}
		reason = trimmed
	}
	if reason == "" {
		return "(no reason given)"
	}
	// "file_test.go:12: reason" → "reason (file_test.go:12)"
	if i := strings.Index(reason, ": "); i > 0 && strings.Contains(reason[:i], ".go:") {
		reason = reason[i+2:] + " (" + reason[:i] + ")"
	}
	return reason
}
