package sqlite_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/internal/store/sqlite"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
)

// TestQueryPlans checks that the statements that must stay fast on a big
// store find their rows through an index: no full scan of a table.
func TestQueryPlans(t *testing.T) {
	_, d := openTest(t, filepath.Join(t.TempDir(), "dawn.db"))
	queries := map[string]string{
		"Latest":                     sqlite.LatestQuery,
		"Events":                     sqlite.EventsQuery,
		"RecoverInterrupted runs":    sqlite.RecoverRuns,
		"RecoverInterrupted threads": sqlite.RecoverThreads,
		"SweepItems check":           sqlite.AnyExpiredItem,
		"SweepItems delete":          sqlite.DeleteExpiredItems,
		"ClaimWebhooks check":        sqlite.AnyDueWebhook,
		"ClaimWebhooks due":          sqlite.DueWebhooks,
		"SweepWebhooks delete":       sqlite.DeleteEndedWebhooks,
		"SweepThreads check":         sqlite.AnyExpiredThread,
		"SweepThreads select":        sqlite.ExpiredThreads,
	}
	for i, q := range sqlite.DeleteThreadStatements {
		queries["DeleteThread "+string(rune('1'+i))] = q
	}
	for name, q := range queries {
		t.Run(name, func(t *testing.T) {
			args := make([]any, strings.Count(q, "?"))
			for i := range args {
				args[i] = 1
			}
			rows, err := d.Writer().QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+q, args...)
			must(t, err)
			defer rows.Close()
			for rows.Next() {
				var id, parent, unused int
				var detail string
				must(t, rows.Scan(&id, &parent, &unused, &detail))
				// A scan of the runs_running index reads only running runs.
				if strings.HasPrefix(detail, "SCAN") && !strings.Contains(detail, "runs_running") {
					t.Errorf("%s: %s", name, detail)
				}
			}
			must(t, rows.Err())
		})
	}
}

// v1Rows fill a store of schema version 1 (migration 0001) the way the
// dawn that made it wrote them: a finished run with its history and events,
// and a run cut off while running.
var v1Rows = []string{
	`INSERT INTO threads VALUES ('done', 100, 300, 'idle', '{"user":"ann"}', 2, 3, 'run-a', '/support/[tenant]', 300,
		'{"todos":[{"content":"Check account context","status":"completed"}]}')`,
	`INSERT INTO threads VALUES ('cut', 400, 500, 'busy', '{}', 1, 1, 'run-c', '/support/[tenant]', 500, '{}')`,
	`INSERT INTO threads VALUES ('empty', 600, 600, 'idle', '{}', 0, 0, '', '', 0, '{}')`,
	`INSERT INTO runs VALUES ('run-a', 'done', '/support/[tenant]', 'success', '', '{"answer":"Fine.","message":2}', 110, 300)`,
	`INSERT INTO runs VALUES ('run-b', 'done', '/support/[tenant]', 'error', 'model refused', NULL, 50, 60)`,
	`INSERT INTO runs VALUES ('run-c', 'cut', '/support/[tenant]', 'running', '', NULL, 410, 410)`,
	`INSERT INTO messages VALUES ('done', 0, '{"role":"user","content":"Help me with my account"}')`,
	`INSERT INTO messages VALUES ('done', 1, '{"role":"tool","content":"ok","tool_call_id":"c1","name":"writeTodos"}')`,
	`INSERT INTO messages VALUES ('done', 2, '{"role":"assistant","content":"Fine."}')`,
	`INSERT INTO messages VALUES ('cut', 0, '{"role":"user","content":"Hello"}')`,
	`INSERT INTO events VALUES ('run-a', 1, 'tool_call', '{"id":"c1", "name":"writeTodos"}')`,
	`INSERT INTO events VALUES ('run-a', 2, 'plan_update', '{"todos":[]}')`,
	`INSERT INTO events VALUES ('run-a', 3, 'done', '{"output":{"messages":[]}}')`,
	`INSERT INTO events VALUES ('run-c', 1, 'chunk', '{"content":"Hel"}')`,
}

