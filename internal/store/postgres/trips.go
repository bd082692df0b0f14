package postgres

import (
	"context"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
)

// tripCounter counts the round trips the store's connections make to the
// database: each query or statement sent on its own, and each batch, is
// one (a statement pgx has not prepared on that connection yet costs one
// more, once).
type tripCounter struct{ n atomic.Int64 }

var (
	_ pgx.QueryTracer = (*tripCounter)(nil)
	_ pgx.BatchTracer = (*tripCounter)(nil)
)

func (c *tripCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}

func (*tripCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (c *tripCounter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.n.Add(1)
	return ctx
}

func (*tripCounter) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

func (*tripCounter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// RoundTrips is how many round trips the store's pool has made to the
// database since it was opened (the notifier's connection aside).
func (s *DB) RoundTrips() int64 { return s.trips.n.Load() }
