package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// ThreadQuery selects threads for SearchThreads and CountThreads. Zero
// fields select everything.
type ThreadQuery struct {
	// IDs keeps only the threads with these ids.
	IDs []string
	// Metadata keeps threads whose metadata has each of these keys with an
	// equal value (a JSON object; strings, numbers, booleans and null
	// compare by value, objects and arrays by their compact JSON).
	Metadata json.RawMessage
	// Values does the same on the thread's state values (not its
	// messages).
	Values json.RawMessage
	// Status keeps threads in this status (StatusIdle, StatusBusy, ...).
	Status string
	// SortBy is "thread_id", "status", "created_at" or "updated_at"
	// (default); SortOrder is "asc" or "desc" (default).
	SortBy, SortOrder string
	// Limit bounds the threads returned (default 10, at most 1000);
	// Offset skips that many first.
	Limit, Offset int
}

// maxSearchLimit bounds one page of SearchThreads.
const maxSearchLimit = 1000

// sortColumns are the columns a search may sort by, by SortBy.
var sortColumns = map[string]string{
	"":           "t.updated_at",
	"thread_id":  "t.id",
	"status":     "t.status",
	"created_at": "t.created_at",
	"updated_at": "t.updated_at",
}

// SearchThreads returns one page of the threads q selects. A query the
// store cannot run (an unknown sort, a filter that is not a JSON object)
// fails with ErrInvalid naming the field.
func (s *SQLite) SearchThreads(ctx context.Context, q ThreadQuery) ([]Thread, error) {
	a := &sqlArgs{}
	where, err := q.where(a, sqliteJSONEqual)
	if err != nil {
		return nil, err
	}
	col, order, limit, err := q.page(sortColumns)
	if err != nil {
		return nil, err
	}
	query := `SELECT t.id, t.created_at, t.updated_at, t.metadata, t.status FROM threads t` + where +
		` ORDER BY ` + col + ` ` + order + `, t.pk ` + order + ` LIMIT ` + a.add(limit) + ` OFFSET ` + a.add(max(q.Offset, 0))
	defer s.lockRead()()
	rows, err := s.rq.QueryContext(ctx, query, a.args...)
	if err != nil {
		return nil, fmt.Errorf("store: search threads: %w", err)
	}
	defer rows.Close()
	return scanThreads(rows)
}

// page is q's sort column (from columns, by SortBy), its order (ASC or DESC) and its bounded limit,
// or ErrInvalid naming the field that has none of the allowed values.
func (q ThreadQuery) page(columns map[string]string) (col, order string, limit int, err error) {
	col, ok := columns[q.SortBy]
	if !ok {
		return "", "", 0, fmt.Errorf("%w: sort_by must be one of thread_id, status, created_at, updated_at, not %q", ErrInvalid, q.SortBy)
	}
	order = "DESC"
	switch strings.ToLower(q.SortOrder) {
	case "", "desc":
	case "asc":
		order = "ASC"
	default:
		return "", "", 0, fmt.Errorf("%w: sort_order must be asc or desc, not %q", ErrInvalid, q.SortOrder)
	}
	limit = q.Limit
	switch {
	case limit <= 0:
		limit = 10
	case limit > maxSearchLimit:
		limit = maxSearchLimit
	}
	return col, order, limit, nil
}

// CountThreads returns how many threads q selects; Limit, Offset and the
// sort are ignored.
func (s *SQLite) CountThreads(ctx context.Context, q ThreadQuery) (int, error) {
	a := &sqlArgs{}
	where, err := q.where(a, sqliteJSONEqual)
	if err != nil {
		return 0, err
	}
	defer s.lockRead()()
	var n int
	if err := s.rq.QueryRowContext(ctx, `SELECT count(*) FROM threads t`+where, a.args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count threads: %w", err)
	}
	return n, nil
}

// sqlArgs collects the arguments of a statement and writes their
// placeholders: ? for SQLite, $1, $2, ... for Postgres.
type sqlArgs struct {
	args     []any
	numbered bool
}

