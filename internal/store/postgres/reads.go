package postgres

import (
	"context"
	"errors"

	"github.com/dawn-go/dawn/internal/store/dialect"
	"github.com/jackc/pgx/v5"
)

// querier is what both the pool and a transaction offer for reads.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// Thread reads a thread, or dialect.ErrNoRow.
func (s *DB) Thread(ctx context.Context, id string) (dialect.ThreadRow, error) {
	t := dialect.ThreadRow{ID: id}
	err := s.pool.QueryRow(ctx, `SELECT created_at, updated_at, metadata, status, owner, COALESCE(ttl, 0), COALESCE(expires_at, 0)
		FROM threads WHERE id = $1`, id).Scan(&t.CreatedAt, &t.UpdatedAt, &t.Metadata, &t.Status, &t.Owner, &t.TTL, &t.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return t, dialect.ErrNoRow
	}
	return t, err
}

const runColumns = `SELECT r.id, t.id, r.route, r.status, r.error, r.output, r.created_at, r.updated_at, r.metadata, r.attrs
	FROM runs r JOIN threads t ON t.pk = r.thread`

// Runs reads a run by id, or a thread's runs newest first.
func (s *DB) Runs(ctx context.Context, id string, byThread bool) ([]dialect.RunRow, error) {
	query := runColumns + ` WHERE r.id = $1`
	if byThread {
		query = runColumns + ` WHERE t.id = $1 ORDER BY r.created_at DESC, r.id DESC`
	}
	rows, err := s.pool.Query(ctx, query, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return dialect.ScanRuns(rows)
}

// RunExists reports whether a run exists.
func (s *DB) RunExists(ctx context.Context, id string) (bool, error) {
	var ok bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS(SELECT 1 FROM runs WHERE id = $1)`, id).Scan(&ok)
	return ok, err
}

// latestQuery reads a thread's checkpoint: the head row, then the
// messages, then the parts, in one statement and so one snapshot.
// Messages are the head's branch's own (see the SQLite dialect's
// latestQuery).
const latestQuery = `SELECT 0 AS kind, t.step AS seq, t.message_count, t.checkpoint_at, t.run_id, t.route, t.state, convert_to(t.parts, 'UTF8'),
		t.head, t.branch, t.copy_of
	FROM threads t WHERE t.id = $1
	UNION ALL
	SELECT 1, m.seq, NULL, NULL, NULL, NULL, NULL, m.data, NULL, NULL, NULL
	FROM threads t JOIN history m ON m.thread = t.pk AND m.run = t.branch AND m.seq < t.message_count WHERE t.id = $1
	UNION ALL
	SELECT 2, p.seq, NULL, NULL, NULL, NULL, p.type, p.data, NULL, NULL, NULL
	FROM threads t JOIN history p ON p.thread = t.pk AND p.run = -1 WHERE t.id = $1
	ORDER BY 1, 2`

// Latest reads a thread's checkpoint.
func (s *DB) Latest(ctx context.Context, threadID string, each func(dialect.CheckpointRow) error) error {
	return latest(ctx, s.pool, threadID, each)
}

func latest(ctx context.Context, q querier, threadID string, each func(dialect.CheckpointRow) error) error {
	rows, err := q.Query(ctx, latestQuery, threadID)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var kind int32
		var count, updated, head, branch *int64
		var runID, route, text, copyOf *string
		r := dialect.CheckpointRow{}
		if err := rows.Scan(&kind, &r.Seq, &count, &updated, &runID, &route, &text, &r.Data, &head, &branch, &copyOf); err != nil {
			return err
		}
		r.Kind = int(kind)
		r.Count, r.Updated, r.Head, r.Branch = deref(count), deref(updated), deref(head), deref(branch)
		r.RunID, r.Route, r.Text, r.CopyOf = deref(runID), deref(route), deref(text), deref(copyOf)
		if err := each(r); err != nil {
			return err
		}
	}
	return rows.Err()
}

// deref is *p, or the zero value for nil (NULL).
func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// Events reads a run's events after an id, in id order.
func (s *DB) Events(ctx context.Context, runID string, after int64, limit int, each func(dialect.EventRow) error) error {
	var lim any // NULL: no limit
	if limit > 0 {
		lim = limit
	}
	rows, err := s.pool.Query(ctx, `SELECT h.seq, h.type, h.codec, h.data
		FROM runs r JOIN history h ON h.thread = r.thread AND h.run = r.pk
		WHERE r.id = $1 AND h.seq > $2 ORDER BY h.seq LIMIT $3`, runID, after, lim)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var ev dialect.EventRow
		var codec int16
		if err := rows.Scan(&ev.Seq, &ev.Type, &codec, &ev.Data); err != nil {
			return err
		}
		ev.Codec = int(codec)
		if err := each(ev); err != nil {
			return err
		}
	}
	return rows.Err()
}

// sortColumns: text sorts byte by byte, as SQLite's BINARY collation
// does, whatever the database's locale.
var sortColumns = map[string]string{
	"thread_id":  `t.id COLLATE "C"`,
	"status":     `t.status COLLATE "C"`,
	"created_at": "t.created_at",
	"updated_at": "t.updated_at",
}

// jsonText is the SQL that reads the JSON text of column (a text column
// or a parameter) as json. Postgres cannot represent the character
// U+0000, and any json operator on text that escapes it (\u0000) fails,
// so the escape is read as U+FFFD instead: one odd value then equals
// another rather than failing every search of every thread.
func jsonText(column string) string {
	return `replace(` + column + `, '\u0000', '\ufffd')::json`
}

// jsonEqual compares as jsonb: strings, numbers, booleans and null by
// value (a missing member equals null, as in SQLite), objects and arrays
// as JSON values. Only the member is cast to jsonb, so a value jsonb
// cannot hold elsewhere in the object never fails the search.
func jsonEqual(a *dialect.Args, column, key, value string) string {
	return `COALESCE((` + jsonText(column) + ` -> ` + a.Add(key) + `)::jsonb, 'null') = (` + jsonText(a.Add(value)+"::text") + `)::jsonb`
}

// SearchThreads reads one page of the threads f selects.
func (s *DB) SearchThreads(ctx context.Context, f dialect.ThreadFilter) ([]dialect.ThreadRow, error) {
	a := &dialect.Args{Numbered: true}
	rows, err := s.pool.Query(ctx, dialect.SearchQuery(a, f, jsonEqual, sortColumns), a.List...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return dialect.ScanThreads(rows)
}

// CountThreads counts the threads f selects.
func (s *DB) CountThreads(ctx context.Context, f dialect.ThreadFilter) (int, error) {
	a := &dialect.Args{Numbered: true}
	where := dialect.ThreadWhere(a, f, jsonEqual)
	var n int
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM threads t`+where, a.List...).Scan(&n)
	return n, err
}

