package interrupt

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// child is what the re-executed test binary does: a run that waits for its context, a
// clean-up that waits for its Cleanup context, then a clean-up step that ignores every
// context (as a stuck API call would), which only the third signal ends.
func child() {
	ctx, stop := Notify(context.Background(), os.Stdout, os.Exit)
	defer stop()
	Register(ctx, func() string { return "may be left: namespace cnperf-x; remove it with: cnperf cleanup --run x" })
	fmt.Println("ready")
	<-ctx.Done()
	// The check comes before "run stopped": the parent sends the second signal as soon as it
	// reads that line, and under -race the child is slow enough for it to arrive first.
	cctx, cancel := context.WithTimeout(Cleanup(ctx), time.Minute)
	defer cancel()
	if cctx.Err() != nil {
		fmt.Println("BUG: the clean-up context ended with the run")
	}
	fmt.Println("run stopped:", ctx.Err())
	<-cctx.Done()
	fmt.Println("clean-up ended:", cctx.Err(), errors.Is(cctx.Err(), context.Canceled), CutShort(ctx))
	time.Sleep(time.Minute)
	fmt.Println("BUG: the third signal did not exit")
}

// unarmedChild is a command with nothing to clean up, blocked reading its standard input.
func unarmedChild() {
	ctx, stop := Notify(context.Background(), os.Stdout, os.Exit)
	defer stop()
	fmt.Println("ready")
	b := make([]byte, 1)
	_, _ = os.Stdin.Read(b)
	fmt.Println("BUG: the read returned; ctx:", ctx.Err())
}

func TestMain(m *testing.M) {
	switch os.Getenv("INTERRUPT_TEST_CHILD") {
	case "1":
		child()
		os.Exit(0)
	case "unarmed":
		unarmedChild()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestThreeSignals sends real signals to a real process: SIGTERM stops the run, SIGINT cuts
// clean-up short, and the third exits at once with 128+signal, printing what may be left.
func TestThreeSignals(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "INTERRUPT_TEST_CHILD=1", "COLUMNS=") // 120 columns: each message on one line
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var all []string
	expect := func(want string) {
		t.Helper()
		timeout := time.After(20 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("output ended before %q:\n%s", want, strings.Join(all, "\n"))
				}
				all = append(all, l)
				if strings.Contains(l, "BUG") {
					t.Fatalf("%s", l)
				}
				if strings.Contains(l, want) {
					return
				}
			case <-timeout:
				t.Fatalf("no %q in:\n%s", want, strings.Join(all, "\n"))
			}
		}
	}
	signal := func(s syscall.Signal) {
		if err := cmd.Process.Signal(s); err != nil {
			t.Fatal(err)
		}
	}
	expect("ready")
	signal(syscall.SIGTERM)
	expect("cnperf: SIGTERM: stopping; finished cases are kept; cleaning up (signal again to cut clean-up short)")
	expect("run stopped: context canceled")
	signal(syscall.SIGINT)
	expect("cnperf: second signal (SIGINT): cutting clean-up and result shipping short (signal again to exit at once)")
	expect("clean-up ended: cut short by a second signal: context canceled true true")
	start := time.Now()
	signal(syscall.SIGTERM)
	expect("cnperf: third signal (SIGTERM): exiting now")
	expect("cnperf: may be left: namespace cnperf-x; remove it with: cnperf cleanup --run x")
	for range lines {
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 128+int(syscall.SIGTERM) {
		t.Errorf("exit: %v, want code %d", err, 128+int(syscall.SIGTERM))
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("the third signal took %s to exit", el)
	}
}

// TestUnarmedExitsAtOnce: a command that never armed the handler (blocked reading input,
// nothing to clean up) ends at the first signal with 128+signal and prints nothing.
func TestUnarmedExitsAtOnce(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "INTERRUPT_TEST_CHILD=unarmed")
			stdin, err := cmd.StdinPipe() // never written: the child blocks reading it
			if err != nil {
				t.Fatal(err)
			}
			defer stdin.Close()
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = cmd.Process.Kill() }()
			sc := bufio.NewScanner(out)
			if !sc.Scan() || sc.Text() != "ready" {
				t.Fatalf("child did not start: %q", sc.Text())
			}
			start := time.Now()
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			var rest []string
			for sc.Scan() {
				rest = append(rest, sc.Text())
			}
			err = cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 128+int(sig) {
				t.Errorf("exit: %v, want code %d", err, 128+int(sig))
			}
			if el := time.Since(start); el > 5*time.Second {
				t.Errorf("took %s to exit", el)
			}
			if len(rest) > 0 {
				t.Errorf("printed after the signal: %q", rest)
			}
		})
	}
}

// TestWithoutNotify: library callers and tests without the handler get plain detached
// contexts.
func TestWithoutNotify(t *testing.T) {
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), struct{ k string }{"k"}, "v"))
	cancel()
	c := Cleanup(ctx)
	if c.Err() != nil || c.Value(struct{ k string }{"k"}) != "v" || CutShort(ctx) {
		t.Errorf("Cleanup without Notify: err %v", c.Err())
	}
	Register(ctx, func() string { return "x" })()
	Arm(ctx)
}

// TestMessagesWrap: the three signals' messages and what may be left (the kube platform's
// Leftovers, 232 columns) fit 120 columns, or $COLUMNS when narrower, continuations indented
// two spaces and the words unchanged.
func TestMessagesWrap(t *testing.T) {
	left := "may be left in the cluster: namespace cnperf-3f0c2a1b (created by run 3f0c2a1b-9d1e-4c55-8a0e-7b2f1c9d4e60) " +
		"with its pods and Services; remove them with: cnperf cleanup --run-id 3f0c2a1b-9d1e-4c55-8a0e-7b2f1c9d4e60"
	want := "cnperf: SIGINT: stopping; finished cases are kept; cleaning up (signal again to cut clean-up short) " +
		"cnperf: second signal (SIGINT): cutting clean-up and result shipping short (signal again to exit at once) " +
		"cnperf: third signal (SIGINT): exiting now cnperf: " + left
	for _, tc := range []struct {
		columns string
		width   int
		lines   int
	}{{"", 120, 5}, {"80", 80, 8}, {"60", 60, 10}} {
		t.Run("COLUMNS="+tc.columns, func(t *testing.T) {
			t.Setenv("COLUMNS", tc.columns)
			var b strings.Builder
			exited := 0
			ctx, stop := Notify(context.Background(), &b, func(code int) { exited = code })
			defer stop()
			Register(ctx, func() string { return left })
			s := from(ctx)
			for range 3 {
				s.handle(os.Interrupt)
			}
			if exited != 130 {
				t.Errorf("exit code %d, want 130", exited)
			}
			got := strings.TrimPrefix(b.String(), "\n")
			lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
			for _, l := range lines {
				if len(l) > tc.width || (!strings.HasPrefix(l, "cnperf: ") && !strings.HasPrefix(l, "  ")) {
					t.Errorf("%d columns (at most %d), or a continuation without its indent: %q", len(l), tc.width, l)
				}
			}
			if len(lines) != tc.lines {
				t.Errorf("%d lines, want %d:\n%s", len(lines), tc.lines, got)
			}
			if f := strings.Join(strings.Fields(got), " "); f != want {
				t.Errorf("the words changed:\n%s\nwant\n%s", f, want)
			}
		})
	}
}
