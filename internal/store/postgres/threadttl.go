package postgres

import (
	"context"

	"github.com/dawn-go/dawn/internal/store/dialect"
)

// AnyExpiredThread reports whether any thread expired by at, from the
// index of the expiring threads.
func (s *DB) AnyExpiredThread(ctx context.Context, at int64) (bool, error) {
	var found bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM threads
		WHERE expires_at IS NOT NULL AND expires_at <= $1)`, at).Scan(&found)
	return found, err
}

func (t *tx) SetThreadTTL(_ context.Context, threadPK, ttl, expiresAt, now int64) error {
	t.queue(`UPDATE threads SET ttl = NULLIF($1::bigint, 0), expires_at = NULLIF($2::bigint, 0), updated_at = $3 WHERE pk = $4`,
		ttl, expiresAt, now, threadPK)
	return nil
}

// ExpiredThreads locks the expired threads no other transaction holds (a
// run's begin or step, a delete, the sweep of another replica), so that
// replicas sweeping at once neither wait for nor deadlock on each other,
// and then, in a statement of its own (and so, under READ COMMITTED, a
// snapshot taken after the locks), asks which of them have a running or
// a queued run: a run that began before the lock is seen.
func (t *tx) ExpiredThreads(ctx context.Context, at int64, limit int) ([]dialect.ExpiredThread, error) {
	return t.lockDue(ctx, `SELECT pk, id, status FROM threads
		WHERE expires_at IS NOT NULL AND expires_at <= $1 ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED`, at, limit)
}

// lockDue runs query, which locks and reads the pk, id and status of at
// most $2 threads due at $1, and marks those that have a running or a
// queued run.
func (t *tx) lockDue(ctx context.Context, query string, at int64, limit int) ([]dialect.ExpiredThread, error) {
	if err := t.flush(ctx); err != nil {
		return nil, err
	}
	rows, err := t.tx.Query(ctx, query, at, limit)
	if err != nil {
		return nil, err
	}
	var out []dialect.ExpiredThread
	for rows.Next() {
		var e dialect.ExpiredThread
		if err := rows.Scan(&e.PK, &e.ID, &e.Status); err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, e)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(out) == 0 {
		return nil, err
	}
	return out, t.markPending(ctx, out)
}

// markPending sets Pending on each of threads, locked, that has a running
// or a queued run.
func (t *tx) markPending(ctx context.Context, threads []dialect.ExpiredThread) error {
	pks := make([]int64, len(threads))
	for i, e := range threads {
		pks[i] = e.PK
	}
	pending := map[int64]bool{}
	rows, err := t.tx.Query(ctx, `SELECT thread FROM runs WHERE thread = ANY($1) AND status = 'running'
		UNION SELECT thread FROM queued_runs WHERE thread = ANY($1)`, pks)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var pk int64
		if err := rows.Scan(&pk); err != nil {
			return err
		}
		pending[pk] = true
	}
	for i := range threads {
		threads[i].Pending = pending[threads[i].PK]
	}
	return rows.Err()
}

func (t *tx) RearmThread(_ context.Context, threadPK, at int64) error {
	t.queue(`UPDATE threads SET expires_at = $1::bigint + ttl WHERE pk = $2`, at, threadPK)
	return nil
}
