package planning

import (
	"encoding/json"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/harness"
	"github.com/dawn-go/dawn/thread"
)

// taskItem is the item a task call names, if any.
func taskItem(input json.RawMessage) string {
	var in struct {
		Item string `json:"item"`
	}
	_ = json.Unmarshal(input, &in)
	return in.Item
}

// beforeTask refuses a task call for a plan item that already holds as
// many subagent plans as max_children allows, or that names no item.
func (e *enforced) beforeTask(s thread.State, call thread.ToolCall) capabilities.Effect {
	p := e.current(s)
	if p.State != harness.Running {
		return capabilities.Effect{}
	}
	name := taskItem(call.Input)
	i := p.ItemFor(name)
	if i < 0 && name != "" {
		return capabilities.Effect{Refuse: true, Refusal: "item " + name + " names no item of the plan; give an item's id, its position from 1 or its exact text"}
	}
	if why := p.ChildrenFull(e.settings, i); why != "" {
		return capabilities.Effect{Refuse: true, Refusal: why}
	}
	return capabilities.Effect{}
}

// delegated nests the plan a finished task call's subagent ended with
// under the item the call carried out (see harness.Delegated).
func (e *enforced) delegated(after thread.State, ev capabilities.ToolEvent) capabilities.Effect {
	p := e.current(after)
	i := p.ItemFor(taskItem(ev.Input))
	if p.State != harness.Running || i < 0 {
		return capabilities.Effect{}
	}
	d := ev.Delegation
	c := harness.Child{CallID: ev.CallID, Subagent: d.Subagent, RouteID: d.RouteID, Answer: d.Answer, Todos: []harness.Item{}}
	if child, err := DecodePlan(d.Values); err == nil && child != nil {
		c.Owned, c.State, c.Goal, c.Todos = true, child.State, child.Goal, child.Items
	} else {
		var todos []Todo
		if _, err := d.Values.Decode(StateField, &todos); err != nil {
			return capabilities.Effect{}
		}
		for _, t := range todos {
			c.Todos = append(c.Todos, harness.Item{Content: t.Content, Status: t.Status, Evidence: t.Evidence})
		}
	}
	return effect(p, harness.Delegated(p, e.settings, i, c))
}
