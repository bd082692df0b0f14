package store

import (
	"context"
	"fmt"

	"github.com/dawn-go/dawn/stream"
)

// pgSortColumns are sortColumns for Postgres: text sorts byte by byte,
// as SQLite's BINARY collation does, whatever the database's locale.
var pgSortColumns = map[string]string{
	"":           "t.updated_at",
	"thread_id":  `t.id COLLATE "C"`,
	"status":     `t.status COLLATE "C"`,
	"created_at": "t.created_at",
	"updated_at": "t.updated_at",
}

// pgJSON is the SQL that reads the JSON text of column (a text column or
// a parameter) as json. Postgres cannot represent the character U+0000,
// and any json operator on text that escapes it (\u0000) fails, so the
// escape is read as U+FFFD instead: one odd value then equals another
// rather than failing every search of every thread.
func pgJSON(column string) string {
	return `replace(` + column + `, '\u0000', '\ufffd')::json`
}

// pgJSONEqual compares as jsonb: strings, numbers, booleans and null by
// value (a missing member equals null, as in SQLite), objects and arrays
// as JSON values. Only the member is cast to jsonb, so a value jsonb
// cannot hold elsewhere in the object never fails the search.
func pgJSONEqual(a *sqlArgs, column, key, value string) string {
	return `COALESCE((` + pgJSON(column) + ` -> ` + a.add(key) + `)::jsonb, 'null') = (` + pgJSON(a.add(value)+"::text") + `)::jsonb`
}

// SearchThreads returns one page of the threads q selects (see
// SQLite.SearchThreads).
func (s *Postgres) SearchThreads(ctx context.Context, q ThreadQuery) ([]Thread, error) {
	a := &sqlArgs{numbered: true}
	where, err := q.where(a, pgJSONEqual)
	if err != nil {
		return nil, err
	}
	col, order, limit, err := q.page(pgSortColumns)
	if err != nil {
		return nil, err
	}
	query := `SELECT t.id, t.created_at, t.updated_at, t.metadata, t.status FROM threads t` + where +
		` ORDER BY ` + col + ` ` + order + `, t.pk ` + order + ` LIMIT ` + a.add(limit) + ` OFFSET ` + a.add(max(q.Offset, 0))
	rows, err := s.pool.Query(ctx, query, a.args...)
	if err != nil {
		return nil, fmt.Errorf("store: search threads: %w", err)
	}
	defer rows.Close()
	return scanThreads(rows)
}

// CountThreads returns how many threads q selects (see
// SQLite.CountThreads).
func (s *Postgres) CountThreads(ctx context.Context, q ThreadQuery) (int, error) {
	a := &sqlArgs{numbered: true}
	where, err := q.where(a, pgJSONEqual)
	if err != nil {
		return 0, err
	}
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM threads t`+where, a.args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count threads: %w", err)
	}
	return n, nil
}

// FinishedRuns returns a thread's successful runs, newest first, with
// their done event if asked (see SQLite.FinishedRuns). A run's output is
// valid JSON or NULL (FinishRun and SaveStep check it); only an object
// can mark a preview, so only an object is read as JSON.
func (s *Postgres) FinishedRuns(ctx context.Context, q FinishedQuery) ([]FinishedRun, error) {
	a := &sqlArgs{numbered: true}
	data := `0::smallint, NULL::bytea`
	if q.Done {
		data = `h.codec, h.data`
	}
	query := `SELECT r.id, r.route, r.created_at, r.updated_at, ` + data + `
		FROM runs r JOIN threads t ON t.pk = r.thread
		JOIN history h ON h.thread = r.thread AND h.run = r.pk AND h.type = ` + a.add(stream.TypeDone) + `
		WHERE t.id = ` + a.add(q.ThreadID) + ` AND r.status = ` + a.add(RunSuccess) + `
		AND COALESCE(CASE WHEN r.output ~ '^\s*\{' THEN json_typeof(` + pgJSON("r.output") + ` -> 'preview') END, 'null') = 'null'`
	if q.RunID != "" {
		query += ` AND r.id = ` + a.add(q.RunID)
	}
	if q.Before != "" {
		query += ` AND (r.created_at, r.pk) < (SELECT created_at, pk FROM runs WHERE id = ` + a.add(q.Before) + `)`
	}
	query += ` ORDER BY r.created_at DESC, r.pk DESC`
	if q.Limit > 0 {
		query += ` LIMIT ` + a.add(q.Limit)
	}
	rows, err := s.pool.Query(ctx, query, a.args...)
	if err != nil {
		return nil, fmt.Errorf("store: finished runs of thread %q: %w", q.ThreadID, err)
	}
	defer rows.Close()
	out := []FinishedRun{}
	var u unpacker
	for rows.Next() {
		r := FinishedRun{ThreadID: q.ThreadID}
		var created, updated int64
		var codec int16
		var data []byte
		if err := rows.Scan(&r.ID, &r.Route, &created, &updated, &codec, &data); err != nil {
			return nil, fmt.Errorf("store: finished runs of thread %q: %w", q.ThreadID, err)
		}
		if r.Done, err = u.unpack(int(codec), data); err != nil {
			return nil, fmt.Errorf("store: done event of run %q: %w", r.ID, err)
		}
		r.CreatedAt, r.UpdatedAt = fromNanos(created), fromNanos(updated)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: finished runs of thread %q: %w", q.ThreadID, err)
	}
	if len(out) == 0 {
		if _, err := s.GetThread(ctx, q.ThreadID); err != nil {
			return nil, err
		}
	}
	return out, nil
}
