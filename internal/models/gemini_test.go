package models

import (
	"encoding/json"
	"testing"

	"github.com/tmc/langchaingo/llms"
)

// TestGeminiBody: system text becomes the system instruction, assistant
// turns the "model" role, tool calls functionCall parts and tool results
// functionResponse parts in a user turn.
func TestGeminiBody(t *testing.T) {
	msgs := []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, "Be brief."),
		llms.TextParts(llms.ChatMessageTypeHuman, "Hi"),
		{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{
			llms.TextContent{Text: ""},
			llms.ToolCall{ID: "call_0", Type: "function", FunctionCall: &llms.FunctionCall{Name: "writeTodos", Arguments: `{"todos":[]}`}},
		}},
		{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{
			llms.ToolCallResponse{ToolCallID: "call_0", Name: "writeTodos", Content: `{"ok":true}`},
			llms.ToolCallResponse{ToolCallID: "call_1", Name: "search", Content: "plain text"},
		}},
	}
	req, err := geminiBody(msgs, llms.CallOptions{Tools: []llms.Tool{writeTodosTool}, MaxTokens: 50})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(req)
	want := `{"contents":[{"role":"user","parts":[{"text":"Hi"}]},` +
		`{"role":"model","parts":[{"functionCall":{"name":"writeTodos","args":{"todos":[]}}}]},` +
		`{"role":"user","parts":[{"functionResponse":{"name":"writeTodos","response":{"content":{"ok":true},"name":"writeTodos"}}},{"functionResponse":{"name":"search","response":{"content":"plain text","name":"search"}}}]}],` +
		`"systemInstruction":{"parts":[{"text":"Be brief."}]},` +
		`"tools":[{"functionDeclarations":[{"name":"writeTodos","parameters":{"properties":{"todos":{"type":"array"}},"type":"object"}}]}],` +
		`"generationConfig":{"maxOutputTokens":50}}`
	if string(got) != want {
		t.Errorf("body =\n%s\nwant\n%s", got, want)
	}
}
