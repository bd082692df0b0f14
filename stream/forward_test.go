package stream_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/dawn-go/dawn/stream"
)

func TestForward(t *testing.T) {
	child := stream.Subagent{CallID: "call_1", Name: "researcher", RouteID: "/research/subagents/researcher", Depth: 1}
	tests := []struct {
		name     string
		in       stream.Event
		sub      stream.Subagent
		wantType string
		wantData string
	}{
		{
			name:     "prefixes the type and adds identity after the data's own fields",
			in:       stream.Event{ID: 12, Type: "plan_update", Data: json.RawMessage(`{"todos":[{"content":"a","status":"pending"}]}`)},
			sub:      child,
			wantType: "subagent.plan_update",
			wantData: `{"todos":[{"content":"a","status":"pending"}],"call_id":"call_1","subagent":"researcher","route_id":"/research/subagents/researcher","depth":1}`,
		},
		{
			name:     "no double prefix, the deepest identity is kept",
			in:       stream.Event{Type: "subagent.plan_update", Data: json.RawMessage(`{"todos":[],"call_id":"call_9","subagent":"deep","route_id":"/deep","depth":2}`)},
			sub:      child,
			wantType: "subagent.plan_update",
			wantData: `{"todos":[],"call_id":"call_9","subagent":"deep","route_id":"/deep","depth":2}`,
		},
		{
			name:     "already prefixed with partial identity gets the missing fields",
			in:       stream.Event{Type: "subagent.chunk", Data: json.RawMessage(`{"depth":2,"content":"x"}`)},
			sub:      child,
			wantType: "subagent.chunk",
			wantData: `{"depth":2,"content":"x","call_id":"call_1","subagent":"researcher","route_id":"/research/subagents/researcher"}`,
		},
		{
			name:     "a direct event's lookalike identity fields are replaced",
			in:       stream.Event{Type: "custom", Data: json.RawMessage(`{"call_id":"spoof","depth":99,"x":1}`)},
			sub:      child,
			wantType: "subagent.custom",
			wantData: `{"x":1,"call_id":"call_1","subagent":"researcher","route_id":"/research/subagents/researcher","depth":1}`,
		},
		{
			name:     "empty object",
			in:       stream.Event{Type: "done", Data: json.RawMessage(` { } `)},
			sub:      stream.Subagent{CallID: "c", Name: "n", RouteID: "/r", Depth: 3},
			wantType: "subagent.done",
			wantData: `{"call_id":"c","subagent":"n","route_id":"/r","depth":3}`,
		},
		{
			name:     "array data is wrapped",
			in:       stream.Event{Type: "x", Data: json.RawMessage(`[1,2]`)},
			sub:      stream.Subagent{CallID: "c", Name: "n", RouteID: "/r", Depth: 1},
			wantType: "subagent.x",
			wantData: `{"data":[1,2],"call_id":"c","subagent":"n","route_id":"/r","depth":1}`,
		},
		{
			name:     "string data is wrapped",
			in:       stream.Event{Type: "note", Data: json.RawMessage(`"hi"`)},
			sub:      stream.Subagent{CallID: "c", Name: "n", RouteID: "/r", Depth: 1},
			wantType: "subagent.note",
			wantData: `{"data":"hi","call_id":"c","subagent":"n","route_id":"/r","depth":1}`,
		},
		{
			name:     "invalid data is wrapped as a string",
			in:       stream.Event{Type: "note", Data: json.RawMessage("{oops\n")},
			sub:      stream.Subagent{CallID: "c", Name: "n", RouteID: "/r", Depth: 1},
			wantType: "subagent.note",
			wantData: `{"data":"{oops\n","call_id":"c","subagent":"n","route_id":"/r","depth":1}`,
		},
		{
			name:     "a chunk is Dawn's subagent.message",
			in:       stream.Chunk("Hel\"lo"),
			sub:      child,
			wantType: "subagent.message",
			wantData: `{"chunk":"Hel\"lo","call_id":"call_1","subagent":"researcher","route_id":"/research/subagents/researcher","depth":1}`,
		},
		{
			name:     "a tool call names its tool as Dawn's tool, and as name",
			in:       stream.Event{Type: "tool_call", Data: json.RawMessage(`{"id":"t1","name":"writeTodos","input":{"todos":[]}}`)},
			sub:      child,
			wantType: "subagent.tool_call",
			wantData: `{"id":"t1","tool":"writeTodos","name":"writeTodos","input":{"todos":[]},"call_id":"call_1","subagent":"researcher","route_id":"/research/subagents/researcher","depth":1}`,
		},
		{
			name:     "a tool result names its tool as Dawn's tool, and as name",
			in:       stream.Event{Type: "tool_result", Data: json.RawMessage(`{"id":"t1","name":"lookup","output":null,"error":"boom"}`)},
			sub:      child,
			wantType: "subagent.tool_result",
			wantData: `{"id":"t1","tool":"lookup","name":"lookup","output":null,"error":"boom","call_id":"call_1","subagent":"researcher","route_id":"/research/subagents/researcher","depth":1}`,
		},
		{
			name:     "a grandchild's message is kept as it is",
			in:       stream.Event{Type: "subagent.message", Data: json.RawMessage(`{"chunk":"x","call_id":"g","subagent":"deep","route_id":"/deep","depth":2}`)},
			sub:      child,
			wantType: "subagent.message",
			wantData: `{"chunk":"x","call_id":"g","subagent":"deep","route_id":"/deep","depth":2}`,
		},
		{
			name:     "no data gives the identity alone",
			in:       stream.Event{Type: "done"},
			sub:      stream.Subagent{CallID: "c", Name: "n\"q", RouteID: "/r", Depth: 1},
			wantType: "subagent.done",
			wantData: `{"call_id":"c","subagent":"n\"q","route_id":"/r","depth":1}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := stream.Forward(tt.in, tt.sub)
			if got.ID != 0 {
				t.Errorf("ID = %d, want 0", got.ID)
			}
			if got.Type != tt.wantType {
				t.Errorf("Type = %q, want %q", got.Type, tt.wantType)
			}
			if !json.Valid(got.Data) {
				t.Fatalf("Data is not valid JSON: %s", got.Data)
			}
			if string(got.Data) != tt.wantData {
				t.Errorf("Data:\n got %s\nwant %s", got.Data, tt.wantData)
			}
		})
	}
}

func TestForwardTwice(t *testing.T) {
	grandchild := stream.Subagent{CallID: "g", Name: "deep", RouteID: "/deep", Depth: 2}
	child := stream.Subagent{CallID: "c", Name: "mid", RouteID: "/mid", Depth: 1}
	e := stream.Forward(stream.Forward(stream.New("plan_update", map[string]any{"todos": []any{}}), grandchild), child)
	if e.Type != "subagent.plan_update" {
		t.Errorf("Type = %q", e.Type)
	}
	var got stream.Subagent
	if err := json.Unmarshal(e.Data, &got); err != nil {
		t.Fatal(err)
	}
	if got != grandchild {
		t.Errorf("identity = %+v, want the grandchild's %+v", got, grandchild)
	}
}

func TestSubagentStartEnd(t *testing.T) {
	sub := stream.Subagent{CallID: "call_1", Name: "researcher", RouteID: "/research/subagents/researcher", Depth: 2}
	const identity = `"call_id":"call_1","subagent":"researcher","route_id":"/research/subagents/researcher","depth":2`
	for _, tc := range []struct {
		e        stream.Event
		typ, raw string
	}{
		{stream.SubagentStart(sub), "subagent.start", `{` + identity + `}`},
		{stream.SubagentEnd(sub, "found \"it\"", nil), "subagent.end", `{"final_message":"found \"it\"",` + identity + `}`},
		{stream.SubagentEnd(sub, "ignored", errors.New("model down")), "subagent.end", `{"error":"model down",` + identity + `}`},
	} {
		if tc.e.Type != tc.typ || string(tc.e.Data) != tc.raw {
			t.Errorf("got %s %s, want %s %s", tc.e.Type, tc.e.Data, tc.typ, tc.raw)
		}
	}
}

func TestChunkText(t *testing.T) {
	for _, tc := range []struct{ data, want string }{
		{`"Hello"`, "Hello"},
		{`{"chunk":"Hi","call_id":"c"}`, "Hi"},
		{`{"chunk":"","data":"old"}`, ""},
		{`{"data":"Old","call_id":"c"}`, "Old"}, // subagent.chunk as earlier releases logged it
		{`{"x":1}`, ""},
		{`7`, ""},
	} {
		if got := stream.ChunkText(json.RawMessage(tc.data)); got != tc.want {
			t.Errorf("ChunkText(%s) = %q, want %q", tc.data, got, tc.want)
		}
	}
}
