package typegen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// schema is the part of a JSON Schema that typegen turns into types. It
// keeps object properties in the order the document lists them, so a Go
// struct's fields follow the tool author's struct.
type schema struct {
	// any is set for the boolean schema true and for a schema that cannot be
	// read: every value is allowed.
	any         bool
	raw         json.RawMessage // the schema as written
	types       []string        // "type", as a list; "null" included when present
	properties  []property
	required    []string
	items       *schema
	additional  *schema // additionalProperties as a schema
	closed      bool    // additionalProperties is false
	enum        []json.RawMessage
	description string
	ref         string
	defs        map[string]*schema // $defs and definitions, by "#/$defs/x" path
	anyOf       []*schema          // oneOf, anyOf or a one-item allOf
}

type property struct {
	name   string
	schema *schema
}

// parseSchema reads a JSON Schema document. It is lenient: keywords it does
// not know are ignored, and a keyword of an unexpected shape makes that
// part of the schema "any" rather than failing, because a tool's schema has
// already been accepted by the runtime.
func parseSchema(raw []byte) (*schema, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return &schema{any: true}, nil
	}
	if !json.Valid(raw) {
		return nil, fmt.Errorf("not valid JSON")
	}
	s := readSchema(raw, 0)
	return s, nil
}

// readProperties reads a schema's properties object, in its order.
func (s *schema) readProperties(raw json.RawMessage, depth int) {
	props, _ := orderedMembers(raw)
	for _, p := range props {
		s.properties = append(s.properties, property{name: p.key, schema: readSchema(p.value, depth+1)})
	}
}

// readDefs reads the definitions under key ("$defs" or "definitions"),
// keyed by the reference that names each ("#/$defs/name").
func (s *schema) readDefs(key string, raw json.RawMessage, depth int) {
	defs, ok := orderedMembers(raw)
	if !ok {
		return
	}
	if s.defs == nil {
		s.defs = map[string]*schema{}
	}
	for _, d := range defs {
		s.defs["#/"+key+"/"+d.key] = readSchema(d.value, depth+1)
	}
}

// maxSchemaDepth stops absurdly nested schemas from using deep recursion.
const maxSchemaDepth = 64

func readSchema(raw json.RawMessage, depth int) *schema {
	raw = bytes.TrimSpace(raw)
	if depth > maxSchemaDepth || len(raw) == 0 || raw[0] != '{' {
		// true, false, or something that is not a schema object.
		return &schema{any: true}
	}
	members, ok := orderedMembers(raw)
	if !ok {
		return &schema{any: true}
	}
	s := &schema{raw: raw}
	for _, m := range members {
		switch m.key {
		case "type":
			s.types = readTypes(m.value)
		case "properties":
			s.readProperties(m.value, depth)
		case "required":
			_ = json.Unmarshal(m.value, &s.required)
		case "items":
			s.items = readSchema(m.value, depth+1)
		case "additionalProperties":
			switch string(bytes.TrimSpace(m.value)) {
			case "false":
				s.closed = true
			case "true":
			default:
				s.additional = readSchema(m.value, depth+1)
			}
		case "enum":
			_ = json.Unmarshal(m.value, &s.enum)
		case "const":
			s.enum = []json.RawMessage{m.value}
		case "description":
			_ = json.Unmarshal(m.value, &s.description)
		case "$ref":
			_ = json.Unmarshal(m.value, &s.ref)
		case "$defs", "definitions":
			s.readDefs(m.key, m.value, depth)
		case "oneOf", "anyOf":
			s.anyOf = readSchemaList(m.value, depth)
		case "allOf":
			if list := readSchemaList(m.value, depth); len(list) == 1 {
				s.anyOf = list
			}
		}
	}
	for i, e := range s.enum {
		s.enum[i] = compactJSON(e)
	}
	return s
}

func readSchemaList(raw json.RawMessage, depth int) []*schema {
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil
	}
	out := make([]*schema, len(list))
	for i, item := range list {
		out[i] = readSchema(item, depth+1)
	}
	return out
}

// readTypes reads "type", which is a string or a list of strings.
func readTypes(raw json.RawMessage) []string {
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		return []string{one}
	}
	var list []string
	_ = json.Unmarshal(raw, &list)
	return list
}

// member is one member of a JSON object, its value kept raw.
type member struct {
	key   string
	value json.RawMessage
}

// orderedMembers returns the members of a JSON object in document order, and
// false when raw is not an object. A repeated key keeps its last value, as
// encoding/json does, at the position of its first appearance.
func orderedMembers(raw json.RawMessage) ([]member, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, false
	}
	var out []member
	at := map[string]int{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, ok := tok.(string)
		if !ok {
			return nil, false
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, false
		}
		if i, seen := at[key]; seen {
			out[i].value = value
			continue
		}
		at[key] = len(out)
		out = append(out, member{key, value})
	}
	return out, true
}

// compactJSON returns raw without insignificant white space, or raw itself
// when it is not valid JSON.
func compactJSON(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw
	}
	return b.Bytes()
}

// canonicalJSON re-encodes raw with object keys sorted and numbers kept as
// written, so two equal schemas compare equal byte for byte.
func canonicalJSON(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// nonNull returns the schema's types without "null", and whether "null" was
// among them.
func (s *schema) nonNull() (types []string, nullable bool) {
	for _, t := range s.types {
		if t == "null" {
			nullable = true
			continue
		}
		types = append(types, t)
	}
	return types, nullable
}

// isRequired reports whether the object schema lists name as required.
func (s *schema) isRequired(name string) bool {
	for _, r := range s.required {
		if r == name {
			return true
		}
	}
	return false
}

// firstLine returns the first non-empty line of text, trimmed.
func firstLine(text string) string {
	for _, line := range strings.Split(text, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			return line
		}
	}
	return ""
}
