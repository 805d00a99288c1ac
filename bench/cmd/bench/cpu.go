package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// CPU figures are taken in the steady state of each run: while the client runs, the bench
// samples the CPU time of the client's and the server's process trees every cpuSampleEvery,
// and the figure is the CPU used between two samples near the end of the run (see steadyCPU).
// Whole-run accounting would charge each tool for its start-up, its warm-up pause and its
// result exchange, which differ between tools (sockperf's client sleeps before it sends, its
// server burns CPU in between), and a per-tool "traffic time" denominator has to guess.
const (
	cpuSampleEvery = 50 * time.Millisecond
	// cpuTail is how long before the client's exit the window ends: every tool stops sending
	// only moments before it exits (results are exchanged and printed in milliseconds).
	cpuTail = 250 * time.Millisecond
)

// cpuSample is the CPU time (user+system, seconds) of the client's and the server's process
// trees at one instant.
type cpuSample struct {
	at             time.Time
	client, server float64
}

// cpuSampler polls process-tree CPU times in the background.
type cpuSampler struct {
	mu      sync.Mutex
	samples []cpuSample
	stop    chan struct{}
	done    chan struct{}
}

// startCPUSampler samples the trees rooted at clientPID and serverPID (0 = no server) now and
// then every `every` until Stop.
func startCPUSampler(clientPID, serverPID int, every time.Duration) *cpuSampler {
	c := &cpuSampler{stop: make(chan struct{}), done: make(chan struct{})}
	sample := func() {
		s := cpuSample{at: time.Now(), client: treeCPUSeconds(clientPID)}
		if serverPID > 0 {
			s.server = treeCPUSeconds(serverPID)
		}
		c.mu.Lock()
		c.samples = append(c.samples, s)
		c.mu.Unlock()
	}
	go func() {
		defer close(c.done)
		sample()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-c.stop:
				return
			case <-t.C:
				sample()
			}
		}
	}()
	return c
}

// Stop ends the sampling and returns the samples in time order.
func (c *cpuSampler) Stop() []cpuSample {
	close(c.stop)
	<-c.done
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.samples
}

// steadyCPU is the client's and the server's CPU, in % of one CPU, between the last sample
// taken at or before end-tail and the last sample taken at least `window` before that one.
// ok is false when the samples do not span such a window (a run shorter than expected) or the
// process trees lost CPU time in between (a process of the tree exited and took its time
// with it).
func steadyCPU(samples []cpuSample, end time.Time, tail, window time.Duration) (client, server float64, ok bool) {
	last := -1
	for i, s := range samples {
		if !s.at.After(end.Add(-tail)) {
			last = i
		}
	}
	if last < 1 {
		return 0, 0, false
	}
	first := -1
	for i := 0; i < last; i++ {
		if samples[last].at.Sub(samples[i].at) >= window {
			first = i
		}
	}
	if first < 0 {
		return 0, 0, false
	}
	a, b := samples[first], samples[last]
	dt := b.at.Sub(a.at).Seconds()
	if dt <= 0 || b.client < a.client || b.server < a.server {
		return 0, 0, false
	}
	return (b.client - a.client) / dt * 100, (b.server - a.server) / dt * 100, true
}

// treeCPUSeconds is the user+system time of a process (all its threads) and of all its live
// descendants, in seconds; 0 when the process is gone. Time of descendants that already
// exited is not included (their time moves to the parent's cutime only when reaped).
func treeCPUSeconds(pid int) float64 {
	if pid <= 0 {
		return 0
	}
	sum := procCPUSeconds(pid)
	for _, c := range childPIDs(pid) {
		sum += treeCPUSeconds(c)
	}
	return sum
}

// procCPUSeconds is utime+stime of one process (all threads), from /proc/PID/stat.
func procCPUSeconds(pid int) float64 {
	f := procStatFields(pid)
	if len(f) < 13 {
		return 0
	}
	// f[0] is field 3 (state); utime and stime are fields 14 and 15
	u, _ := strconv.ParseFloat(f[11], 64)
	s, _ := strconv.ParseFloat(f[12], 64)
	return (u + s) / clockTicks
}

// procStatFields are the fields of /proc/PID/stat after the command name, or nil.
func procStatFields(pid int) []string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return nil
	}
	str := string(b)
	i := strings.LastIndexByte(str, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(str[i+1:])
}

// childPIDs are the children of every thread of a process (/proc/PID/task/TID/children).
func childPIDs(pid int) []int {
	tasks, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "task"))
	if err != nil {
		return nil
	}
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "task", t.Name(), "children"))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}
