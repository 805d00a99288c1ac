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
	cmd.Env = append(os.Environ(), "INTERRUPT_TEST_CHILD=1")
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
