package programming

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/driver"
	"github.com/cnperf/cnperf/internal/testport"
	"github.com/cnperf/cnperf/internal/ttfr"
)

// localExec runs the client's commands in this process, as `cnperf agent probe` runs them in a
// pod: real connects on loopback, timed by ttfr.Watch. Its clock is shift ahead of ours (the
// node's clock), in the clock readings and in the probe's report alike.
type localExec struct{ shift time.Duration }

func (e localExec) Exec(_ context.Context, cmd driver.Command) driver.Output {
	if strings.Join(cmd.Argv, " ") != strings.Join(clockArgv, " ") {
		return driver.Output{ExitCode: 2, Stderr: []byte("unexpected command")}
	}
	r := ttfr.ReadClock()
	if e.shift != 0 { // another node: another kernel
		r.Now, r.BootID = r.Now.Add(e.shift), "another-kernel"
	}
	b, _ := json.Marshal(r)
	return driver.Output{Stdout: b}
}

func (e localExec) ExecStream(ctx context.Context, cmd driver.Command, stdout io.Writer) error {
	fs := flag.NewFlagSet("probe", flag.ContinueOnError)
	target := fs.String("target", "", "")
	expect := fs.String("expect", "", "")
	interval := fs.Duration("interval", 0, "")
	attempt := fs.Duration("attempt-timeout", 0, "")
	confirm := fs.Int("confirm", 0, "")
	settle := fs.Duration("settle", 0, "")
	timeout := fs.Duration("timeout", 0, "")
	if len(cmd.Argv) < 3 || strings.Join(cmd.Argv[:3], " ") != "cnperf agent probe" {
		return fmt.Errorf("unexpected command %q", cmd.Argv)
	}
	if err := fs.Parse(cmd.Argv[3:]); err != nil {
		return err
	}
	rep := ttfr.Watch(ctx, ttfr.WatchConfig{Target: *target, Expect: ttfr.State(*expect), Interval: *interval, AttemptTimeout: *attempt,
		Confirm: *confirm, Settle: *settle, Timeout: *timeout,
		Ready: func(since time.Time) {
			fmt.Fprintf(stdout, "%s %s\n", ttfr.WatchReadyLine, since.Add(e.shift).Format(time.RFC3339Nano))
		}})
	for _, t := range []**time.Time{&rep.ChangeAt, &rep.LastOtherAt, &rep.ReadyAt} {
		if *t != nil {
			v := (*t).Round(0).Add(e.shift)
			*t = &v
		}
	}
	b, _ := json.Marshal(rep)
	fmt.Fprintf(stdout, "%s\n", b)
	return nil
}

// loopbackTarget is a loopback address and functions that start and stop listening on it.
func loopbackTarget(t *testing.T) (addr string, open, closeIt func(context.Context) error) {
	t.Helper()
	// a port nothing takes while the target is closed (testport.Free)
	addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(testport.Free(t)))
	var mu sync.Mutex
	var cur net.Listener
	open = func(context.Context) error {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return err
		}
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				_ = c.Close()
			}
		}()
		mu.Lock()
		cur = l
		mu.Unlock()
		return nil
	}
	closeIt = func(context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		if cur == nil {
			return nil
		}
		err := cur.Close()
		cur = nil
		return err
	}
	t.Cleanup(func() { _ = closeIt(context.Background()) })
	return addr, open, closeIt
}

var testParams = Params{Interval: 2 * time.Millisecond, AttemptTimeout: 200 * time.Millisecond, Confirm: 3,
	Settle: 5 * time.Second, Timeout: 5 * time.Second}

