package planview

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/dawn-go/dawn/stream"
)

// Event types a View follows.
const (
	PlanUpdate         = "plan_update"
	SubagentPlanUpdate = stream.SubagentPrefix + PlanUpdate
)

// maxIndentDepth is the deepest subagent level that gets its own indent.
const maxIndentDepth = 8

// View is the latest state of a run's plans: the run's own plan and one per
// subagent task, in the order they first appeared.
type View struct {
	todos     []Todo
	hasPlan   bool
	subagents []subagentPlan
}

// subagentPlan is the plan of one subagent task.
type subagentPlan struct {
	name   string
	callID string
	depth  int
	todos  []Todo
}

// HasPlan reports whether the view holds any plan yet.
func (v *View) HasPlan() bool { return v.hasPlan || len(v.subagents) > 0 }

// Todos returns the run's own plan.
func (v *View) Todos() []Todo { return v.todos }

// Apply takes a plan_update or subagent.plan_update event into the view and
// reports whether it changed the view. Other events, and plan updates whose
// data is not the JSON object they should be, change nothing.
func (v *View) Apply(e stream.Event) bool {
	switch e.Type {
	case PlanUpdate:
		var d struct {
			Todos []Todo `json:"todos"`
		}
		if json.Unmarshal(e.Data, &d) != nil {
			return false
		}
		v.todos, v.hasPlan = d.Todos, true
		return true
	case SubagentPlanUpdate:
		var d struct {
			Todos    []Todo `json:"todos"`
			CallID   string `json:"call_id"`
			Subagent string `json:"subagent"`
			Depth    int    `json:"depth"`
		}
		if json.Unmarshal(e.Data, &d) != nil {
			return false
		}
		d.Depth = max(d.Depth, 1)
		for i := range v.subagents {
			s := &v.subagents[i]
			if s.callID == d.CallID && s.name == d.Subagent && s.depth == d.Depth {
				s.todos = d.Todos
				return true
			}
		}
		v.subagents = append(v.subagents, subagentPlan{name: d.Subagent, callID: d.CallID, depth: d.Depth, todos: d.Todos})
		return true
	}
	return false
}

// Lines returns the plan block without line ends: the run's plan (see
// Render), then each subagent's plan under a line such as
// "↳ researcher (task call_1)", indented two spaces per depth. With width > 0
// every line is cut to width runes.
func (v *View) Lines(width int) []string {
	var lines []string
	if v.hasPlan {
		lines = appendPlan(lines, v.todos, width)
	}
	for _, s := range v.subagents {
		indent := strings.Repeat("  ", min(s.depth, maxIndentDepth))
		lines = append(lines, clip(indent+"↳ "+oneLine(s.name)+" (task "+oneLine(s.callID)+") "+strconv.Itoa(CountDone(s.todos))+"/"+strconv.Itoa(len(s.todos))+" done", width))
		lines = appendItems(lines, s.todos, indent+"  ", width)
	}
	return lines
}

// Render returns Lines joined, each ending in "\n".
func (v *View) Render(width int) string {
	var b strings.Builder
	for _, line := range v.Lines(width) {
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}
