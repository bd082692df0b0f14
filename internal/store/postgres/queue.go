package postgres

import (
	"context"

	"github.com/dawn-go/dawn/internal/store/dialect"
)

// QueuedRows reads a queued run by id, or a thread's queue in order.
// AnyQueued reads whether the queue has a row.
func (s *DB) AnyQueued(ctx context.Context) (bool, error) {
	var queued bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS(SELECT 1 FROM queued_runs)`).Scan(&queued)
	return queued, err
}

func (s *DB) QueuedRows(ctx context.Context, id string, byThread bool) ([]dialect.QueuedRow, error) {
	query := dialect.QueuedColumns + ` WHERE q.id = $1`
	if byThread {
		query = dialect.QueuedColumns + ` WHERE t.id = $1` + dialect.QueueOrder
	}
	rows, err := s.pool.Query(ctx, query, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return dialect.ScanQueued(rows)
}

// DueQueued reads the heads of the queues that are due, owners in turn.
func (s *DB) DueQueued(ctx context.Context, q dialect.DueQuery) ([]dialect.QueuedRow, error) {
	due := dialect.DueColumns + dialect.DueWhere("$1") + ` AND ($2 = '' OR t.id = $2)`
	rows, err := s.pool.Query(ctx, dialect.DueFair(due)+` LIMIT $3 OFFSET $4`, q.At, q.ThreadID, q.Limit, q.Skip)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return dialect.ScanQueued(rows)
}

func (t *tx) InsertQueued(ctx context.Context, q dialect.QueuedRow) (int, error) {
	_, err := t.exec(ctx, `INSERT INTO queued_runs(id, thread, route, request, not_before, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, q.ID, q.ThreadPK, q.Route, q.Request, q.NotBefore, q.CreatedAt)
	if uniqueViolation(err) != "" {
		return 0, dialect.ErrTaken
	}
	if err != nil {
		return 0, err
	}
	var n int
	err = t.queryRow(ctx, `SELECT count(*) FROM queued_runs WHERE thread = $1`, []any{q.ThreadPK}, &n)
	return n, err
}

func (t *tx) DeleteQueued(ctx context.Context, id string) (dialect.QueuedRow, error) {
	q := dialect.QueuedRow{ID: id}
	err := t.queryRow(ctx, `DELETE FROM queued_runs WHERE id = $1 RETURNING thread, route, request, not_before, created_at`, []any{id},
		&q.ThreadPK, &q.Route, &q.Request, &q.NotBefore, &q.CreatedAt)
	return q, err
}

func (t *tx) InsertEndedRun(ctx context.Context, r dialect.NewRun, status, errText string) error {
	_, err := t.exec(ctx, `INSERT INTO runs(id, thread, route, status, error, created_at, updated_at, owner)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, r.ID, r.ThreadPK, r.Route, status, errText, r.Now, r.Now, r.Owner)
	return err
}

func (t *tx) DiscardRun(_ context.Context, threadPK, runPK, branch, fromMessage int64, runID string) error {
	t.queue(`DELETE FROM history WHERE thread = $1 AND (run = $2 OR (run = $3 AND seq >= $4))`, threadPK, runPK, branch, fromMessage)
	t.queue(`DELETE FROM checkpoints WHERE thread = $1 AND run_id = $2`, threadPK, runID)
	t.queue(`DELETE FROM runs WHERE pk = $1`, runPK)
	return nil
}

func (t *tx) CountOwned(ctx context.Context, what, owner string) (int, error) {
	var n int
	err := t.queryRow(ctx, dialect.CountOwnedQuery(what, "$1"), []any{owner}, &n)
	return n, err
}

func (t *tx) CountItems(ctx context.Context, prefix string, at int64) (int, error) {
	var n int
	err := t.queryRow(ctx, `SELECT count(*) FROM store_items WHERE starts_with(namespace, $1) AND `+live, []any{prefix, at}, &n)
	return n, err
}
