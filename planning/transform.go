package planning

import (
	"encoding/json"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/stream"
)

// Transform turns a successful writeTodos call into a plan_update event with
// data {"todos":[...]}, followed, when the call's update records a
// revision that changed the list (RevisionsField), by a plan_revised event
// with that revision and its diff. It reads the list from the tool's output, either
// direct ({"todos":[...]}) or Command-shaped ({"update":{"todos":[...]}}),
// and falls back to the call's state update. Other tools, failed calls and
// outputs without a list give no events.
func Transform(ev capabilities.ToolEvent) []stream.Event {
	if ev.Name != ToolName || ev.Err != nil {
		return nil
	}
	todos, ok := todosFromOutput(ev.Output)
	if !ok {
		todos, ok = decodeList(ev.Update[StateField])
	}
	if !ok {
		return nil
	}
	out := []stream.Event{stream.New(EventType, planUpdate{Todos: todos})}
	if revised, ok := revisedEvent(ev.Update[RevisionsField]); ok {
		out = append(out, revised...)
	}
	return out
}

// planUpdate is the data of a plan_update event. A struct, not a map: it
// encodes without sorting keys, once per writeTodos call.
type planUpdate struct {
	Todos []Todo `json:"todos"`
}

func todosFromOutput(out json.RawMessage) ([]Todo, bool) {
	var shape struct {
		Todos  todoList `json:"todos"`
		Update *struct {
			Todos todoList `json:"todos"`
		} `json:"update"`
	}
	if jsonKind(out) != '{' || json.Unmarshal(out, &shape) != nil {
		return nil, false
	}
	if shape.Todos.ok {
		return shape.Todos.todos, true
	}
	if shape.Update != nil && shape.Update.Todos.ok {
		return shape.Update.Todos.todos, true
	}
	return nil, false
}

// todoList decodes a field that may hold a list of todos in the same pass
// as the object around it, without keeping a copy of its JSON; ok is false
// when the field is missing or not a list.
type todoList struct {
	todos []Todo
	ok    bool
}

// UnmarshalJSON never fails: a value that is not a list leaves ok false.
func (l *todoList) UnmarshalJSON(raw []byte) error {
	l.todos, l.ok = decodeList(raw)
	return nil
}

// decodeList decodes a JSON array of todos; a missing value or anything but
// an array is not a list.
func decodeList(raw json.RawMessage) ([]Todo, bool) {
	if jsonKind(raw) != '[' {
		return nil, false
	}
	todos := []Todo{}
	if err := json.Unmarshal(raw, &todos); err != nil {
		return nil, false
	}
	return todos, true
}
