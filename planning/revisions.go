package planning

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/dawn-go/dawn/plandiff"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
)

// A plain plan.md plan (one the harness does not own) keeps every change
// of its todos as a revision, with its diff against the one before and
// who made it, in the RevisionsField state field: so it is saved with the
// step that made it, copied with the thread and served by
// GET /threads/:id/plan/revisions as a harness-owned plan's revisions are.

// RevisionsField is the state field holding a plain plan's revisions.
const RevisionsField = plandiff.LogField

// revisionLog is the value of RevisionsField: the revisions, and the ids
// the todos have for the diff (ids[i] is todos[i]'s), which the todos
// themselves do not carry.
type revisionLog struct {
	plandiff.Log
	IDs    []string `json:"ids"`
	NextID int      `json:"next_id"`
}

// emptyLog is RevisionsField's default.
func emptyLog() revisionLog {
	return revisionLog{Log: plandiff.Log{Revisions: []plandiff.Revision{}}, IDs: []string{}}
}

// revisionsSchema is the JSON Schema of RevisionsField.
func revisionsSchema() map[string]any {
	return map[string]any{"type": "object", "description": "The plan's revisions: each change of the todos with its diff against the one before, who made it (model or person) and why."}
}

// decodeLog reads a saved log; one that cannot be read starts afresh.
func decodeLog(raw json.RawMessage) revisionLog {
	l := emptyLog()
	if len(raw) > 0 && json.Unmarshal(raw, &l) != nil {
		l = emptyLog()
	}
	return l
}

// revise records the change of the todos from old to next, made by
// source for reason, as the log's next revision.
func (l *revisionLog) revise(old, next []Todo, source, reason string) plandiff.Revision {
	prev := l.items(old)
	cur := plandiff.Match(prev, diffItems(next), l.newID)
	d := plandiff.Compute(prev, cur)
	l.IDs = make([]string, len(cur))
	for i, it := range cur {
		l.IDs[i] = it.ID
	}
	return l.Add(source, reason, describe(prev, cur, d), d)
}

// items are the todos with the ids the log keeps for them; todos the log
// has no ids for (changed by a path that kept none) get new ones.
func (l *revisionLog) items(todos []Todo) []plandiff.Item {
	items := diffItems(todos)
	for i := range items {
		if len(l.IDs) == len(todos) {
			items[i].ID = l.IDs[i]
		} else {
			items[i].ID = l.newID()
		}
	}
	return items
}

func (l *revisionLog) newID() string {
	l.NextID++
	return fmt.Sprintf("t%04d", l.NextID)
}

func diffItems(todos []Todo) []plandiff.Item {
	out := make([]plandiff.Item, len(todos))
	for i, t := range todos {
		out[i] = plandiff.Item{Content: t.Content, Status: t.Status}
	}
	return out
}

// describe is a revision's change in words, as the harness writes it.
func describe(prev, cur []plandiff.Item, d *plandiff.Diff) string {
	was := map[string]plandiff.Item{}
	for _, it := range prev {
		was[it.ID] = it
	}
	added, finished := 0, 0
	for _, it := range cur {
		old, kept := was[it.ID]
		if !kept {
			added++
		}
		if it.Status.Terminal() && (!kept || !old.Status.Terminal()) {
			finished++
		}
	}
	removed := len(prev) - (len(cur) - added)
	change := fmt.Sprintf("%d items (%d added, %d removed, %d newly finished)", len(cur), added, removed, finished)
	if n := d.CountDropped(); n > 0 {
		change += fmt.Sprintf("; %d dropped before finishing", n)
	}
	return change
}

// revisedUpdate is the state change that records the todos going from
// the list in s to next, made by source: the new log.
func revisedUpdate(s thread.State, next []Todo, source, reason string) json.RawMessage {
	old, _ := decodeList(s[StateField])
	l := decodeLog(s[RevisionsField])
	l.revise(old, next, source, reason)
	return mustJSON(l)
}

// revisedEvent is the plan_revised event of the newest revision in raw, a
// saved log, when it changed the list.
func revisedEvent(raw json.RawMessage) ([]stream.Event, bool) {
	var l plandiff.Log
	if len(raw) == 0 || json.Unmarshal(raw, &l) != nil || len(l.Revisions) == 0 {
		return nil, false
	}
	r := l.Revisions[len(l.Revisions)-1]
	if r.N != l.RevisionN || r.Diff == nil {
		return nil, true
	}
	return []stream.Event{stream.New(plandiff.EventRevised, r)}, true
}

// edited records a person's change of the todos, a state update outside a
// run, as a revision by "person" (capabilities.Hooks.Edited). An update
// that leaves the list as it was records none.
func edited(before, after thread.State) thread.State {
	old, _ := decodeList(before[StateField])
	next, ok := decodeList(after[StateField])
	if !ok || slices.Equal(old, next) {
		return nil
	}
	return thread.State{RevisionsField: revisedUpdate(before, next, plandiff.SourcePerson, "")}
}