// FinishedRuns reads a thread's successful runs that are no preview,
// newest first. A run's output is valid JSON or NULL (the store checks
// it); only an object can mark a preview, so only an object is read as
// JSON.
func (s *DB) FinishedRuns(ctx context.Context, f dialect.FinishedFilter, each func(dialect.FinishedRow) error) error {
	a := &dialect.Args{Numbered: true}
	query := dialect.FinishedQuery(a, f, `0::smallint, NULL::bytea`,
		`COALESCE(CASE WHEN r.output ~ '^\s*\{' THEN json_typeof(`+jsonText("r.output")+` -> 'preview') END, 'null') = 'null'`)
	rows, err := s.pool.Query(ctx, query, a.List...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var r dialect.FinishedRow
		var codec int16
		if err := rows.Scan(&r.ID, &r.Route, &r.CreatedAt, &r.UpdatedAt, &codec, &r.Data); err != nil {
			return err
		}
		r.Codec = int(codec)
		if err := each(r); err != nil {
			return err
		}
	}
	return rows.Err()
}

// AppValues reads every app value.
func (s *DB) AppValues(ctx context.Context, each func(key, value string) error) error {
	rows, err := s.pool.Query(ctx, `SELECT key, value FROM app_values`)
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
			return err
		}
	}
	return rows.Err()
}

var _ dialect.Peeker = (*DB)(nil)

// Peek runs a read of one row.
func (s *DB) Peek(ctx context.Context, query string, args []any, dest ...any) error {
	return s.pool.QueryRow(ctx, query, args...).Scan(dest...)
}

// Checkpoints reads a thread's kept checkpoints, highest step first.
func (s *DB) Checkpoints(ctx context.Context, threadID string, f dialect.CheckpointFilter, each func(dialect.CheckpointMeta) error) error {
	var limit any // NULL: no limit
	if f.Limit > 0 {
		limit = f.Limit
	}
	rows, err := s.pool.Query(ctx, `SELECT `+dialect.CheckpointColumns+`
		FROM threads t JOIN checkpoints c ON c.thread = t.pk
		WHERE t.id = $1 AND ($2 = 0 OR c.step < $2) AND ($3 = 0 OR c.step = $3)
		ORDER BY c.step DESC LIMIT $4`, threadID, f.Before, f.Step, limit)
	if err != nil {
		return err
	}
	defer rows.Close()
	return dialect.ScanCheckpoints(rows, each)
}

// Segments reads the segments a branch inherits.
func (s *DB) Segments(ctx context.Context, threadID string, branch int64) ([]dialect.Segment, error) {
	return segments(ctx, s.pool, threadID, branch)
}

func segments(ctx context.Context, q querier, threadID string, branch int64) ([]dialect.Segment, error) {
	rows, err := q.Query(ctx, `SELECT b.key, b.lo, b.hi FROM threads t JOIN branches b ON b.thread = t.pk
		WHERE t.id = $1 AND b.branch = $2 ORDER BY b.lo`, threadID, branch)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return dialect.ScanSegments(rows)
}

// Messages reads the message rows of a key in a range of seq.
func (s *DB) Messages(ctx context.Context, threadID string, key, lo, hi int64, each func(seq int64, data []byte) error) error {
	return messages(ctx, s.pool, threadID, key, lo, hi, each)
}

func messages(ctx context.Context, q querier, threadID string, key, lo, hi int64, each func(seq int64, data []byte) error) error {
	rows, err := q.Query(ctx, `SELECT m.seq, m.data FROM threads t JOIN history m ON m.thread = t.pk
		WHERE t.id = $1 AND m.run = $2 AND m.seq >= $3 AND m.seq < $4 ORDER BY m.seq`, threadID, key, lo, hi)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var seq int64
		var data []byte
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
	rows, err := s.pool.Query(ctx, `SELECT p.seq, p.type, p.data FROM threads t JOIN history p ON p.thread = t.pk
		WHERE t.id = $1 AND p.run = -1 ORDER BY p.seq`, threadID)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		r := dialect.CheckpointRow{Kind: 2}
		if err := rows.Scan(&r.Seq, &r.Text, &r.Data); err != nil {
			return err
		}
		if err := each(r); err != nil {
			return err
		}
	}
	return rows.Err()
}
