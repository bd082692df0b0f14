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
	// Owner, when not "", keeps the threads that user owns: the filter
	// runs in the database, so a page and a count hold no other user's
	// thread.
	Owner string
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
	f := dialect.ThreadFilter{IDs: q.IDs, Status: q.Status, Owner: q.Owner, Sort: q.SortBy, Desc: true, Limit: q.Limit, Offset: max(q.Offset, 0)}
	var err error
	if f.Metadata, err = jsonFilter("metadata", q.Metadata); err != nil {
		return f, err
	}
	if f.Values, err = jsonFilter("values", q.Values); err != nil {
		return f, err
	}
	f.Sort, f.Desc, f.Limit, err = order{by: q.SortBy, dir: q.SortOrder, limit: q.Limit}.check(
		[]string{"thread_id", "status", "created_at", "updated_at"}, "updated_at", true)
	if err != nil {
		return f, err
	}
	return f, nil
}

// order is a search's sort_by, sort_order and limit as a client sent them.
type order struct {
	by, dir string
	limit   int
}

// check returns the column to sort by (one of fields, else byDefault when
// none is asked), whether descending (else desc), and the limit bounded to
// 1..maxSearchLimit (10 when none is asked); ErrInvalid names a bad field.
func (o order) check(fields []string, byDefault string, desc bool) (string, bool, int, error) {
	by := o.by
	switch {
	case by == "":
		by = byDefault
	case !slices.Contains(fields, by):
		return "", false, 0, fmt.Errorf("%w: sort_by must be one of %s, not %q", ErrInvalid, strings.Join(fields, ", "), o.by)
	}
	switch strings.ToLower(o.dir) {
	case "":
	case "asc":
		desc = false
	case "desc":
		desc = true
	default:
		return "", false, 0, fmt.Errorf("%w: sort_order must be asc or desc, not %q", ErrInvalid, o.dir)
	}
	limit := o.limit
	switch {
	case limit <= 0:
		limit = 10
	case limit > maxSearchLimit:
		limit = maxSearchLimit
	}
	return by, desc, limit, nil
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
