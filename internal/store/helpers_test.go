package store

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/dawn-go/dawn/internal/pgtest"
	"github.com/dawn-go/dawn/internal/store/dialect"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
)

// kinds are the SQLite ways a store is opened in tests.
var kinds = []struct {
	name string
	path func(t testing.TB) string
}{
	{"file", func(t testing.TB) string { return filepath.Join(t.TempDir(), "sub", "dawn.db") }},
	{"memory", func(testing.TB) string { return ":memory:" }},
}

// eachKind runs fn, the store's contract, on a fresh file store, a fresh
// in-memory store and a fresh Postgres database (see internal/pgtest: the
// Postgres case is skipped where its binaries are absent, unless
// DAWN_REQUIRE_POSTGRES is set).
func eachKind(t *testing.T, fn func(t *testing.T, s Store)) {
	t.Helper()
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			fn(t, openTest(t, k.path(t)))
		})
	}
	t.Run("postgres", func(t *testing.T) {
		fn(t, openPostgresTest(t, pgtest.Database(t), Options{}))
	})
}

// openPostgresTest opens a Postgres store that the test closes.
func openPostgresTest(t testing.TB, dsn string, o Options) *sharedDB {
	t.Helper()
	s, err := OpenWith(dsn, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s.(*sharedDB)
}

// openTest opens an SQLite store that the test closes.
func openTest(t testing.TB, path string) *DB {
	t.Helper()
	s, err := OpenWith(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s.(*DB)
}

// startRun starts r on its thread, which must exist: ErrNotFound when it
// does not.
func startRun(ctx context.Context, s Store, r Run) error {
	if err := checkID("run", r.ID); err != nil {
		return err
	}
	if _, err := s.GetThread(ctx, r.ThreadID); err != nil {
		return err
	}
	_, err := s.BeginRunChecked(ctx, r, nil)
	return err
}

// beginRun starts r, creating its thread when missing.
func beginRun(ctx context.Context, s Store, r Run) (Checkpoint, error) {
	return s.BeginRunChecked(ctx, r, nil)
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// todos is a 4-item todo list as the planning capability stores it.
var todos = json.RawMessage(`[{"content":"Read the ticket","status":"completed"},{"content":"Look up the order","status":"in_progress"},{"content":"Draft a reply","status":"pending"},{"content":"Send the reply","status":"pending"}]`)

// sampleStep is a typical agent step: an assistant tool call and its tool
// result, a 4-todo state and 3 events numbered from firstEvent.
func sampleStep(threadID, runID string, step int, firstEvent int64) Step {
	callID := fmt.Sprintf("call_%d", step)
	return Step{
		ThreadID: threadID,
		RunID:    runID,
		Route:    "/support/[tenant]",
		Step:     step,
		Append: []thread.Message{
			{Role: thread.RoleAssistant, ToolCalls: []thread.ToolCall{{ID: callID, Name: "writeTodos", Input: json.RawMessage(`{"todos": ` + string(todos) + `}`)}}},
			{Role: thread.RoleTool, ToolCallID: callID, Name: "writeTodos", Content: "Updated the plan: 4 todos."},
		},
		Values: thread.State{"todos": todos},
		Events: []stream.Event{
			{ID: firstEvent, Type: stream.TypeToolCall, Data: json.RawMessage(`{"id":"` + callID + `","name":"writeTodos"}`)},
			{ID: firstEvent + 1, Type: "plan_update", Data: json.RawMessage(`{"todos":` + string(todos) + `}`)},
			{ID: firstEvent + 2, Type: stream.TypeToolResult, Data: json.RawMessage(`{"id":"` + callID + `","output":"ok"}`)},
		},
	}
}

// newRun creates a thread and starts a run on it.
func newRun(t testing.TB, s Store, threadID, runID string) {
	t.Helper()
	ctx := context.Background()
	if _, err := s.CreateThread(ctx, threadID, nil); err != nil {
		t.Fatal(err)
	}
	must(t, startRun(ctx, s, Run{ID: runID, ThreadID: threadID, Route: "/support/[tenant]"}))
}

// dbOf returns the store under s.
func dbOf(s Store) *DB {
	if sh, ok := s.(*sharedDB); ok {
		return sh.DB
	}
	return s.(*DB)
}

// queryString runs a query that gives one text value on either store, for
// tests that look at what is stored.
func queryString(t testing.TB, s Store, query string) string {
	t.Helper()
	var out []byte
	must(t, dbOf(s).d.(dialect.Peeker).Peek(context.Background(), query, nil, &out))
	return string(out)
}

// queryInt runs a query that gives one integer on either store; "?" marks
// its arguments.
func queryInt(t testing.TB, s Store, query string, args ...any) int64 {
	t.Helper()
	var out int64
	if _, ok := s.(*sharedDB); ok {
		n := 0
		query = regexp.MustCompile(`\?`).ReplaceAllStringFunc(query, func(string) string { n++; return fmt.Sprintf("$%d", n) })
	}
	must(t, dbOf(s).d.(dialect.Peeker).Peek(context.Background(), query, args, &out))
	return out
}

// eachDurable runs fn on the kinds of store that outlive a process: a file
// and a Postgres database. open opens a new store on the same database,
// closed when the test ends.
func eachDurable(t *testing.T, fn func(t *testing.T, open func() Store)) {
	t.Helper()
	t.Run("file", func(t *testing.T) {
		path := kinds[0].path(t)
		fn(t, func() Store { return openTest(t, path) })
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := pgtest.Database(t)
		fn(t, func() Store { return openPostgresTest(t, dsn, Options{}) })
	})
}
