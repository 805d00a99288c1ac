package tigerbench

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// DefaultParallelism is how many API writes standing config keeps in flight. With the
// client's 50 QPS / 100 burst it keeps the API server busy without tripping its fairness
// limits on a small cluster.
const DefaultParallelism = 20

// forEach runs fn(i) for i in [0, n) with at most parallelism calls in flight. It stops
// starting new calls when ctx ends and returns every error (the first few are listed).
func forEach(ctx context.Context, n, parallelism int, fn func(ctx context.Context, i int) error) error {
	if parallelism < 1 {
		parallelism = 1
	}
	sem := make(chan struct{}, parallelism)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	failed := 0
	for i := 0; i < n; i++ {
		select {
		case <-ctx.Done():
			wg.Wait()
			mu.Lock()
			defer mu.Unlock()
			return errors.Join(append(errs, fmt.Errorf("interrupted after starting %d of %d: %w", i, n, ctx.Err()))...)
		case sem <- struct{}{}:
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			if err := fn(ctx, i); err != nil {
				mu.Lock()
				failed++
				if len(errs) < 5 {
					errs = append(errs, err)
				}
				mu.Unlock()
			}
		}(i)
	}
	wg.Wait()
	if failed > len(errs) {
		errs = append(errs, fmt.Errorf("... and %d more errors", failed-len(errs)))
	}
	return errors.Join(errs...)
}
