package planning

import (
	"encoding/json"
	"testing"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/harness"
)

// sameJSON reports whether a and b are the same JSON value, key order aside.
func sameJSON(t *testing.T, a json.RawMessage, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%s is not JSON: %v", a, err)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatalf("want %s is not JSON: %v", b, err)
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return string(ja) == string(jb)
}

// TestMirrorEvent: plan_update carries the todos in the thread's shape
// and, from a harness-owned plan, the plan's view; a lifecycle event
// changes the plan's state and why in the plan the mirror has; other
// events are not the marker's to mirror.
func TestMirrorEvent(t *testing.T) {
	m := Marker().(capabilities.StateMirror)
	current := map[string]json.RawMessage{PlanField: json.RawMessage(`{"state":"running","items":[],"pause_reason":"old","goal":"g"}`)}
	get := func(field string) json.RawMessage { return current[field] }
	cases := []struct {
		name, typ, data string
		want            map[string]string
		ok              bool
	}{
		{"plain plan_update", EventType, `{"todos":[{"content":"A","status":"in_progress","evidence":""}]}`,
			map[string]string{StateField: `[{"content":"A","status":"in_progress"}]`}, true},
		{"harness plan_update", EventType, `{"todos":[{"id":"1","content":"A","status":"completed","evidence":"ran it","attempts":1}],"state":"running","current":-1}`,
			map[string]string{
				StateField: `[{"content":"A","status":"completed","evidence":"ran it"}]`,
				PlanField:  `{"items":[{"id":"1","content":"A","status":"completed","evidence":"ran it","attempts":1}],"state":"running","current":-1}`,
			}, true},
		{"plan_update without todos", EventType, `{}`, map[string]string{StateField: `null`}, true},
		{"plan_update that is not an object", EventType, `"x"`, nil, true},
		{"lifecycle keeps the plan and replaces why", harness.EventPaused, `{"state":"paused","reason":"waiting"}`,
			map[string]string{PlanField: `{"state":"paused","items":[],"reason":"waiting","goal":"g"}`}, true},
		{"unknown event", "tool_call", `{"todos":[]}`, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := m.MirrorEvent(c.typ, json.RawMessage(c.data), get)
			if ok != c.ok || len(got) != len(c.want) {
				t.Fatalf("MirrorEvent = %s, %v; want %v, %v", mustJSON(got), ok, c.want, c.ok)
			}
			for field, want := range c.want {
				if !sameJSON(t, got[field], want) {
					t.Errorf("%s = %s, want %s", field, got[field], want)
				}
			}
		})
	}
	if got, _ := m.MirrorEvent(harness.EventDone, json.RawMessage(`{"state":"done"}`), func(string) json.RawMessage { return nil }); !sameJSON(t, got[PlanField], `{"state":"done"}`) {
		t.Errorf("lifecycle with no plan in the mirror = %s", got[PlanField])
	}
}

// TestMirrorField: a harness-owned plan shows as its plan_update view; the
// todos, and every field of a route whose plan the harness does not own,
// show as stored.
func TestMirrorField(t *testing.T) {
	m := Marker().(capabilities.StateMirror)
	enforcedRoute := prepare(t, "---\nenforce: true\n---\n- [ ] A\n")
	plainRoute := prepare(t, "- [ ] A\n")
	plan := harness.New(harness.Settings{}, []harness.Seed{{Content: "A"}})
	raw := mustJSON(plan)
	view, ok := m.MirrorField(enforcedRoute, PlanField, raw)
	if !ok || !sameJSON(t, view, string(mustJSON(planView(mustDecode(t, PlanEvent(plan).Data))))) {
		t.Fatalf("plan view = %s, %v", view, ok)
	}
	var v map[string]any
	_ = json.Unmarshal(view, &v)
	if _, ok := v["items"]; !ok || v["todos"] != nil {
		t.Errorf("plan view has no items, or todos: %s", view)
	}
	for _, c := range []struct {
		name  string
		p     *capabilities.Prepared
		field string
		raw   string
	}{
		{"todos", enforcedRoute, StateField, `[]`},
		{"plan of a plain route", plainRoute, PlanField, string(raw)},
		{"unreadable plan", enforcedRoute, PlanField, `"oops"`},
	} {
		if view, ok := m.MirrorField(c.p, c.field, json.RawMessage(c.raw)); ok {
			t.Errorf("%s: shown as %s, want as stored", c.name, view)
		}
	}
}

func mustDecode(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	m, ok := decodeObject(raw)
	if !ok {
		t.Fatalf("%s is not an object", raw)
	}
	return m
}
