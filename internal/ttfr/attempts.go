package ttfr

import (
	"context"
	"sync"
)

// attempts runs overlapping attempts, each in its own goroutine, and delivers their outcomes
// on out. Measure and Watch start one every interval; stop cancels those still in flight,
// drains their outcomes and waits for them.
type attempts[T any] struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	out    chan T
	// inFlight counts the attempts started whose outcome was not received yet.
	inFlight int
}

// newAttempts returns attempts under ctx whose outcomes wait in a buffer of buf.
func newAttempts[T any](ctx context.Context, buf int) *attempts[T] {
	ctx, cancel := context.WithCancel(ctx)
	return &attempts[T]{ctx: ctx, cancel: cancel, out: make(chan T, buf)}
}

// start runs one attempt: f gets the attempts' context and returns its outcome.
func (a *attempts[T]) start(f func(ctx context.Context) T) {
	a.inFlight++
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		a.out <- f(a.ctx)
	}()
}

// received notes that one outcome was read from out.
func (a *attempts[T]) received() { a.inFlight-- }

// stop cancels the attempts in flight, drains their outcomes and waits for them.
func (a *attempts[T]) stop() {
	a.cancel()
	go func() {
		for range a.out {
		}
	}()
	a.wg.Wait()
	close(a.out)
}
