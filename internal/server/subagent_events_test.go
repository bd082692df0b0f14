package server_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/stream"
)

// researcherTodos is the plan the researcher subagent writes.
var researcherTodos = map[string]any{"todos": []map[string]string{{"content": "Find sources", "status": "in_progress"}}}

// streamResearch streams a run of /research, whose model is script, over
// HTTP and returns its events.
func streamResearch(t *testing.T, script *dawntest.ScriptedModel) []stream.Event {
	t.Helper()
	h := apptest.New(t, supportApp(t), script, apptest.Options{})
	base := h.Serve(t)
	return readSSE(t, post(t, base+"/threads/sa/runs/stream", runBody("/research", "Investigate")))
}

// subagentData decodes the data of each event of type typ.
func subagentData(t *testing.T, events []stream.Event, typ string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, e := range events {
		if e.Type != typ {
			continue
		}
		var d map[string]any
		if err := json.Unmarshal(e.Data, &d); err != nil {
			t.Fatalf("%s data %s: %v", typ, e.Data, err)
		}
		out = append(out, d)
	}
	return out
}

// checkIdentity checks that d names the researcher started by task call
// callID.
func checkIdentity(t *testing.T, typ string, d map[string]any, callID string) {
	t.Helper()
	if d["call_id"] != callID || d["subagent"] != "researcher" || d["route_id"] != "/research/subagents/researcher" || d["depth"] != float64(1) {
		t.Errorf("%s %v: want call_id %s, subagent researcher, route_id /research/subagents/researcher, depth 1", typ, d, callID)
	}
}

// one returns the one event of type typ's data.
func one(t *testing.T, events []stream.Event, typ string) map[string]any {
	t.Helper()
	ds := subagentData(t, events, typ)
	if len(ds) != 1 {
		t.Fatalf("%d %s events in %v, want 1", len(ds), typ, dawntest.Types(events))
	}
	return ds[0]
}

// TestSubagentEventsInDawnShapes: a Dawn client follows a delegated child
// on Dawn's wire through subagent.start, subagent.tool_call,
// subagent.tool_result, subagent.message and subagent.end, in Dawn's
// shapes, with subagent.plan_update beside them, between the parent's task
// call and its result.
func TestSubagentEventsInDawnShapes(t *testing.T) {
	events := streamResearch(t, dawntest.Script().
		CallTool("task", map[string]string{"subagent": "researcher", "input": "Find sources"}).
		CallTool("writeTodos", researcherTodos).
		Reply("found two sources").
		Reply("The researcher found two sources."))
	types := dawntest.Types(events)
	task := one(t, events, stream.TypeToolCall)
	callID, _ := task["id"].(string)
	if task["name"] != "task" || callID == "" {
		t.Fatalf("the parent's tool call %v, want the task call", task)
	}

	start := one(t, events, "subagent.start")
	checkIdentity(t, "subagent.start", start, callID)
	if len(start) != 4 {
		t.Errorf("subagent.start %v, want call_id, subagent, route_id and depth alone", start)
	}
	call := one(t, events, "subagent.tool_call")
	checkIdentity(t, "subagent.tool_call", call, callID)
	if input, _ := call["input"].(map[string]any); call["tool"] != "writeTodos" || input == nil || call["id"] == "" {
		t.Errorf("subagent.tool_call %v, want {id, tool: writeTodos, input: the todos}", call)
	}
	result := one(t, events, "subagent.tool_result")
	checkIdentity(t, "subagent.tool_result", result, callID)
	if _, ok := result["output"]; result["tool"] != "writeTodos" || result["id"] != call["id"] || !ok {
		t.Errorf("subagent.tool_result %v, want {id of the call, tool: writeTodos, output}", result)
	}
	plan := one(t, events, "subagent.plan_update")
	checkIdentity(t, "subagent.plan_update", plan, callID)
	var text strings.Builder
	for _, m := range subagentData(t, events, "subagent.message") {
		checkIdentity(t, "subagent.message", m, callID)
		chunk, ok := m["chunk"].(string)
		if !ok {
			t.Errorf("subagent.message %v has no chunk text", m)
		}
		text.WriteString(chunk)
	}
	if text.String() != "found two sources" {
		t.Errorf("the subagent.message chunks say %q, want the child's answer %q", text.String(), "found two sources")
	}
	end := one(t, events, "subagent.end")
	checkIdentity(t, "subagent.end", end, callID)
	if _, failed := end["error"]; end["final_message"] != "found two sources" || failed {
		t.Errorf("subagent.end %v, want final_message: the child's answer", end)
	}
	if slices.Contains(types, "subagent.chunk") {
		t.Errorf("events %v still carry subagent.chunk, which Dawn clients do not read", types)
	}

	// In order, between the parent's task call and its result.
	order := []string{stream.TypeToolCall, "subagent.start", "subagent.tool_call", "subagent.tool_result", "subagent.message", "subagent.end", stream.TypeToolResult}
	at := 0
	for _, typ := range types {
		if at < len(order) && typ == order[at] {
			at++
		}
	}
	if at != len(order) {
		t.Errorf("events %v, want in order %v", types, order)
	}
}

// TestSubagentEndCarriesError: a child that fails ends with subagent.end
// {call_id, error}, and the parent goes on.
func TestSubagentEndCarriesError(t *testing.T) {
	events := streamResearch(t, dawntest.Script().
		CallTool("task", map[string]string{"subagent": "researcher", "input": "Find sources"}).
		Fail(errors.New("the researcher's model refused")).
		Reply("The researcher failed."))
	start := one(t, events, "subagent.start")
	end := one(t, events, "subagent.end")
	checkIdentity(t, "subagent.end", end, start["call_id"].(string))
	msg, _ := end["error"].(string)
	if _, answered := end["final_message"]; !strings.Contains(msg, "the researcher's model refused") || answered {
		t.Errorf("subagent.end %v, want the child's error and no final_message", end)
	}
	if last := events[len(events)-1]; last.Type != stream.TypeDone || !strings.Contains(string(last.Data), "The researcher failed.") {
		t.Errorf("the run ended with %s %s, want the parent's answer", last.Type, last.Data)
	}
}
