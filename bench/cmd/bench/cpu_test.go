package main

import (
	"math"
	"os/exec"
	"testing"
	"time"
)

func TestSteadyCPU(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 14, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	// client busy 100 % from 1 s on (start-up before), server 50 %; samples every 500 ms
	var steady []cpuSample
	for ms := 0; ms <= 4000; ms += 500 {
		c := 0.0
		if ms > 1000 {
			c = float64(ms-1000) / 1000
		}
		steady = append(steady, cpuSample{at: at(ms), client: 0.2 + c, server: float64(ms) / 2000})
	}
	tests := []struct {
		name         string
		samples      []cpuSample
		end          time.Time
		tail, window time.Duration
		wantC, wantS float64
		wantOK       bool
	}{
		{name: "last 1.5 s before the tail", samples: steady, end: at(4200), tail: 250 * time.Millisecond, window: 1500 * time.Millisecond,
			wantC: 100, wantS: 50, wantOK: true}, // samples 2000 .. 3500
		{name: "window reaching into the start-up", samples: steady, end: at(4000), tail: 0, window: 3500 * time.Millisecond,
			wantC: 3.0 / 3.5 * 100, wantS: 50, wantOK: true}, // samples 500 .. 4000
		{name: "window longer than the run", samples: steady, end: at(4000), tail: 0, window: 5 * time.Second},
		{name: "no sample before the tail", samples: steady, end: at(100), tail: 250 * time.Millisecond, window: time.Second},
		{name: "one sample", samples: steady[:1], end: at(4000), window: time.Millisecond},
		{name: "no samples", end: at(4000), window: time.Millisecond},
		{name: "a process of the tree exited with its time", samples: []cpuSample{
			{at: at(0), client: 5}, {at: at(1000), client: 2},
		}, end: at(1000), window: time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, s, ok := steadyCPU(tt.samples, tt.end, tt.tail, tt.window)
			if ok != tt.wantOK {
				t.Fatalf("ok = %v, want %v (client %v server %v)", ok, tt.wantOK, c, s)
			}
			if math.Abs(c-tt.wantC) > 1e-9 || math.Abs(s-tt.wantS) > 1e-9 {
				t.Fatalf("client, server = %v, %v; want %v, %v", c, s, tt.wantC, tt.wantS)
			}
		})
	}
}

// The sampler follows a real process tree: a shell that waits for a child burning CPU. The
// shell itself uses next to none; the tree's figure is the child's.
func TestCPUSamplerProcessTree(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	if _, err := exec.LookPath("timeout"); err != nil {
		t.Skip("no timeout(1)")
	}
	// the grandchild spins for 1.2 s of wall time (no forks in its loop), then all exit
	cmd := exec.Command(sh, "-c", `timeout 1.2 sh -c 'while :; do :; done'; true`)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := startCPUSampler(cmd.Process.Pid, 0, 20*time.Millisecond)
	if err := cmd.Wait(); err != nil {
		s.Stop()
		t.Fatal(err)
	}
	end := time.Now()
	samples := s.Stop()
	client, server, ok := steadyCPU(samples, end, 300*time.Millisecond, 600*time.Millisecond)
	if !ok {
		t.Fatalf("no steady window in %d samples", len(samples))
	}
	if server != 0 {
		t.Errorf("server CPU %v without a server", server)
	}
	// The shell and timeout(1) only wait, so a figure near the spinner's own average shows
	// the descendants are counted. The spinner's CPU comes from wait4's rusage of the shell
	// (it includes reaped descendants), so the test holds on a loaded machine too, where the
	// spinner gets far less than a CPU.
	spun := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	avg := spun.Seconds() / 1.2 * 100
	if avg < 1 {
		t.Skipf("the spinner got %v of CPU in 1.2 s: too loaded a machine to tell", spun)
	}
	if client < avg/3 {
		t.Errorf("tree CPU %.1f%% of one CPU over the window, want about the spinning child's average %.1f%%; samples %v", client, avg, samples)
	}
	if own := procCPUSeconds(cmd.Process.Pid); own != 0 {
		t.Errorf("exited process still reports %v s", own)
	}
}

func TestTreeCPUSecondsGone(t *testing.T) {
	if v := treeCPUSeconds(0); v != 0 {
		t.Errorf("pid 0: %v", v)
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip(err)
	}
	if v := treeCPUSeconds(cmd.Process.Pid); v != 0 {
		t.Errorf("reaped process: %v", v)
	}
}
