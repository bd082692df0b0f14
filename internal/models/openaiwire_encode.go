package models

import (
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/tmc/langchaingo/llms"
)

// encode writes the request body: the members langchaingo's client writes
// for the call, in its order (encoding/json's, of its ChatRequest), with
// the prompt-cache key first as withMember puts it, and the temperature
// only when the caller set one and the model takes it.
func (w *openAIWire) encode(key string, messages []llms.MessageContent, call wireCall) ([]byte, error) {
	b := make([]byte, 0, 1024)
	b = append(b, '{')
	if key != "" {
		b = append(b, `"prompt_cache_key":`...)
		b = appendJSONString(b, key)
		b = append(b, ',')
	}
	b = append(b, `"model":`...)
	b = appendJSONString(b, w.model)
	b = append(b, `,"messages":[`...)
	for i, mc := range messages {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendMessage(b, mc)
	}
	b = append(b, ']')
	if call.stream != nil {
		b = append(b, `,"stream":true`...)
	}
	if len(call.tools) > 0 {
		b = append(b, `,"tools":[`...)
		for i, t := range call.tools {
			if i > 0 {
				b = append(b, ',')
			}
			enc, err := w.tools.encoded(t)
			if err != nil {
				return nil, err
			}
			b = append(b, enc...)
		}
		b = append(b, ']')
	}
	if call.stream != nil {
		b = append(b, `,"stream_options":{"include_usage":true}`...)
	}
	if call.maxTokens > 0 {
		b = append(b, `,"max_completion_tokens":`...)
		b = strconv.AppendInt(b, int64(call.maxTokens), 10)
	}
	if call.setTemperature && !reasoningModel(w.model) {
		t, err := json.Marshal(call.temperature)
		if err != nil {
			return nil, err
		}
		b = append(b, `,"temperature":`...)
		b = append(b, t...)
	}
	return append(b, '}'), nil
}

// reasoningModel reports whether langchaingo's client leaves the
// temperature out for model (only the default is accepted).
func reasoningModel(model string) bool {
	return strings.HasPrefix(model, "o1-") || model == "o3" || strings.HasPrefix(model, "o3-") || strings.HasPrefix(model, "gpt-5")
}

// wireRoles are the roles of the messages prepare accepts.
var wireRoles = map[llms.ChatMessageType]string{
	llms.ChatMessageTypeSystem: "system",
	llms.ChatMessageTypeHuman:  "user",
	llms.ChatMessageTypeAI:     "assistant",
	llms.ChatMessageTypeTool:   "tool",
}

// appendMessage writes one message as langchaingo's ChatMessage encodes
// it: the role, the text as "content" ("" when there is none), then the
// tool calls and the tool call id when there are.
func appendMessage(b []byte, mc llms.MessageContent) []byte {
	var text, callID string
	var calls []llms.ToolCall
	for _, p := range mc.Parts {
		switch p := p.(type) {
		case llms.TextContent:
			text = p.Text
		case llms.ToolCall:
			calls = append(calls, p)
		case llms.ToolCallResponse:
			text, callID = p.Content, p.ToolCallID
		}
	}
	b = append(b, `{"role":`...)
	b = appendJSONString(b, wireRoles[mc.Role])
	b = append(b, `,"content":`...)
	b = appendJSONString(b, text)
	if len(calls) > 0 {
		b = append(b, `,"tool_calls":[`...)
		for i, c := range calls {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '{')
			if c.ID != "" {
				b = append(b, `"id":`...)
				b = appendJSONString(b, c.ID)
				b = append(b, ',')
			}
			b = append(b, `"type":`...)
			b = appendJSONString(b, c.Type)
			b = append(b, `,"function":{"name":`...)
			b = appendJSONString(b, c.FunctionCall.Name)
			b = append(b, `,"arguments":`...)
			b = appendJSONString(b, c.FunctionCall.Arguments)
			b = append(b, "}}"...)
		}
		b = append(b, ']')
	}
	if callID != "" {
		b = append(b, `,"tool_call_id":`...)
		b = appendJSONString(b, callID)
	}
	return append(b, '}')
}

const hexDigits = "0123456789abcdef"

// appendJSONString writes s as encoding/json writes a string: HTML
// characters, control characters, invalid UTF-8 and the line and
// paragraph separators escaped the same way.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// wireTool is a tool as langchaingo's client encodes it.
type wireTool struct {
	Type     string       `json:"type"`
	Function wireFunction `json:"function,omitempty"`
}

type wireFunction struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Parameters  any    `json:"parameters"`
	Strict      bool   `json:"strict,omitempty"`
}

// toolCache keeps each tool's encoding: a route's tools are the same on
// every call, and encoding/json checks and compacts a schema on every
// encode. A tool is known by its name, description and where its schema's
// bytes are (a json.RawMessage, which the entry keeps, so that memory is
// not reused for another schema while cached): a schema must not change in
// place once handed to a model, and Dawn's tool specs never do. A schema
// of another type is encoded each time.
type toolCache struct {
	mu sync.Mutex
	m  map[toolKey]toolEntry
}

type toolKey struct {
	name, description string
	strict            bool
	schema            *byte
	size              int
}

type toolEntry struct {
	schema  json.RawMessage // keeps schema's memory
	encoded []byte
}

// maxCachedTools bounds the cache: a program building schemas per call
// would otherwise grow it without end.
const maxCachedTools = 512

// encoded returns t encoded.
func (c *toolCache) encoded(t llms.Tool) ([]byte, error) {
	f := t.Function
	schema, ok := f.Parameters.(json.RawMessage)
	if !ok || len(schema) == 0 {
		return json.Marshal(wireTool{Type: t.Type, Function: wireFunction{Name: f.Name, Description: f.Description, Parameters: f.Parameters, Strict: f.Strict}})
	}
	key := toolKey{name: f.Name, description: f.Description, strict: f.Strict, schema: unsafe.SliceData(schema), size: len(schema)}
	c.mu.Lock()
	e, hit := c.m[key]
	c.mu.Unlock()
	if hit {
		return e.encoded, nil
	}
	enc, err := json.Marshal(wireTool{Type: t.Type, Function: wireFunction{Name: f.Name, Description: f.Description, Parameters: schema, Strict: f.Strict}})
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCachedTools {
		c.m = make(map[toolKey]toolEntry)
	}
	c.m[key] = toolEntry{schema: schema, encoded: enc}
	c.mu.Unlock()
	return enc, nil
}
