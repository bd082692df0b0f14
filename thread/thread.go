// Package thread holds the data a conversation thread carries between runs:
// its messages and its state values, as plain data with JSON encodings that
// every other package shares.
package thread

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
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
	// Meta is data capabilities store on the message, by keys they name
	// (capabilities.MessageMetadata): the harness marks the notes it writes
	// "harness": true and links its plan snapshot to a final answer as
	// "plan". In JSON the keys sit beside the message's own fields, in key
	// order after them; any key that is not one of those fields is read
	// back into Meta. A nil or empty Meta adds nothing.
	Meta map[string]json.RawMessage `json:"-"`
}

// MessageKeys are the JSON keys a message's own fields take, in Dawn's
// shape and in the LangChain message dicts the LangGraph dialect writes
// (whose id is kept in Meta under "id"): a capability's Meta keys must be
// others, or they would be hidden where the two meet.
var MessageKeys = []string{"role", "content", "tool_calls", "tool_call_id", "name", "is_error", "type", "id", "status"}

// encoder writes JSON without HTML escaping into a reusable buffer.
type encoder struct {
	buf bytes.Buffer
	enc *json.Encoder
}

var encoders = sync.Pool{New: func() any {
	e := &encoder{}
	e.enc = json.NewEncoder(&e.buf)
	e.enc.SetEscapeHTML(false)
	return e
}}

// ownFields are Message's JSON keys; every other key is Meta.
var ownFields = []string{"role", "content", "tool_calls", "tool_call_id", "name", "is_error"}

// messageFields is Message without its methods, for the default encoding of
// its own fields.
type messageFields Message

// MarshalJSON writes the message's own fields, then its Meta keys in key
// order. HTML is not escaped here: an encoder that escapes it does so on
// the whole output.
func (m Message) MarshalJSON() ([]byte, error) {
	e := encoders.Get().(*encoder)
	defer func() {
		if e.buf.Cap() <= 1<<20 { // let a huge buffer go
			encoders.Put(e)
		}
	}()
	e.buf.Reset()
	if err := e.enc.Encode((*messageFields)(&m)); err != nil {
		return nil, err
	}
	own := bytes.TrimRight(e.buf.Bytes(), "\n")
	if len(m.Meta) == 0 {
		return bytes.Clone(own), nil
	}
	out := own[: len(own)-1 : len(own)-1] // without the closing brace; appends copy
	for _, k := range slices.Sorted(maps.Keys(m.Meta)) {
		v := m.Meta[k]
		if len(v) == 0 || isOwnField(k) {
			continue
		}
		key, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		if !json.Valid(v) {
			return nil, fmt.Errorf("message metadata %s is not valid JSON", key)
		}
		out = append(out, ',')
		out = append(out, key...)
		out = append(out, ':')
		out = append(out, v...)
	}
	return append(out, '}'), nil
}

// UnmarshalJSON reads the message's own fields, and every other key into
// Meta.
func (m *Message) UnmarshalJSON(data []byte) error {
	var f messageFields
	if err := json.Unmarshal(data, &f); err != nil {
		return err
	}
	*m = Message(f)
	if !hasOtherKeys(data) {
		return nil
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return err
	}
	for k, v := range all {
		if isOwnField(k) {
			continue
		}
		if m.Meta == nil {
			m.Meta = map[string]json.RawMessage{}
		}
		m.Meta[k] = v
	}
	return nil
}

// isOwnField reports whether k names one of Message's own fields, as
// encoding/json matches them (ignoring case).
func isOwnField(k string) bool {
	return slices.ContainsFunc(ownFields, func(f string) bool { return strings.EqualFold(f, k) })
}

// hasOtherKeys reports whether the JSON object data has a top-level key
// other than Message's own fields. data is valid JSON (encoding/json checks
// it before UnmarshalJSON); one pass over its bytes finds the keys, so a
// message without metadata is decoded once.
func hasOtherKeys(data []byte) bool {
	depth, inString, escaped, start := 0, false, false, 0
	keyNext := false // at depth 1, the next string is a key
	for i, c := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
				if depth == 1 && keyNext {
					keyNext = false
					key := data[start:i]
					if bytes.IndexByte(key, '\\') >= 0 || !isOwnField(string(key)) {
						return true
					}
				}
			}
			continue
		}
		switch c {
		case '"':
			inString, start = true, i+1
		case '{', '[':
			depth++
			keyNext = depth == 1
		case '}', ']':
			depth--
		case ',':
			keyNext = depth == 1
		}
	}
	return false
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