// TestObserveCorrectsClocks: two clients, one whose clock is 2 s ahead, see a loopback server
// open and close; with the offsets MeasureClock found, both figures are the real (tiny) delay,
// not 2 s off.
func TestObserveCorrectsClocks(t *testing.T) {
	ctx := context.Background()
	addr, open, closeIt := loopbackTarget(t)
	var clients []Probe
	for i, shift := range []time.Duration{0, 2 * time.Second} {
		ex := localExec{shift: shift}
		clk, err := MeasureClock(ctx, ex, 3, ttfr.BootID())
		if err != nil {
			t.Fatal(err)
		}
		if d := clk.OffsetSeconds - shift.Seconds(); d > 0.01 || d < -0.01 || clk.UncertaintySeconds > 0.01 ||
			clk.LowSeconds > shift.Seconds() || clk.HighSeconds < shift.Seconds() {
			t.Fatalf("client %d: clock %+v, want offset %s", i, clk, shift)
		}
		if shared := shift == 0 && ttfr.BootID() != ""; clk.Shared != shared {
			t.Errorf("client %d: shared clock %v, want %v", i, clk.Shared, shared)
		}
		clients = append(clients, Probe{Client: Client{Node: fmt.Sprintf("node%d", i), Exec: ex, Clock: clk}, Target: addr})
	}
	for _, ch := range []Change{{Expect: ttfr.Open, Do: open}, {Expect: ttfr.Closed, Do: closeIt}} {
		obs := Observe(ctx, clients, testParams, ch)
		for i, o := range obs {
			if o.Seconds == nil {
				t.Fatalf("%s, client %d: %s", ch.Expect, i, o.Error)
			}
			// The change is real and local: it is seen within a few probe intervals (the
			// attempt that saw it started at most one interval after the change, plus
			// scheduling on a busy machine), never before it (beyond the clock's bound).
			// A loopback close takes effect inside the call, so a probe may see it before
			// the call returned: counted as 0 with a note, which is right, as long as it
			// was not seen before the call was made by more than the clock's uncertainty
			// (this failed under load when any such note was refused: seen 0.1 ms before
			// a 0.0 ms call on the client whose clock is shifted by 2 s).
			bound := time.Duration(clients[i].Clock.UncertaintySeconds*float64(time.Second)) + time.Millisecond
			early := o.Note != "" && strings.HasPrefix(o.Note, "seen ") && strings.HasSuffix(o.Note, "counted as 0")
			if *o.Seconds > 0.15 || (o.Note != "" && !early) || o.SeenAt.Before(o.Sent.Add(-bound)) {
				t.Errorf("%s, client %d: %.4f s (%s), seen %s after the call was made (bound %s)",
					ch.Expect, i, *o.Seconds, o.Note, o.SeenAt.Sub(o.Sent), bound)
			}
		}
	}
}

// TestObserveNeverChanges: a change with no effect is a failure with the probe's cause, and
// a target already in the expected state is refused before the change is made.
func TestObserveNeverChanges(t *testing.T) {
	ctx := context.Background()
	addr, open, _ := loopbackTarget(t)
	p := testParams
	p.Timeout = 300 * time.Millisecond
	clients := []Probe{{Client: Client{Node: "n", Exec: localExec{}}, Target: addr}}
	made := 0
	obs := Observe(ctx, clients, p, Change{Expect: ttfr.Open, Do: func(context.Context) error { made++; return nil }})
	if obs[0].Seconds != nil || !strings.Contains(obs[0].Error, "still closed 300ms after the probe was ready") || made != 1 {
		t.Errorf("no-op change: %+v (made %d)", obs[0], made)
	}
	if err := open(ctx); err != nil {
		t.Fatal(err)
	}
	p.Settle = 200 * time.Millisecond
	obs = Observe(ctx, clients, p, Change{Expect: ttfr.Open, Do: func(context.Context) error { made++; return nil }})
	if obs[0].Seconds != nil || !strings.Contains(obs[0].Error, "no probe got ready, the change was not made") || made != 1 {
		t.Errorf("already open: %+v (made %d)", obs[0], made)
	}
}

func TestClockApplied(t *testing.T) {
	for _, c := range []struct {
		name              string
		in                Clock
		offset, uncertain float64
	}{
		// One kernel: the offset is 0 exactly, whatever the exec's asymmetry measured.
		{"shared", Clock{LowSeconds: -0.01, HighSeconds: 0.29, Shared: true}, 0, 0},
		// Bounds holding 0: the clocks agree as far as exec tells; the error is the far bound.
		{"holds zero", Clock{LowSeconds: -0.01, HighSeconds: 0.29}, 0, 0.29},
		// A real offset: the middle of the bounds, within half their width.
		{"ahead", Clock{LowSeconds: 1.99, HighSeconds: 2.03}, 2.01, 0.02},
		{"behind", Clock{LowSeconds: -3.05, HighSeconds: -2.95}, -3, 0.05},
	} {
		got := c.in.applied()
		if math.Abs(got.OffsetSeconds-c.offset) > 1e-9 || math.Abs(got.UncertaintySeconds-c.uncertain) > 1e-9 {
			t.Errorf("%s: applied %+v, want offset %v ± %v", c.name, got, c.offset, c.uncertain)
		}
	}
}
