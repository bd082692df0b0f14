package planview

import (
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/todo"
)

// Short names for the statuses the tests use.
const (
	Pending    = todo.Pending
	InProgress = todo.InProgress
	Completed  = todo.Completed
)

// planEvent is a plan_update event with todos.
func planEvent(todos ...Todo) stream.Event {
	return stream.New(PlanUpdate, map[string]any{"todos": todos})
}

// subagentEvent is a subagent.plan_update event as stream.Forward builds it.
func subagentEvent(name, callID string, depth int, todos ...Todo) stream.Event {
	return stream.New(SubagentPlanUpdate, map[string]any{
		"todos": todos, "call_id": callID, "subagent": name,
		"route_id": "/research/subagents/" + name, "depth": depth,
	})
}

func chunkEvent(text string) stream.Event {
	return stream.Chunk(text)
}

func toolCallEvent(name, input string) stream.Event {
	return stream.Event{Type: stream.TypeToolCall, Data: []byte(`{"id":"c1","name":"` + name + `","input":` + input + `}`)}
}
