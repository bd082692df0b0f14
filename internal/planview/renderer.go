package planview

import (
	"bytes"
	"encoding/json"

	"github.com/dawn-go/dawn/stream"
)

// Renderer shows a run's events as they arrive. Both renderers show the
// run's plan, its tool calls (except writeTodos, which the plan shows) and
// its answer text, with a line below text that an answer_rejected event
// took back; they skip every other event, subagent text included.
type Renderer interface {
	// Event shows one event.
	Event(e stream.Event) error
	// Close ends the output with a line break if the last line is open.
	Close() error
}

// writeTodosTool is the planning tool; its calls show as the plan itself.
const writeTodosTool = "writeTodos"

// MaxToolInput is how many runes of a tool call's input a line shows.
const MaxToolInput = 80

// RejectedLine is shown below answer text that the stream took back with an
// answer_rejected event: the text is already on the screen, so the view
// says it was not the answer, and the accepted answer follows later.
const RejectedLine = "(not accepted as the answer; the agent goes on)"

// ToolLine returns the line for a tool_call event's data:
// `tool: lookupAccount({"tenant":"acme"})`, with the input made compact and
// cut to MaxToolInput runes. It reports false for writeTodos calls and data
// that names no tool.
func ToolLine(data json.RawMessage) (string, bool) {
	var d struct {
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	}
	if json.Unmarshal(data, &d) != nil || d.Name == "" || d.Name == writeTodosTool {
		return "", false
	}
	input := d.Input
	var compact bytes.Buffer
	if json.Compact(&compact, input) == nil {
		input = compact.Bytes()
	}
	if string(input) == "null" {
		input = nil
	}
	return "tool: " + oneLine(d.Name) + "(" + clip(oneLine(string(input)), MaxToolInput) + ")", true
}

// subagentName returns the "subagent" field of a forwarded event's data.
func subagentName(data json.RawMessage) string {
	var d struct {
		Subagent string `json:"subagent"`
	}
	_ = json.Unmarshal(data, &d)
	return d.Subagent
}
