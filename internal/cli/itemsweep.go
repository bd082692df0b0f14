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
// ctx ends.
func (s *stack) sweepItemsLoop(ctx context.Context, every time.Duration) {
	s.sweepLoop(ctx, every, "items", s.store.SweepItems)
}
