package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
	"github.com/tmc/langchaingo/llms"
)

// badArgs are tool-call arguments an OpenAI-compatible model can send that
// are not JSON.
var badArgs = map[string]string{
	"not json": `{not json`,
	"empty":    ``,
	"quotes":   `""`,
	"cut off":  `{"todos":[{"content":"a","status":"pend`,
}

// callWithArgs is a scripted turn that calls tool with raw arguments, valid
// JSON or not (dawntest.CallTool refuses invalid JSON).
func callWithArgs(tool, args string) func([]llms.MessageContent, llms.CallOptions) (*llms.ContentResponse, error) {
	return func([]llms.MessageContent, llms.CallOptions) (*llms.ContentResponse, error) {
		call := llms.ToolCall{ID: "call_bad", Type: "function", FunctionCall: &llms.FunctionCall{Name: tool, Arguments: args}}
		return &llms.ContentResponse{Choices: []*llms.ContentChoice{{ToolCalls: []llms.ToolCall{call}, StopReason: "tool_calls"}}}, nil
	}
}

// toolCallInput is the input of the run's tool_call event for id.
func toolCallInput(t *testing.T, events []stream.Event, id string) json.RawMessage {
	t.Helper()
	for _, e := range events {
		var d struct {
			ID    string          `json:"id"`
			Input json.RawMessage `json:"input"`
		}
		if e.Type == stream.TypeToolCall && json.Unmarshal(e.Data, &d) == nil && d.ID == id {
			return d.Input
		}
	}
	t.Fatalf("no tool_call %s in %v", id, dawntest.Types(events))
	return nil
}

// TestToolCallWithInvalidJSONArguments: a model that sends arguments that
// are not JSON gets a tool error and the run goes on to its answer, on a
// Dawn route and on a route whose plan the harness owns. runs/wait answers
// 200 with every message, the saved state equals the answer, and what
// runs/stream sent is what the event log and the thread keep.
func TestToolCallWithInvalidJSONArguments(t *testing.T) {
	routes := []struct{ app, route string }{
		{"dawn", "/support/acme"},
		{"enforced", "/job"},
	}
	for _, rt := range routes {
		for name, args := range badArgs {
			t.Run(rt.app+"/"+name, func(t *testing.T) {
				enforced := rt.app == "enforced"
				dir := supportApp(t)
				if enforced {
					dir = enforcedApp(t, "corrections: 1\n", 1)
				}
				h := apptest.New(t, dir, badArgsModel(args, enforced), apptest.Options{})
				url := h.Serve(t)
				checkBadArgsWait(t, url, rt.route, args)
				checkBadArgsStream(t, url, rt.route, args)
			})
		}
	}
}

// badArgsModel scripts two runs (one on runs/wait, one on runs/stream)
// that each call writeTodos with args, then answer; on an enforced route
// the plan is finished first, as the gate wants.
func badArgsModel(args string, enforced bool) *dawntest.ScriptedModel {
	model := dawntest.Script()
	for range 2 {
		model.Then(callWithArgs("writeTodos", args))
		if enforced {
			model.CallTool("writeTodos", list(1, 1, false))
		}
		model.Reply("Sorry, retrying later.")
	}
	return model
}

// checkBadArgsWait runs on runs/wait: the answer keeps the bad call, and
// the saved state is the same.
func checkBadArgsWait(t *testing.T, url, route, args string) {
	t.Helper()
	resp := post(t, url+"/threads/w/runs/wait", runBody(route, "hi"))
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("runs/wait status %d: %s", resp.StatusCode, body)
	}
	var waited struct {
		Messages []thread.Message `json:"messages"`
	}
	if err := json.Unmarshal(body, &waited); err != nil {
		t.Fatalf("runs/wait body: %v in %s", err, body)
	}
	checkBadArgsMessages(t, waited.Messages, args)
	var st struct {
		Values json.RawMessage `json:"values"`
	}
	if code := getJSON(t, url+"/threads/w/state", &st); code != http.StatusOK {
		t.Fatalf("state status %d", code)
	}
	// The state's messages also carry LangChain's type and id beside
	// Dawn's fields, for the LangGraph dialect.
	if !jsonEqual(withoutLangChainFields(t, st.Values), body) {
		t.Fatalf("saved state differs from runs/wait:\nstate %s\nwait  %s", st.Values, body)
	}
}

