// Package thread holds the data a conversation thread carries between runs:
// its messages and its state values. It is plain data with JSON encodings and
// imports nothing else from Dawn, so every other package can share it.
package thread

import (
	"encoding/json"
	"maps"
)

// Roles used in Message.Role.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
	RoleSystem    = "system"
)

// Message is one entry of a thread's conversation.
//
// A user or system message carries Content. An assistant message carries
// Content, ToolCalls, or both. A tool message answers one tool call: it has
// ToolCallID, Name and Content (the tool's output, or its error text).
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	Name       string     `json:"name,omitempty"`
	IsError    bool       `json:"is_error,omitempty"`
	// Harness marks a message the harness added (a correction from the
	// finalization gate), not the user.
	Harness bool `json:"harness,omitempty"`
	// Plan is the plan snapshot linked to a final assistant message.
	Plan json.RawMessage `json:"plan,omitempty"`
}

// ToolCall is a model's request to run a tool.
type ToolCall struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// State is the set of named state fields of a thread other than messages
// (for example "todos"). Each value is JSON. A nil or missing value means the
// field is unset.
type State map[string]json.RawMessage

// Clone returns a copy of s that can be changed without touching s. The JSON
// values are shared: treat them as immutable.
func (s State) Clone() State {
	if s == nil {
		return State{}
	}
	return maps.Clone(s)
}

// Decode unmarshals field name into v. It reports false when the field is
// unset.
func (s State) Decode(name string, v any) (bool, error) {
	raw, ok := s[name]
	if !ok || len(raw) == 0 {
		return false, nil
	}
	return true, json.Unmarshal(raw, v)
}
