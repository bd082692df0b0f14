package models

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/planning"
	"github.com/dawn-go/dawn/todo"
	"github.com/tmc/langchaingo/llms"
)

var todosToolDef = llms.Tool{Type: "function", Function: &llms.FunctionDefinition{Name: "writeTodos"}}

func taskToolWith(params any) llms.Tool {
	return llms.Tool{Type: "function", Function: &llms.FunctionDefinition{Name: "task", Parameters: params}}
}

// offlineLoop plays the agent loop against the offline model: it feeds back
// each tool call with the result answer gives, until the model answers with
// text or turns run out. It returns every writeTodos list in order, and the
// final text.
func offlineLoop(t *testing.T, messages []llms.MessageContent, tools []llms.Tool, answer func(call llms.ToolCall) string) ([]string, string) {
	t.Helper()
	return offlineLoopCtx(t, withPlanning(context.Background()), messages, tools, answer)
}

// offlineLoopCtx is offlineLoop with the context of every model call.
func offlineLoopCtx(t *testing.T, ctx context.Context, messages []llms.MessageContent, tools []llms.Tool, answer func(call llms.ToolCall) string) ([]string, string) {
	t.Helper()
	m := NewOffline()
	var lists []string
	for turn := 0; turn < 20; turn++ {
		resp, err := m.GenerateContent(ctx, messages, llms.WithTools(tools))
		if err != nil {
			t.Fatal(err)
		}
		choice := resp.Choices[0]
		if len(choice.ToolCalls) == 0 {
			return lists, choice.Content
		}
		parts := []llms.ContentPart{}
		for _, call := range choice.ToolCalls {
			parts = append(parts, call)
		}
		messages = append(messages, llms.MessageContent{Role: llms.ChatMessageTypeAI, Parts: parts})
		for _, call := range choice.ToolCalls {
			if call.FunctionCall.Name == "writeTodos" {
				lists = append(lists, statusLine(t, call.FunctionCall.Arguments))
			}
			messages = append(messages, llms.MessageContent{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{
				llms.ToolCallResponse{ToolCallID: call.ID, Name: call.FunctionCall.Name, Content: answer(call)},
			}})
		}
	}
	t.Fatal("the offline model did not finish in 20 turns")
	return nil, ""
}

// statusLine renders writeTodos arguments compactly: "P I C" letters per item.
func statusLine(t *testing.T, args string) string {
	t.Helper()
	var list struct {
		Todos []struct {
			Status todo.Status `json:"status"`
		} `json:"todos"`
	}
	if err := json.Unmarshal([]byte(args), &list); err != nil {
		t.Fatalf("writeTodos arguments %s: %v", args, err)
	}
	letters := map[todo.Status]string{todo.Pending: "P", todo.InProgress: "I", todo.Completed: "C"}
	var out []string
	for _, item := range list.Todos {
		out = append(out, letters[item.Status])
	}
	return strings.Join(out, "")
}

func alwaysOK(llms.ToolCall) string { return "ok" }

// withPlanning is ctx as the runner hands it to a model on an app with
// the planning capability, which scripts the offline model's writeTodos
// calls.
func withPlanning(ctx context.Context) context.Context {
	return WithMarkers(ctx, []capabilities.Marker{planning.Marker()})
}

const fourItemPrompt = `You are a support agent.

## Plan
- [pending] Read the ticket
- [pending] Find the order
- [pending] Draft a reply
- [pending] Send the reply
`

func TestOfflineWalksThroughPlan(t *testing.T) {
	messages := []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, fourItemPrompt),
		llms.TextParts(llms.ChatMessageTypeHuman, "My order is late"),
	}
	lists, text := offlineLoop(t, messages, []llms.Tool{todosToolDef}, alwaysOK)
	want := []string{"IPPP", "CIPP", "CCIP", "CCCI", "CCCC"}
	if !reflect.DeepEqual(lists, want) {
		t.Errorf("writeTodos lists = %v, want %v", lists, want)
	}
	wantText := `Offline model: worked through 4 plan items for "My order is late". Set DAWN_MODEL (for example openai:gpt-4o-mini) to use a real model.`
	if text != wantText {
		t.Errorf("final text = %q, want %q", text, wantText)
	}
}

