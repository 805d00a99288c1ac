package integration

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/runfile"
	"github.com/cnperf/cnperf/internal/text"
)

// builtCnperf is the binary buildCnperf built, once for the whole package (TestMain removes
// its directory).
var builtCnperf struct {
	once      sync.Once
	dir, path string
	err       error
}

// buildCnperf builds the real binary (signals must reach a real process, not the test's), once
// per test process: a dozen tests use it, and each `go build` linked the ~80 MB binary again
// (4-10 s each, on the package's critical path in make test).
func buildCnperf(t *testing.T) string {
	t.Helper()
	b := &builtCnperf
	b.once.Do(func() {
		if b.dir, b.err = os.MkdirTemp("", "cnperf-integration-bin-"); b.err != nil {
			return
		}
		_, file, _, _ := runtime.Caller(0)
		b.path = filepath.Join(b.dir, "cnperf")
		cmd := exec.Command("go", "build", "-o", b.path, "./cmd/cnperf")
		cmd.Dir = filepath.Join(filepath.Dir(file), "..", "..")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// removeBuiltCnperf removes what buildCnperf built (TestMain, after the tests).
func removeBuiltCnperf() {
	if builtCnperf.dir != "" {
		_ = os.RemoveAll(builtCnperf.dir)
	}
}

// TestSIGTERMIsSIGINT: a SIGTERM during the second case of a real run stops it as Ctrl-C
// does: the first case is in the results file whole, the second with the samples it finished,
// the end record says interrupted, and the process exits by itself within seconds.
func TestSIGTERMIsSIGINT(t *testing.T) {
	bin := buildCnperf(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			results := filepath.Join(t.TempDir(), "run.jsonl")
			cmd := exec.Command(bin, "run", "--platform", "local", "--profile", "TCP_RR,TCP_STREAM",
				"--duration", "1s", "--samples", "3", "--results", results, "-o", "json")
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stdout = nil
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = cmd.Process.Kill() }()
			var log []string
			sc := bufio.NewScanner(stderr)
			sent := time.Time{}
			for sc.Scan() {
				l := sc.Text()
				log = append(log, l)
				if sent.IsZero() && strings.HasPrefix(l, "case 2/2") {
					time.Sleep(1500 * time.Millisecond) // into the second case's samples
					if err := cmd.Process.Signal(sig); err != nil {
						t.Fatal(err)
					}
					sent = time.Now()
				}
			}
			err = cmd.Wait()
			all := strings.Join(log, "\n")
			if sent.IsZero() {
				t.Fatalf("the second case never started:\n%s", all)
			}
			if el := time.Since(sent); el > 15*time.Second {
				t.Errorf("took %s to stop after %s", el, sig)
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 {
				t.Errorf("exit %v, want code 1 (interrupted)\n%s", err, all)
			}
			name := "SIGTERM"
			if sig == syscall.SIGINT {
				name = "SIGINT"
			}
			if !text.ContainsFolded(all, "cnperf: "+name+": stopping; finished cases are kept") {
				t.Errorf("stderr does not say it stops:\n%s", all)
			}
			runs, _, rerr := runfile.ReadWarnings(results)
			if rerr != nil {
				t.Fatal(rerr)
			}
			r := runs[0]
			if !r.Interrupted || len(r.Results) < 1 || len(r.Results) > 2 {
				t.Fatalf("interrupted %v, %d results", r.Interrupted, len(r.Results))
			}
			if first := r.Results[0]; first.Error != "" || len(first.Samples) != 3 {
				t.Errorf("the finished case is not whole: error %q, %d samples", first.Error, len(first.Samples))
			}
			if len(r.Results) == 2 && !strings.HasPrefix(r.Results[1].Error, "interrupted after") {
				t.Errorf("second case: %q", r.Results[1].Error)
			}
		})
	}
}

// TestInterruptFitsColumns: at COLUMNS=80, everything a lab run interrupted three times prints
// on stderr fits 80 columns (issue: the signals' messages, what may be left and the "clean-up
// did not finish" line were printed on one line of up to 150): the notes and progress, the
// three signals' messages (the second cuts the lab's clean-up short, so what may be left is
// said, by the clean-up or by the third signal, whichever comes first), and the final error.
// Each signal is sent once stderr says the previous one was seen. The lab's namespaces are
// removed at the end with the command cnperf names.
func TestInterruptFitsColumns(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the lab needs root")
	}
	bin := buildCnperf(t)
	cmd := exec.Command(bin, "run", "--platform", "local", "--path", "pod-pod-cross-node", "--profile", "TCP_RR",
		"--duration", "1s", "--samples", "3", "-o", "json")
	cmd.Env = append(os.Environ(), "COLUMNS=80")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	lines := make(chan string, 1000)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var log []string
	tag := regexp.MustCompile(`\(the lab ([0-9a-f]+):`)
	t.Cleanup(func() {
		if m := tag.FindStringSubmatch(text.Folded(strings.Join(log, "\n"))); m != nil {
			if out, err := exec.Command(bin, "lab", "cleanup", "--tag", m[1]).CombinedOutput(); err != nil {
				t.Errorf("cnperf lab cleanup --tag %s: %v\n%s", m[1], err, out)
			}
		}
	})
	// await reads stderr until it holds phrase (white space folded: lines are wrapped) or ends.
	await := func(phrase string) bool {
		t.Helper()
		timeout := time.After(60 * time.Second)
		for !text.ContainsFolded(strings.Join(log, "\n"), phrase) {
			select {
			case l, ok := <-lines:
				if !ok {
					return false
				}
				log = append(log, l)
			case <-timeout:
				t.Fatalf("no %q in 60 s:\n%s", phrase, strings.Join(log, "\n"))
			}
		}
		return true
	}
	for _, step := range []struct {
		after string
		sig   syscall.Signal
	}{
		{"case 1/", syscall.SIGINT},
		{"cnperf: SIGINT: stopping; finished cases are kept", syscall.SIGTERM},
		{"cnperf: second signal (SIGTERM): cutting clean-up and result shipping short", syscall.SIGINT},
	} {
		if !await(step.after) {
			t.Fatalf("stderr ended before %q:\n%s", step.after, strings.Join(log, "\n"))
		}
		_ = cmd.Process.Signal(step.sig) // the third may find the process gone: its clean-up was cut short
	}
	for l := range lines {
		log = append(log, l)
	}
	_ = cmd.Wait()
	all := strings.Join(log, "\n")
	if !text.ContainsFolded(all, "remove them with: cnperf lab cleanup --tag") {
		t.Errorf("stderr does not say what may be left:\n%s", all)
	}
	fits(t, "COLUMNS=80 cnperf run, interrupted (stderr)", all, 80)
}
