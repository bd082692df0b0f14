package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/dawn-go/dawn/internal/store/dialect"
)

// Thread reads a thread, or dialect.ErrNoRow.
func (s *DB) Thread(ctx context.Context, id string) (dialect.ThreadRow, error) {
	defer s.lockRead()()
	t := dialect.ThreadRow{ID: id}
	err := s.rq.QueryRowContext(ctx, `SELECT created_at, updated_at, metadata, status, owner, COALESCE(ttl, 0), COALESCE(expires_at, 0)
		FROM threads WHERE id = ?`, id).Scan(&t.CreatedAt, &t.UpdatedAt, &t.Metadata, &t.Status, &t.Owner, &t.TTL, &t.ExpiresAt)
	if errors.Is(err, sql.ErrNoRows) {
		return t, dialect.ErrNoRow
	}
	return t, err
}

// runColumns reads runs with their thread's id.
const runColumns = `SELECT r.id, t.id, r.route, r.status, r.error, r.output, r.created_at, r.updated_at, r.metadata, r.attrs
	FROM runs r JOIN threads t ON t.pk = r.thread`

// Runs reads a run by id, or a thread's runs newest first.
func (s *DB) Runs(ctx context.Context, id string, byThread bool) ([]dialect.RunRow, error) {
	query := runColumns + ` WHERE r.id = ?`
	if byThread {
		query = runColumns + ` WHERE t.id = ? ORDER BY r.created_at DESC, r.id DESC`
	}
	defer s.lockRead()()
	rows, err := s.rq.QueryContext(ctx, query, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return dialect.ScanRuns(rows)
}

// RunExists reports whether a run exists.
func (s *DB) RunExists(ctx context.Context, id string) (bool, error) {
	defer s.lockRead()()
	var one int
	err := s.rq.QueryRowContext(ctx, `SELECT 1 FROM runs WHERE id = ?`, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// Latest reads a thread's checkpoint from the read pool.
func (s *DB) Latest(ctx context.Context, threadID string, each func(dialect.CheckpointRow) error) error {
	defer s.lockRead()()
	return scanLatest(ctx, s.st.latest, threadID, each)
}

// scanLatest runs one of the latest statements and hands over its rows.
func scanLatest(ctx context.Context, stmt *sql.Stmt, threadID string, each func(dialect.CheckpointRow) error) error {
	rows, err := stmt.QueryContext(ctx, threadID)
	if err != nil {
		return err
	}
	defer rows.Close()
	var count, updated, head, branch sql.NullInt64
	var runID, route, text, copyOf sql.NullString
	var data sql.RawBytes
	for rows.Next() {
		var r dialect.CheckpointRow
		if err := rows.Scan(&r.Kind, &r.Seq, &count, &updated, &runID, &route, &text, &data, &head, &branch, &copyOf); err != nil {
			return err
		}
		r.Count, r.Updated, r.RunID, r.Route, r.Text, r.Data = count.Int64, updated.Int64, runID.String, route.String, text.String, data
		r.Head, r.Branch, r.CopyOf = head.Int64, branch.Int64, copyOf.String
		if err := each(r); err != nil {
			return err
		}
	}
	return rows.Err()
}

// eventsQuery reads a run's events after an id, in id order.
const eventsQuery = `SELECT h.seq, h.type, h.codec, h.data
	FROM runs r JOIN history h ON h.thread = r.thread AND h.run = r.pk
	WHERE r.id = ? AND h.seq > ? ORDER BY h.seq LIMIT ?`

// Events reads a run's events after an id.
func (s *DB) Events(ctx context.Context, runID string, after int64, limit int, each func(dialect.EventRow) error) error {
	if limit <= 0 {
		limit = -1 // no limit
	}
	defer s.lockRead()()
	rows, err := s.rq.QueryContext(ctx, eventsQuery, runID, after, limit)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var ev dialect.EventRow
		var data sql.RawBytes
		if err := rows.Scan(&ev.Seq, &ev.Type, &ev.Codec, &data); err != nil {
			return err
		}
		ev.Data = data
		if err := each(ev); err != nil {
			return err
		}
	}
	return rows.Err()
}

// sortColumns are the columns a search sorts by.
var sortColumns = map[string]string{
	"thread_id":  "t.id",
	"status":     "t.status",
	"created_at": "t.created_at",
	"updated_at": "t.updated_at",
}

// jsonEqual compares with json_extract, which gives SQL values for
// scalars and compact JSON text for objects and arrays, on both sides
// alike.
func jsonEqual(a *dialect.Args, column, key, value string) string {
	return "json_extract(" + column + ", " + a.Add(`$."`+key+`"`) + ") IS json_extract(" + a.Add(value) + ", '$')"
}

// SearchThreads reads one page of the threads f selects.
func (s *DB) SearchThreads(ctx context.Context, f dialect.ThreadFilter) ([]dialect.ThreadRow, error) {
	a := &dialect.Args{}
	query := dialect.SearchQuery(a, f, jsonEqual, sortColumns)
	defer s.lockRead()()
	rows, err := s.rq.QueryContext(ctx, query, a.List...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return dialect.ScanThreads(rows)
}

// CountThreads counts the threads f selects.
func (s *DB) CountThreads(ctx context.Context, f dialect.ThreadFilter) (int, error) {
	a := &dialect.Args{}
	where := dialect.ThreadWhere(a, f, jsonEqual)
	defer s.lockRead()()
	var n int
	err := s.rq.QueryRowContext(ctx, `SELECT count(*) FROM threads t`+where, a.List...).Scan(&n)
	return n, err
}

// FinishedRuns reads a thread's successful runs that are no preview,
// newest first.
func (s *DB) FinishedRuns(ctx context.Context, f dialect.FinishedFilter, each func(dialect.FinishedRow) error) error {
	a := &dialect.Args{}
	query := dialect.FinishedQuery(a, f, `0, NULL`,
		`(CASE WHEN json_valid(r.output) THEN json_extract(r.output, '$.preview') END) IS NULL`)
	defer s.lockRead()()
	rows, err := s.rq.QueryContext(ctx, query, a.List...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var r dialect.FinishedRow
		if err := rows.Scan(&r.ID, &r.Route, &r.CreatedAt, &r.UpdatedAt, &r.Codec, &r.Data); err != nil {
			return err
		}
		if err := each(r); err != nil {
			return err
		}
	}
	return rows.Err()
}

// AppValues reads every app value.
func (s *DB) AppValues(ctx context.Context, each func(key, value string) error) error {
	defer s.lockRead()()
	rows, err := s.rq.QueryContext(ctx, `SELECT key, value FROM app_values`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return err
		}
		if err := each(k, v); err != nil {
			return fmt.Errorf("app value %q: %w", k, err)
		}
	}
	return rows.Err()
}

var _ dialect.Peeker = (*DB)(nil)

// Peek runs a read of one row on the read pool.
func (s *DB) Peek(ctx context.Context, query string, args []any, dest ...any) error {
	defer s.lockRead()()
	return s.rq.QueryRowContext(ctx, query, args...).Scan(dest...)
}

// Checkpoints reads a thread's kept checkpoints, highest step first.
func (s *DB) Checkpoints(ctx context.Context, threadID string, f dialect.CheckpointFilter, each func(dialect.CheckpointMeta) error) error {
	limit := f.Limit
	if limit <= 0 {
		limit = -1 // no limit
	}
	defer s.lockRead()()
	rows, err := s.rq.QueryContext(ctx, `SELECT `+dialect.CheckpointColumns+`
		FROM threads t JOIN checkpoints c ON c.thread = t.pk
		WHERE t.id = ?1 AND (?2 = 0 OR c.step < ?2) AND (?3 = 0 OR c.step = ?3)
		ORDER BY c.step DESC LIMIT ?4`, threadID, f.Before, f.Step, limit)
	if err != nil {
		return err
	}
	defer rows.Close()
	return dialect.ScanCheckpoints(rows, each)
}

// Segments reads the segments a branch inherits.
func (s *DB) Segments(ctx context.Context, threadID string, branch int64) ([]dialect.Segment, error) {
	defer s.lockRead()()
	return segments(ctx, s.rq, threadID, branch)
}

func segments(ctx context.Context, q querier, threadID string, branch int64) ([]dialect.Segment, error) {
	rows, err := q.QueryContext(ctx, `SELECT b.key, b.lo, b.hi FROM threads t JOIN branches b ON b.thread = t.pk
		WHERE t.id = ? AND b.branch = ? ORDER BY b.lo`, threadID, branch)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return dialect.ScanSegments(rows)
}

// Messages reads the message rows of a key in a range of seq.
func (s *DB) Messages(ctx context.Context, threadID string, key, lo, hi int64, each func(seq int64, data []byte) error) error {
	defer s.lockRead()()
	return messages(ctx, s.rq, threadID, key, lo, hi, each)
}

func messages(ctx context.Context, q querier, threadID string, key, lo, hi int64, each func(seq int64, data []byte) error) error {
	rows, err := q.QueryContext(ctx, `SELECT m.seq, m.data FROM threads t JOIN history m ON m.thread = t.pk
		WHERE t.id = ? AND m.run = ? AND m.seq >= ? AND m.seq < ? ORDER BY m.seq`, threadID, key, lo, hi)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var seq int64
		var data sql.RawBytes
		if err := rows.Scan(&seq, &data); err != nil {
			return err
		}
		if err := each(seq, data); err != nil {
			return err
		}
	}
	return rows.Err()
}

// Parts reads every part row of a thread.
func (s *DB) Parts(ctx context.Context, threadID string, each func(dialect.CheckpointRow) error) error {
	defer s.lockRead()()
	rows, err := s.rq.QueryContext(ctx, `SELECT p.seq, p.type, p.data FROM threads t JOIN history p ON p.thread = t.pk
		WHERE t.id = ? AND p.run = -1 ORDER BY p.seq`, threadID)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		r := dialect.CheckpointRow{Kind: 2}
		var data sql.RawBytes
		if err := rows.Scan(&r.Seq, &r.Text, &data); err != nil {
			return err
		}
		r.Data = data
		if err := each(r); err != nil {
			return err
		}
	}
	return rows.Err()
}