func TestOfflinePlans(t *testing.T) {
	tests := []struct {
		name   string
		system string
		answer func(llms.ToolCall) string
		want   []string
		text   string
	}{
		{"empty plan gets two items", "No plan here.", alwaysOK, []string{"IP", "CI", "CC"}, "worked through 2 plan items"},
		{"resumes a plan in progress", "- [completed] A\n- [in_progress] B\n- [pending] C\n", alwaysOK, []string{"CCI", "CCC"}, "worked through 3 plan items"},
		{"finished plan answers at once", "- [completed] A\n", alwaysOK, nil, "worked through 1 plan item for"},
		{"starts a later pending item", "- [completed] A\n- [pending] B\n", alwaysOK, []string{"CI", "CC"}, "worked through 2"},
		{"retries after a failed write", fourItemPrompt, failNth(2), []string{"IPPP", "CIPP", "CIPP", "CCIP", "CCCI", "CCCC"}, "worked through 4"},
		{"gives up after three failures", fourItemPrompt, func(llms.ToolCall) string {
			return "error: todos[0].status must be one of pending, in_progress, completed"
		},
			[]string{"IPPP", "IPPP", "IPPP"}, "stopped planning for \"Help\" because writeTodos failed 3 times."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			messages := []llms.MessageContent{
				llms.TextParts(llms.ChatMessageTypeSystem, tt.system),
				llms.TextParts(llms.ChatMessageTypeHuman, "Help"),
			}
			lists, text := offlineLoop(t, messages, []llms.Tool{todosToolDef}, tt.answer)
			if !reflect.DeepEqual(lists, tt.want) {
				t.Errorf("writeTodos lists = %v, want %v", lists, tt.want)
			}
			if !strings.Contains(text, tt.text) {
				t.Errorf("final text = %q, want it to contain %q", text, tt.text)
			}
		})
	}
}

// failNth answers "error: ..." to the nth writeTodos call (1-based), "ok" to
// the others.
func failNth(n int) func(llms.ToolCall) string {
	count := 0
	return func(llms.ToolCall) string {
		count++
		if count == n {
			return "Error: todos[1].status must be one of pending, in_progress, completed"
		}
		return "ok"
	}
}

func TestOfflineCallsSubagentFirst(t *testing.T) {
	rawSchema := json.RawMessage(`{"type":"object","properties":{"subagent":{"type":"string","enum":["researcher","writer"]},"input":{"type":"string"}}}`)
	mapSchema := map[string]any{"type": "object", "properties": map[string]any{"subagent": map[string]any{"type": "string", "enum": []string{"researcher"}}}}
	structSchema := struct {
		Properties map[string]map[string][]string `json:"properties"`
	}{map[string]map[string][]string{"subagent": {"enum": {"researcher"}}}}
	for name, schema := range map[string]any{"raw": rawSchema, "map": mapSchema, "struct": structSchema} {
		t.Run(name, func(t *testing.T) {
			var calls []string
			messages := []llms.MessageContent{
				llms.TextParts(llms.ChatMessageTypeSystem, "- [pending] Research"),
				llms.TextParts(llms.ChatMessageTypeHuman, "Find facts"),
			}
			answer := func(call llms.ToolCall) string {
				calls = append(calls, call.ID+" "+call.FunctionCall.Name+" "+call.FunctionCall.Arguments)
				if call.FunctionCall.Name == "task" {
					return "Facts found."
				}
				return "ok"
			}
			tools := []llms.Tool{todosToolDef, taskToolWith(schema)}
			lists, text := offlineLoop(t, messages, tools, answer)
			wantFirst := `call_offline_1 task {"input":"Find facts","subagent":"researcher"}`
			if len(calls) == 0 || calls[0] != wantFirst {
				t.Fatalf("first call = %q, want %q", calls, wantFirst)
			}
			if !reflect.DeepEqual(lists, []string{"I", "C"}) || calls[2][:15] != "call_offline_3 " {
				t.Errorf("writeTodos lists = %v, calls %q", lists, calls)
			}
			if !strings.Contains(text, `The "researcher" subagent answered: "Facts found."`) {
				t.Errorf("final text = %q", text)
			}
		})
	}
}

