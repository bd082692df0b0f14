package stream_test

import (
	"encoding/json"
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
			in:       stream.Event{Type: "chunk", Data: json.RawMessage(`"hi"`)},
			sub:      stream.Subagent{CallID: "c", Name: "n", RouteID: "/r", Depth: 1},
			wantType: "subagent.chunk",
			wantData: `{"data":"hi","call_id":"c","subagent":"n","route_id":"/r","depth":1}`,
		},
		{
			name:     "invalid data is wrapped as a string",
			in:       stream.Event{Type: "chunk", Data: json.RawMessage("{oops\n")},
			sub:      stream.Subagent{CallID: "c", Name: "n", RouteID: "/r", Depth: 1},
			wantType: "subagent.chunk",
			wantData: `{"data":"{oops\n","call_id":"c","subagent":"n","route_id":"/r","depth":1}`,
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
