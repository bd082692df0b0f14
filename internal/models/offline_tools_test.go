package models

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"
)

func toolWith(name string, params any) llms.Tool {
	return llms.Tool{Type: "function", Function: &llms.FunctionDefinition{Name: name, Parameters: params}}
}

// TestOfflineCallsAppTools checks the rule for app tools: during the plan,
// each app tool the call offers, once, in name order, with arguments from
// its schema; capability tools and tools the context does not name are
// never called; the answer quotes each result.
func TestOfflineCallsAppTools(t *testing.T) {
	lookup := toolWith("lookupAccount", json.RawMessage(`{"type":"object","properties":{"tenant":{"type":"string"},"limit":{"type":"integer"},"verbose":{"type":"boolean"}},"required":["tenant","limit"]}`))
	count := toolWith("countWords", map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}, "required": []string{"text"}})
	verify := toolWith("verifyPostcondition", nil)
	tests := []struct {
		name     string
		system   string
		tools    []llms.Tool
		appTools []string
		calls    []string // every call after the plan's, as "name args"
		text     string   // what the answer contains
	}{
		{
			name:     "without a plan, in name order",
			tools:    []llms.Tool{lookup, count},
			appTools: []string{"lookupAccount", "countWords"},
			calls:    []string{`countWords {"text":"Count: a b"}`, `lookupAccount {"limit":0,"tenant":"Count: a b"}`},
			text:     `received "Count: a b". countWords answered "result of countWords". lookupAccount answered "result of lookupAccount".`,
		},
		{
			name:     "while the plan item is in progress",
			system:   "- [pending] Look it up\n",
			tools:    []llms.Tool{todosToolDef, count},
			appTools: []string{"countWords"},
			calls:    []string{`writeTodos`, `countWords {"text":"Count: a b"}`, `writeTodos`},
			text:     `worked through 1 plan item for "Count: a b". countWords answered "result of countWords".`,
		},
		{
			name:     "capability tools are not app tools",
			tools:    []llms.Tool{verify, count},
			appTools: []string{"countWords"},
			calls:    []string{`countWords {"text":"Count: a b"}`},
			text:     `countWords answered`,
		},
		{
			name:     "an app tool the call does not offer",
			tools:    []llms.Tool{lookup},
			appTools: []string{"countWords"},
			calls:    nil,
			text:     `received "Count: a b". Set DAWN_MODEL`,
		},
		{
			name:  "no app tools named",
			tools: []llms.Tool{lookup, count},
			calls: nil,
			text:  `received "Count: a b". Set DAWN_MODEL`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			messages := []llms.MessageContent{
				llms.TextParts(llms.ChatMessageTypeSystem, tt.system),
				llms.TextParts(llms.ChatMessageTypeHuman, "Count: a b"),
			}
			var calls []string
			answer := func(call llms.ToolCall) string {
				if call.FunctionCall.Name == "writeTodos" {
					calls = append(calls, "writeTodos")
					return "ok"
				}
				calls = append(calls, call.FunctionCall.Name+" "+call.FunctionCall.Arguments)
				return "result of " + call.FunctionCall.Name
			}
			ctx := WithAppTools(withPlanning(context.Background()), tt.appTools)
			_, text := offlineLoopCtx(t, ctx, messages, tt.tools, answer)
			if !reflect.DeepEqual(calls, tt.calls) {
				t.Errorf("calls = %q, want %q", calls, tt.calls)
			}
			if !strings.Contains(text, tt.text) {
				t.Errorf("answer = %q, want it to contain %q", text, tt.text)
			}
		})
	}
}

// TestOfflineWorksItemByItem checks that on a route with a plan the
// offline model starts an item, makes that item's app tool call (the last
// item takes the tools left), completes the item and starts the next, and
// never calls a tool a person must approve, naming it in its answer.
func TestOfflineWorksItemByItem(t *testing.T) {
	tool := func(name string) llms.Tool {
		return toolWith(name, `{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`)
	}
	tools := []llms.Tool{todosToolDef, tool("charge"), tool("deploy"), tool("fetch"), tool("search")}
	messages := []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, "- [pending] Find it\n- [pending] Report it\n"),
		llms.TextParts(llms.ChatMessageTypeHuman, "go"),
	}
	var calls []string
	answer := func(call llms.ToolCall) string {
		if call.FunctionCall.Name != "writeTodos" {
			calls = append(calls, call.FunctionCall.Name)
			return "ok"
		}
		var list struct {
			Todos []struct{ Status string } `json:"todos"`
		}
		if err := json.Unmarshal([]byte(call.FunctionCall.Arguments), &list); err != nil {
			t.Fatalf("writeTodos arguments %s: %v", call.FunctionCall.Arguments, err)
		}
		var statuses []string
		for _, item := range list.Todos {
			statuses = append(statuses, item.Status)
		}
		calls = append(calls, "writeTodos "+strings.Join(statuses, ","))
		return "ok"
	}
	ctx := WithAppTools(withPlanning(context.Background()), []string{"charge", "deploy", "fetch", "search"})
	ctx = WithApprovalTools(ctx, []string{"deploy", "charge"})
	_, text := offlineLoopCtx(t, ctx, messages, tools, answer)
	want := []string{
		"writeTodos in_progress,pending", "fetch",
		"writeTodos completed,in_progress", "search",
		"writeTodos completed,completed",
	}
	if !reflect.DeepEqual(calls, want) {
		t.Errorf("calls = %q, want %q", calls, want)
	}
	if skip := "Skipped charge, deploy: a person must approve each call"; !strings.Contains(text, skip) {
		t.Errorf("answer = %q, want it to contain %q", text, skip)
	}

	calls = nil
	messages[0] = llms.TextParts(llms.ChatMessageTypeSystem, "- [pending] Do it all\n")
	offlineLoopCtx(t, ctx, messages, tools, answer)
	want = []string{"writeTodos in_progress", "fetch", "search", "writeTodos completed"}
	if !reflect.DeepEqual(calls, want) {
		t.Errorf("one item: calls = %q, want %q", calls, want)
	}
}

