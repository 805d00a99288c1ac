package opensearch

import (
	"context"
	"errors"
	"fmt"
	"io"

	api "github.com/cnperf/cnperf/api/v1alpha1"
)

// Ship indexes every run and says what it did on log. Errors name the index and the URL
// without credentials.
func Ship(ctx context.Context, cfg Config, runs []*api.Run, log io.Writer) error {
	c, err := New(cfg)
	if err != nil {
		return err
	}
	ver, err := c.Ping(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, run := range runs {
		res, err := c.IndexRun(ctx, run)
		if log != nil {
			fmt.Fprintf(log, "opensearch: run %s: indexed %d of %d results into %s at %s (%s)\n",
				run.UUID, res.Indexed, len(run.Results), c.Index(), c.URL(), ver)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("run %s: %w", run.UUID, err))
		}
	}
	return errors.Join(errs...)
}
