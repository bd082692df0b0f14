package planning

import (
	"encoding/json"
	"maps"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/harness"
	"github.com/dawn-go/dawn/plandiff"
	"github.com/dawn-go/dawn/thread"
)

// The planning marker keeps a client's mirror of the thread's state live
// (capabilities.StateMirror): plan_update carries the todos and, on a route
// whose plan the harness owns, the plan, or on a plain plan.md the change
// its revisions record (see mirrorRevision); the lifecycle events carry
// the plan's new state.

// planItems is the key under which a harness plan's view holds its items.
const planItems = "items"

// MirrorEvent returns the fields a plan_update or lifecycle event sets: for
// plan_update the todos in the shape the thread keeps them and, when the
// update carries a lifecycle state, the plan's view; for plan_paused,
// plan_done, plan_failed and plan_cancelled the plan with its new state and
// why.
func (marker) MirrorEvent(typ string, data json.RawMessage, current func(string) json.RawMessage) (map[string]json.RawMessage, bool) {
	switch typ {
	case EventType:
		d, ok := decodeObject(data)
		if !ok {
			return nil, true
		}
		fields := map[string]json.RawMessage{StateField: mustJSON(projectTodos(d[StateField]))}
		if _, ok := d["state"]; ok {
			fields[PlanField] = mustJSON(planView(d))
		} else if log := current(RevisionsField); log != nil {
			fields[RevisionsField] = mirrorRevision(current(StateField), log, fields[StateField])
		}
		return fields, true
	case harness.EventPaused, harness.EventDone, harness.EventFailed, harness.EventCancelled:
		d, ok := decodeObject(data)
		if !ok {
			return nil, true
		}
		plan := map[string]any{}
		if have, ok := decodeObject(current(PlanField)); ok {
			maps.Copy(plan, have)
		}
		plan["state"] = d["state"]
		for _, k := range []string{"pause_reason", "reason"} {
			if s, _ := d[k].(string); s != "" {
				plan[k] = s
			} else {
				delete(plan, k)
			}
		}
		return map[string]json.RawMessage{PlanField: mustJSON(plan)}, true
	}
	return nil, false
}

// MirrorField shows a harness-owned plan as its plan_update view; every
// other field shows as stored.
func (marker) MirrorField(p *capabilities.Prepared, field string, raw json.RawMessage) (json.RawMessage, bool) {
	if _, enforced := SettingsOf(p); !enforced || field != PlanField {
		return nil, false
	}
	var plan harness.Plan
	if json.Unmarshal(raw, &plan) != nil {
		return nil, false
	}
	d, _ := decodeObject(PlanEvent(&plan).Data)
	return mustJSON(planView(d)), true
}

// planView is a harness plan as a mirror shows it: the plan_update data
// with its todos (the plan's items, ids and attempts included) under
// "items".
func planView(data map[string]any) map[string]any {
	view := make(map[string]any, len(data))
	for k, v := range data {
		if k == StateField {
			k = planItems
		}
		view[k] = v
	}
	return view
}

// projectTodos returns a plan_update's todos in the shape the thread keeps
// them: content, status and (when set) evidence. A harness plan's items
// carry ids and attempts too, which the plan view keeps.
func projectTodos(v any) any {
	list, ok := v.([]any)
	if !ok {
		return v
	}
	out := make([]any, len(list))
	for i, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			out[i] = item
			continue
		}
		todo := map[string]any{"content": m["content"], "status": m["status"]}
		if ev, ok := m["evidence"].(string); ok && ev != "" {
			todo["evidence"] = ev
		}
		out[i] = todo
	}
	return out
}

// decodeObject decodes a JSON object; ok is false for anything else.
func decodeObject(raw json.RawMessage) (map[string]any, bool) {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return nil, false
	}
	return m, true
}

// mirrorRevision is a plain plan's revisions after a plan_update: the
// mirror's log with the change from the mirror's todos to next recorded
// as writeTodos recorded it, so the mirror keeps the revisions the thread
// has without an event for each.
func mirrorRevision(prev, log, next json.RawMessage) json.RawMessage {
	old, _ := decodeList(prev)
	list, _ := decodeList(next)
	return revisedUpdate(thread.State{StateField: mustJSON(old), RevisionsField: log}, list, plandiff.SourceModel, "")
}
