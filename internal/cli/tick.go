package cli

import (
	"context"
	"time"
)

// everyTick calls fn every interval until ctx ends; the first call comes
// one interval after the start.
func everyTick(ctx context.Context, interval time.Duration, fn func()) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			fn()
		}
	}
}

// sweepLoop deletes what sweep finds expired every interval until ctx
// ends, logging a failure (what names what it deletes) and what it
// deleted. Every replica on a shared database sweeps; each deletes rows
// the others do not hold.
func (s *stack) sweepLoop(ctx context.Context, every time.Duration, what string, sweep func(context.Context) (int, error)) {
	everyTick(ctx, every, func() {
		n, err := sweep(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			s.logger.Warn("cannot delete the expired "+what+"; trying again", "store", s.store.Path(), "every", every, "err", err)
		case n > 0:
			s.logger.Info("deleted the expired "+what, what, n)
		}
	})
}
