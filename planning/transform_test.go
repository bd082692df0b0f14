package planning

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/thread"
)

func TestTransform(t *testing.T) {
	list := `[{"content":"Check account context","status":"in_progress"}]`
	tests := []struct {
		name string
		ev   capabilities.ToolEvent
		want string // event data; empty for no event
	}{
		{"direct output", capabilities.ToolEvent{Name: ToolName, Output: json.RawMessage(`{"todos":` + list + `}`)}, `{"todos":` + list + `}`},
		{"command-shaped output", capabilities.ToolEvent{Name: ToolName, Output: json.RawMessage(`{"update":{"todos":` + list + `},"result":"ok"}`)}, `{"todos":` + list + `}`},
		{"empty list", capabilities.ToolEvent{Name: ToolName, Output: json.RawMessage(`{"todos":[]}`)}, `{"todos":[]}`},
		{"falls back to the update", capabilities.ToolEvent{Name: ToolName, Output: json.RawMessage(`"done"`), Update: thread.State{StateField: json.RawMessage(list)}}, `{"todos":` + list + `}`},
		{"other tool", capabilities.ToolEvent{Name: "search", Output: json.RawMessage(`{"todos":` + list + `}`)}, ""},
		{"failed call", capabilities.ToolEvent{Name: ToolName, Output: json.RawMessage(`{"todos":` + list + `}`), Err: errors.New("bad input")}, ""},
		{"no list", capabilities.ToolEvent{Name: ToolName, Output: json.RawMessage(`{"ok":true}`)}, ""},
		{"todos not a list", capabilities.ToolEvent{Name: ToolName, Output: json.RawMessage(`{"todos":"x"}`)}, ""},
		{"output not JSON", capabilities.ToolEvent{Name: ToolName, Output: json.RawMessage(`nope`)}, ""},
		{"no output", capabilities.ToolEvent{Name: ToolName}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			events := Transform(tt.ev)
			if tt.want == "" {
				if len(events) != 0 {
					t.Errorf("got %d events, want none: %+v", len(events), events)
				}
				return
			}
			if len(events) != 1 {
				t.Fatalf("got %d events, want 1", len(events))
			}
			if events[0].Type != EventType {
				t.Errorf("type = %q, want %q", events[0].Type, EventType)
			}
			if string(events[0].Data) != tt.want {
				t.Errorf("data\n got %s\nwant %s", events[0].Data, tt.want)
			}
		})
	}
}
