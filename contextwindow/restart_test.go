package contextwindow_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/stream"
	"github.com/tmc/langchaingo/llms"
)

// parkScript reads pages, then in one turn asks for a compaction and calls
// deploy, which waits for a person's approval; once it ran, it answers.
func parkScript(n int) *llms.ContentChoice {
	switch {
	case n == 0:
		list := todos(1)
		delete(list, "reason")
		return call(n, "writeTodos", list)
	case n < 12:
		return call(n, "fetchPage", map[string]int{"page": n})
	case n == 12:
		return &llms.ContentChoice{ToolCalls: []llms.ToolCall{
			{ID: "call_compact", Type: "function", FunctionCall: &llms.FunctionCall{Name: "compactConversation", Arguments: "{}"}},
			{ID: "call_deploy", Type: "function", FunctionCall: &llms.FunctionCall{Name: "deploy", Arguments: `{"env":"prod"}`}},
		}}
	}
	return &llms.ContentChoice{Content: "Deployed."}
}

func deployTool() capabilities.AppTool {
	return capabilities.AppTool{Tool: capabilities.Func("deploy", "Deploy the report site.",
		func(_ context.Context, in struct {
			Env string `json:"env"`
		}) (string, error) {
			return "deployed to " + in.Env, nil
		})}
}

// TestInterruptSurvivesCompactionAndRestart: a run that asked for a
// compaction (compactConversation) and parked on an approval keeps its
// interrupt across a restart of the server; the resume runs the approved
// call, compacts before the next model call without parting either call
// from its result, and the plan is intact.
func TestInterruptSurvivesCompactionAndRestart(t *testing.T) {
	dir := apptest.WriteApp(t, map[string]string{
		"ops/agent.md": "---\napprove: [deploy]\ncontext: {max_input_tokens: 8000, keep_recent_turns: 2, compact_tool: true}\n---\nYou publish the report.",
		"ops/plan.md":  "",
	})
	storePath := filepath.Join(t.TempDir(), "dawn.db")
	model := &scriptModel{script: parkScript}
	opts := dawntest.Options{Tools: []capabilities.AppTool{pageTool(), deployTool()}, StorePath: storePath}
	srv := dawntest.New(t, dir, model, opts)
	first := srv.Run(t, "ops-1", "/ops", "Publish the report.")
	ins := eventsOf(first.Events, stream.TypeInterrupt)
	if len(ins) != 1 {
		t.Fatalf("events of the first run: %v", dawntest.Types(first.Events))
	}
	var in struct {
		ID string `json:"interruptId"`
	}
	_ = json.Unmarshal(ins[0].Data, &in)
	srv.Close()

	// A restart: a new server on the same store.
	srv = dawntest.New(t, dir, model, opts)
	parked := srv.State(t, "ops-1")
	if !strings.Contains(string(parked["compaction"]), `"requested":true`) {
		t.Fatalf("the parked state lost the compaction request: %s", parked["compaction"])
	}
	before := len(model.all())
	resp := apptest.PostJSON(t, srv.URL+"/threads/ops-1/resume", fmt.Sprintf(`{"route":"/ops","resume":[{"interruptId":%q,"status":"resolved","payload":"once"}]}`, in.ID))
	events := apptest.ReadSSE(t, resp)
	types := strings.Join(dawntest.Types(events), ",")
	if !strings.Contains(types, "tool_result,context_compacted") || !strings.HasSuffix(types, "done") {
		t.Fatalf("events of the resume: %s", types)
	}
	after := model.all()[before:]
	var next *request
	for i := range after {
		if !after[i].summary {
			next = &after[i]
			break
		}
	}
	if next == nil {
		t.Fatal("no model call after the resume")
	}
	checkCallsWithResults(t, next.msgs, "call_compact", "call_deploy")
	if got := fmt.Sprint(next.msgs[1].Parts[0]); !strings.HasPrefix(got, "[Summary of the earlier conversation") {
		t.Fatalf("the request after the compaction begins with %q", got)
	}
	state := srv.State(t, "ops-1")
	if string(state["todos"]) == "" || !strings.Contains(string(state["todos"]), `"in_progress"`) {
		t.Fatalf("todos after the resume: %s", state["todos"])
	}
	if strings.Contains(string(state["compaction"]), "requested") {
		t.Fatalf("the compaction request was not taken back: %s", state["compaction"])
	}
}

// checkCallsWithResults checks that msgs hold the tool calls ids, each
// with its result right after the call's message.
func checkCallsWithResults(t *testing.T, msgs []llms.MessageContent, ids ...string) {
	t.Helper()
	for i, m := range msgs {
		for _, p := range m.Parts {
			tc, ok := p.(llms.ToolCall)
			if !ok || tc.ID != ids[0] {
				continue
			}
			got := map[string]bool{}
			for _, r := range msgs[i+1:] {
				if resp, ok := r.Parts[0].(llms.ToolCallResponse); ok && r.Role == llms.ChatMessageTypeTool {
					got[resp.ToolCallID] = true
				}
			}
			for _, id := range ids {
				if !got[id] {
					t.Fatalf("call %s has no result after it in the request", id)
				}
			}
			return
		}
	}
	t.Fatalf("the request does not hold call %s", ids[0])
}
