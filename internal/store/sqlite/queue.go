package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/dawn-go/dawn/internal/store/dialect"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// QueuedRows reads a queued run by id, or a thread's queue in order.
func (s *DB) QueuedRows(ctx context.Context, id string, byThread bool) ([]dialect.QueuedRow, error) {
	query := dialect.QueuedColumns + ` WHERE q.id = ?`
	if byThread {
		query = dialect.QueuedColumns + ` WHERE t.id = ?` + dialect.QueueOrder
	}
	defer s.lockRead()()
	rows, err := s.rq.QueryContext(ctx, query, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return dialect.ScanQueued(rows)
}

// AnyQueued reads whether the queue has a row, with a prepared statement.
func (s *DB) AnyQueued(ctx context.Context) (bool, error) {
	defer s.lockRead()()
	var queued bool
	err := s.st.anyQueued.QueryRowContext(ctx).Scan(&queued)
	return queued, err
}

// DueQueued reads the heads of the queues that are due, owners in turn.
func (s *DB) DueQueued(ctx context.Context, q dialect.DueQuery) ([]dialect.QueuedRow, error) {
	due := dialect.DueColumns + dialect.DueWhere("?")
	args := []any{q.At}
	if q.ThreadID != "" {
		due += ` AND t.id = ?`
		args = append(args, q.ThreadID)
	}
	args = append(args, q.Limit, q.Skip)
	defer s.lockRead()()
	rows, err := s.rq.QueryContext(ctx, dialect.DueFair(due)+` LIMIT ? OFFSET ?`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return dialect.ScanQueued(rows)
}

func (t tx) InsertQueued(ctx context.Context, q dialect.QueuedRow) (int, error) {
	_, err := t.s.conn.ExecContext(ctx, `INSERT INTO queued_runs(id, thread, route, request, not_before, created_at)
		VALUES (?, ?, ?, ?, ?, ?)`, q.ID, q.ThreadPK, q.Route, q.Request, q.NotBefore, q.CreatedAt)
	var e *sqlite.Error
	if errors.As(err, &e) && e.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE {
		return 0, dialect.ErrTaken
	}
	if err != nil {
		return 0, err
	}
	var n int
	err = t.s.conn.QueryRowContext(ctx, `SELECT count(*) FROM queued_runs WHERE thread = ?`, q.ThreadPK).Scan(&n)
	return n, err
}

func (t tx) DeleteQueued(ctx context.Context, id string) (dialect.QueuedRow, error) {
	q := dialect.QueuedRow{ID: id}
	err := t.s.conn.QueryRowContext(ctx, `DELETE FROM queued_runs WHERE id = ? RETURNING thread, route, request, not_before, created_at`, id).
		Scan(&q.ThreadPK, &q.Route, &q.Request, &q.NotBefore, &q.CreatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return q, dialect.ErrNoRow
	}
	return q, err
}

func (t tx) InsertEndedRun(ctx context.Context, r dialect.NewRun, status, errText string) error {
	_, err := t.s.conn.ExecContext(ctx, `INSERT INTO runs(id, thread, route, status, error, created_at, updated_at, owner)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, r.ID, r.ThreadPK, r.Route, status, errText, r.Now, r.Now, r.Owner)
	return err
}

func (t tx) DiscardRun(ctx context.Context, threadPK, runPK, branch, fromMessage int64, runID string) error {
	if _, err := t.s.conn.ExecContext(ctx, `DELETE FROM history WHERE thread = ? AND (run = ? OR (run = ? AND seq >= ?))`, threadPK, runPK, branch, fromMessage); err != nil {
		return err
	}
	if _, err := t.s.conn.ExecContext(ctx, `DELETE FROM checkpoints WHERE thread = ? AND run_id = ?`, threadPK, runID); err != nil {
		return err
	}
	_, err := t.s.conn.ExecContext(ctx, `DELETE FROM runs WHERE pk = ?`, runPK)
	return err
}

func (t tx) CountOwned(ctx context.Context, what, owner string) (int, error) {
	var n int
	err := t.s.conn.QueryRowContext(ctx, dialect.CountOwnedQuery(what, "?"), owner).Scan(&n)
	return n, err
}

func (t tx) CountItems(ctx context.Context, prefix string, at int64) (int, error) {
	var n int
	err := t.s.conn.QueryRowContext(ctx, `SELECT count(*) FROM store_items WHERE substr(namespace, 1, length(?1)) = ?1 AND `+live, prefix, at).Scan(&n)
	return n, err
}
