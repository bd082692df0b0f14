package agent

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/router"
	"github.com/dawn-go/dawn/thread"
	"github.com/tmc/langchaingo/llms"
)

// windowLoop is a loop with only what checkWindow reads: the model and a
// tool whose schema is JSON to encode.
func windowLoop(model string) *loop {
	schema := json.RawMessage(`{"type": "object", "properties": {"todos": {"type": "array", "items": {"type": "string"}}}}`)
	return &loop{
		cfg:  Config{ModelName: model, Route: &capabilities.Prepared{Route: &router.Route{ID: "/r"}}},
		defs: []llms.Tool{{Type: "function", Function: &llms.FunctionDefinition{Name: "writeTodos", Description: "Write the plan.", Parameters: schema}}},
	}
}

// TestCheckWindowFarUnderCountsNothing: a request whose bytes fit the
// model's window cannot hold more tokens than that, so the check neither
// encodes its text nor re-encodes the tools' schemas: it allocates
// nothing. Encoding every request before each model call cost a run
// tens of KB and the tokenizer's tables (about 24 MB of heap) for good.
func TestCheckWindowFarUnderCountsNothing(t *testing.T) {
	l := windowLoop("openai:gpt-4o-mini")
	msgs := []thread.Message{
		{Role: thread.RoleUser, Content: strings.Repeat("Help me with my account, please. ", 20)},
		{Role: thread.RoleAssistant, ToolCalls: []thread.ToolCall{{ID: "c1", Name: "writeTodos", Input: json.RawMessage(`{"todos":["a","b"]}`)}}},
		{Role: thread.RoleTool, ToolCallID: "c1", Name: "writeTodos", Content: "Plan written: 0 of 2 done."},
	}
	system := strings.Repeat("You help customers of a large company with their accounts. ", 10)
	if err := l.checkWindow(system, "Plan: 0 of 2 done.", msgs); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { _ = l.checkWindow(system, "Plan: 0 of 2 done.", msgs) }); n != 0 {
		t.Errorf("checkWindow of a small request allocates %.0f times; want 0", n)
	}
}

// TestCheckWindowCountsWhenBytesExceed: a request with more bytes than
// the window is counted with the model's tokenizer, and sent when its
// tokens fit (gpt-4: 8,192 tokens; " the" is one token of four bytes).
func TestCheckWindowCountsWhenBytesExceed(t *testing.T) {
	l := windowLoop("openai:gpt-4")
	fits := []thread.Message{{Role: thread.RoleUser, Content: strings.Repeat(" the", 3000)}}
	if err := l.checkWindow("", "", fits); err != nil {
		t.Errorf("12,000 bytes of about 3,000 tokens: %v; want it sent", err)
	}
	over := []thread.Message{{Role: thread.RoleUser, Content: strings.Repeat(" the", 9000)}}
	if err := l.checkWindow("", "", over); err == nil {
		t.Error("about 9,000 tokens fit an 8,192-token window; want a ContextWindowError")
	}
}