// TestMigrateFromVersion1 opens a store an older dawn made and checks that
// every call gives what it gave there, and that the store goes on working.
func TestMigrateFromVersion1(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "dawn.db")
	list, err := sqlite.LoadMigrations()
	must(t, err)
	old, err := sql.Open("sqlite", path)
	must(t, err)
	for _, q := range append([]string{list[0].SQL, "PRAGMA user_version = 1"}, v1Rows...) {
		if _, err := old.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	must(t, old.Close())

	s, d := openTest(t, path)
	var version int
	var integrity string
	must(t, d.Peek(ctx, "PRAGMA user_version", nil, &version))
	must(t, d.Peek(ctx, "PRAGMA integrity_check", nil, &integrity))
	if version != len(list) || integrity != "ok" {
		t.Fatalf("after the migration: user_version %d (want %d), integrity %q", version, len(list), integrity)
	}

	th, err := s.GetThread(ctx, "done")
	must(t, err)
	if string(th.Metadata) != `{"user":"ann"}` || th.Status != store.StatusIdle || th.CreatedAt.UnixNano() != 100 || th.UpdatedAt.UnixNano() != 300 {
		t.Errorf("thread = %+v", th)
	}
	cp, err := s.Latest(ctx, "done")
	must(t, err)
	wantMessages := []thread.Message{
		{Role: thread.RoleUser, Content: "Help me with my account"},
		{Role: thread.RoleTool, Content: "ok", ToolCallID: "c1", Name: "writeTodos"},
		{Role: thread.RoleAssistant, Content: "Fine."},
	}
	if cp.Step != 2 || cp.RunID != "run-a" || cp.Route != "/support/[tenant]" || cp.UpdatedAt.UnixNano() != 300 ||
		!reflect.DeepEqual(cp.Messages, wantMessages) || string(cp.Values["todos"]) != `[{"content":"Check account context","status":"completed"}]` {
		t.Errorf("Latest = %+v", cp)
	}
	runs, err := s.Runs(ctx, "done")
	must(t, err)
	if len(runs) != 2 || runs[0].ID != "run-a" || runs[1].ID != "run-b" || string(runs[0].Output) != `{"answer":"Fine.","message":2}` ||
		runs[1].Error != "model refused" || runs[1].Output != nil || runs[0].ThreadID != "done" {
		t.Errorf("Runs = %+v", runs)
	}
	events, err := s.Events(ctx, "run-a", 1)
	must(t, err)
	wantEvents := []stream.Event{
		{ID: 2, Type: "plan_update", Data: json.RawMessage(`{"todos":[]}`)},
		{ID: 3, Type: stream.TypeDone, Data: json.RawMessage(`{"output":{"messages":[]}}`)},
	}
	if !reflect.DeepEqual(events, wantEvents) {
		t.Errorf("Events = %+v", events)
	}
	if cp, err := s.Latest(ctx, "empty"); err != nil || cp.Step != 0 || len(cp.Messages) != 0 {
		t.Errorf("Latest of a thread without steps = %+v, %v", cp, err)
	}

	// The run cut off in the old store is recovered, and its thread goes on.
	n, err := s.RecoverInterrupted(ctx)
	must(t, err)
	if n != 1 {
		t.Errorf("RecoverInterrupted = %d, want 1", n)
	}
	cp, err = s.BeginRunChecked(ctx, store.Run{ID: "run-d", ThreadID: "cut", Route: "/support/[tenant]"}, nil)
	must(t, err)
	if cp.Step != 1 || len(cp.Messages) != 1 {
		t.Errorf("BeginRun on the cut thread = %+v", cp)
	}
	must(t, s.SaveStep(ctx, sampleStep("cut", "run-d", 2, 1)))
	cp, err = s.Latest(ctx, "cut")
	must(t, err)
	if cp.Step != 2 || len(cp.Messages) != 3 {
		t.Errorf("after a new step on the cut thread: step %d, %d messages", cp.Step, len(cp.Messages))
	}
	if events, err := s.Events(ctx, "run-c", 0); err != nil || len(events) != 1 || string(events[0].Data) != `{"content":"Hel"}` {
		t.Errorf("Events of the cut run = %+v, %v", events, err)
	}
	must(t, s.DeleteThread(ctx, "done"))
	if _, err := s.Events(ctx, "run-a", 0); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Events of a deleted thread's run = %v, want ErrNotFound", err)
	}
}
