package dialect

import (
	"strconv"
	"strings"
)

// ThreadFilter is a checked thread search: every field is valid.
type ThreadFilter struct {
	IDs    []string
	Status string
	// Owner, when not "", keeps the threads that user owns.
	Owner string
	// Metadata and Values hold members that must equal: the key's value
	// in the thread's metadata (or state) is Value, compact JSON.
	Metadata, Values []Member
	// Sort is "thread_id", "status", "created_at" or "updated_at".
	Sort          string
	Desc          bool
	Limit, Offset int
}

// Member is one member of a JSON filter.
type Member struct{ Key, Value string }

// Args collects the arguments of a statement and writes their
// placeholders: ? or, Numbered, $1, $2, ...
type Args struct {
	List     []any
	Numbered bool
}

// Add appends v and returns its placeholder.
func (a *Args) Add(v any) string {
	a.List = append(a.List, v)
	if a.Numbered {
		return "$" + strconv.Itoa(len(a.List))
	}
	return "?"
}

// JSONEqual writes the condition that member key of the JSON object in
// column equals value (compact JSON); a missing member equals null.
type JSONEqual func(a *Args, column, key, value string) string

// ThreadWhere is f's WHERE clause over "threads t" (with a leading space,
// or empty), its arguments in a, the JSON conditions written by eq.
func ThreadWhere(a *Args, f ThreadFilter, eq JSONEqual) string {
	var conds []string
	if len(f.IDs) > 0 {
		marks := make([]string, len(f.IDs))
		for i, id := range f.IDs {
			marks[i] = a.Add(id)
		}
		conds = append(conds, "t.id IN ("+strings.Join(marks, ",")+")")
	}
	if f.Status != "" {
		conds = append(conds, "t.status = "+a.Add(f.Status))
	}
	if f.Owner != "" {
		// The second term names the condition of the partial index
		// threads_by_owner, so that the database knows it may read it.
		conds = append(conds, "t.owner = "+a.Add(f.Owner), "t.owner <> ''")
	}
	for _, m := range f.Metadata {
		conds = append(conds, eq(a, "t.metadata", m.Key, m.Value))
	}
	for _, m := range f.Values {
		conds = append(conds, eq(a, "t.state", m.Key, m.Value))
	}
	if len(conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(conds, " AND ")
}

// SearchQuery is the statement of a thread search: f's threads, sorted by
// columns[f.Sort] then pk, one page of them.
func SearchQuery(a *Args, f ThreadFilter, eq JSONEqual, columns map[string]string) string {
	order := "ASC"
	if f.Desc {
		order = "DESC"
	}
	return `SELECT ` + ThreadColumns + ` FROM threads t` + ThreadWhere(a, f, eq) +
		` ORDER BY ` + columns[f.Sort] + ` ` + order + `, t.pk ` + order + ` LIMIT ` + a.Add(f.Limit) + ` OFFSET ` + a.Add(f.Offset)
}

// FinishedQuery is the statement of FinishedRuns: f's runs newest first,
// with codec and data of the done event when f.Done asks (noDone is the
// two columns' SQL otherwise), where noPreview is the condition that a
// run's output marks no preview.
func FinishedQuery(a *Args, f FinishedFilter, noDone, noPreview string) string {
	data := noDone
	if f.Done {
		data = `h.codec, h.data`
	}
	query := `SELECT r.id, r.route, r.created_at, r.updated_at, ` + data + `
		FROM runs r JOIN threads t ON t.pk = r.thread
		JOIN history h ON h.thread = r.thread AND h.run = r.pk AND h.type = ` + a.Add(f.DoneType) + `
		WHERE t.id = ` + a.Add(f.ThreadID) + ` AND r.status = ` + a.Add(f.Success) + ` AND ` + noPreview
	if f.RunID != "" {
		query += ` AND r.id = ` + a.Add(f.RunID)
	}
	if f.Before != "" {
		query += ` AND (r.created_at, r.pk) < (SELECT created_at, pk FROM runs WHERE id = ` + a.Add(f.Before) + `)`
	}
	query += ` ORDER BY r.created_at DESC, r.pk DESC`
	if f.Limit > 0 {
		query += ` LIMIT ` + a.Add(f.Limit)
	}
	return query
}
