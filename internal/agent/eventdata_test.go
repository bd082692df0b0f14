package agent

import (
	"encoding/json"
	"testing"
)

// TestEventDataEncodesAsMaps: the tool_call and tool_result data structs
// encode byte for byte as the maps of the same keys, whose keys
// encoding/json sorts: subscribers and stored runs see the same events.
func TestEventDataEncodesAsMaps(t *testing.T) {
	input := json.RawMessage(`{ "todos": [ {"content":"<a> & b","status":"pending"} ] }`)
	tests := []struct {
		name        string
		data, asMap any
	}{
		{"tool_call", toolCallData{ID: "c1", Input: input, Name: "writeTodos"},
			map[string]any{"id": "c1", "name": "writeTodos", "input": input}},
		{"tool_call without input", toolCallData{ID: "c1", Name: "ping"},
			map[string]any{"id": "c1", "name": "ping", "input": json.RawMessage(nil)}},
		{"tool_result", toolResultData{ID: "c1", Name: "writeTodos", Output: input},
			map[string]any{"id": "c1", "name": "writeTodos", "output": input}},
		{"truncated tool_result", truncatedResultData{ID: "c1", Name: "read", Output: "first <lines>", OutputBytes: 90000, Truncated: true},
			map[string]any{"id": "c1", "name": "read", "output": "first <lines>", "truncated": true, "output_bytes": 90000}},
	}
	for _, tt := range tests {
		got, err := json.Marshal(tt.data)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		want, _ := json.Marshal(tt.asMap)
		if string(got) != string(want) {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, want)
		}
	}
}
