package dialect

import (
	"math"
	"strings"
)

// AssistantRow is one version of an assistant as stored: a configured
// variant of a graph (a route). Config, Context and Metadata are JSON
// objects; times are Unix nanoseconds.
type AssistantRow struct {
	ID                        string
	Version                   int
	GraphID, Name             string
	Description               string
	Config, Context, Metadata string
	CreatedAt, UpdatedAt      int64
}

// AssistantFilter is a checked assistant search: every field is valid.
// With Versions it reads assistant ID's versions, else the assistants
// at their current versions.
type AssistantFilter struct {
	Versions bool
	ID       string
	GraphID  string
	// Name keeps the assistants whose name contains it, any case.
	Name     string
	Metadata []Member
	// Sort is "assistant_id", "graph_id", "name", "created_at",
	// "updated_at" or "version".
	Sort          string
	Desc          bool
	Limit, Offset int
}

// AssistantColumns are the columns of an assistant row, in AssistantRow's
// scan order (see ScanAssistant).
const AssistantColumns = `id, version, graph_id, name, description, config, context, metadata, created_at, updated_at`

var assistantSort = map[string]string{
	"assistant_id": "id", "graph_id": "graph_id", "name": "name",
	"created_at": "created_at", "updated_at": "updated_at", "version": "version",
}

// AssistantWhere is f's FROM and WHERE clause (with a leading space), its
// arguments in a, the JSON conditions written by eq.
func AssistantWhere(a *Args, f AssistantFilter, eq JSONEqual) string {
	from := " FROM assistants"
	if f.Versions {
		from = " FROM assistant_versions"
	}
	var conds []string
	if f.ID != "" {
		conds = append(conds, "id = "+a.Add(f.ID))
	}
	if f.GraphID != "" {
		conds = append(conds, "graph_id = "+a.Add(f.GraphID))
	}
	if f.Name != "" {
		conds = append(conds, "lower(name) LIKE "+a.Add("%"+strings.ToLower(f.Name)+"%"))
	}
	for _, m := range f.Metadata {
		conds = append(conds, eq(a, "metadata", m.Key, m.Value))
	}
	if len(conds) == 0 {
		return from
	}
	return from + " WHERE " + strings.Join(conds, " AND ")
}

// AssistantQuery is the SELECT of the assistants f selects, in its order
// and page.
func AssistantQuery(a *Args, f AssistantFilter, eq JSONEqual) string {
	q := "SELECT " + AssistantColumns + AssistantWhere(a, f, eq)
	col := assistantSort[f.Sort]
	if col == "" {
		col = "created_at"
	}
	dir := " ASC"
	if f.Desc {
		dir = " DESC"
	}
	q += " ORDER BY " + col + dir + ", id" + dir + ", version" + dir
	switch {
	case f.Limit > 0:
		q += " LIMIT " + a.Add(f.Limit)
	case f.Offset > 0:
		q += " LIMIT " + a.Add(math.MaxInt64) // SQLite takes OFFSET only after a LIMIT
	}
	if f.Offset > 0 {
		q += " OFFSET " + a.Add(f.Offset)
	}
	return q
}

// ScanAssistant scans a row of AssistantColumns; scan is the row's Scan.
func ScanAssistant(scan func(dest ...any) error) (AssistantRow, error) {
	var r AssistantRow
	err := scan(&r.ID, &r.Version, &r.GraphID, &r.Name, &r.Description, &r.Config, &r.Context, &r.Metadata, &r.CreatedAt, &r.UpdatedAt)
	return r, err
}