// add appends v and returns its placeholder.
func (a *sqlArgs) add(v any) string {
	a.args = append(a.args, v)
	if a.numbered {
		return "$" + strconv.Itoa(len(a.args))
	}
	return "?"
}

// jsonFilterSQL writes the condition that the member key of the JSON object
// in column equals value, compact JSON; a missing member equals null.
type jsonFilterSQL func(a *sqlArgs, column, key, value string) string

// sqliteJSONEqual compares with json_extract, which gives SQL values for
// scalars and compact JSON text for objects and arrays, on both sides
// alike.
func sqliteJSONEqual(a *sqlArgs, column, key, value string) string {
	return "json_extract(" + column + ", " + a.add(`$."`+key+`"`) + ") IS json_extract(" + a.add(value) + ", '$')"
}

// where is q's WHERE clause (with a leading space, or empty); its
// arguments go to a, and eq writes the conditions of the JSON filters.
func (q ThreadQuery) where(a *sqlArgs, eq jsonFilterSQL) (string, error) {
	var conds []string
	if len(q.IDs) > 0 {
		marks := make([]string, len(q.IDs))
		for i, id := range q.IDs {
			marks[i] = a.add(id)
		}
		conds = append(conds, "t.id IN ("+strings.Join(marks, ",")+")")
	}
	if q.Status != "" {
		conds = append(conds, "t.status = "+a.add(q.Status))
	}
	for _, f := range []struct {
		name, column string
		filter       json.RawMessage
	}{{"metadata", "t.metadata", q.Metadata}, {"values", "t.state", q.Values}} {
		members, err := jsonFilter(f.name, f.filter)
		if err != nil {
			return "", err
		}
		for _, m := range members {
			conds = append(conds, eq(a, f.column, m.key, m.value))
		}
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), nil
}

// filterMember is one member of a filter object, its value compact JSON.
type filterMember struct{ key, value string }

// jsonFilter checks a filter object and returns its members, in key
// order; each becomes one condition on a column that holds a JSON object:
// the key's value there must equal the filter's.
func jsonFilter(name string, filter json.RawMessage) ([]filterMember, error) {
	filter = bytes.TrimSpace(filter)
	if len(filter) == 0 || bytes.Equal(filter, []byte("null")) {
		return nil, nil
	}
	var members map[string]json.RawMessage
	if filter[0] != '{' || json.Unmarshal(filter, &members) != nil {
		return nil, fmt.Errorf("%w: %s must be a JSON object such as {\"user\":\"ann\"}", ErrInvalid, name)
	}
	out := make([]filterMember, 0, len(members))
	for _, key := range slices.Sorted(maps.Keys(members)) {
		if strings.ContainsAny(key, "\"\\") || key == "" {
			return nil, fmt.Errorf("%w: %s key %q cannot be searched: keys must be non-empty and hold no quotes or backslashes", ErrInvalid, name, key)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, members[key]); err != nil {
			return nil, fmt.Errorf("%w: %s.%s: %v", ErrInvalid, name, key, err)
		}
		out = append(out, filterMember{key, compact.String()})
	}
	return out, nil
}

// rowScanner is rows as both stores read them: database/sql's and pgx's
// alike.
type rowScanner interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// scanThreads reads the rows of a thread search (id, created_at,
// updated_at, metadata, status).
func scanThreads(rows rowScanner) ([]Thread, error) {
	out := []Thread{}
	for rows.Next() {
		var t Thread
		var created, updated int64
		var meta string
		if err := rows.Scan(&t.ID, &created, &updated, &meta, &t.Status); err != nil {
			return nil, fmt.Errorf("store: search threads: %w", err)
		}
		t.CreatedAt, t.UpdatedAt = fromNanos(created), fromNanos(updated)
		t.Metadata = json.RawMessage(meta)
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: search threads: %w", err)
	}
	return out, nil
}
