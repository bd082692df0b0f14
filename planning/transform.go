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
	out := []stream.Event{stream.New(EventType, map[string]any{StateField: todos})}
	if revised, ok := revisedEvent(ev.Update[RevisionsField]); ok {
		out = append(out, revised...)
	}
	return out
}

func todosFromOutput(out json.RawMessage) ([]Todo, bool) {
	var shape struct {
		Todos  json.RawMessage `json:"todos"`
		Update *struct {
			Todos json.RawMessage `json:"todos"`
		} `json:"update"`
	}
	if jsonKind(out) != '{' || json.Unmarshal(out, &shape) != nil {
		return nil, false
	}
	if todos, ok := decodeList(shape.Todos); ok {
		return todos, true
	}
	if shape.Update != nil {
		return decodeList(shape.Update.Todos)
	}
	return nil, false
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
