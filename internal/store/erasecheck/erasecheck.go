// Package erasecheck reads every table of a store's schema for what is
// left of a forgotten person, for the tests of forgetting: it lists the
// tables from the database's own catalogue (sqlite_master or
// information_schema), so a table added later is read too. It imports
// only the store's dialect seam.
package erasecheck

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/dawn-go/dawn/internal/store/dialect"
)

// Tables lists the tables of the database p reads, sorted.
func Tables(ctx context.Context, p dialect.Peeker, postgres bool) ([]string, error) {
	q := `SELECT coalesce(group_concat(name, ','), '') FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`
	if postgres {
		q = `SELECT coalesce(string_agg(table_name, ','), '') FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`
	}
	var list string
	if err := p.Peek(ctx, q, nil, &list); err != nil {
		return nil, fmt.Errorf("list the tables: %w", err)
	}
	out := strings.Split(list, ",")
	slices.Sort(out)
	return out, nil
}

// column is a column's name and declared type.
type column struct{ name, typ string }

func columns(ctx context.Context, p dialect.Peeker, postgres bool, table string) ([]column, error) {
	q := `SELECT group_concat(name || ' ' || type, ',') FROM pragma_table_info(?)`
	if postgres {
		q = `SELECT string_agg(column_name || ' ' || data_type, ',') FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1`
	}
	var list string
	if err := p.Peek(ctx, q, []any{table}, &list); err != nil {
		return nil, fmt.Errorf("list the columns of %s: %w", table, err)
	}
	var out []column
	for c := range strings.SplitSeq(list, ",") {
		name, typ, _ := strings.Cut(c, " ")
		out = append(out, column{name, strings.ToLower(typ)})
	}
	return out, nil
}

// Leftovers counts, in each table, the rows that still belong to a
// person: a row with marker in any of its text or byte columns, or with
// one of threadPKs in a column named thread (the columns that point at
// threads.pk) or pk of the threads table. marker must be in every text the
// person's data carries (their user id, thread ids, values). Tables with
// no such row are left out of the map.
func Leftovers(ctx context.Context, p dialect.Peeker, postgres bool, marker string, threadPKs []int64) (map[string]int, error) {
	tables, err := Tables(ctx, p, postgres)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, table := range tables {
		cols, err := columns(ctx, p, postgres, table)
		if err != nil {
			return nil, err
		}
		where := conditions(table, cols, postgres, threadPKs)
		if len(where) == 0 {
			continue
		}
		var n int64
		q := fmt.Sprintf(`SELECT count(*) FROM %s WHERE %s`, table, strings.Join(where, " OR "))
		var args []any
		if strings.Contains(q, "$1") || strings.Contains(q, "?1") {
			args = []any{marker}
		}
		if err := p.Peek(ctx, q, args, &n); err != nil {
			return nil, fmt.Errorf("read %s: %w", table, err)
		}
		if n > 0 {
			out[table] = int(n)
		}
	}
	return out, nil
}

// conditions are the tests of one table's row for the person: each
// column that holds text or bytes holds the marker ($1 or ?1), or a
// thread column holds one of their threads' pks.
func conditions(table string, cols []column, postgres bool, threadPKs []int64) []string {
	var where []string
	pks := make([]string, len(threadPKs))
	for i, pk := range threadPKs {
		pks[i] = fmt.Sprint(pk)
	}
	for _, c := range cols {
		if len(pks) > 0 && (c.name == "thread" || (table == "threads" && c.name == "pk")) {
			where = append(where, fmt.Sprintf("%s IN (%s)", c.name, strings.Join(pks, ",")))
			continue
		}
		switch {
		case postgres && c.typ == "bytea":
			where = append(where, fmt.Sprintf("position(convert_to($1, 'UTF8') in %s) > 0", c.name))
		case postgres && (c.typ == "text" || strings.HasPrefix(c.typ, "character")):
			where = append(where, fmt.Sprintf("strpos(%s, $1) > 0", c.name))
		case !postgres && (c.typ == "" || strings.Contains(c.typ, "text") || strings.Contains(c.typ, "blob") || strings.Contains(c.typ, "char")):
			where = append(where, fmt.Sprintf("instr(%s, ?1) > 0", c.name))
		}
	}
	return where
}
