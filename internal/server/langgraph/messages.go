package langgraph

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/dawn-go/dawn/thread"
	"github.com/google/uuid"
)

// This file translates thread messages between Dawn's stored form
// ({role, content, tool_calls: [{id, name, input}]}) and LangChain's message
// dicts ({type, id, content, tool_calls: [{id, name, args, type}]}), at the
// edge: the store keeps Dawn's form.

// lcMessage is a thread message as both dialects read it: Dawn's fields and
// LangChain's side by side, so a Dawn client and a LangGraph client can read
// the same state.
type lcMessage struct {
	// LangChain: "human", "ai", "tool" or "system", and a stable id.
	Type string `json:"type"`
	ID   string `json:"id"`
	// Dawn: "user", "assistant", "tool" or "system".
	Role       string       `json:"role"`
	Content    string       `json:"content"`
	ToolCalls  []lcToolCall `json:"tool_calls,omitempty"`
	ToolCallID string       `json:"tool_call_id,omitempty"`
	Name       string       `json:"name,omitempty"`
	// Status is LangChain's "error" for a tool message holding an error.
	Status  string `json:"status,omitempty"`
	IsError bool   `json:"is_error,omitempty"`
	// Meta are the keys capabilities keep on the message (thread.Message
	// Meta), written after the fields above as Dawn's messages carry them.
	Meta map[string]json.RawMessage `json:"-"`
}

// lcFields is lcMessage without its methods.
type lcFields lcMessage

// MarshalJSON writes the message's fields, then its Meta keys in key order,
// the keys a field already has excepted.
func (m lcMessage) MarshalJSON() ([]byte, error) {
	own, err := json.Marshal(lcFields(m))
	if err != nil || len(m.Meta) == 0 {
		return own, err
	}
	var taken map[string]json.RawMessage
	if err := json.Unmarshal(own, &taken); err != nil {
		return nil, err
	}
	out := own[: len(own)-1 : len(own)-1]
	for _, k := range slices.Sorted(maps.Keys(m.Meta)) {
		if _, ok := taken[k]; ok || !json.Valid(m.Meta[k]) {
			continue
		}
		key, _ := json.Marshal(k)
		out = append(append(append(append(out, ','), key...), ':'), m.Meta[k]...)
	}
	return append(out, '}'), nil
}

// lcToolCall is a tool call with Dawn's input and LangChain's args (the same
// JSON object) and type.
type lcToolCall struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
	Args  json.RawMessage `json:"args"`
	Type  string          `json:"type"`
}

// lcTypes maps Dawn's roles to LangChain's message types.
var lcTypes = map[string]string{
	thread.RoleUser:      "human",
	thread.RoleAssistant: "ai",
	thread.RoleTool:      "tool",
	thread.RoleSystem:    "system",
}

// messageSpace is the UUID namespace of message ids.
var messageSpace = uuid.MustParse("5b0c8e8e-6f2a-4d44-9b7e-2f1d9a3c7d10")

// messageID is the id of the i-th message of a thread (ns "") or of a
// subagent's conversation inside it (ns names it). The store keeps no
// message ids; messages are append-only, so the position names a message
// for good, and every read and stream gives it the same id.
func messageID(threadID, ns string, i int) string {
	return uuid.NewSHA1(messageSpace, []byte(threadID+"\x00"+ns+"\x00"+strconv.Itoa(i))).String()
}

// toLC returns m in both dialects' form with id.
func toLC(m thread.Message, id string) lcMessage {
	out := lcMessage{
		Type: lcTypes[m.Role], ID: idOr(m, id), Role: m.Role, Content: m.Content,
		ToolCallID: m.ToolCallID, Name: m.Name, IsError: m.IsError, Meta: m.Meta,
	}
	if out.Type == "" {
		out.Type = m.Role
	}
	if m.IsError {
		out.Status = "error"
	}
	for _, c := range m.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, toLCCall(c))
	}
	return out
}

func toLCCall(c thread.ToolCall) lcToolCall {
	args := bytes.TrimSpace(c.Input)
	if len(args) == 0 || args[0] != '{' {
		args = json.RawMessage(`{}`) // LangChain's args is always an object
	}
	input := c.Input
	if len(input) == 0 {
		input = json.RawMessage(`null`)
	}
	return lcToolCall{ID: c.ID, Name: c.Name, Input: input, Args: args, Type: "tool_call"}
}

// lcMessages converts a thread's messages, numbering ids from 0.
func lcMessages(threadID, ns string, msgs []thread.Message) []lcMessage {
	out := make([]lcMessage, len(msgs))
	for i, m := range msgs {
		out[i] = toLC(m, messageID(threadID, ns, i))
	}
	return out
}

// lcValues returns state values (messages plus fields) with the messages
// in both dialects' form.
func lcValues(threadID string, msgs []thread.Message, fields thread.State) json.RawMessage {
	out := make(map[string]json.RawMessage, len(fields)+1)
	for k, v := range fields {
		out[k] = v
	}
	out["messages"] = wire.MustJSON(lcMessages(threadID, "", msgs))
	return wire.MustJSON(out)
}

