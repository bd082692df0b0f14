package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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

// sortColumns are the columns a search may sort by.
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
	where, args, err := q.where()
	if err != nil {
		return nil, err
	}
	col, ok := sortColumns[q.SortBy]
	if !ok {
		return nil, fmt.Errorf("%w: sort_by must be one of thread_id, status, created_at, updated_at, not %q", ErrInvalid, q.SortBy)
	}
	order := "DESC"
	switch strings.ToLower(q.SortOrder) {
	case "", "desc":
	case "asc":
		order = "ASC"
	default:
		return nil, fmt.Errorf("%w: sort_order must be asc or desc, not %q", ErrInvalid, q.SortOrder)
	}
	limit := q.Limit
	switch {
	case limit <= 0:
		limit = 10
	case limit > maxSearchLimit:
		limit = maxSearchLimit
	}
	query := `SELECT t.id, t.created_at, t.updated_at, t.metadata, t.status FROM threads t` + where +
		` ORDER BY ` + col + ` ` + order + `, t.pk ` + order + ` LIMIT ? OFFSET ?`
	args = append(args, limit, max(q.Offset, 0))
	defer s.lockRead()()
	rows, err := s.rq.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("store: search threads: %w", err)
	}
	defer rows.Close()
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

// CountThreads returns how many threads q selects; Limit, Offset and the
// sort are ignored.
func (s *SQLite) CountThreads(ctx context.Context, q ThreadQuery) (int, error) {
	where, args, err := q.where()
	if err != nil {
		return 0, err
	}
	defer s.lockRead()()
	var n int
	if err := s.rq.QueryRowContext(ctx, `SELECT count(*) FROM threads t`+where, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count threads: %w", err)
	}
	return n, nil
}

// where is q's WHERE clause (with a leading space, or empty) and its
// arguments.
func (q ThreadQuery) where() (string, []any, error) {
	var conds []string
	var args []any
	if len(q.IDs) > 0 {
		conds = append(conds, "t.id IN (?"+strings.Repeat(",?", len(q.IDs)-1)+")")
		for _, id := range q.IDs {
			args = append(args, id)
		}
	}
	if q.Status != "" {
		conds = append(conds, "t.status = ?")
		args = append(args, q.Status)
	}
	for _, f := range []struct {
		name, column string
		filter       json.RawMessage
	}{{"metadata", "t.metadata", q.Metadata}, {"values", "t.state", q.Values}} {
		c, a, err := jsonFilter(f.name, f.column, f.filter)
		if err != nil {
			return "", nil, err
		}
		conds, args = append(conds, c...), append(args, a...)
	}
	if len(conds) == 0 {
		return "", nil, nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args, nil
}

// jsonFilter turns a filter object into one condition per key on column,
// which holds a JSON object: the key's value there must equal the filter's.
func jsonFilter(name, column string, filter json.RawMessage) ([]string, []any, error) {
	filter = bytes.TrimSpace(filter)
	if len(filter) == 0 || bytes.Equal(filter, []byte("null")) {
		return nil, nil, nil
	}
	var members map[string]json.RawMessage
	if filter[0] != '{' || json.Unmarshal(filter, &members) != nil {
		return nil, nil, fmt.Errorf("%w: %s must be a JSON object such as {\"user\":\"ann\"}", ErrInvalid, name)
	}
	var conds []string
	var args []any
	for key, value := range members {
		if strings.ContainsAny(key, "\"\\") || key == "" {
			return nil, nil, fmt.Errorf("%w: %s key %q cannot be searched: keys must be non-empty and hold no quotes or backslashes", ErrInvalid, name, key)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, value); err != nil {
			return nil, nil, fmt.Errorf("%w: %s.%s: %v", ErrInvalid, name, key, err)
		}
		// json_extract gives SQL values for scalars and compact JSON text
		// for objects and arrays, on both sides alike.
		conds = append(conds, "json_extract("+column+", ?) IS json_extract(?, '$')")
		args = append(args, `$."`+key+`"`, compact.String())
	}
	return conds, args, nil
}
