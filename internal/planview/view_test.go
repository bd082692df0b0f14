package planview

import (
	"testing"

	"github.com/dawn-go/dawn/stream"
)

func TestViewApply(t *testing.T) {
	tests := []struct {
		name    string
		events  []stream.Event
		changed []bool
		want    string
	}{
		{
			name:    "own plan, latest wins",
			events:  []stream.Event{planEvent(Todo{"a", InProgress}, Todo{"b", Pending}), planEvent(Todo{"a", Completed}, Todo{"b", InProgress})},
			changed: []bool{true, true},
			want:    "Plan (1/2 done)\n  ✓ a\n  ▶ b\n",
		},
		{
			name: "subagent plan nested under the run's plan",
			events: []stream.Event{
				planEvent(Todo{"Frame the question", Completed}, Todo{"Ask the researcher", InProgress}),
				subagentEvent("researcher", "call_x", 1, Todo{"Find sources", Completed}, Todo{"Summarize", Pending}),
			},
			changed: []bool{true, true},
			want: "Plan (1/2 done)\n" +
				"  ✓ Frame the question\n" +
				"  ▶ Ask the researcher\n" +
				"  ↳ researcher (task call_x) 1/2 done\n" +
				"    ✓ Find sources\n" +
				"    ○ Summarize\n",
		},
		{
			name: "subagent updates replace its block; depth indents",
			events: []stream.Event{
				subagentEvent("researcher", "call_x", 1, Todo{"Find sources", InProgress}),
				subagentEvent("reader", "call_y", 2, Todo{"Read", Pending}),
				subagentEvent("researcher", "call_x", 1, Todo{"Find sources", Completed}),
			},
			changed: []bool{true, true, true},
			want: "  ↳ researcher (task call_x) 1/1 done\n" +
				"    ✓ Find sources\n" +
				"    ↳ reader (task call_y) 0/1 done\n" +
				"      ○ Read\n",
		},
		{
			name: "empty plans",
			events: []stream.Event{
				planEvent(),
				subagentEvent("researcher", "call_x", 0),
			},
			changed: []bool{true, true},
			want:    "Plan (empty)\n  ↳ researcher (task call_x) 0/0 done\n",
		},
		{
			name: "other events and bad data change nothing",
			events: []stream.Event{
				chunkEvent("hi"),
				{Type: PlanUpdate, Data: []byte(`{"todos":"nope"}`)},
				{Type: SubagentPlanUpdate, Data: []byte(`[1,2]`)},
			},
			changed: []bool{false, false, false},
			want:    "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v View
			for i, e := range tt.events {
				if got := v.Apply(e); got != tt.changed[i] {
					t.Errorf("Apply(event %d, %s) = %v, want %v", i, e.Type, got, tt.changed[i])
				}
			}
			if got := v.Render(0); got != tt.want {
				t.Errorf("Render() =\n%s\nwant\n%s", got, tt.want)
			}
			if v.HasPlan() != (tt.want != "") {
				t.Errorf("HasPlan() = %v", v.HasPlan())
			}
		})
	}
}

func TestViewLinesWidth(t *testing.T) {
	var v View
	v.Apply(subagentEvent("researcher", "call_with_a_long_id", 1, Todo{"Find every source there is", Pending}))
	for _, line := range v.Lines(16) {
		if n := len([]rune(line)); n > 16 {
			t.Errorf("line %q is %d runes, over the width 16", line, n)
		}
	}
}
