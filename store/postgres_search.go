package store

import (
	"context"
	"errors"
)

// SearchThreads is not built for Postgres yet.
func (p *Postgres) SearchThreads(ctx context.Context, q ThreadQuery) ([]Thread, error) {
	return nil, errors.ErrUnsupported
}

// CountThreads is not built for Postgres yet.
func (p *Postgres) CountThreads(ctx context.Context, q ThreadQuery) (int, error) {
	return 0, errors.ErrUnsupported
}

// FinishedRuns is not built for Postgres yet.
func (p *Postgres) FinishedRuns(ctx context.Context, q FinishedQuery) ([]FinishedRun, error) {
	return nil, errors.ErrUnsupported
}
