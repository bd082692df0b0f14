package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/dawn-go/dawn/internal/store/dialect"
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

// SearchThreads returns one page of the threads q selects. A query the
// store cannot run (an unknown sort, a filter that is not a JSON object)
// fails with ErrInvalid naming the field.
func (s *DB) SearchThreads(ctx context.Context, q ThreadQuery) ([]Thread, error) {
	f, err := q.filter()
	if err != nil {
		return nil, err
	}
	rows, err := s.d.SearchThreads(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("store: search threads: %w", err)
	}
	out := make([]Thread, len(rows))
	for i, r := range rows {
		out[i] = threadOf(r)
	}
	return out, nil
}

// CountThreads returns how many threads q selects; Limit, Offset and the
// sort are ignored.
func (s *DB) CountThreads(ctx context.Context, q ThreadQuery) (int, error) {
	q.SortBy, q.SortOrder = "", ""
	f, err := q.filter()
	if err != nil {
		return 0, err
	}
	n, err := s.d.CountThreads(ctx, f)
	if err != nil {
		return 0, fmt.Errorf("store: count threads: %w", err)
	}
	return n, nil
}

// filter checks q and returns it as the database reads it, or ErrInvalid
// naming the field that has none of the allowed values.
func (q ThreadQuery) filter() (dialect.ThreadFilter, error) {
	f := dialect.ThreadFilter{IDs: q.IDs, Status: q.Status, Sort: q.SortBy, Desc: true, Limit: q.Limit, Offset: max(q.Offset, 0)}
	var err error
	if f.Metadata, err = jsonFilter("metadata", q.Metadata); err != nil {
		return f, err
	}
	if f.Values, err = jsonFilter("values", q.Values); err != nil {
		return f, err
	}
	switch q.SortBy {
	case "":
		f.Sort = "updated_at"
	case "thread_id", "status", "created_at", "updated_at":
	default:
		return f, fmt.Errorf("%w: sort_by must be one of thread_id, status, created_at, updated_at, not %q", ErrInvalid, q.SortBy)
	}
	switch strings.ToLower(q.SortOrder) {
	case "", "desc":
	case "asc":
		f.Desc = false
	default:
		return f, fmt.Errorf("%w: sort_order must be asc or desc, not %q", ErrInvalid, q.SortOrder)
	}
	switch {
	case f.Limit <= 0:
		f.Limit = 10
	case f.Limit > maxSearchLimit:
		f.Limit = maxSearchLimit
	}
	return f, nil
}

// jsonFilter checks a filter object and returns its members, in key
// order; each becomes one condition on a column that holds a JSON object:
// the key's value there must equal the filter's.
func jsonFilter(name string, filter json.RawMessage) ([]dialect.Member, error) {
	filter = bytes.TrimSpace(filter)
	if len(filter) == 0 || bytes.Equal(filter, []byte("null")) {
		return nil, nil
	}
	var members map[string]json.RawMessage
	if filter[0] != '{' || json.Unmarshal(filter, &members) != nil {
		return nil, fmt.Errorf("%w: %s must be a JSON object such as {\"user\":\"ann\"}", ErrInvalid, name)
	}
	out := make([]dialect.Member, 0, len(members))
	for _, key := range slices.Sorted(maps.Keys(members)) {
		if strings.ContainsAny(key, "\"\\") || key == "" {
			return nil, fmt.Errorf("%w: %s key %q cannot be searched: keys must be non-empty and hold no quotes or backslashes", ErrInvalid, name, key)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, members[key]); err != nil {
			return nil, fmt.Errorf("%w: %s.%s: %v", ErrInvalid, name, key, err)
		}
		out = append(out, dialect.Member{Key: key, Value: compact.String()})
	}
	return out, nil
}
