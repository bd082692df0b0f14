package langgraph

import (
	"encoding/json"
	"testing"

	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/thread"
)

// TestTaskResultIsAnObjectOfWrites: a task's result in the tasks and debug
// modes is the node's writes as an object by channel ({"messages": […],
// "todos": …}), as LangGraph folds a task's writes, not a list of pairs.
func TestTaskResultIsAnObjectOfWrites(t *testing.T) {
	tr := newTranslator(&app.App{}, lgRunView{ThreadID: "t", RunID: "r", RouteID: "/r",
		Modes: map[string]bool{modeTasks: true, modeDebug: true}, Fields: thread.State{"todos": json.RawMessage(`[]`)},
		Prefix: []thread.Message{{Role: thread.RoleUser, Content: "hi"}}, Input: 1})
	parts := tr.begin()
	for _, e := range planRun {
		parts = append(parts, tr.feed(e)...)
	}
	var results []map[string]json.RawMessage
	for _, p := range parts {
		var task struct {
			Name   string          `json:"name"`
			Result json.RawMessage `json:"result"`
		}
		var debug struct {
			Type    string          `json:"type"`
			Payload json.RawMessage `json:"payload"`
		}
		switch p.Type {
		case modeTasks:
			_ = json.Unmarshal(p.Data, &task)
		case modeDebug:
			if json.Unmarshal(p.Data, &debug); debug.Type != "task_result" {
				continue
			}
			_ = json.Unmarshal(debug.Payload, &task)
		}
		if task.Result == nil {
			continue
		}
		var writes map[string]json.RawMessage
		if err := json.Unmarshal(task.Result, &writes); err != nil {
			t.Fatalf("%s part: task %s's result %s is not an object of writes: %v", p.Type, task.Name, task.Result, err)
		}
		results = append(results, writes)
	}
	// Each of the five steps (agent, tools, agent, tools, agent), in
	// tasks and in debug.
	if len(results) != 10 {
		t.Fatalf("%d task results, want 10", len(results))
	}
	var msgs []lcMessage
	if err := json.Unmarshal(results[0]["messages"], &msgs); err != nil || len(msgs) != 1 || msgs[0].Type != "ai" {
		t.Errorf("the first model turn's result %v: want messages with its ai message", results[0])
	}
	if _, ok := results[6]["todos"]; !ok {
		t.Errorf("the second tools step's result %v: want the todos it set", results[2])
	}
}
