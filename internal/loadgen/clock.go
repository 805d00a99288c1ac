package loadgen

import (
	"runtime"
	_ "unsafe" // for go:linkname
)

// nanotime is the runtime's monotonic clock in nanoseconds: the same clock time.Now's monotonic
// reading uses, without the wall-clock read. Latencies and windows are measured with it.
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64

// yielder makes a data goroutine pass through the scheduler every few milliseconds. A
// goroutine that only makes blocking system calls never reschedules; after 10ms the runtime's
// sysmon then takes its P away by force and polls every 20µs for a while, which costs a context
// switch per poll and a slow path when the goroutine next returns from the kernel. One
// Gosched every 8ms (cheap for a goroutine not locked to its thread) avoids all of that.
type yielder struct {
	next int64
}

const yieldEveryNs = 8e6

// tick is called once per loop iteration. It reads the clock every time (a vDSO call of some
// 20ns): counting iterations instead would let a flow doing a thousand transactions a second
// go past sysmon's 10ms limit.
func (y *yielder) tick() {
	now := nanotime()
	if y.next == 0 {
		y.next = now + yieldEveryNs
		return
	}
	if now >= y.next {
		runtime.Gosched()
		y.next = nanotime() + yieldEveryNs
	}
}
