package sqlite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/internal/store/sqlite"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
)

// openTest opens a store on the SQLite database at path, both closed when
// the test ends.
func openTest(t testing.TB, path string) (*store.DB, *sqlite.DB) {
	t.Helper()
	d, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := store.New(d, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, d
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
func sampleStep(threadID, runID string, step int, firstEvent int64) store.Step {
	callID := fmt.Sprintf("call_%d", step)
	return store.Step{
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

// newRun starts a run on a new thread.
func newRun(t testing.TB, s store.Store, threadID, runID string) {
	t.Helper()
	_, err := s.BeginRunChecked(context.Background(), store.Run{ID: runID, ThreadID: threadID, Route: "/support/[tenant]"}, nil)
	must(t, err)
}
