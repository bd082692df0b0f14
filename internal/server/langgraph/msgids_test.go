package langgraph_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
)

// idsOf are the ids of msgs, in order.
func idsOf(msgs []lgMessage) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.ID
	}
	return out
}

// stateOf is the thread's latest state.
func stateOf(t *testing.T, url, threadID string) kept {
	t.Helper()
	var st kept
	getJSON(t, url+"/threads/"+threadID+"/state", &st)
	return st
}

// TestLangGraphClientMessageIDs: a message a client sends with its own id
// (run input, updateState, supersteps) keeps that id in the run's output,
// the thread's state, its history and the values stream; messages without
// one keep the positional id every read gives them.
func TestLangGraphClientMessageIDs(t *testing.T) {
	h := apptest.New(t, supportApp(t), dawntest.Script().Reply("A1").Reply("A2").Repeat(), apptest.Options{})
	url := h.Serve(t)
	postOK(t, url+"/threads", `{"thread_id":"c1","graph_id":"/support/acme","supersteps":[
		{"updates":[{"values":{"messages":[{"type":"human","content":"first","id":"sup-1"}]},"as_node":"__input__"}]}]}`, nil)
	var out struct {
		Messages []lgMessage `json:"messages"`
	}
	postOK(t, url+"/threads/c1/runs/wait", `{"assistant_id":"/support/acme","input":{"messages":[{"type":"human","content":"Q1","id":"in-1"}]}}`, &out)
	if got := idsOf(out.Messages); len(got) != 3 || got[0] != "sup-1" || got[1] != "in-1" || got[2] == "" {
		t.Fatalf("the run's output ids: %q", got)
	}
	postOK(t, url+"/threads/c1/state", `{"values":{"messages":[{"type":"human","content":"noted","id":"upd-1"},{"type":"human","content":"no id"}]}}`, nil)
	st := stateOf(t, url, "c1")
	want := append(idsOf(out.Messages), "upd-1")
	got := idsOf(st.Values.Messages)
	if len(got) != 5 || strings.Join(got[:4], ",") != strings.Join(want, ",") || got[4] == "" || got[4] == "upd-1" {
		t.Fatalf("state ids %q, want %q then a positional id", got, want)
	}
	if again := idsOf(stateOf(t, url, "c1").Values.Messages); strings.Join(again, ",") != strings.Join(got, ",") {
		t.Errorf("a second read names the messages %q, the first %q", again, got)
	}
	for _, k := range history(t, url, "c1") {
		for i, m := range k.Values.Messages {
			if m.ID != got[i] {
				t.Errorf("history checkpoint %s: message %d is %q, the state says %q", k.Checkpoint.CheckpointID, i, m.ID, got[i])
			}
		}
	}
	resp := post(t, url+"/threads/c1/runs/stream", `{"assistant_id":"/support/acme","stream_mode":["values"],"input":{"messages":[{"type":"human","content":"Q2","id":"in-2"}]}}`)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"id":"in-2"`) || !strings.Contains(string(body), `"id":"sup-1"`) {
		t.Errorf("the values stream does not show the client's ids:\n%s", body)
	}
}

// TestLangGraphCopyKeepsMessageIDs: threads.copy gives the copy's messages
// the ids the original shows, its own and positional ones, in the state and
// at every checkpoint of its history, and a run on the copy adds to them.
func TestLangGraphCopyKeepsMessageIDs(t *testing.T) {
	h := apptest.New(t, supportApp(t), dawntest.Script().Reply("A1").Reply("A2").Reply("A3"), apptest.Options{})
	url := h.Serve(t)
	postOK(t, url+"/threads", `{"thread_id":"o1"}`, nil)
	postOK(t, url+"/threads/o1/runs/wait", `{"assistant_id":"/support/acme","input":{"messages":[{"type":"human","content":"Q1","id":"mine"}]}}`, nil)
	postOK(t, url+"/threads/o1/runs/wait", lgBody("/support/acme", "Q2", nil), nil)
	var cp struct {
		ThreadID string `json:"thread_id"`
	}
	postOK(t, url+"/threads/o1/copy", `{}`, &cp)
	orig, copied := idsOf(stateOf(t, url, "o1").Values.Messages), idsOf(stateOf(t, url, cp.ThreadID).Values.Messages)
	if len(orig) != 4 || orig[0] != "mine" || strings.Join(orig, ",") != strings.Join(copied, ",") {
		t.Fatalf("the copy's ids %q, the original's %q", copied, orig)
	}
	ho, hc := history(t, url, "o1"), history(t, url, cp.ThreadID)
	if len(ho) != len(hc) {
		t.Fatalf("the copy has %d checkpoints, the original %d", len(hc), len(ho))
	}
	for i := range ho {
		if a, b := idsOf(ho[i].Values.Messages), idsOf(hc[i].Values.Messages); strings.Join(a, ",") != strings.Join(b, ",") {
			t.Errorf("checkpoint %d: the copy's ids %q, the original's %q", i, b, a)
		}
	}
	var out struct {
		Messages []lgMessage `json:"messages"`
	}
	postOK(t, url+"/threads/"+cp.ThreadID+"/runs/wait", lgBody("/support/acme", "Q3", nil), &out)
	if got := idsOf(out.Messages); len(got) != 6 || strings.Join(got[:4], ",") != strings.Join(orig, ",") || got[4] == got[5] {
		t.Errorf("a run on the copy: ids %q", got)
	}
}

// contentsOf are the contents of msgs, in order.
func contentsOf(msgs []lgMessage) string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Content
	}
	return strings.Join(out, ",")
}

// TestLangGraphUpdateByID: updateState with a message whose id the thread
// has replaces that message where it is, as LangGraph's add_messages
// does, in a new checkpoint: the checkpoint before it and the thread a copy
// was made from keep the old message; the messages after it keep their
// ids; a "remove" message drops the message it names; the next run goes on
// from the edited state.
func TestLangGraphUpdateByID(t *testing.T) {
	h := apptest.New(t, supportApp(t), dawntest.Script().Reply("A1").Reply("A2"), apptest.Options{})
	url := h.Serve(t)
	postOK(t, url+"/threads", `{"thread_id":"r1"}`, nil)
	postOK(t, url+"/threads/r1/runs/wait", `{"assistant_id":"/support/acme","input":{"messages":[{"type":"human","content":"foo","id":"initial-message"}]}}`, nil)
	var cp struct {
		ThreadID string `json:"thread_id"`
	}
	postOK(t, url+"/threads/r1/copy", `{}`, &cp)
	before := stateOf(t, url, cp.ThreadID)
	postOK(t, url+"/threads/"+cp.ThreadID+"/state", `{"values":{"messages":[{"type":"human","content":"bar","id":"initial-message"}]}}`, nil)
	after := stateOf(t, url, cp.ThreadID)
	if got := contentsOf(after.Values.Messages); got != "bar,A1" || strings.Join(idsOf(after.Values.Messages), ",") != strings.Join(idsOf(before.Values.Messages), ",") {
		t.Fatalf("after the update by id: %q with ids %q, before %q", got, idsOf(after.Values.Messages), idsOf(before.Values.Messages))
	}
	if got := contentsOf(stateOf(t, url, "r1").Values.Messages); got != "foo,A1" {
		t.Errorf("the original thread reads %q after its copy was edited", got)
	}
	var at kept
	postOK(t, url+"/threads/"+cp.ThreadID+"/state/checkpoint", `{"checkpoint":{"checkpoint_id":"`+before.Checkpoint.CheckpointID+`"}}`, &at)
	if got := contentsOf(at.Values.Messages); got != "foo,A1" {
		t.Errorf("the checkpoint before the update reads %q", got)
	}

	// Edit the model's message by the id the state shows, then remove the
	// human one.
	ai := after.Values.Messages[1].ID
	postOK(t, url+"/threads/"+cp.ThreadID+"/state", `{"values":{"messages":[{"type":"ai","content":"A1 edited","id":"`+ai+`"}]},"as_node":"agent"}`, nil)
	postOK(t, url+"/threads/"+cp.ThreadID+"/state", `{"values":{"messages":[{"type":"remove","id":"initial-message"}]}}`, nil)
	edited := stateOf(t, url, cp.ThreadID)
	if got := contentsOf(edited.Values.Messages); got != "A1 edited" || edited.Values.Messages[0].ID != ai {
		t.Fatalf("after editing and removing: %q, ids %q", got, idsOf(edited.Values.Messages))
	}
	var out struct {
		Messages []lgMessage `json:"messages"`
	}
	postOK(t, url+"/threads/"+cp.ThreadID+"/runs/wait", lgBody("/support/acme", "Q2", nil), &out)
	if got := contentsOf(out.Messages); got != "A1 edited,Q2,A2" || out.Messages[0].ID != ai {
		t.Errorf("the run after the edits: %q, ids %q", got, idsOf(out.Messages))
	}
	if st := stateOf(t, url, cp.ThreadID); strings.Join(idsOf(st.Values.Messages), ",") != strings.Join(idsOf(out.Messages), ",") {
		t.Errorf("the state names the messages %q, the run's output %q", idsOf(st.Values.Messages), idsOf(out.Messages))
	}

	resp := post(t, url+"/threads/"+cp.ThreadID+"/state", `{"values":{"messages":[{"type":"remove","id":"nope"}]}}`)
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("removing a message the thread does not have: status %d, want 400", resp.StatusCode)
	}
}

// TestLangGraphUpdateSameMessage: a state update that sends back a message
// as the thread has it (as a client replaying history does) changes no
// message: the state stays on its branch, so a message added after it is
// named as on a copy made before the update, and the messages keep their
// ids.
func TestLangGraphUpdateSameMessage(t *testing.T) {
	h := apptest.New(t, supportApp(t), dawntest.Script().Reply("A1"), apptest.Options{})
	url := h.Serve(t)
	postOK(t, url+"/threads", `{"thread_id":"s1"}`, nil)
	postOK(t, url+"/threads/s1/runs/wait", lgBody("/support/acme", "foo", nil), nil)
	var cp struct {
		ThreadID string `json:"thread_id"`
	}
	postOK(t, url+"/threads/s1/copy", `{}`, &cp)
	before := stateOf(t, url, "s1")
	body, _ := json.Marshal(map[string]any{"values": map[string]any{"messages": before.Values.Messages}})
	postOK(t, url+"/threads/s1/state", string(body), nil)
	more := `{"values":{"messages":[{"type":"human","content":"more"}]}}`
	postOK(t, url+"/threads/s1/state", more, nil)
	postOK(t, url+"/threads/"+cp.ThreadID+"/state", more, nil)
	after, copied := stateOf(t, url, "s1"), stateOf(t, url, cp.ThreadID)
	if got := contentsOf(after.Values.Messages); got != "foo,A1,more" {
		t.Fatalf("after sending the messages back: %q", got)
	}
	if a, b := idsOf(after.Values.Messages), idsOf(copied.Values.Messages); strings.Join(a, ",") != strings.Join(b, ",") {
		t.Errorf("the thread names its messages %q, the copy made before the update %q", a, b)
	}
}

// TestLangGraphEditToolCallByID: LangGraph's "human in the loop -
// modification": a run parked before its tools (interrupt_before
// ["tools"]) has its model message's tool call edited by updateState
// with the message's id; input null goes on and runs the edited call,
// while the checkpoint before the edit keeps the call as the model made
// it.
func TestLangGraphEditToolCallByID(t *testing.T) {
	h := apptest.New(t, supportApp(t), dawntest.Script().CallTool("writeTodos", apptest.FourTodos(1)).Reply("done"), apptest.Options{})
	url := h.Serve(t)
	postOK(t, url+"/threads", `{"thread_id":"h1"}`, nil)
	postOK(t, url+"/threads/h1/runs/wait", lgBody("/support/acme", "go", map[string]any{"interrupt_before": []string{"tools"}}), nil)
	parked := stateOf(t, url, "h1")
	ai := parked.Values.Messages[len(parked.Values.Messages)-1]
	if len(ai.ToolCalls) != 1 {
		t.Fatalf("the parked run's last message: %+v", ai)
	}
	edited, _ := json.Marshal(apptest.FourTodos(2))
	postOK(t, url+"/threads/h1/state", `{"values":{"messages":[{"type":"ai","id":"`+ai.ID+`","content":"","tool_calls":[{"id":"`+ai.ToolCalls[0].ID+`","name":"writeTodos","args":`+string(edited)+`}]}]},"as_node":"agent"}`, nil)
	var out struct {
		Messages []lgMessage     `json:"messages"`
		Todos    []dawntest.Todo `json:"todos"`
	}
	postOK(t, url+"/threads/h1/runs/wait", `{"assistant_id":"/support/acme","input":null}`, &out)
	if len(out.Messages) != 4 || out.Messages[1].ID != ai.ID || !strings.Contains(out.Messages[2].Content, `"Decide whether to answer or escalate","status":"in_progress"`) {
		t.Fatalf("the run after the edit: %+v", out.Messages)
	}
	if len(out.Todos) != 4 || out.Todos[2].Status != "in_progress" {
		t.Errorf("the plan after the edited call: %+v", out.Todos)
	}
	var at kept
	postOK(t, url+"/threads/h1/state/checkpoint", `{"checkpoint":{"checkpoint_id":"`+parked.Checkpoint.CheckpointID+`"}}`, &at)
	if got := at.Values.Messages[1].ToolCalls; len(got) != 1 || !strings.Contains(string(got[0].Args), `"Check account context","status":"in_progress"`) {
		t.Errorf("the checkpoint before the edit: %+v", at.Values.Messages[1])
	}
}

// TestLangGraphCommandUpdateByID: a run's command.update with a message
// whose id the thread has replaces it before the run, which goes on from
// the edited conversation.
func TestLangGraphCommandUpdateByID(t *testing.T) {
	h := apptest.New(t, supportApp(t), dawntest.Script().Reply("A1").Reply("A2"), apptest.Options{})
	url := h.Serve(t)
	postOK(t, url+"/threads", `{"thread_id":"k1"}`, nil)
	var first struct {
		Messages []lgMessage `json:"messages"`
	}
	postOK(t, url+"/threads/k1/runs/wait", lgBody("/support/acme", "Q1", nil), &first)
	ai := first.Messages[1].ID
	var out struct {
		Messages []lgMessage `json:"messages"`
	}
	postOK(t, url+"/threads/k1/runs/wait", `{"assistant_id":"/support/acme","command":{"update":{"messages":[{"type":"ai","id":"`+ai+`","content":"A1 changed"}]}},"input":{"messages":[{"type":"human","content":"Q2"}]}}`, &out)
	if got := contentsOf(out.Messages); got != "Q1,A1 changed,Q2,A2" || out.Messages[1].ID != ai {
		t.Errorf("the run after command.update: %q, ids %q", got, idsOf(out.Messages))
	}
}

// TestLangGraphUpdateByIDWithinUpdate: within one update, a message may
// replace or remove one the update added before it, and a remove message
// with LangGraph's REMOVE_ALL_MESSAGES id drops every message before it,
// the thread's included.
func TestLangGraphUpdateByIDWithinUpdate(t *testing.T) {
	h := apptest.New(t, supportApp(t), dawntest.Script().Reply("A1").Reply("A2"), apptest.Options{})
	url := h.Serve(t)
	postOK(t, url+"/threads", `{"thread_id":"w1"}`, nil)
	postOK(t, url+"/threads/w1/runs/wait", lgBody("/support/acme", "Q1", nil), nil)
	postOK(t, url+"/threads/w1/state", `{"values":{"messages":[
		{"type":"human","content":"draft","id":"n1"},{"type":"human","content":"gone","id":"n2"},
		{"type":"human","content":"final","id":"n1"},{"type":"remove","id":"n2"}]}}`, nil)
	st := stateOf(t, url, "w1")
	if got := contentsOf(st.Values.Messages); got != "Q1,A1,final" || st.Values.Messages[2].ID != "n1" {
		t.Fatalf("after an update that edits its own messages: %q, ids %q", got, idsOf(st.Values.Messages))
	}
	postOK(t, url+"/threads/w1/state", `{"values":{"messages":[{"type":"remove","id":"__remove_all__"},{"type":"human","content":"fresh start","id":"s"}]}}`, nil)
	st = stateOf(t, url, "w1")
	if got := contentsOf(st.Values.Messages); got != "fresh start" {
		t.Fatalf("after removing all: %q", got)
	}
	var out struct {
		Messages []lgMessage `json:"messages"`
	}
	postOK(t, url+"/threads/w1/runs/wait", lgBody("/support/acme", "Q2", nil), &out)
	if got := contentsOf(out.Messages); got != "fresh start,Q2,A2" {
		t.Errorf("the run after removing all: %q", got)
	}
}

// TestLangGraphRebuildFromUpdates: LangGraph's "batch update state": a
// thread created with supersteps made of another thread's input state
// (given twice, as __input__ and __start__) and the updates its run
// streamed has that thread's messages, with their ids: the second copy of
// the input changes nothing, and every message keeps the id it came with.
// Its history is the other's, values and next: the route the SDK names in
// metadata.graph_id gives the state its fields, and each update's node
// says what runs next from it.
func TestLangGraphRebuildFromUpdates(t *testing.T) {
	app := apptest.WriteApp(t, map[string]string{
		"agent/agent.md":              "You answer.",
		"agent/state.yaml":            "keyOne:\n  type: string\n  default: \"\"\n",
		"agent/skills/begin/SKILL.md": "---\nname: begin\ndescription: The test tool.\n---\nBegin.",
	})
	h := apptest.New(t, app, dawntest.Script().CallTool("readSkill", map[string]string{"name": "begin"}).Reply("A1"), apptest.Options{})
	url := h.Serve(t)
	postOK(t, url+"/threads", `{"thread_id":"b1"}`, nil)
	resp := post(t, url+"/threads/b1/runs/stream", `{"assistant_id":"/agent","stream_mode":["updates"],"input":{"messages":[{"type":"human","content":"foo"}]}}`)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var hist []struct {
		Values json.RawMessage `json:"values"`
	}
	postOK(t, url+"/threads/b1/history", `{"limit":100}`, &hist)
	var input json.RawMessage // the oldest state with a message: where the input was added
	for i := len(hist) - 1; i >= 0 && input == nil; i-- {
		var v struct {
			Messages []lgMessage `json:"messages"`
		}
		if json.Unmarshal(hist[i].Values, &v) == nil && len(v.Messages) > 0 {
			input = hist[i].Values
		}
	}
	steps := []map[string]any{
		{"updates": []any{map[string]any{"as_node": "__input__", "values": input}}},
		{"updates": []any{map[string]any{"as_node": "__start__", "values": input}}},
	}
	for _, line := range strings.Split(string(body), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		var update map[string]json.RawMessage
		if !ok || json.Unmarshal([]byte(data), &update) != nil {
			continue
		}
		for node, values := range update {
			if node == "agent" || node == "tools" {
				steps = append(steps, map[string]any{"updates": []any{map[string]any{"as_node": node, "values": values}}})
			}
		}
	}
	if len(steps) < 4 {
		t.Fatalf("the run streamed %d updates:\n%s", len(steps)-2, body)
	}
	create, _ := json.Marshal(map[string]any{"thread_id": "b2", "metadata": map[string]any{"graph_id": "agent"}, "supersteps": steps})
	postOK(t, url+"/threads", string(create), nil)
	var ha, hb []struct {
		Values json.RawMessage `json:"values"`
		Next   []string        `json:"next"`
	}
	postOK(t, url+"/threads/b1/history", `{"limit":100}`, &ha)
	postOK(t, url+"/threads/b2/history", `{"limit":100}`, &hb)
	if len(ha) != len(hb) {
		t.Fatalf("the rebuilt thread has %d checkpoints, the original %d:\n%+v\n%+v\n%s", len(hb), len(ha), hb, ha, body)
	}
	for i := range ha { // each field of the original's, as LangGraph's test matches them
		if !hasFields(hb[i].Values, ha[i].Values) || fmt.Sprint(ha[i].Next) != fmt.Sprint(hb[i].Next) {
			t.Errorf("history[%d]: rebuilt %s next %v, original %s next %v", i, hb[i].Values, hb[i].Next, ha[i].Values, ha[i].Next)
		}
	}
	a, b := stateOf(t, url, "b1"), stateOf(t, url, "b2")
	if contentsOf(a.Values.Messages) != contentsOf(b.Values.Messages) || strings.Join(idsOf(a.Values.Messages), ",") != strings.Join(idsOf(b.Values.Messages), ",") {
		t.Errorf("the rebuilt thread's messages %q %q differ from the original's %q %q",
			contentsOf(b.Values.Messages), idsOf(b.Values.Messages), contentsOf(a.Values.Messages), idsOf(a.Values.Messages))
	}
}

// TestLangGraphStateAfterNodeUpdate: a thread's state says what runs
// next after an update made as a node of LangGraph's prebuilt agent graph,
// and an update made as the graph's input shows the state before it.
func TestLangGraphStateAfterNodeUpdate(t *testing.T) {
	h := apptest.New(t, supportApp(t), dawntest.Script().Reply("A1"), apptest.Options{})
	url := h.Serve(t)
	for _, c := range []struct{ node, values, next string }{
		{"__input__", `{"messages":[{"type":"human","content":"hi"}]}`, "[__start__]"},
		{"__start__", `{"messages":[{"type":"human","content":"hi"}]}`, "[agent]"},
		{"agent", `{"messages":[{"type":"ai","content":"","tool_calls":[{"id":"c1","name":"writeTodos","args":{}}]}]}`, "[tools]"},
		{"agent", `{"messages":[{"type":"ai","content":"done"}]}`, "[]"},
		{"tools", `{"messages":[{"type":"ai","content":"","tool_calls":[{"id":"c1","name":"writeTodos","args":{}}]},{"type":"tool","content":"ok","tool_call_id":"c1"}]}`, "[agent]"},
	} {
		id := "n-" + c.node + "-" + strings.TrimSuffix(strings.TrimPrefix(c.next, "["), "]")
		postOK(t, url+"/threads", `{"thread_id":"`+id+`","metadata":{"graph_id":"/support/acme"},"supersteps":[{"updates":[{"as_node":"`+c.node+`","values":`+c.values+`}]}]}`, nil)
		st := stateOf(t, url, id)
		if fmt.Sprint(st.Next) != c.next {
			t.Errorf("after an update as %s: next %v, want %s", c.node, st.Next, c.next)
		}
		if input := c.node == "__input__"; input != (len(st.Values.Messages) == 0) {
			t.Errorf("after an update as %s: messages %q", c.node, contentsOf(st.Values.Messages))
		}
	}
}

// hasFields reports whether the object got has every field of want, alike.
func hasFields(got, want json.RawMessage) bool {
	var g, w map[string]json.RawMessage
	if json.Unmarshal(got, &g) != nil || json.Unmarshal(want, &w) != nil {
		return false
	}
	for k, v := range w {
		if !bytes.Equal(g[k], v) {
			return false
		}
	}
	return true
}

// TestLangGraphForkAfterModelKeepsIDs: a run from the checkpoint after a
// model turn that called a tool writes the model's message again on a new
// branch; it keeps its id there, in the thread's state as in the run's
// output.
func TestLangGraphForkAfterModelKeepsIDs(t *testing.T) {
	h := apptest.New(t, supportApp(t), dawntest.Script().CallTool("writeTodos", apptest.FourTodos(1)).Reply("A1").Reply("A1 again"), apptest.Options{})
	url := h.Serve(t)
	postOK(t, url+"/threads", `{"thread_id":"f1"}`, nil)
	postOK(t, url+"/threads/f1/runs/wait", lgBody("/support/acme", "Q1", nil), nil)
	var after *kept
	for _, k := range history(t, url, "f1") {
		if len(k.Next) == 1 && k.Next[0] == "tools" {
			after = &k
		}
	}
	if after == nil {
		t.Fatal("no checkpoint after the model's turn in history")
	}
	var out struct {
		Messages []lgMessage `json:"messages"`
	}
	postOK(t, url+"/threads/f1/runs/wait", `{"assistant_id":"/support/acme","input":null,"checkpoint":{"checkpoint_id":"`+after.Checkpoint.CheckpointID+`"}}`, &out)
	want := after.Values.Messages[1].ID
	st := stateOf(t, url, "f1")
	if len(out.Messages) != 4 || out.Messages[1].ID != want || st.Values.Messages[1].ID != want {
		t.Errorf("the model's message after the fork: output %q, state %q, want %q", idsOf(out.Messages), idsOf(st.Values.Messages), want)
	}
}

// TestLangGraphInputReplacesByID: a run's input message whose id names a
// message the thread has replaces it in place, as LangGraph's
// add_messages does, instead of adding a second message with that id;
// the run goes on from the edited state, and the input's new messages
// are added after it.
func TestLangGraphInputReplacesByID(t *testing.T) {
	h := apptest.New(t, supportApp(t), dawntest.Script().Reply("A1").Reply("A2").Reply("A3").Reply("A4"), apptest.Options{})
	url := h.Serve(t)
	postOK(t, url+"/threads", `{"thread_id":"ir1"}`, nil)
	postOK(t, url+"/threads/ir1/runs/wait", `{"assistant_id":"/support/acme","input":{"messages":[{"type":"human","content":"one","id":"m1"}]}}`, nil)
	var out struct {
		Messages []lgMessage `json:"messages"`
	}
	postOK(t, url+"/threads/ir1/runs/wait", `{"assistant_id":"/support/acme","input":{"messages":[{"type":"human","content":"uno","id":"m1"}]}}`, &out)
	if got := contentsOf(out.Messages); got != "uno,A1,A2" || out.Messages[0].ID != "m1" {
		t.Errorf("a run whose input edits m1: %q, ids %q; want uno in m1's place, then the answers", got, idsOf(out.Messages))
	}
	postOK(t, url+"/threads/ir1/runs/wait", `{"assistant_id":"/support/acme","input":{"messages":[{"type":"human","content":"eins","id":"m1"},{"type":"human","content":"two","id":"m2"}]}}`, &out)
	if got := contentsOf(out.Messages); got != "eins,A1,A2,two,A3" || out.Messages[0].ID != "m1" || out.Messages[3].ID != "m2" {
		t.Errorf("a run whose input edits m1 and adds m2: %q, ids %q", got, idsOf(out.Messages))
	}
	// A command.update of only user messages is the run's input: the
	// same holds.
	postOK(t, url+"/threads/ir1/runs/wait", `{"assistant_id":"/support/acme","command":{"update":{"messages":[{"type":"human","content":"zwei","id":"m2"}]}}}`, &out)
	if got := contentsOf(out.Messages); got != "eins,A1,A2,zwei,A3,A4" || strings.Count(strings.Join(idsOf(out.Messages), ","), "m2") != 1 {
		t.Errorf("a run whose command.update edits m2: %q, ids %q", got, idsOf(out.Messages))
	}
}
