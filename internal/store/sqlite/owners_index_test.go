package sqlite_test

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/internal/store/dialect"
	"github.com/dawn-go/dawn/internal/store/sqlite"
)

// TestOwnerIndexHoldsOwnedThreads: the index a search by owner reads holds
// only threads that have an owner, so a step of a thread made without
// authentication, which moves the thread's updated_at, writes no index
// page for it; a search by owner still finds its threads through the index.
func TestOwnerIndexHoldsOwnedThreads(t *testing.T) {
	ctx := context.Background()
	s, d := openTest(t, filepath.Join(t.TempDir(), "dawn.db"))
	for i, owner := range []string{"", "", "ann"} {
		id := "th-" + strconv.Itoa(i)
		_, err := s.BeginRunChecked(ctx, store.Run{ID: "run-" + id, ThreadID: id, Route: "/r", Owner: owner}, nil)
		must(t, err)
	}
	_, err := d.Writer().ExecContext(ctx, `ANALYZE threads`)
	must(t, err)
	var stat string
	must(t, d.Writer().QueryRowContext(ctx, `SELECT stat FROM sqlite_stat1 WHERE idx = 'threads_by_owner'`).Scan(&stat))
	if entries, _, _ := strings.Cut(stat, " "); entries != "1" {
		t.Errorf("threads_by_owner holds %s entries, want 1 (the owned thread's)", entries)
	}

	a := &dialect.Args{}
	q := dialect.SearchQuery(a, dialect.ThreadFilter{Owner: "ann", Sort: "updated_at", Desc: true, Limit: 10}, nil, sqlite.SortColumns)
	rows, err := d.Writer().QueryContext(ctx, "EXPLAIN QUERY PLAN "+q, a.List...)
	must(t, err)
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		must(t, rows.Scan(&id, &parent, &unused, &detail))
		plan = append(plan, detail)
	}
	must(t, rows.Err())
	if !strings.Contains(strings.Join(plan, "; "), "threads_by_owner") {
		t.Errorf("a search by owner does not use threads_by_owner: %q", plan)
	}
	got, err := s.SearchThreads(ctx, store.ThreadQuery{Owner: "ann", Limit: 10})
	must(t, err)
	if len(got) != 1 || got[0].ID != "th-2" {
		t.Errorf("search by owner ann: %+v, want th-2", got)
	}
}
