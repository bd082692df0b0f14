package langgraph_test

import (
	"encoding/json"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
)

// TestLangGraphUpdateKeepsToolCalls: a state update (updateState, or a
// thread's supersteps) that adds a model message with tool calls and the
// tool messages answering them keeps the calls and the tool messages'
// call ids and names, in LangChain's form (args) or Dawn's (input), so the
// thread stays a conversation a model accepts and the next run goes on
// from it.
func TestLangGraphUpdateKeepsToolCalls(t *testing.T) {
	h := apptest.New(t, supportApp(t), dawntest.Script().Reply("Done.").Repeat(), apptest.Options{})
	url := h.Serve(t)
	postOK(t, url+"/threads", `{"thread_id":"u1","graph_id":"/support/acme","supersteps":[
		{"updates":[{"values":{"messages":[{"type":"human","content":"look it up"}]},"as_node":"__input__"}]},
		{"updates":[{"values":{"messages":[{"type":"ai","content":"","tool_calls":[{"id":"call_1","name":"lookup","args":{"q":"x"},"type":"tool_call"}]}]},"as_node":"agent"}]}]}`, nil)
	postOK(t, url+"/threads/u1/state", `{"values":{"messages":[
		{"type":"tool","content":"found","tool_call_id":"call_1","name":"lookup"},
		{"role":"assistant","content":"again","tool_calls":[{"id":"call_2","name":"lookup","input":{"q":"y"}}]},
		{"type":"tool","content":"boom","tool_call_id":"call_2","name":"lookup","status":"error"}]},"as_node":"tools"}`, nil)

	var st struct {
		Values struct {
			Messages []struct {
				Type      string `json:"type"`
				Content   string `json:"content"`
				ToolCalls []struct {
					ID   string          `json:"id"`
					Name string          `json:"name"`
					Args json.RawMessage `json:"args"`
				} `json:"tool_calls"`
				ToolCallID string `json:"tool_call_id"`
				Name       string `json:"name"`
				Status     string `json:"status"`
			} `json:"messages"`
		} `json:"values"`
	}
	getJSON(t, url+"/threads/u1/state", &st)
	m := st.Values.Messages
	if len(m) != 5 {
		t.Fatalf("%d messages, want 5: %+v", len(m), m)
	}
	if len(m[1].ToolCalls) != 1 || m[1].ToolCalls[0].ID != "call_1" || m[1].ToolCalls[0].Name != "lookup" || string(m[1].ToolCalls[0].Args) != `{"q":"x"}` {
		t.Errorf("the model message's tool calls (LangChain's form): %+v", m[1].ToolCalls)
	}
	if m[2].Type != "tool" || m[2].ToolCallID != "call_1" || m[2].Name != "lookup" || m[2].Content != "found" {
		t.Errorf("the tool message: %+v", m[2])
	}
	if len(m[3].ToolCalls) != 1 || m[3].ToolCalls[0].ID != "call_2" || string(m[3].ToolCalls[0].Args) != `{"q":"y"}` {
		t.Errorf("the model message's tool calls (Dawn's form): %+v", m[3].ToolCalls)
	}
	if m[4].ToolCallID != "call_2" || m[4].Status != "error" {
		t.Errorf("the failed tool message: %+v", m[4])
	}
	var out struct {
		Messages []lgMessage `json:"messages"`
	}
	postOK(t, url+"/threads/u1/runs/wait", `{"assistant_id":"/support/acme","input":null}`, &out)
	if n := len(out.Messages); n != 6 || out.Messages[5].Content != "Done." {
		t.Errorf("the run after the update: %+v", out.Messages)
	}
}