// splitValues splits the state values a run's output holds into messages
// and fields. ok is false when output is not a state (an error, a
// cancellation, a plan preview).
func splitValues(output json.RawMessage) (msgs []thread.Message, fields thread.State, ok bool) {
	if err := json.Unmarshal(output, &fields); err != nil || fields == nil {
		return nil, nil, false
	}
	raw, has := fields["messages"]
	if !has || json.Unmarshal(raw, &msgs) != nil {
		return nil, nil, false
	}
	delete(fields, "messages")
	return msgs, fields, true
}

// lcInput is a LangGraph run's input: messages in either dialect, plus
// state fields.
type lcInput struct {
	Messages []thread.Message
	Values   map[string]json.RawMessage
}

// parseLCInput reads a run's input: {"messages": ..., "field": value}.
// messages may be a string, one message or a list; a message may be a
// LangChain dict ({"type": "human", "content": ...}) or Dawn's ({"role":
// "user", ...}), and its content a string or a list of text blocks. A
// model message keeps its tool calls and a tool message its call id, name
// and error status, as a state update adds them.
func parseLCInput(raw json.RawMessage) (lcInput, error) {
	var in lcInput
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return in, nil
	}
	if err := json.Unmarshal(raw, &in.Values); err != nil || in.Values == nil {
		return in, wire.BadBody(`input must be a JSON object like {"messages":[{"type":"human","content":"Hello"}]}`)
	}
	msgs, ok := in.Values["messages"]
	if !ok {
		return in, nil
	}
	delete(in.Values, "messages")
	msgs = bytes.TrimSpace(msgs)
	var list []json.RawMessage
	switch {
	case len(msgs) > 0 && msgs[0] == '"':
		list = []json.RawMessage{msgs}
	case len(msgs) > 0 && msgs[0] == '{':
		list = []json.RawMessage{msgs}
	case json.Unmarshal(msgs, &list) != nil:
		return in, wire.BadBody("input.messages must be a list of messages like [{\"type\":\"human\",\"content\":\"Hello\"}]")
	}
	for i, item := range list {
		m, err := parseLCMessage(item)
		if err != nil {
			return in, wire.BadBody(fmt.Sprintf("input.messages[%d]: %v", i, err))
		}
		in.Messages = append(in.Messages, m)
	}
	return in, nil
}

// lcRoles maps the role or type a client sends to Dawn's role. Roles Dawn
// does not take as input ("ai", "tool") pass through; the runner refuses
// them with a message naming the index.
var lcRoles = map[string]string{
	"human": thread.RoleUser, "user": thread.RoleUser,
	"system": thread.RoleSystem, "developer": thread.RoleSystem,
	"ai": thread.RoleAssistant, "assistant": thread.RoleAssistant,
	"tool": thread.RoleTool,
}

func parseLCMessage(raw json.RawMessage) (thread.Message, error) {
	if len(raw) > 0 && raw[0] == '"' {
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			return thread.Message{}, err
		}
		return thread.Message{Role: thread.RoleUser, Content: text}, nil
	}
	var m struct {
		Type       string          `json:"type"`
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCalls  []inputToolCall `json:"tool_calls"`
		ToolCallID string          `json:"tool_call_id"`
		Name       string          `json:"name"`
		Status     string          `json:"status"`
		ID         string          `json:"id"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return thread.Message{}, errors.New(`a message is an object like {"type":"human","content":"Hello"} or a string`)
	}
	kind := m.Type
	if kind == "" {
		kind = m.Role
	}
	if kind == "" {
		kind = "human"
	}
	role, ok := lcRoles[strings.ToLower(strings.TrimSuffix(kind, "MessageChunk"))]
	if kind == roleRemove && m.ID != "" {
		return withOwnID(thread.Message{Role: roleRemove}, m.ID), nil
	}
	if !ok {
		return thread.Message{}, fmt.Errorf("type %q is not a message type; use human or system", kind)
	}
	text, err := contentText(m.Content)
	if err != nil {
		return thread.Message{}, err
	}
	out := thread.Message{Role: role, Content: text}
	switch role {
	case thread.RoleAssistant:
		for _, c := range m.ToolCalls {
			out.ToolCalls = append(out.ToolCalls, c.toolCall())
		}
	case thread.RoleTool:
		out.ToolCallID, out.Name, out.IsError = m.ToolCallID, m.Name, m.Status == "error"
	}
	return withOwnID(out, m.ID), nil
}

// inputToolCall is a model message's tool call as a client sends it in a
// state update: LangChain's {id, name, args} or Dawn's {id, name, input}.
type inputToolCall struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Args  json.RawMessage `json:"args"`
	Input json.RawMessage `json:"input"`
}

// toolCall is c in Dawn's form; args win over input when both are set.
func (c inputToolCall) toolCall() thread.ToolCall {
	input := c.Args
	if isNull(input) {
		input = c.Input
	}
	if isNull(input) {
		input = json.RawMessage(`{}`)
	}
	return thread.ToolCall{ID: c.ID, Name: c.Name, Input: input}
}

// contentText reads LangChain message content: a string, or a list of
// content blocks of which only text blocks are taken.
func contentText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return "", errors.New("content must be a string or a list of {\"type\":\"text\",\"text\":...} blocks")
	}
	var parts []string
	for j, b := range blocks {
		if b.Type != "text" {
			return "", fmt.Errorf("content[%d] is a %q block; Dawn routes take text only", j, b.Type)
		}
		parts = append(parts, b.Text)
	}
	return strings.Join(parts, "\n"), nil
}
