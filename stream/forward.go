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

// Forward returns e as sub's parent streams it: with type "subagent."+e.Type
// and sub's identity fields added to the data, and ID 0 so that the parent's
// log numbers it.
//
// An event that already has the prefix came from a deeper subagent: its type
// is kept as it is (no "subagent.subagent."), and so are the identity fields
// its data already holds, which name the deepest subagent. Data that is not
// a JSON object is wrapped as {"data": <data>, ...identity}.
func Forward(e Event, sub Subagent) Event {
	typ := e.Type
	nested := strings.HasPrefix(typ, SubagentPrefix)
	if !nested {
		typ = SubagentPrefix + typ
	}
	return Event{Type: typ, Data: withIdentity(e.Data, sub, nested)}
}

// jsonMember is one member of a JSON object, its value kept raw.
type jsonMember struct {
	key   string
	value json.RawMessage
}

// withIdentity returns data as an object with sub's identity fields. With
// keep, identity fields that data already has win; otherwise sub's do.
func withIdentity(data json.RawMessage, sub Subagent, keep bool) json.RawMessage {
	members, isObject := objectMembers(data)
	if !isObject {
		members = nil
		switch {
		case len(bytes.TrimSpace(data)) == 0:
		case json.Valid(data):
			members = []jsonMember{{"data", data}}
		default:
			members = []jsonMember{{"data", appendJSONString(nil, data)}}
		}
		keep = false
	}
	var have [len(identityKeys)]bool
	out := make([]byte, 0, len(data)+len(sub.CallID)+len(sub.Name)+len(sub.RouteID)+64)
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
