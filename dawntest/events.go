package dawntest

import (
	"encoding/json"
	"testing"

	"github.com/dawn-go/dawn/stream"
)

// Types returns the event types of events, in order.
func Types(events []stream.Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.Type
	}
	return out
}

// Todo is one plan item as events and state carry it.
type Todo struct {
	Content string `json:"content"`
	Status  string `json:"status"`
}

// PlanUpdates decodes the todos of every event of type typ ("plan_update"
// or "subagent.plan_update"). An event it cannot decode fails the test.
func PlanUpdates(t testing.TB, events []stream.Event, typ string) [][]Todo {
	t.Helper()
	var out [][]Todo
	for _, e := range events {
		if e.Type != typ {
			continue
		}
		var d struct {
			Todos []Todo `json:"todos"`
		}
		if err := json.Unmarshal(e.Data, &d); err != nil {
			t.Fatalf("dawntest: event %d (%s) has data that is not a plan: %v: %s", e.ID, e.Type, err, e.Data)
		}
		out = append(out, d.Todos)
	}
	return out
}
