package cli

import (
	"context"
	"time"
)

// itemSweep is how often a server deletes the store's expired items
// (those of the LangGraph Store API put with a ttl). Reads skip an
// expired item at once; the sweep only keeps the database from growing,
// and costs one read of an index when nothing has expired.
const itemSweep = time.Minute

// sweepItemsLoop deletes the store's expired items every interval until
// ctx ends. Every replica on a shared database sweeps; each deletes rows
// the others do not hold.
func (s *stack) sweepItemsLoop(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		n, err := s.store.SweepItems(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			s.logger.Warn("cannot delete the store's expired items; trying again", "store", s.store.Path(), "every", every, "err", err)
		case n > 0:
			s.logger.Debug("deleted expired store items", "items", n)
		}
	}
}
