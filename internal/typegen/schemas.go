package typegen

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// schemaDialect is the JSON Schema version the schema files declare.
const schemaDialect = "https://json-schema.org/draft/2020-12/schema"

// toolsSchema is <slug>.tools.json: a schema of one tool call on the route,
// {"name": tool, "input": {...}}, with each tool's input schema under $defs
// by tool name (so "<slug>.tools.json#/$defs/writeTodos" is writeTodos's
// input schema).
func toolsSchema(rm *routeModel) ([]byte, error) {
	defs := map[string]any{}
	calls := make([]any, 0, len(rm.tools))
	for _, t := range rm.tools {
		input, err := decodeJSON(t.schema)
		if err != nil {
			return nil, fmt.Errorf("route %s: tool %q: input schema: %v", rm.id, t.name, err)
		}
		defs[t.name] = input
		calls = append(calls, map[string]any{
			"type": "object",
			"properties": map[string]any{
				"name":  map[string]any{"const": t.name},
				"input": map[string]any{"$ref": "#/$defs/" + jsonPointerEscape(t.name)},
			},
			"required":             []string{"name", "input"},
			"additionalProperties": false,
		})
	}
	doc := map[string]any{
		"$schema":     schemaDialect,
		"$comment":    GeneratedMarker,
		"title":       "Tools of route " + rm.id,
		"description": fmt.Sprintf(`A tool call on route %s: {"name": tool, "input": {...}}. Each tool's input schema is under $defs by tool name.`, rm.id),
		"$defs":       defs,
	}
	if len(calls) == 0 {
		doc["not"] = map[string]any{} // the route has no tools: no call is valid
	} else {
		doc["oneOf"] = calls
	}
	return encodeSchema(doc)
}

// stateSchema is <slug>.state.json: the route's state values, as a run's
// final output and GET /threads/:id/state's "values" hold them. Fields that
// a capability owns are readOnly: a run's input cannot set them.
func stateSchema(rm *routeModel) ([]byte, error) {
	props := map[string]any{
		"messages": map[string]any{
			"type":        "array",
			"description": "The thread's conversation.",
			"items":       map[string]any{"$ref": "#/$defs/Message"},
		},
	}
	for _, f := range rm.fields {
		v, err := decodeJSON(fieldSchema(f))
		if err != nil {
			return nil, fmt.Errorf("route %s: state field %q (%s): schema: %v", rm.id, f.Name, f.Source, err)
		}
		if s, ok := v.(map[string]any); ok {
			if len(f.Default) > 0 {
				if d, err := decodeJSON(f.Default); err == nil {
					s["default"] = d
				}
			}
			if f.Capability != "" {
				s["readOnly"] = true
			}
		}
		props[f.Name] = v
	}
	return encodeSchema(map[string]any{
		"$schema":     schemaDialect,
		"$comment":    GeneratedMarker,
		"title":       "State of route " + rm.id,
		"description": fmt.Sprintf("The state values of a thread on route %s: a run's final output, and the values of GET /threads/:id/state.", rm.id),
		"type":        "object",
		"properties":  props,
		"required":    []string{"messages"},
		"$defs":       messageDefs(),
	})
}

// messageDefs are the schemas of Message and ToolCall.
func messageDefs() map[string]any {
	str := map[string]any{"type": "string"}
	return map[string]any{
		"Message": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"role":         map[string]any{"type": "string", "enum": []string{"user", "assistant", "tool", "system"}},
				"content":      str,
				"tool_calls":   map[string]any{"type": "array", "items": map[string]any{"$ref": "#/$defs/ToolCall"}},
				"tool_call_id": str,
				"name":         str,
				"is_error":     map[string]any{"type": "boolean", "description": "Marks a tool message that holds the tool's error."},
			},
			"required": []string{"role", "content"},
		},
		"ToolCall": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"id":    str,
				"name":  str,
				"input": map[string]any{"description": "The tool's input, as the model sent it."},
			},
			"required": []string{"id", "name", "input"},
		},
	}
}

// decodeJSON decodes raw keeping numbers as written.
func decodeJSON(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// encodeSchema writes v as indented JSON with sorted keys and a final
// newline, without escaping <, > and &.
func encodeSchema(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// jsonPointerEscape escapes a JSON Pointer token ("~" → "~0", "/" → "~1"),
// then percent-encodes what a URI fragment cannot hold.
func jsonPointerEscape(s string) string {
	var b bytes.Buffer
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '~':
			b.WriteString("~0")
		case c == '/':
			b.WriteString("~1")
		case c >= 0x80 || c <= ' ' || bytes.IndexByte([]byte(`"%<>\^`+"`{|}#[]"), c) >= 0:
			fmt.Fprintf(&b, "%%%02X", c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