// TestOfflineCallsAppToolsEachTurn checks that a new user message calls
// the app tools again, with the new text.
func TestOfflineCallsAppToolsEachTurn(t *testing.T) {
	count := toolWith("countWords", `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)
	ctx := WithAppTools(context.Background(), []string{"countWords"})
	call := llms.ToolCall{ID: "call_offline_1", Type: "function", FunctionCall: &llms.FunctionCall{Name: "countWords", Arguments: `{"text":"one"}`}}
	messages := []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeHuman, "one"),
		{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{call}},
		{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: call.ID, Name: "countWords", Content: `{"words":1}`}}},
		llms.TextParts(llms.ChatMessageTypeAI, "done"),
		llms.TextParts(llms.ChatMessageTypeHuman, "two words"),
	}
	resp, err := NewOffline().GenerateContent(ctx, messages, llms.WithTools([]llms.Tool{count}))
	if err != nil {
		t.Fatal(err)
	}
	got := resp.Choices[0].ToolCalls
	if len(got) != 1 || got[0].ID != "call_offline_2" || got[0].FunctionCall.Arguments != `{"text":"two words"}` {
		t.Errorf("tool calls = %+v, want call_offline_2 countWords with the new text", got)
	}
}

func TestArgsFromSchema(t *testing.T) {
	tests := []struct {
		name   string
		schema any
		want   string
	}{
		{"nil", nil, `{}`},
		{"unreadable", "not json", `{}`},
		{"no required", `{"type":"object","properties":{"a":{"type":"string"}}}`, `{}`},
		{"scalars", `{"properties":{"s":{"type":"string"},"n":{"type":"number"},"i":{"type":"integer"},"b":{"type":"boolean"},"x":{}},"required":["s","n","i","b","x"]}`,
			`{"b":false,"i":0,"n":0,"s":"hi","x":null}`},
		{"enum first", `{"properties":{"kind":{"type":"string","enum":["a","b"]}},"required":["kind"]}`, `{"kind":"a"}`},
		{"nullable type", `{"properties":{"s":{"type":["null","string"]}},"required":["s"]}`, `{"s":"hi"}`},
		{"nested", `{"properties":{"o":{"type":"object","properties":{"t":{"type":"string"},"u":{"type":"string"}},"required":["t"]},"l":{"type":"array"}},"required":["o","l"]}`,
			`{"l":[],"o":{"t":"hi"}}`},
		{"const and default", `{"properties":{"c":{"type":"string","const":"fixed"},"d":{"type":"integer","default":7},"e":{"type":"string","examples":["sample"]}},"required":["c","d","e"]}`,
			`{"c":"fixed","d":7,"e":"sample"}`},
		{"string formats", `{"properties":{"m":{"type":"string","format":"email"},"u":{"type":"string","format":"uri"},"d":{"type":"string","format":"date"},"t":{"type":"string","format":"date-time"},"i":{"type":"string","format":"uuid"}},"required":["m","u","d","t","i"]}`,
			`{"d":"2025-01-01","i":"00000000-0000-4000-8000-000000000000","m":"user@example.com","t":"2025-01-01T00:00:00Z","u":"https://example.com/"}`},
		{"string lengths", `{"properties":{"short":{"type":"string","maxLength":1},"long":{"type":"string","minLength":5}},"required":["short","long"]}`,
			`{"long":"hi hi","short":"h"}`},
		{"number bounds", `{"properties":{"n":{"type":"number","minimum":2.5},"i":{"type":"integer","exclusiveMinimum":3},"neg":{"type":"integer","maximum":-4}},"required":["n","i","neg"]}`,
			`{"i":4,"n":2.5,"neg":-4}`},
		{"array min items", `{"properties":{"l":{"type":"array","minItems":2,"items":{"type":"string"}}},"required":["l"]}`,
			`{"l":["hi","hi"]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := marshalArgs(argsFromSchema(tt.schema, "hi")); got != tt.want {
				t.Errorf("args = %s, want %s", got, tt.want)
			}
		})
	}
}