func TestOfflineWithoutTools(t *testing.T) {
	long := strings.Repeat("word ", 30)
	tests := []struct {
		name, user, want string
	}{
		{"short", "Hello\nthere", `Offline model: received "Hello there". Set DAWN_MODEL`},
		{"long", long, `received "` + strings.Repeat("word ", 16) + `…"`},
		{"no user", "", `received "".`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, err := llms.GenerateFromSinglePrompt(context.Background(), NewOffline(), tt.user)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(text, tt.want) {
				t.Errorf("text = %q, want it to contain %q", text, tt.want)
			}
		})
	}
}

func TestOfflineStreams(t *testing.T) {
	var chunks []string
	resp, err := NewOffline().GenerateContent(context.Background(),
		[]llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "Stream please")},
		llms.WithStreamingFunc(func(_ context.Context, chunk []byte) error {
			chunks = append(chunks, string(chunk))
			return nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	if len(chunks) < 3 || len(chunks) > 5 {
		t.Errorf("got %d chunks, want 3 to 5: %q", len(chunks), chunks)
	}
	if got := strings.Join(chunks, ""); got != resp.Choices[0].Content {
		t.Errorf("chunks join to %q, Content is %q", got, resp.Choices[0].Content)
	}
}

func TestOfflineStops(t *testing.T) {
	stop := errors.New("client gone")
	messages := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "Hi")}
	_, err := NewOffline().GenerateContent(context.Background(), messages,
		llms.WithStreamingFunc(func(context.Context, []byte) error { return stop }))
	if !errors.Is(err, stop) {
		t.Errorf("streaming func error: got %v, want %v", err, stop)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewOffline().GenerateContent(ctx, messages); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled context: got %v", err)
	}
}

func BenchmarkOffline(b *testing.B) {
	call := llms.ToolCall{ID: "call_offline_1", Type: "function", FunctionCall: &llms.FunctionCall{
		Name: "writeTodos", Arguments: `{"todos":[{"content":"Read the ticket","status":"in_progress"},{"content":"Find the order","status":"pending"},{"content":"Draft a reply","status":"pending"},{"content":"Send the reply","status":"pending"}]}`,
	}}
	messages := []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, fourItemPrompt),
		llms.TextParts(llms.ChatMessageTypeHuman, "My order is late"),
		{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{call}},
		{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: call.ID, Name: "writeTodos", Content: "ok"}}},
	}
	opts := []llms.CallOption{llms.WithTools([]llms.Tool{todosToolDef}), llms.WithStreamingFunc(func(context.Context, []byte) error { return nil })}
	m := NewOffline()
	ctx := withPlanning(context.Background())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.GenerateContent(ctx, messages, opts...); err != nil {
			b.Fatal(err)
		}
	}
}

// TestOfflineNeedsTheScript: the offline model calls a capability's tool
// only as the capability scripts it; offered writeTodos on an app whose
// markers script nothing, it answers.
func TestOfflineNeedsTheScript(t *testing.T) {
	messages := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")}
	lists, text := offlineLoopCtx(t, WithMarkers(context.Background(), nil), messages, []llms.Tool{todosToolDef}, alwaysOK)
	if len(lists) != 0 || !strings.HasPrefix(text, `Offline model: received "hi".`) {
		t.Errorf("lists %v, text %q; want no writeTodos call and the plain answer", lists, text)
	}
}
