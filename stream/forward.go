package stream

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// Subagent names the subagent whose events are forwarded to its parent's
// stream. Its fields are added to the data of every forwarded event.
type Subagent struct {
	CallID  string `json:"call_id"`  // the id of the parent's task tool call
	Name    string `json:"subagent"` // the subagent's name
	RouteID string `json:"route_id"` // the subagent's route id
	Depth   int    `json:"depth"`    // 1 for a child of the top run, 2 for a grandchild, ...
}

// identityKeys are the data fields that Forward adds, in the order written.
var identityKeys = [...]string{"call_id", "subagent", "route_id", "depth"}

// Forward returns e as sub's parent streams it, in Dawn's shapes, with
// ID 0 so that the parent's log numbers it:
//   - a chunk is a subagent.message {"chunk": text};
//   - a tool_call or tool_result is a subagent.tool_call or
//     subagent.tool_result whose data names the tool as "tool" (and still
//     as "name");
//   - any other event's type gets the "subagent." prefix
//     (subagent.plan_update).
//
// sub's identity fields are added to the data, after its own fields.
//
// An event that already has the prefix came from a deeper subagent: its type
// is kept as it is (no "subagent.subagent."), and so are the identity fields
// its data already holds, which name the deepest subagent. Data that is not
// a JSON object is wrapped as {"data": <data>, ...identity}.
func Forward(e Event, sub Subagent) Event {
	if strings.HasPrefix(e.Type, SubagentPrefix) {
		return Event{Type: e.Type, Data: withIdentity(dataMembers(e.Data), sub, true)}
	}
	switch e.Type {
	case TypeChunk:
		return Event{Type: TypeSubagentMessage, Data: withIdentity([]jsonMember{{"chunk", chunkValue(e.Data)}}, sub, false)}
	case TypeToolCall:
		return Event{Type: TypeSubagentToolCall, Data: withIdentity(withTool(dataMembers(e.Data)), sub, false)}
	case TypeToolResult:
		return Event{Type: TypeSubagentToolResult, Data: withIdentity(withTool(dataMembers(e.Data)), sub, false)}
	}
	return Event{Type: SubagentPrefix + e.Type, Data: withIdentity(dataMembers(e.Data), sub, false)}
}

// SubagentStart is the subagent.start event that opens sub's events.
func SubagentStart(sub Subagent) Event {
	return Event{Type: TypeSubagentStart, Data: withIdentity(nil, sub, false)}
}

// SubagentEnd is the subagent.end event that closes sub's events: with
// final, the child's answer, or, when err is not nil, the error it failed
// with.
func SubagentEnd(sub Subagent, final string, err error) Event {
	m := jsonMember{"final_message", appendJSONString(nil, []byte(final))}
	if err != nil {
		m = jsonMember{"error", appendJSONString(nil, []byte(err.Error()))}
	}
	return Event{Type: TypeSubagentEnd, Data: withIdentity([]jsonMember{m}, sub, false)}
}

// jsonMember is one member of a JSON object, its value kept raw.
type jsonMember struct {
	key   string
	value json.RawMessage
}

// dataMembers returns the members of an event's data: its own, when it is a
// JSON object; {"data": data} for other JSON, and for data that is not
// JSON, as a string; none for no data.
func dataMembers(data json.RawMessage) []jsonMember {
	if members, ok := objectMembers(data); ok {
		if members == nil {
			return []jsonMember{}
		}
		return members
	}
	switch {
	case len(bytes.TrimSpace(data)) == 0:
		return nil
	case json.Valid(data):
		return []jsonMember{{"data", data}}
	default:
		return []jsonMember{{"data", appendJSONString(nil, data)}}
	}
}

// chunkValue is a chunk's text as a JSON string.
func chunkValue(data json.RawMessage) json.RawMessage {
	if trimmed := bytes.TrimSpace(data); len(trimmed) > 0 && trimmed[0] == '"' && json.Valid(trimmed) {
		return trimmed // a bare JSON string, as Chunk makes it
	}
	return appendJSONString(nil, []byte(ChunkText(data)))
}

// withTool adds "tool", Dawn's name for the tool of a child's tool call or
// result, before the "name" it copies.
func withTool(members []jsonMember) []jsonMember {
	out := make([]jsonMember, 0, len(members)+1)
	for _, m := range members {
		if m.key == "tool" {
			continue
		}
		if m.key == "name" {
			out = append(out, jsonMember{"tool", m.value})
		}
		out = append(out, m)
	}
	return out
}

// withIdentity returns members as a JSON object with sub's identity
// fields. With keep, identity fields that members already have win;
// otherwise sub's do.
func withIdentity(members []jsonMember, sub Subagent, keep bool) json.RawMessage {
	var have [len(identityKeys)]bool
	size := len(sub.CallID) + len(sub.Name) + len(sub.RouteID) + 64
	for _, m := range members {
		size += len(m.key) + len(m.value) + 4
	}
	out := make([]byte, 0, size)
	out = append(out, '{')
	for _, m := range members {
		if i := identityIndex(m.key); i >= 0 {
			if !keep {
				continue
			}
			have[i] = true
		}
		out = appendMember(out, m.key, m.value)
	}
	values := [len(identityKeys)][]byte{
		appendJSONString(nil, []byte(sub.CallID)),
		appendJSONString(nil, []byte(sub.Name)),
		appendJSONString(nil, []byte(sub.RouteID)),
		strconv.AppendInt(nil, int64(sub.Depth), 10),
	}
	for i, key := range identityKeys {
		if !have[i] {
			out = appendMember(out, key, values[i])
		}
	}
	return append(out, '}')
}

func identityIndex(key string) int {
	for i, k := range identityKeys {
		if k == key {
			return i
		}
	}
	return -1
}

// appendMember appends `"key":value` to an object being built in dst.
func appendMember(dst []byte, key string, value []byte) []byte {
	if dst[len(dst)-1] != '{' {
		dst = append(dst, ',')
	}
	dst = appendJSONString(dst, []byte(key))
	dst = append(dst, ':')
	return append(dst, value...)
}

// objectMembers returns the members of data in order, and false when data
// is not one valid JSON object.
func objectMembers(data []byte) ([]jsonMember, bool) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '{' || !json.Valid(trimmed) {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if _, err := dec.Token(); err != nil {
		return nil, false
	}
	var members []jsonMember
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, _ := tok.(string)
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, false
		}
		members = append(members, jsonMember{key, value})
	}
	return members, true
}
