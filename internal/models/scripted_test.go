package models

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/internal/docstext"
	"github.com/tmc/langchaingo/llms"
)

func writeScript(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "refund.script.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func human(text string) llms.MessageContent { return llms.TextParts(llms.ChatMessageTypeHuman, text) }

func stateBlock(text string) llms.MessageContent {
	return llms.TextParts(llms.ChatMessageTypeSystem, StateBlockHeading+"\n\n"+text)
}

// scriptStep asks m for one turn and appends its answer, and a result for
// each tool call from results, to msgs.
func scriptStep(t *testing.T, m llms.Model, msgs []llms.MessageContent, results map[string]string) (*llms.ContentChoice, []llms.MessageContent) {
	t.Helper()
	resp, err := m.GenerateContent(context.Background(), msgs)
	if err != nil {
		t.Fatal(err)
	}
	choice := resp.Choices[0]
	if len(choice.ToolCalls) == 0 {
		return choice, append(msgs, llms.TextParts(llms.ChatMessageTypeAI, choice.Content))
	}
	ai := llms.MessageContent{Role: llms.ChatMessageTypeAI}
	for _, c := range choice.ToolCalls {
		ai.Parts = append(ai.Parts, c)
	}
	msgs = append(msgs, ai)
	for _, c := range choice.ToolCalls {
		msgs = append(msgs, llms.MessageContent{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{
			llms.ToolCallResponse{ToolCallID: c.ID, Name: c.FunctionCall.Name, Content: results[c.FunctionCall.Name]},
		}})
	}
	return choice, msgs
}

// TestScriptModelMatchesToolResultBeforeTheStateBlock plays a planned run
// the way the agent loop sends it: the state block is the last message of
// every call, after the tool result a turn matches on.
func TestScriptModelMatchesToolResultBeforeTheStateBlock(t *testing.T) {
	path := writeScript(t, `
turns:
  - when: {user: refund}
    tool_calls:
      - {name: writeTodos, args: {todos: [{content: Look up the order, status: in_progress}]}}
  - when: {tool: writeTodos}
    tool_calls:
      - {name: lookupOrder, args: {id: "42"}}
  - when: {tool: lookupOrder, tool_result: shipped}
    text: Order 42 has shipped; no refund is due.
`)
	m, err := New("script:"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	results := map[string]string{"writeTodos": "ok", "lookupOrder": `{"status":"shipped"}`}
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeSystem, "You help."), human("I want a refund for order 42")}
	var names []string
	for range 3 {
		// The loop renders a fresh state block after the conversation.
		call := append(append([]llms.MessageContent{}, msgs...), stateBlock("Current plan:\n- [pending] Look up the order"))
		var choice *llms.ContentChoice
		choice, call = scriptStep(t, m, call, results)
		msgs = call
		for _, c := range choice.ToolCalls {
			names = append(names, c.FunctionCall.Name+" "+c.FunctionCall.Arguments)
		}
		if len(choice.ToolCalls) == 0 {
			if choice.Content != "Order 42 has shipped; no refund is due." {
				t.Fatalf("answer = %q", choice.Content)
			}
			want := []string{
				`writeTodos {"todos":[{"content":"Look up the order","status":"in_progress"}]}`,
				`lookupOrder {"id":"42"}`,
			}
			if strings.Join(names, "\n") != strings.Join(want, "\n") {
				t.Fatalf("calls:\n%s\nwant:\n%s", strings.Join(names, "\n"), strings.Join(want, "\n"))
			}
			return
		}
	}
	t.Fatal("the script did not answer with text in 3 turns")
}

// TestScriptModelByTurn answers by position, counted from the latest user
// message, so each user message starts the script again.
func TestScriptModelByTurn(t *testing.T) {
	path := writeScript(t, `
turns:
  - tool_calls: [{name: countWords}]
  - text: "counted"
`)
	m, err := New("script:"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	msgs := []llms.MessageContent{human("one")}
	choice, msgs := scriptStep(t, m, msgs, map[string]string{"countWords": "1"})
	if len(choice.ToolCalls) != 1 || choice.ToolCalls[0].FunctionCall.Arguments != "{}" || choice.ToolCalls[0].ID != "call_script_1" {
		t.Fatalf("turn 1 = %+v", choice)
	}
	choice, msgs = scriptStep(t, m, msgs, nil)
	if choice.Content != "counted" {
		t.Fatalf("turn 2 = %q", choice.Content)
	}
	msgs = append(msgs, human("two"))
	choice, msgs = scriptStep(t, m, msgs, nil)
	if len(choice.ToolCalls) != 1 || choice.ToolCalls[0].ID != "call_script_2" {
		t.Fatalf("second message, turn 1 = %+v (ids must not repeat in a thread)", choice)
	}
	_, _ = scriptStep(t, m, msgs, nil)
	msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeAI, "counted"))
	// A third turn has no entry: the error names the file and the call.
	msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeAI, "extra"))
	_, err = m.GenerateContent(context.Background(), msgs)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "no turn answers model call") {
		t.Fatalf("err = %v", err)
	}
}

