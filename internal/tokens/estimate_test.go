package tokens

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/thread"
	"github.com/tmc/langchaingo/llms"
)

func TestEstimateMessages(t *testing.T) {
	msgs := []thread.Message{
		{Role: thread.RoleUser, Content: "Help me with my account"},
		{Role: thread.RoleAssistant, ToolCalls: []thread.ToolCall{{ID: "c1", Name: "lookup", Input: json.RawMessage(`{"id":1}`)}}},
		{Role: thread.RoleTool, ToolCallID: "c1", Name: "lookup", Content: "ok"},
	}
	tools := []llms.Tool{{Type: "function", Function: &llms.FunctionDefinition{Name: "lookup", Description: "Looks up.", Parameters: map[string]any{"type": "object"}}}}
	for _, tc := range []struct {
		model string
		want  int
	}{
		// reply 3; system 3+2 ("hello world"); user 3+5; call message 3,
		// call 3+1+len(o200k `{"id":1}`); tool 3+1 ("ok") +1+1 (name);
		// tool definition 3+1+3+len(`{"type":"object"}`).
		{"openai:gpt-4o-mini", 3 + 5 + 8 + 3 + 3 + 1 + Count(`{"id":1}`) + 3 + 1 + 2 + 3 + 1 + Count("Looks up.") + Count(`{"type":"object"}`)},
		// Four bytes a token, rounded up, with the same overheads: reply 3,
		// system 3+3, user 3+6, call message 3 and call 3+2+2, tool 3+1 and
		// name 1+2, definition 3+2+3+5.
		{"anthropic:claude-sonnet-4-5", 3 + 6 + 9 + 10 + 7 + 13},
	} {
		if got := EstimateMessages(tc.model, "hello world", msgs, tools); got != tc.want {
			t.Errorf("EstimateMessages(%s) = %d, want %d", tc.model, got, tc.want)
		}
	}
}

// TestEstimateMemo: a long text counted twice gives the same count, the
// second time from the memo.
func TestEstimateMemo(t *testing.T) {
	text := strings.Repeat("The customer asks about invoice 12345. ", 200)
	first := EstimateText("openai:gpt-4o", text)
	if first < 1000 || first > 2000 {
		t.Fatalf("count %d for %d bytes, want about a quarter", first, len(text))
	}
	if _, ok := memo.get(memoKey{"o200k_base", hashOf(text), len(text)}); !ok {
		t.Fatal("the long text's count was not kept")
	}
	if again := EstimateText("openai:gpt-4o", text); again != first {
		t.Fatalf("second count %d, first %d", again, first)
	}
	if cl := EstimateText("openai:gpt-4-turbo", text); cl == 0 {
		t.Fatal("cl100k_base counted nothing")
	}
}

func TestWindow(t *testing.T) {
	for _, tc := range []struct {
		model string
		want  int
		ok    bool
	}{
		{"openai:gpt-4o-mini", 128_000, true},
		{"openai:gpt-4", 8_192, true},
		{"openai:gpt-4-turbo-2024-04-09", 128_000, true},
		{"openai:gpt-4.1-mini", 1_047_576, true},
		{"openai:o1-mini", 128_000, true},
		{"anthropic:claude-sonnet-4-5", 200_000, true},
		{"ollama:llama3", 0, false},
		{"offline", 0, false},
		{"openai:my-finetune", 0, false},
		{"openai:gpt-4o-mini,anthropic:claude-3-5-haiku-latest", 200_000, true},
		{"openai:gpt-4o-mini,ollama:llama3", 0, false},
	} {
		got, ok := Window(tc.model)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Window(%s) = %d, %v; want %d, %v", tc.model, got, ok, tc.want, tc.ok)
		}
	}
}

// TestBoundsHoldEveryEstimate: the byte bounds are never below the
// estimates, whatever the model and text (a check that skips counting
// below a window relies on it).
func TestBoundsHoldEveryEstimate(t *testing.T) {
	texts := []string{"", "a", " the", "naïve café ☕ 東京 🌅🌅", strings.Repeat("x", 1000), "{\"a\":[1,2,3]}", "\x00\xff invalid utf8 \xc3"}
	tools := []llms.Tool{
		{Type: "function", Function: &llms.FunctionDefinition{Name: "t", Description: "é 東", Parameters: json.RawMessage(`{"type": "object"}`)}},
		{Type: "function", Function: &llms.FunctionDefinition{Name: "html", Parameters: json.RawMessage("{\"description\":\"<<&>> \u2028\u2029 <b>\"}")}},
		{Type: "function", Function: &llms.FunctionDefinition{Name: "m", Parameters: map[string]any{"description": "<&>"}}},
	}
	for _, tool := range tools {
		one := []llms.Tool{tool}
		if b, e := BoundTools(one), toolTokens(func(s string) int { return len(s) }, one); b < e {
			t.Errorf("%s: bound %d below the encoded length %d", tool.Function.Name, b, e)
		}
	}
	for _, model := range []string{"openai:gpt-4o-mini", "openai:gpt-4", "anthropic:claude-sonnet-4", "ollama:llama3"} {
		for _, text := range texts {
			msgs := []thread.Message{
				{Role: thread.RoleUser, Content: text},
				{Role: thread.RoleAssistant, ToolCalls: []thread.ToolCall{{Name: "t", Input: json.RawMessage(strconv.Quote(text))}}},
				{Role: thread.RoleTool, Name: "t", Content: text},
			}
			if b, e := BoundConversation(text, msgs), EstimateConversation(model, text, msgs); b < e {
				t.Errorf("%s, %q: bound %d below the estimate %d", model, text, b, e)
			}
		}
		if b, e := BoundTools(tools), EstimateTools(model, tools); b < e {
			t.Errorf("%s tools: bound %d below the estimate %d", model, b, e)
		}
	}
}

// TestBoundToolsEncodesNothing: the bound of schemas given as JSON is read
// off their bytes, with no encoding per run.
func TestBoundToolsEncodesNothing(t *testing.T) {
	tools := []llms.Tool{{Type: "function", Function: &llms.FunctionDefinition{Name: "t", Parameters: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}}}`)}}}
	if allocs := testing.AllocsPerRun(100, func() { BoundTools(tools) }); allocs != 0 {
		t.Errorf("BoundTools allocated %v times, want 0", allocs)
	}
}
