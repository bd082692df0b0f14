package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/dawn-go/dawn/internal/store/dialect"
)

// The thread sweep's statements read the index of the expiring threads
// (threads_expiry), so that they cost next to nothing when no thread has
// expired. A thread is pending while it has a running run (read from the
// runs_running index) or a queued one.
const (
	anyExpiredThread = `SELECT 1 FROM threads WHERE expires_at IS NOT NULL AND expires_at <= ? LIMIT 1`
	expiredThreads   = `SELECT t.pk, t.id, t.status,
		EXISTS(SELECT 1 FROM runs WHERE thread = t.pk AND status = 'running') OR EXISTS(SELECT 1 FROM queued_runs WHERE thread = t.pk)
		FROM threads t WHERE t.expires_at IS NOT NULL AND t.expires_at <= ? ORDER BY t.expires_at LIMIT ?`
)

// AnyExpiredThread reports whether any thread expired by at, from the
// index of the expiring threads.
func (s *DB) AnyExpiredThread(ctx context.Context, at int64) (bool, error) {
	return s.anyDue(ctx, anyExpiredThread, at)
}

// anyDue reports whether query, one of the sweeps' "any due" statements,
// finds a row at at.
func (s *DB) anyDue(ctx context.Context, query string, at int64) (bool, error) {
	defer s.lockRead()()
	var one int
	err := s.rq.QueryRowContext(ctx, query, at).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

func (t tx) SetThreadTTL(ctx context.Context, threadPK, ttl, expiresAt, now int64) error {
	_, err := t.s.conn.ExecContext(ctx, `UPDATE threads SET ttl = NULLIF(?, 0), expires_at = NULLIF(?, 0), updated_at = ? WHERE pk = ?`,
		ttl, expiresAt, now, threadPK)
	return err
}

// ExpiredThreads needs no lock of its own: the write transaction holds
// the only writer connection.
func (t tx) ExpiredThreads(ctx context.Context, at int64, limit int) ([]dialect.ExpiredThread, error) {
	return t.sweepThreads(ctx, expiredThreads, at, limit)
}

// sweepThreads reads the threads a sweep's statement (query) finds due at
// at, up to limit, with whether each has a run pending.
func (t tx) sweepThreads(ctx context.Context, query string, at int64, limit int) ([]dialect.ExpiredThread, error) {
	rows, err := t.s.conn.QueryContext(ctx, query, at, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []dialect.ExpiredThread
	for rows.Next() {
		var e dialect.ExpiredThread
		if err := rows.Scan(&e.PK, &e.ID, &e.Status, &e.Pending); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

func (t tx) RearmThread(ctx context.Context, threadPK, at int64) error {
	_, err := t.s.conn.ExecContext(ctx, `UPDATE threads SET expires_at = ? + ttl WHERE pk = ?`, at, threadPK)
	return err
}