// checkBadArgsStream runs on runs/stream: one tool error, which says
// "not valid JSON" exactly when args is not, and the call's input is the
// same on the stream, in the done event and in the saved state.
func checkBadArgsStream(t *testing.T, url, route, args string) {
	t.Helper()
	events := readSSE(t, post(t, url+"/threads/s/runs/stream", runBody(route, "hi")))
	if last := events[len(events)-1]; last.Type != stream.TypeDone || strings.Contains(string(last.Data), `"error"`) {
		t.Fatalf("stream ended with %s %s", last.Type, last.Data)
	}
	errs := toolErrors(events)
	if len(errs) != 1 || json.Valid([]byte(args)) != !strings.Contains(errs[0], "not valid JSON") {
		t.Fatalf("tool errors = %q", errs)
	}
	streamed := toolCallInput(t, events, "call_bad")
	var done struct {
		Output struct {
			Messages []thread.Message `json:"messages"`
		} `json:"output"`
	}
	if err := json.Unmarshal(events[len(events)-1].Data, &done); err != nil {
		t.Fatal(err)
	}
	saved := checkBadArgsMessages(t, done.Output.Messages, args)
	if !jsonEqual(streamed, saved) {
		t.Fatalf("tool_call input streamed %s, saved %s", streamed, saved)
	}
	var state struct {
		Values struct {
			Messages []thread.Message `json:"messages"`
		} `json:"values"`
	}
	getJSON(t, url+"/threads/s/state", &state)
	if got := checkBadArgsMessages(t, state.Values.Messages, args); !jsonEqual(got, streamed) {
		t.Fatalf("state keeps input %s, stream sent %s", got, streamed)
	}
}

// checkBadArgsMessages checks that msgs keep the user's message, the bad
// call with its raw arguments recoverable, its error and the answer, and
// returns the call's input as kept.
func checkBadArgsMessages(t *testing.T, msgs []thread.Message, args string) json.RawMessage {
	t.Helper()
	if len(msgs) < 4 || msgs[0].Role != thread.RoleUser || msgs[0].Content != "hi" {
		t.Fatalf("messages = %+v", msgs)
	}
	if last := msgs[len(msgs)-1]; last.Role != thread.RoleAssistant || last.Content != "Sorry, retrying later." {
		t.Fatalf("last message = %+v", last)
	}
	call := msgs[1]
	if len(call.ToolCalls) != 1 || msgs[2].Role != thread.RoleTool || !msgs[2].IsError {
		t.Fatalf("messages = %+v", msgs)
	}
	input := call.ToolCalls[0].Input
	if json.Valid([]byte(args)) {
		if string(input) != args {
			t.Fatalf("kept input %s, want %s", input, args)
		}
		return input
	}
	// Invalid JSON is kept as a JSON string of the raw text.
	var raw string
	if err := json.Unmarshal(input, &raw); err != nil || raw != args {
		t.Fatalf("kept input %s, want the JSON string of %q", input, args)
	}
	return input
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return string(ja) == string(jb)
}

// withoutLangChainFields drops what the state's messages carry for
// LangGraph clients (type, id, status, and args and type on tool calls),
// leaving Dawn's fields.
func withoutLangChainFields(t *testing.T, values []byte) []byte {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(values, &v); err != nil {
		t.Fatalf("state values: %v in %s", err, values)
	}
	msgs, _ := v["messages"].([]any)
	for _, m := range msgs {
		m, ok := m.(map[string]any)
		if !ok {
			continue
		}
		delete(m, "type")
		delete(m, "id")
		delete(m, "status")
		calls, _ := m["tool_calls"].([]any)
		for _, c := range calls {
			if c, ok := c.(map[string]any); ok {
				delete(c, "args")
				delete(c, "type")
			}
		}
	}
	out, _ := json.Marshal(v)
	return out
}
