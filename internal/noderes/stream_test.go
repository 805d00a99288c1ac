package noderes

import (
	"context"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

func snap(up float64, busy, idle uint64) Snapshot {
	return Snapshot{UptimeSeconds: up, CPUs: 1, CPU: CPUTimes{User: busy, Idle: idle}, MemTotalBytes: 100, MemAvailableBytes: 50}
}

func TestSeriesWindowPicksEdges(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	s := NewSeries("n1")
	// One snapshot every 100 ms; busy only between 200 and 500 ms (30 of 30 ticks).
	ticks := [][2]uint64{{0, 0}, {0, 10}, {0, 20}, {10, 20}, {20, 20}, {30, 20}, {30, 30}, {30, 40}}
	for i, tk := range ticks {
		s.Add(Timed{At: at(100 * i), Snap: snap(float64(i)/10, tk[0], tk[1])})
	}
	for _, tc := range []struct {
		name       string
		start, end int
		wantBusy   float64
		wantWindow float64
	}{
		{"exact edges", 200, 500, 100, 0.3},
		{"inside snapshots: widened to 200..600", 250, 550, 75, 0.4},
		{"whole", 0, 700, 30.0 / 70 * 100, 0.7},
	} {
		r, err := s.Window(at(tc.start), at(tc.end))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if r.CPUTotalPercent != tc.wantBusy || r.WindowSeconds < tc.wantWindow-1e-9 || r.WindowSeconds > tc.wantWindow+1e-9 || r.Node != "n1" {
			t.Errorf("%s: busy %.2f%% over %.2fs, want %.2f%% over %.2fs", tc.name, r.CPUTotalPercent, r.WindowSeconds, tc.wantBusy, tc.wantWindow)
		}
	}
	if _, err := s.Window(at(-50), at(300)); err == nil || !strings.Contains(err.Error(), "after the window began") {
		t.Errorf("window before the stream: %v", err)
	}
	if _, err := s.Window(at(100), at(900)); err == nil || !strings.Contains(err.Error(), "after the window's end") {
		t.Errorf("window past the stream: %v", err)
	}
	if _, err := NewSeries("x").Window(at(0), at(1)); err == nil {
		t.Error("empty series gave a window")
	}
}

func TestSeriesWaitFor(t *testing.T) {
	s := NewSeries("n1")
	now := time.Now()
	go func() {
		s.Add(Timed{At: now.Add(-time.Second), Snap: snap(1, 0, 0)})
		s.Add(Timed{At: now.Add(time.Second), Snap: snap(2, 0, 1)})
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.WaitFor(ctx, now); err != nil {
		t.Fatal(err)
	}
	s.Close(nil)
	if err := s.WaitFor(ctx, now.Add(time.Hour)); err == nil || !strings.Contains(err.Error(), "stream ended") {
		t.Fatalf("after close: %v", err)
	}
}

func TestStreamScriptOnThisMachine(t *testing.T) {
	// The real script through a real shell: a window around 300 ms of one busy CPU.
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "sh", "-c", StreamScript(50*time.Millisecond))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := NewSeries("local")
	// The script and this test share a clock (/proc/uptime), so each snapshot's delivery
	// delay (its /proc/uptime read to its arrival, stamp) can be measured: arrived[i] is the
	// uptime read just after the i-th stamp.
	var mu sync.Mutex
	var arrived []float64
	var upErr error
	now := func() time.Time {
		at := time.Now()
		u, err := ProcFS{}.Read(context.Background())
		mu.Lock()
		defer mu.Unlock()
		arrived = append(arrived, u.UptimeSeconds)
		if upErr == nil {
			upErr = err
		}
		return at
	}
	done := make(chan error, 1)
	go func() { done <- ReadStream(out, s, now) }()
	defer func() {
		cancel()
		_ = cmd.Wait()
		if err := <-done; err != nil {
			t.Logf("stream after the stop: %v", err)
		}
	}()
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	if err := s.WaitFor(wctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	atStart, err := ProcFS{}.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for end := start.Add(300 * time.Millisecond); time.Now().Before(end); {
	}
	end := time.Now()
	if err := s.WaitFor(wctx, end); err != nil {
		t.Fatal(err)
	}
	r, err := s.Window(start, end)
	if err != nil {
		t.Fatal(err)
	}
	// The window opens at a snapshot that arrived before start, so was read before start, and
	// closes at the first snapshot that arrived at or after end, which was read its delivery
	// delay earlier: on a loaded machine (CI: load 23 on 2 CPUs) that delay reaches tens of
	// ms, and the window is that much shorter than asked. It may not be shorter by more (plus
	// one 10 ms step of /proc/uptime), nor open after start.
	s.mu.Lock()
	closing := -1
	for i, x := range s.snaps {
		if !x.At.Before(end) {
			closing = i
			break
		}
	}
	var delay, closedAt float64
	mu.Lock()
	if closing >= 0 && closing < len(arrived) {
		closedAt = s.snaps[closing].Snap.UptimeSeconds
		delay = arrived[closing] - closedAt
	}
	mu.Unlock()
	s.mu.Unlock()
	if upErr != nil {
		t.Fatal(upErr)
	}
	if closing < 0 {
		t.Fatal("no snapshot arrived after the window's end, yet Window measured one")
	}
	if opened := closedAt - r.WindowSeconds; opened > atStart.UptimeSeconds+1e-9 {
		t.Fatalf("window %+v opened at uptime %.2f s, after the start at %.2f s", r, opened, atStart.UptimeSeconds)
	}
	asked := end.Sub(start).Seconds()
	if min := asked - delay - 0.01; r.WindowSeconds < min-1e-9 || r.CPUs < 1 {
		t.Fatalf("window %+v shorter than the %.3f s asked less the closing snapshot's %.2f s delivery delay", r, asked, delay)
	}
	if min := 50.0 / float64(r.CPUs); r.CPUTotalPercent < min {
		t.Fatalf("busy %.1f%% with one of %d CPUs spinning", r.CPUTotalPercent, r.CPUs)
	}
	t.Logf("%d snapshots; %.3f s asked, %.2f s measured (uptime has 10 ms steps), closing snapshot delivered %.2f s after its read; busy %.1f%%",
		s.Len(), asked, r.WindowSeconds, delay, r.CPUTotalPercent)
}

func TestReadStreamBadBundle(t *testing.T) {
	s := NewSeries("n")
	err := ReadStream(strings.NewReader("@@uptime\nx\n@@stat\n@@meminfo\n@@end\n"), s, time.Now)
	if err == nil || !strings.Contains(err.Error(), "/proc/uptime") {
		t.Fatalf("%v", err)
	}
	if werr := s.WaitFor(context.Background(), time.Now()); werr == nil {
		t.Fatal("a failed stream still waits")
	}
}