// TestScriptModelFollowsEdits re-reads the file when it changes, so a dev
// server scripted from it follows edits.
func TestScriptModelFollowsEdits(t *testing.T) {
	path := writeScript(t, "turns: [{text: first}]\n")
	m, err := New("script:"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := m.GenerateContent(context.Background(), []llms.MessageContent{human("hi")})
	if err != nil || resp.Choices[0].Content != "first" {
		t.Fatalf("%v %v", resp, err)
	}
	if err := os.WriteFile(path, []byte("turns: [{text: second answer}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	resp, err = m.GenerateContent(context.Background(), []llms.MessageContent{human("hi")})
	if err != nil || resp.Choices[0].Content != "second answer" {
		t.Fatalf("%v %v", resp, err)
	}
}

func TestScriptModelBadFiles(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"empty", "turns: []\n", "turns is empty"},
		{"no answer", "turns: [{when: {turn: 1}}]\n", "turns[0] has neither text nor tool_calls"},
		{"unknown key", "turns: [{txt: hi}]\n", "field txt not found"},
		{"empty when", "turns: [{when: {}, text: hi}]\n", "turns[0].when is empty"},
		{"no tool name", "turns: [{tool_calls: [{args: {}}]}]\n", "tool_calls[0].name is missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeScript(t, tc.text)
			_, err := New("script:"+path, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("err = %v, want %q and the file", err, tc.want)
			}
		})
	}
	_, err := New("script:/no/such/file.yaml", nil)
	if err == nil || !strings.Contains(err.Error(), "/no/such/file.yaml") {
		t.Fatalf("missing file: %v", err)
	}
}

func TestScriptInDir(t *testing.T) {
	for _, tc := range []struct{ spec, want string }{
		{"script:evals/a.yaml", "script:/app/evals/a.yaml"},
		{"script:/abs/a.yaml", "script:/abs/a.yaml"},
		{"openai:gpt-4o-mini,script:a.yaml", "openai:gpt-4o-mini,script:/app/a.yaml"},
		{"offline", "offline"},
	} {
		if got := ScriptInDir(tc.spec, "/app"); got != tc.want {
			t.Errorf("ScriptInDir(%q) = %q, want %q", tc.spec, got, tc.want)
		}
	}
}

// TestScriptModelDocsExample runs docs/models.md's script: the user's
// message, each tool result, and any other message.
func TestScriptModelDocsExample(t *testing.T) {
	blocks, err := docstext.Blocks("../..")
	if err != nil {
		t.Fatal(err)
	}
	var text string
	for _, b := range blocks {
		if b.Marker == "docs:script-model" {
			text = b.Text
		}
	}
	m, err := New("script:"+writeScript(t, text), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ result, want string }{
		{`{"status":"shipped"}`, "Order 42 has shipped, so no refund is due."},
		{`{"status":"held"}`, "Order 42 is refunded."},
	} {
		msgs := []llms.MessageContent{human("I want a refund for order 42")}
		choice, msgs := scriptStep(t, m, append(msgs, stateBlock("Current plan: empty")), map[string]string{"lookupOrder": tc.result})
		if len(choice.ToolCalls) != 1 || choice.ToolCalls[0].FunctionCall.Arguments != `{"id":"42"}` || choice.Content != "Let me look that order up." {
			t.Fatalf("first call = %+v", choice)
		}
		choice, _ = scriptStep(t, m, append(msgs, stateBlock("Current plan: empty")), nil)
		if choice.Content != tc.want {
			t.Errorf("after %s: %q, want %q", tc.result, choice.Content, tc.want)
		}
	}
	resp, err := m.GenerateContent(context.Background(), []llms.MessageContent{human("hello")})
	if err != nil || resp.Choices[0].Content != "I can help with refunds." {
		t.Errorf("another message: %v %v", resp, err)
	}
}
