package agent

import (
	"bytes"
	"encoding/json"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/thread"
	"github.com/tmc/langchaingo/llms"
)

// toLLM converts the thread's messages, with a leading system prompt, into
// the message list langchaingo providers take.
func toLLM(system string, msgs []thread.Message) []llms.MessageContent {
	out := make([]llms.MessageContent, 0, len(msgs)+1)
	if system != "" {
		out = append(out, llms.TextParts(llms.ChatMessageTypeSystem, system))
	}
	for _, m := range msgs {
		switch m.Role {
		case thread.RoleUser:
			out = append(out, llms.TextParts(llms.ChatMessageTypeHuman, m.Content))
		case thread.RoleSystem:
			out = append(out, llms.TextParts(llms.ChatMessageTypeSystem, m.Content))
		case thread.RoleAssistant:
			mc := llms.MessageContent{Role: llms.ChatMessageTypeAI}
			if m.Content != "" {
				mc.Parts = append(mc.Parts, llms.TextPart(m.Content))
			}
			for _, c := range m.ToolCalls {
				mc.Parts = append(mc.Parts, llms.ToolCall{
					ID:           c.ID,
					Type:         "function",
					FunctionCall: &llms.FunctionCall{Name: c.Name, Arguments: replayArgs(c.Input)},
				})
			}
			out = append(out, mc)
		case thread.RoleTool:
			out = append(out, llms.MessageContent{
				Role:  llms.ChatMessageTypeTool,
				Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: m.ToolCallID, Name: m.Name, Content: m.Content}},
			})
		}
	}
	return out
}

// withStateBlock appends the per-turn state block (see StateBlock) to a
// request's messages as a final system message; an empty block adds
// nothing.
func withStateBlock(msgs []llms.MessageContent, block string) []llms.MessageContent {
	if block == "" {
		return msgs
	}
	return append(msgs, llms.TextParts(llms.ChatMessageTypeSystem, block))
}

// toolDefs describes tools to the model.
func toolDefs(tools []capabilities.Tool) []llms.Tool {
	defs := make([]llms.Tool, 0, len(tools))
	for _, t := range tools {
		s := t.Spec()
		defs = append(defs, llms.Tool{
			Type: "function",
			Function: &llms.FunctionDefinition{
				Name:        s.Name,
				Description: s.Description,
				Parameters:  s.Schema,
			},
		})
	}
	return defs
}

// modelText is what the model sees of a tool's JSON output: a JSON string is
// shown as its text, anything else as JSON.
func modelText(output json.RawMessage) string {
	if len(output) > 0 && output[0] == '"' {
		var s string
		if json.Unmarshal(output, &s) == nil {
			return s
		}
	}
	return string(output)
}

// replayArgs is a past tool call's input as the model is shown it again.
// Providers take only a JSON object there (Anthropic and Ollama refuse the
// request otherwise), so input that was not one, such as arguments that were
// not JSON and are kept as a JSON string, goes back as {}; the call's tool
// message already tells the model what it sent and why it failed.
func replayArgs(input json.RawMessage) string {
	if trimmed := bytes.TrimLeft(input, " \t\r\n"); len(trimmed) > 0 && trimmed[0] == '{' {
		return string(input)
	}
	return "{}"
}
